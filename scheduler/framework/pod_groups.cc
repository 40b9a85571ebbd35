#include "scheduler/framework/pod_groups.h"

#include <algorithm>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/framework/pod_info.h"

namespace kubesched::framework {
namespace {

// Content flattened to integers: the interning key.
using Key = std::vector<uint32_t>;

class Interner {
 public:
  uint32_t Intern(Key key) {
    absl::MutexLock lock(&mu_);
    const auto [it, inserted] =
        ids_.try_emplace(std::move(key), static_cast<uint32_t>(ids_.size()));
    return it->second;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<Key, uint32_t> ids_ ABSL_GUARDED_BY(mu_);
};

// Leaked on purpose: ids must stay valid during static destruction too.
Interner& LabelGroups() {
  static auto* interner = new Interner();
  return *interner;
}

Interner& Terms() {
  static auto* interner = new Interner();
  return *interner;
}

// Lengths precede variable parts, so that different contents never flatten alike.
void AppendRequirements(const std::vector<api::Requirement>& requirements, Key* key) {
  key->push_back(static_cast<uint32_t>(requirements.size()));
  for (const api::Requirement& r : requirements) {
    key->push_back(r.key);
    key->push_back(static_cast<uint32_t>(r.op));
    key->push_back(r.valid ? 1 : 0);
    key->push_back(static_cast<uint32_t>(static_cast<uint64_t>(r.number) >> 32));
    key->push_back(static_cast<uint32_t>(r.number));
    key->push_back(static_cast<uint32_t>(r.values.size()));
    key->insert(key->end(), r.values.begin(), r.values.end());
  }
}

void AppendSelector(const std::optional<api::LabelSelector>& selector, Key* key) {
  key->push_back(selector.has_value() ? 1 : 0);
  if (selector.has_value()) AppendRequirements(selector->requirements, key);
}

}  // namespace

LabelGroupId InternLabelGroup(api::Symbol namespace_symbol, const api::LabelSet& labels,
                              bool terminating) {
  Key key;
  key.reserve(2 + 2 * labels.size());
  key.push_back(namespace_symbol);
  key.push_back(terminating ? 1 : 0);
  for (const auto& [label, value] : labels.pairs()) {
    key.push_back(label);
    key.push_back(value);
  }
  return LabelGroups().Intern(std::move(key));
}

TermId InternTerm(const AffinityTerm& term) {
  Key key;
  key.push_back(term.topology_key);
  AppendSelector(term.selector, &key);
  AppendSelector(term.namespace_selector, &key);
  std::vector<api::Symbol> namespaces(term.namespaces.begin(), term.namespaces.end());
  std::sort(namespaces.begin(), namespaces.end());
  key.push_back(static_cast<uint32_t>(namespaces.size()));
  key.insert(key.end(), namespaces.begin(), namespaces.end());
  return Terms().Intern(std::move(key));
}

}  // namespace kubesched::framework
