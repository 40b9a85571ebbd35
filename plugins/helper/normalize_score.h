#pragma once

#include <cstdint>

#include "absl/types/span.h"

namespace kubesched::plugins::helper {

// Upstream's DefaultNormalizeScore: scales `scores` in place so that the highest becomes
// `max_priority` (score * max_priority / max, integer division). With `reverse` the result is
// flipped (max_priority - scaled), so that fewer "bad things" scores higher. When every score is
// 0 (or none is positive) the scores stay 0, or all become `max_priority` when reversing.
void DefaultNormalizeScore(int64_t max_priority, bool reverse, absl::Span<int64_t> scores);

}  // namespace kubesched::plugins::helper
