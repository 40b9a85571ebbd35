#pragma once

#include "scheduler/api/objects.h"

namespace kubesched::queue {

// Upstream's isPodUpdated: whether `updated` differs from `old` in anything but its status and
// resourceVersion — the parts that can change the scheduling answer (labels, annotations, spec,
// deletion). The scheduler's own status patches (PodScheduled=False, nominatedNodeName) must not
// count, or every failed attempt would re-activate its pod.
bool PodChangedBeyondStatus(const api::Pod& old, const api::Pod& updated);

}  // namespace kubesched::queue
