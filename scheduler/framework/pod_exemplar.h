#pragma once

// What makes two pods alike for filters that judge the pod and the node alone
// (FilterPlugin::FilterJudgesPodAndNodeAlone): the same namespace, labels, annotations, spec,
// priority and NonPreemptible policy, judged by the same filters (VerdictScope). A verdict such
// filters gave one pod on a node holds for every pod alike while the node is the same, so a cache
// of verdicts keeps them under the exemplar they were judged for.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/btree_map.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::framework {

class PodExemplar {
 public:
  // Returns true when `pod`, judged in `scope`, is alike the exemplar; otherwise `pod` becomes
  // the exemplar and era() moves on.
  bool Follow(const PodInfo& pod, const VerdictScope& scope);
  // Bumped whenever the exemplar changes (0 before the first): what was kept under an older era
  // is void.
  uint64_t era() const { return era_; }

 private:
  struct Fields {
    std::string namespace_name;
    api::LabelSet labels;
    absl::btree_map<std::string, std::string> annotations;
    api::PodSpec spec;
    int32_t priority = 0;
    bool non_preemptible = false;
    VerdictScope scope;
  };

  bool Alike(const PodInfo& pod, const VerdictScope& scope) const;

  std::optional<Fields> fields_;
  uint64_t era_ = 0;
};

}  // namespace kubesched::framework
