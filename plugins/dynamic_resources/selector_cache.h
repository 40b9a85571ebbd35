#pragma once

// Device selector programs compiled once per expression text and shared by every allocation on
// every node: device classes and claim templates repeat the same few expressions.

#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/cel/program.h"

namespace kubesched::plugins::dynamic_resources {

// Thread-safe. A program (or its compile error) stays in the cache, at a stable address, for the
// life of the cache; the number of distinct selector texts in a cluster is small.
class SelectorCache {
 public:
  // The compiled program, or the compile error with its position and the expression.
  const absl::StatusOr<cel::Program>& Get(std::string_view expression);

  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  absl::node_hash_map<std::string, absl::StatusOr<cel::Program>> programs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::plugins::dynamic_resources
