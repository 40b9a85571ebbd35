#pragma once

#include <string_view>
#include <vector>

#include "scheduler/api/objects.h"

namespace kubesched::api {

// The taint a cordoned node (spec.unschedulable) implies, as upstream's NodeUnschedulable sees it.
inline constexpr std::string_view kUnschedulableTaintKey = "node.kubernetes.io/unschedulable";

// Whether one of `tolerations` tolerates that taint. Builds nothing per call: the per-node filter
// and the bind workers both ask.
bool ToleratesCordon(const std::vector<Toleration>& tolerations);

}  // namespace kubesched::api
