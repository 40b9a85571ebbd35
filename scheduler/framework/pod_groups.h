#pragma once

// Ids for what many pods share, so that per-node summaries hold small integers and a plugin can
// evaluate a selector once per distinct case instead of once per pod:
//  - a label group: a namespace, a full label set and whether the pod is terminating (every
//    running pod of a Deployment revision);
//  - a term id: the content of a pod (anti-)affinity term (every pod of the same template).
// Equal content always gets the same id. Ids are interned for the life of the process, as label
// symbols are; their number grows with the distinct label sets and terms ever seen, not with pods.
//
// Thread-safety: both functions are safe to call from any thread (one mutex each).

#include <cstdint>

#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"

namespace kubesched::framework {

struct AffinityTerm;

using LabelGroupId = uint32_t;
using TermId = uint32_t;

LabelGroupId InternLabelGroup(api::Symbol namespace_symbol, const api::LabelSet& labels,
                              bool terminating);
TermId InternTerm(const AffinityTerm& term);

}  // namespace kubesched::framework
