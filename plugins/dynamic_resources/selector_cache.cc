#include "plugins/dynamic_resources/selector_cache.h"

#include <utility>

#include "scheduler/util/strings.h"

namespace kubesched::plugins::dynamic_resources {

VerdictMemo::~VerdictMemo() {
  for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
}

void VerdictMemo::Set(api::DeviceShape shape, Verdict verdict) {
  const size_t chunk = shape / kChunkSize;
  if (shape == api::kNoShape || chunk >= kChunks) return;
  std::atomic<uint8_t>* entries = chunks_[chunk].load(std::memory_order_acquire);
  if (entries == nullptr) {
    auto* fresh = new std::atomic<uint8_t>[kChunkSize]();
    if (chunks_[chunk].compare_exchange_strong(entries, fresh, std::memory_order_acq_rel)) {
      entries = fresh;
    } else {
      delete[] fresh;  // another thread's chunk is in place; `entries` holds it
    }
  }
  entries[shape % kChunkSize].store(verdict, std::memory_order_relaxed);
}

const CompiledSelector& SelectorCache::Get(std::string_view expression) {
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = programs_.find(util::Absl(expression));
    if (it != programs_.end()) return it->second;
  }
  // Compiled outside the lock: a duplicate compile in a race is cheaper than serializing.
  absl::StatusOr<cel::Program> program = cel::Compile(expression);
  absl::MutexLock lock(&mu_);
  const auto [it, inserted] = programs_.try_emplace(std::string(expression));
  if (inserted) it->second.program = std::move(program);
  return it->second;
}

size_t SelectorCache::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return programs_.size();
}

}  // namespace kubesched::plugins::dynamic_resources
