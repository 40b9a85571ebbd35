#include "plugins/dynamic_resources/selector_cache.h"

#include <utility>

#include "scheduler/util/strings.h"

namespace kubesched::plugins::dynamic_resources {

const absl::StatusOr<cel::Program>& SelectorCache::Get(std::string_view expression) {
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = programs_.find(util::Absl(expression));
    if (it != programs_.end()) return it->second;
  }
  // Compiled outside the lock: a duplicate compile in a race is cheaper than serializing.
  absl::StatusOr<cel::Program> program = cel::Compile(expression);
  absl::MutexLock lock(&mu_);
  return programs_.try_emplace(std::string(expression), std::move(program)).first->second;
}

size_t SelectorCache::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return programs_.size();
}

}  // namespace kubesched::plugins::dynamic_resources
