#pragma once

// Resource-registry helpers for the decoders; not part of the api contract.

#include <optional>
#include <string_view>

#include "scheduler/api/resource.h"

namespace kubesched::api::internal {

// The most resource names input may introduce. ResourceList is dense, so each new name widens
// every list that mentions it; a bound keeps hostile input from growing them without limit.
inline constexpr size_t kMaxInputResources = 1024;

// Like InternResource, but refuses a new name once `limit` ids exist. Known names always succeed.
std::optional<ResourceId> TryInternResource(std::string_view name,
                                            size_t limit = kMaxInputResources);

}  // namespace kubesched::api::internal
