#include "scheduler/instrumentation/instrumentation.h"

#include "scheduler/client/server_url.h"

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
      state_(std::make_shared<StateCollector>(ProfileNames(config), metrics_.get())),
      process_(std::make_shared<ProcessCollector>()),
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
  all.push_back(process_);
  return all;
}

absl::Status Instrumentation::InstrumentRestClient(client::RestConfig& rest) {
  absl::StatusOr<client::ServerUrl> url = client::ParseServerUrl(rest.server);
  if (!url.ok()) return url.status();
  rest.on_request = [metrics = metrics_.get(), host = url->host_header](
                        std::string_view method, int status, double seconds) {
    // A watch is a GET, counted (not timed) when it ends, as client-go counts it.
    metrics->ObserveApiRequest(host, method == "WATCH" ? "GET" : method, status, seconds);
  };
  return absl::OkStatus();
}

}  // namespace kubesched::metrics
