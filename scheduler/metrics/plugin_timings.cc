#include "scheduler/metrics/plugin_timings.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <thread>

#include "scheduler/metrics/buckets.h"

namespace kubesched::metrics {
namespace {

const std::vector<double>& BoundsSeconds() {
  static const std::vector<double> bounds =
      ExponentialBuckets(0.00001, 1.5, PluginTimings::kBuckets);
  return bounds;
}

const std::array<double, PluginTimings::kBuckets>& BoundsNanoseconds() {
  static const auto bounds = [] {
    std::array<double, PluginTimings::kBuckets> out{};
    for (int i = 0; i < PluginTimings::kBuckets; ++i) out[i] = BoundsSeconds()[i] * 1e9;
    return out;
  }();
  return bounds;
}

// Threads are spread over the shards in the order they first record, so the two to sixteen
// threads of a worker pool rarely share a cache line.
int ThreadShard(int shards) {
  static std::atomic<int> next{0};
  thread_local const int shard = next.fetch_add(1, std::memory_order_relaxed) % shards;
  return shard;
}

}  // namespace

PluginTimings::PluginTimings() = default;

PluginTimings::~PluginTimings() {
  for (Shard& shard : shards_) {
    for (auto& block : shard.blocks) delete block.load(std::memory_order_acquire);
  }
}

int PluginTimings::Register(std::string_view plugin, ExtensionPoint point) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].first == plugin && slots_[i].second == point) return static_cast<int>(i);
  }
  if (slots_.size() >= static_cast<size_t>(kMaxSlots)) return -1;
  slots_.emplace_back(std::string(plugin), point);
  return static_cast<int>(slots_.size() - 1);
}

int PluginTimings::BucketOf(int64_t nanoseconds) {
  const auto& bounds = BoundsNanoseconds();
  const double value = static_cast<double>(nanoseconds);
  // Most plugin calls fall in the first buckets: a linear scan beats a binary search here.
  for (int i = 0; i < kBuckets; ++i) {
    if (value <= bounds[i]) return i;
  }
  return kBuckets;
}

PluginTimings::Block* PluginTimings::BlockFor(Shard& shard, int block_index) {
  std::atomic<Block*>& slot = shard.blocks[block_index];
  Block* block = slot.load(std::memory_order_acquire);
  if (block != nullptr) return block;
  auto* created = new Block();
  if (slot.compare_exchange_strong(block, created, std::memory_order_acq_rel)) return created;
  delete created;  // another thread of the shard was first; `block` holds its block
  return block;
}

void PluginTimings::Observe(int slot, framework::Code code, int64_t nanoseconds) {
  if (slot < 0 || slot >= kMaxSlots) return;
  const int code_index = static_cast<int>(code);
  if (code_index < 0 || code_index >= kCodes) return;
  nanoseconds = std::max<int64_t>(nanoseconds, 0);
  Shard& shard = shards_[ThreadShard(kShards)];
  Block* block = BlockFor(shard, slot / kSlotsPerBlock);
  Cell& cell = block->cells[(slot % kSlotsPerBlock) * kCodes + code_index];
  cell.buckets[BucketOf(nanoseconds)].fetch_add(1, std::memory_order_relaxed);
  cell.sum_ns.fetch_add(static_cast<uint64_t>(nanoseconds), std::memory_order_relaxed);
}

bool PluginTimings::SampleCycle() {
  // xorshift64*, seeded per thread: cheap, and no shared state between threads.
  thread_local uint64_t state =
      (std::hash<std::thread::id>()(std::this_thread::get_id()) | 1) * 0x9e3779b97f4a7c15ULL;
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (state * 0x2545f4914f6cdd1dULL) % 100 < static_cast<uint64_t>(kSamplePercent);
}

std::vector<double> PluginTimings::BucketBounds() { return BoundsSeconds(); }

std::vector<prometheus::MetricFamily> PluginTimings::Collect() const {
  prometheus::MetricFamily family;
  family.name = "scheduler_plugin_execution_duration_seconds";
  family.help = "Duration for running a plugin at a specific extension point.";
  family.type = prometheus::MetricType::Histogram;
  std::vector<std::pair<std::string, ExtensionPoint>> slots;
  {
    absl::MutexLock lock(&mu_);
    slots = slots_;
  }
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    for (int code = 0; code < kCodes; ++code) {
      std::array<uint64_t, kBuckets + 1> counts{};
      uint64_t sum_ns = 0;
      for (const Shard& shard : shards_) {
        const Block* block = shard.blocks[slot / kSlotsPerBlock].load(std::memory_order_acquire);
        if (block == nullptr) continue;
        const Cell& cell = block->cells[(slot % kSlotsPerBlock) * kCodes + code];
        for (int b = 0; b <= kBuckets; ++b) {
          counts[b] += cell.buckets[b].load(std::memory_order_relaxed);
        }
        sum_ns += cell.sum_ns.load(std::memory_order_relaxed);
      }
      uint64_t total = 0;
      for (uint64_t count : counts) total += count;
      if (total == 0) continue;
      prometheus::ClientMetric metric;
      metric.label = {
          {"extension_point", std::string(ExtensionPointName(slots[slot].second))},
          {"plugin", slots[slot].first},
          {"status", std::string(framework::CodeName(static_cast<framework::Code>(code)))}};
      uint64_t cumulative = 0;
      for (int b = 0; b < kBuckets; ++b) {
        cumulative += counts[b];
        metric.histogram.bucket.push_back({cumulative, BoundsSeconds()[b]});
      }
      metric.histogram.bucket.push_back({total, std::numeric_limits<double>::infinity()});
      metric.histogram.sample_count = total;
      metric.histogram.sample_sum = static_cast<double>(sum_ns) * 1e-9;
      family.metric.push_back(std::move(metric));
    }
  }
  if (family.metric.empty()) return {};  // nothing sampled yet
  return {std::move(family)};
}

}  // namespace kubesched::metrics
