#include "scheduler/framework/node_table.h"

#include <string>
#include <utility>

#include "absl/hash/hash.h"

namespace kubesched::framework {
namespace {

struct TaintListHash {
  size_t operator()(const std::vector<api::Taint>& taints) const {
    size_t seed = taints.size();
    for (const api::Taint& taint : taints) {
      seed = absl::HashOf(seed, taint.key, taint.value, static_cast<int>(taint.effect));
    }
    return seed;
  }
};

struct TaintListEq {
  bool operator()(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) const {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect) {
        return false;
      }
    }
    return true;
  }
};

struct Registry {
  absl::Mutex mu;
  absl::flat_hash_map<std::vector<api::Taint>, TaintSetId, TaintListHash, TaintListEq> ids
      ABSL_GUARDED_BY(mu);
  std::vector<std::vector<api::Taint>> sets ABSL_GUARDED_BY(mu) = {{}};
};

Registry& TheRegistry() {
  static Registry* const registry = new Registry();
  return *registry;
}

}  // namespace

TaintSetId TaintSets::Intern(const std::vector<api::Taint>& taints) {
  if (taints.empty()) return kNoTaints;
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  auto [it, inserted] =
      registry.ids.try_emplace(taints, static_cast<TaintSetId>(registry.sets.size()));
  if (inserted) registry.sets.push_back(taints);
  return it->second;
}

absl::Mutex& TaintSets::Mu() { return TheRegistry().mu; }

const std::vector<std::vector<api::Taint>>& TaintSets::Sets() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  return TheRegistry().sets;
}

size_t TaintSets::Count() {
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  return registry.sets.size();
}

}  // namespace kubesched::framework
