#pragma once

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
inline constexpr std::string_view kDefaultBinder = "DefaultBinder";

}  // namespace kubesched::plugins::names
