#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/api/labels.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/resource.h"

namespace kubesched::framework {

// Nodes that look alike to the Watermark strategy, with their summed allocatable and requests:
// the same NoSchedule/NoExecute taints (a cordoned node counts as tainted
// node.kubernetes.io/unschedulable:NoSchedule) and the same values of the label keys that
// watermark pools select on. A cluster has a handful of them, so a pod's allocated ratio over the
// nodes it could use is a sum over groups, never over nodes.
struct NodeGroup {
  // Stable for the life of the cache and never reused: a key for state kept per set of groups.
  int64_t id = 0;
  std::vector<api::Taint> taints;  // sorted by key, value, effect
  api::LabelSet pool_labels;       // the nodes' labels restricted to the pools' label keys
  int32_t nodes = 0;               // nodes with a Node object in the group (never 0 in a snapshot)
  api::ResourceList allocatable;
  api::ResourceList requested;  // real requests of bound and assumed pods
};

// Ordered by id. Empty when no profile uses the Watermark strategy (the cache keeps no groups).
using NodeGroups = std::vector<NodeGroup>;

// Whether `tolerations` tolerate every taint of `group`, i.e. whether a pod with them may use the
// group's nodes as far as taints and cordons go.
bool ToleratesGroup(const std::vector<api::Toleration>& tolerations, const NodeGroup& group);

}  // namespace kubesched::framework
