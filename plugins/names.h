#pragma once

#include <array>
#include <string_view>

// Every plugin name in the binary, as upstream spells them (configs are shared with
// kube-scheduler).
namespace kubesched::plugins::names {

inline constexpr std::string_view kPrioritySort = "PrioritySort";
inline constexpr std::string_view kNodeResourcesFit = "NodeResourcesFit";
inline constexpr std::string_view kNodeResourcesBalancedAllocation =
    "NodeResourcesBalancedAllocation";
inline constexpr std::string_view kNodeName = "NodeName";
inline constexpr std::string_view kNodeUnschedulable = "NodeUnschedulable";
inline constexpr std::string_view kNodeAffinity = "NodeAffinity";
inline constexpr std::string_view kTaintToleration = "TaintToleration";
inline constexpr std::string_view kNodePorts = "NodePorts";
inline constexpr std::string_view kInterPodAffinity = "InterPodAffinity";
inline constexpr std::string_view kPodTopologySpread = "PodTopologySpread";
inline constexpr std::string_view kDefaultBinder = "DefaultBinder";
inline constexpr std::string_view kDefaultPreemption = "DefaultPreemption";
inline constexpr std::string_view kImageLocality = "ImageLocality";
inline constexpr std::string_view kSchedulingGates = "SchedulingGates";
inline constexpr std::string_view kVolumeBinding = "VolumeBinding";
inline constexpr std::string_view kVolumeRestrictions = "VolumeRestrictions";
inline constexpr std::string_view kNodeVolumeLimits = "NodeVolumeLimits";
inline constexpr std::string_view kVolumeZone = "VolumeZone";
inline constexpr std::string_view kDynamicResources = "DynamicResources";
// kubesched extension (not upstream): load-aware scoring, opt-in.
inline constexpr std::string_view kMostAvailable = "MostAvailable";
// kubesched extension: hierarchical queue quota and budgets, on by default.
inline constexpr std::string_view kQueueQuota = "QueueQuota";
// kubesched extension: gangs (PodGroups of scheduler-plugins, implicit groups), on by default.
inline constexpr std::string_view kCoscheduling = "Coscheduling";

inline constexpr std::array kAll = {
    kPrioritySort,      kNodeResourcesFit,  kNodeResourcesBalancedAllocation,
    kNodeName,          kNodeUnschedulable, kNodeAffinity,
    kTaintToleration,   kNodePorts,         kInterPodAffinity,
    kPodTopologySpread, kDefaultBinder,     kMostAvailable,
    kQueueQuota,        kDefaultPreemption, kImageLocality,
    kSchedulingGates,   kVolumeBinding,     kVolumeRestrictions,
    kNodeVolumeLimits,  kVolumeZone,        kCoscheduling,
    kDynamicResources,
};

// Upstream plugins kubesched does not implement. A config may disable them (kube-scheduler
// configs are read unchanged); enabling one is an error.
inline constexpr std::array kUpstreamOnly = {
    std::string_view("EBSLimits"),
    std::string_view("GCEPDLimits"),
    std::string_view("AzureDiskLimits"),
    std::string_view("CinderLimits"),
    std::string_view("NodeResourcesLeastAllocated"),
};

}  // namespace kubesched::plugins::names
