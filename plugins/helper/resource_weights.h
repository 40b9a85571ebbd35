#pragma once

// Scoring-resource lists shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "config/plugin_args.h"
#include "scheduler/api/resource.h"

namespace kubesched::plugins::helper {

// Upstream's default when a config lists no resources.
std::vector<config::ResourceWeight> DefaultResourceWeights();

// Non-empty unique names and weights in 1..100; errors are "<plugin>: <path>[i].<field>: ...".
absl::Status ValidateResourceWeights(std::string_view plugin, std::string_view path,
                                     const std::vector<config::ResourceWeight>& resources);

}  // namespace kubesched::plugins::helper
