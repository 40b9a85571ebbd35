#include "plugins/registry/registry.h"

#include "plugins/coscheduling/coscheduling.h"
#include "plugins/default_binder/default_binder.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/image_locality/image_locality.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/most_available/most_available.h"
#include "plugins/names.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_name/node_name.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/node_unschedulable/node_unschedulable.h"
#include "plugins/node_volume_limits/node_volume_limits.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "plugins/priority_sort/priority_sort.h"
#include "plugins/queue_quota/queue_quota.h"
#include "plugins/scheduling_gates/scheduling_gates.h"
#include "plugins/taint_toleration/taint_toleration.h"
#include "plugins/volume_binding/volume_binding.h"
#include "plugins/volume_restrictions/volume_restrictions.h"
#include "plugins/volume_zone/volume_zone.h"

namespace kubesched::plugins {

const absl::flat_hash_map<std::string_view, PluginFactory>& Registry() {
  // Built on first use and never destroyed, so that it outlives every framework that looks a
  // factory up, including during static destruction.
  static const auto* const registry = new absl::flat_hash_map<std::string_view, PluginFactory>{
      {names::kPrioritySort, NewPrioritySort},
      {names::kNodeResourcesFit, NewNodeResourcesFit},
      {names::kNodeResourcesBalancedAllocation, NewNodeResourcesBalancedAllocation},
      {names::kNodeName, NewNodeName},
      {names::kNodeUnschedulable, NewNodeUnschedulable},
      {names::kNodeAffinity, NewNodeAffinity},
      {names::kTaintToleration, NewTaintToleration},
      {names::kNodePorts, NewNodePorts},
      {names::kInterPodAffinity, NewInterPodAffinity},
      {names::kPodTopologySpread, NewPodTopologySpread},
      {names::kDefaultBinder, NewDefaultBinder},
      {names::kMostAvailable, NewMostAvailable},
      {names::kQueueQuota, NewQueueQuota},
      {names::kDefaultPreemption, NewDefaultPreemption},
      {names::kImageLocality, NewImageLocality},
      {names::kSchedulingGates, NewSchedulingGates},
      {names::kVolumeBinding, NewVolumeBinding},
      {names::kVolumeRestrictions, NewVolumeRestrictions},
      {names::kNodeVolumeLimits, NewNodeVolumeLimits},
      {names::kVolumeZone, NewVolumeZone},
      {names::kCoscheduling, NewCoscheduling},
      {names::kDynamicResources, NewDynamicResources},
  };
  return *registry;
}

}  // namespace kubesched::plugins
