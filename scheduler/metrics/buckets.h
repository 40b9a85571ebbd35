#pragma once

#include <vector>

namespace kubesched::metrics {

// Upstream's Exp(start, factor, count), built the way prometheus.ExponentialBuckets builds it (by
// repeated multiplication), so that the bounds, and the `le` labels, are the very same doubles.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace kubesched::metrics
