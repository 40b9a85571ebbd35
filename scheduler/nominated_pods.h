#pragma once

// Pods nominated to nodes by preemption (they wait for their victims to leave), as one scheduling
// cycle sees them, and the Filter phase that counts them (upstream's
// RunFilterPluginsWithNominatedPods).

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/runtime/framework.h"

namespace kubesched::scheduler {

class NominatedPods {
 public:
  // `by_node`: the queue's nominations (node name -> pods).
  void Reset(std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> by_node,
             const framework::Snapshot& snapshot);
  bool empty() const { return by_name_.empty(); }
  // The pods nominated to `node` (a snapshot node, by address: no string look-up per node), or
  // null. ForName serves copies of nodes (preemption's what-ifs).
  const std::vector<framework::PodInfoPtr>* For(const framework::NodeInfo* node) const;
  const std::vector<framework::PodInfoPtr>* ForName(const std::string& node_name) const;

 private:
  absl::flat_hash_map<std::string, std::vector<framework::PodInfoPtr>> by_name_;
  absl::flat_hash_map<const framework::NodeInfo*, const std::vector<framework::PodInfoPtr>*>
      by_node_;
};

// Runs `fw`'s filters for `pod` on `node`. When pods of priority >= the pod's (other than itself)
// are nominated to the node, the filters must pass twice: with those pods added to a copy of the
// node (they will take their room), and on the node as it is (a pod's affinity must not rest on
// pods that are not there yet). `nominated` may be null.
framework::Status RunFiltersWithNominated(const runtime::Framework& fw,
                                          const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          const std::vector<bool>& skip,
                                          const std::vector<framework::PodInfoPtr>* nominated);

// The PostFilterHost of one cycle: the profile's filters with the cycle's PreFilter skips and
// nominations.
class CycleFilterHost final : public framework::PostFilterHost {
 public:
  CycleFilterHost(const runtime::Framework& fw, const std::vector<bool>& skip,
                  const NominatedPods& nominated)
      : fw_(fw), skip_(skip), nominated_(nominated) {}
  framework::Status RunFilters(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& node) const override;

 private:
  const runtime::Framework& fw_;
  const std::vector<bool>& skip_;
  const NominatedPods& nominated_;
};

}  // namespace kubesched::scheduler
