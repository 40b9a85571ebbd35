#include "plugins/helper/normalize_score.h"

#include <algorithm>

#include "plugins/helper/integer_division.h"

namespace kubesched::plugins::helper {

void DefaultNormalizeScore(int64_t max_priority, bool reverse, absl::Span<int64_t> scores) {
  int64_t max_count = 0;
  for (const int64_t score : scores) max_count = std::max(max_count, score);
  if (max_count == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), max_priority);
    return;
  }
  for (int64_t& score : scores) {
    score = Divide(max_priority * score, max_count);
    if (reverse) score = max_priority - score;
  }
}

}  // namespace kubesched::plugins::helper
