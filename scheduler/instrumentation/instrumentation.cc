#include "scheduler/instrumentation/instrumentation.h"

namespace kubesched::metrics {
namespace {

std::vector<std::string> ProfileNames(const config::Configuration& config) {
  std::vector<std::string> names;
  for (const config::Profile& profile : config.profiles) names.push_back(profile.scheduler_name);
  return names;
}

}  // namespace

Instrumentation::Instrumentation(const util::Clock* clock, const config::Configuration& config)
    : metrics_(std::make_unique<SchedulerMetrics>()),
      state_(std::make_shared<StateCollector>(ProfileNames(config))),
      observer_(metrics_.get(), clock) {
  // The profiles' series exist from the start, at zero, before any pod is tried.
  for (const std::string& profile : ProfileNames(config)) metrics_->Profile(profile);
}

void Instrumentation::Instrument(scheduler::SchedulerDeps& deps) {
  fanout_ = std::make_unique<ObserverFanout>(
      std::vector<scheduler::SchedulingObserver*>{deps.observer, &observer_});
  deps.observer = fanout_.get();
  deps.metrics = metrics_.get();
}

std::vector<std::shared_ptr<prometheus::Collectable>> Instrumentation::collectables() const {
  std::vector<std::shared_ptr<prometheus::Collectable>> all = metrics_->collectables();
  all.push_back(state_);
  return all;
}

}  // namespace kubesched::metrics
