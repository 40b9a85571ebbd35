#pragma once

// scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}: how long single
// plugin calls take. Filter and Score are called once per node from the worker pool, so this
// histogram is written from the per-node loop and must cost neither a lock nor an allocation
// there. It is therefore not a prometheus::Histogram (whose Observe takes a mutex) but a table
// of relaxed atomic counters, one copy per thread shard, summed only when scraped.
//
// Sampling: as upstream, the framework times plugins only in about one cycle in ten
// (SampleCycle). Within such a cycle the per-node calls (Filter, Score) are sampled once more,
// one in kCallStride per thread (SampleCall): a clock read costs about as much as a cheap filter,
// so timing every node made the sampled cycles 2.5 times slower (measured on SchedulingBasic).
// The counts are therefore a sample, not the number of calls; the distribution is what matters.
//
// Threads: Register takes a mutex (call it while building a framework); Observe and Collect
// may run concurrently from any threads.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "scheduler/framework/status.h"
#include "scheduler/metrics/extension_point.h"

namespace kubesched::metrics {

class PluginTimings : public prometheus::Collectable {
 public:
  // Exp(0.00001, 1.5, 20): 10 µs … ~22 ms, upstream's buckets.
  static constexpr int kBuckets = 20;
  // Codes per (plugin, point): framework::Code's six values.
  static constexpr int kCodes = 6;
  // Upstream's pluginMetricsSamplePercent.
  static constexpr int kSamplePercent = 10;
  // In a sampled cycle, one per-node call in this many (per thread) is timed.
  static constexpr uint32_t kCallStride = 64;

  PluginTimings();
  ~PluginTimings() override;
  PluginTimings(const PluginTimings&) = delete;
  PluginTimings& operator=(const PluginTimings&) = delete;

  // The slot of (plugin, point); the same pair always gets the same slot. -1 once the table is
  // full (kMaxSlots pairs; far more than any configuration has), which Observe ignores.
  int Register(std::string_view plugin, ExtensionPoint point);

  // One call of the plugin in `slot` that returned `code` after `nanoseconds`. Lock-free; the
  // first observation of a thread in a block of slots allocates that block once.
  void Observe(int slot, framework::Code code, int64_t nanoseconds);

  // Whether the next cycle's plugin calls are timed: true for about kSamplePercent of calls.
  // Thread-safe (each thread draws from its own generator).
  static bool SampleCycle();
  // In a sampled cycle, whether this per-node call is timed: one in kCallStride of the calling
  // thread's. Lock-free: a thread-local counter.
  static bool SampleCall() {
    thread_local uint32_t calls = 0;
    return calls++ % kCallStride == 0;
  }

  std::vector<prometheus::MetricFamily> Collect() const override;

  // The bucket upper bounds in seconds, as exposed in `le` (for tests).
  static std::vector<double> BucketBounds();

 private:
  static constexpr int kSlotsPerBlock = 16;
  static constexpr int kMaxBlocks = 64;
  static constexpr int kMaxSlots = kSlotsPerBlock * kMaxBlocks;
  static constexpr int kShards = 8;

  // One (slot, code): bucket counts (the last is +Inf) and the sum in nanoseconds.
  struct Cell {
    std::array<std::atomic<uint64_t>, kBuckets + 1> buckets{};
    std::atomic<uint64_t> sum_ns{0};
  };
  struct Block {
    std::array<Cell, kSlotsPerBlock * kCodes> cells{};
  };
  // The blocks one group of threads writes; blocks are created on first use and never freed
  // before the table, so a reader that loaded a pointer may keep using it.
  struct Shard {
    std::array<std::atomic<Block*>, kMaxBlocks> blocks{};
  };

  Block* BlockFor(Shard& shard, int block_index);
  static int BucketOf(int64_t nanoseconds);

  std::array<Shard, kShards> shards_{};
  mutable absl::Mutex mu_;
  std::vector<std::pair<std::string, ExtensionPoint>> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::metrics
