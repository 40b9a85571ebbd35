#include "scheduler/metrics/histogram_family.h"

#include <limits>
#include <utility>

namespace kubesched::metrics {

AtomicHistogram::AtomicHistogram(const std::vector<double>* bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void AtomicHistogram::Observe(double value) {
  // Upper bounds are inclusive (`le`); a linear scan, as most values fall in the first buckets.
  size_t bucket = 0;
  while (bucket < bounds_->size() && value > (*bounds_)[bucket]) ++bucket;
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

prometheus::ClientMetric::Histogram AtomicHistogram::Snapshot() const {
  prometheus::ClientMetric::Histogram out;
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    const double bound =
        i < bounds_->size() ? (*bounds_)[i] : std::numeric_limits<double>::infinity();
    out.bucket.push_back({cumulative, bound});
  }
  out.sample_count = cumulative;
  out.sample_sum = sum_.load(std::memory_order_relaxed);
  return out;
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {}

AtomicHistogram& HistogramFamily::Get(const std::vector<std::string>& label_values) {
  absl::MutexLock lock(&mu_);
  for (Series& series : series_) {
    if (series.label_values == label_values) return *series.histogram;
  }
  series_.push_back({label_values, std::make_unique<AtomicHistogram>(&bounds_)});
  return *series_.back().histogram;
}

std::vector<prometheus::MetricFamily> HistogramFamily::Collect() const {
  prometheus::MetricFamily family;
  family.name = name_;
  family.help = help_;
  family.type = prometheus::MetricType::Histogram;
  absl::MutexLock lock(&mu_);
  for (const Series& series : series_) {
    prometheus::ClientMetric metric;
    for (size_t i = 0; i < label_names_.size() && i < series.label_values.size(); ++i) {
      metric.label.push_back({label_names_[i], series.label_values[i]});
    }
    metric.histogram = series.histogram->Snapshot();
    family.metric.push_back(std::move(metric));
  }
  if (family.metric.empty()) return {};  // as prometheus-cpp's families: nothing until observed
  return {std::move(family)};
}

}  // namespace kubesched::metrics
