#pragma once

// The binding cycle's half of upstream's volume binder: Reserve's plan for the chosen node
// (AssumePodVolumes) and PreBind's writes and wait (BindPodVolumes, checkBindings).
//
// Lifetime: a BindPlan owns copies of every object it names, so it outlives the scheduling cycle
// (and its snapshot) that made it. Threads: built by Reserve on the scheduling thread, then only
// read, by the bind worker that runs PreBind and Unreserve.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "plugins/volume_binding/pod_volumes.h"
#include "scheduler/api/storage.h"
#include "scheduler/framework/status.h"
#include "scheduler/framework/volume_binding.h"

namespace kubesched::plugins::volume_binding {

struct BindPlan {
  std::string node_name;
  api::LabelSet node_labels;  // bound PVs must still fit the node when the binding completes
  struct StaticBinding {
    std::shared_ptr<const api::PersistentVolume> volume;  // with claimRef naming `claim`
    std::shared_ptr<const api::PersistentVolumeClaim> claim;
    bool write = false;  // false: the PV names the claim already (pre-bound by the user)
  };
  std::vector<StaticBinding> bindings;
  // Claims to provision, annotated with the selected node.
  std::vector<std::shared_ptr<const api::PersistentVolumeClaim>> provisions;
  // What Reserve assumed in the cache (the objects that change).
  framework::VolumeAssumption assumption;
};

// The plan for `decision` on the node: each PV bound to its claim as upstream's
// GetBindVolumeToClaim writes it (claimRef, bound-by-controller), each claim to provision with
// the selected-node annotation.
BindPlan MakeBindPlan(const NodeDecision& decision, const api::Node& node);

// PreBind: the writes, then the wait until every claim is bound (at most `timeout`). Error
// statuses say what failed ("binding volumes: ..."). `cache` may be null only when the binder
// binds at once.
framework::Status BindPodVolumes(const BindPlan& plan, framework::VolumeBinder& binder,
                                 framework::VolumeAssumeCache* cache, absl::Duration timeout);

}  // namespace kubesched::plugins::volume_binding
