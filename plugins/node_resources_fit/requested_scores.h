#pragma once

// One resource's 0..100 score under each scoring strategy: upstream's formulas, in upstream's
// integer arithmetic. Inline, because NodeResourcesFit's per-node loops call them.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "plugins/helper/integer_division.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

inline int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return helper::Divide((capacity - requested) * framework::kMaxNodeScore, capacity);
}

inline int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Non-zero defaults can push requested above capacity.
  return helper::Divide(std::min(requested, capacity) * framework::kMaxNodeScore, capacity);
}

// The shape's piecewise-linear score at utilization `p` (0..100).
inline int64_t BrokenLinear(const std::vector<NodeResourcesFit::ShapePoint>& shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p > shape[i].utilization) continue;
    if (i == 0) return shape[0].score;
    const auto& lo = shape[i - 1];
    const auto& hi = shape[i];
    return lo.score +
           (hi.score - lo.score) * (p - lo.utilization) / (hi.utilization - lo.utilization);
  }
  return shape.back().score;
}

inline int64_t RatioResourceScore(const std::vector<NodeResourcesFit::ShapePoint>& shape,
                                  int64_t requested, int64_t capacity) {
  constexpr int64_t kMaxUtilization = 100;
  if (capacity == 0 || requested > capacity) return BrokenLinear(shape, kMaxUtilization);
  return BrokenLinear(shape, requested * kMaxUtilization / capacity);
}

}  // namespace kubesched::plugins
