#pragma once

// Device selector programs compiled once per expression text and shared by every allocation on
// every node: device classes and claim templates repeat the same few expressions. With each
// program goes its verdict per device shape (api::DeviceShape), remembered the first time a device
// of that shape is evaluated, so that a selector runs once per distinct device content instead of
// once per device, node and pod.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/dra.h"
#include "scheduler/cel/program.h"

namespace kubesched::plugins::dynamic_resources {

// A program's verdicts by device shape. Thread-safe without locks: every thread that evaluates a
// shape writes the same verdict, so a reader sees either that verdict or kUnknown. Shapes beyond
// its capacity (millions) are never remembered.
class VerdictMemo {
 public:
  enum Verdict : uint8_t { kUnknown = 0, kTrue = 1, kFalse = 2, kError = 3 };

  VerdictMemo() = default;
  VerdictMemo(const VerdictMemo&) = delete;
  VerdictMemo& operator=(const VerdictMemo&) = delete;
  ~VerdictMemo();

  Verdict Get(api::DeviceShape shape) const {
    const size_t chunk = shape / kChunkSize;
    if (shape == api::kNoShape || chunk >= kChunks) return kUnknown;
    const std::atomic<uint8_t>* entries = chunks_[chunk].load(std::memory_order_acquire);
    if (entries == nullptr) return kUnknown;
    return static_cast<Verdict>(entries[shape % kChunkSize].load(std::memory_order_relaxed));
  }
  void Set(api::DeviceShape shape, Verdict verdict);

 private:
  static constexpr size_t kChunkSize = 4096;
  static constexpr size_t kChunks = 1024;

  std::array<std::atomic<std::atomic<uint8_t>*>, kChunks> chunks_{};
};

// A compiled selector and what it decided so far.
struct CompiledSelector {
  absl::StatusOr<cel::Program> program;
  mutable VerdictMemo verdicts;
};

// Thread-safe. A selector (or its compile error) stays in the cache, at a stable address, for the
// life of the cache; the number of distinct selector texts in a cluster is small.
class SelectorCache {
 public:
  // The compiled program, or the compile error with its position and the expression.
  const CompiledSelector& Get(std::string_view expression);

  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  absl::node_hash_map<std::string, CompiledSelector> programs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::plugins::dynamic_resources
