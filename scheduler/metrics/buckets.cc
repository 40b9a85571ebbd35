#include "scheduler/metrics/buckets.h"

namespace kubesched::metrics {

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  double next = start;
  for (int i = 0; i < count; ++i) {
    bounds.push_back(next);
    next *= factor;
  }
  return bounds;
}

}  // namespace kubesched::metrics
