// What a profile's plugins declare for the core (framework/plugin.h): the events that help the
// pods they reject, wait keys, rejections preemption may lift, the resource screen, a watermark
// and node metrics. The capabilities are found once, when the framework is built.

#include <algorithm>

#include "scheduler/runtime/framework.h"

namespace kubesched::runtime {

void Framework::CollectDeclarations() {
  for (const auto& plugin : owned_) {
    declarations_.push_back({plugin->Name(), plugin->EventsToRegister(),
                             dynamic_cast<const framework::WaitKeysPlugin*>(plugin.get())});
  }
  for (const framework::RequestsFilterPlugin* requests : requests_filter_) {
    filter_screens_basic_.push_back(requests != nullptr &&
                                    requests->RejectsShortOfBasicResources());
  }
  for (const framework::PreFilterPlugin* plugin : pre_filter_) {
    allocates_claims_ = allocates_claims_ || plugin->AllocatesResourceClaims();
  }
  for (const WeightedScorePlugin& weighted : score_) {
    if (auto* reporter = dynamic_cast<framework::WatermarkReporter*>(weighted.plugin)) {
      watermark_reporter_ = reporter;
      break;
    }
  }
}

framework::ClusterEventSet Framework::EventsHelping(const std::vector<std::string>& plugins) const {
  if (plugins.empty()) return framework::kAllEvents;
  framework::ClusterEventSet events = 0;
  for (const std::string& name : plugins) {
    const auto it = std::find_if(declarations_.begin(), declarations_.end(),
                                 [&name](const Declaration& d) { return d.name == name; });
    if (it == declarations_.end()) return framework::kAllEvents;
    events |= it->events;
  }
  return events;
}

const framework::WaitKeysPlugin* Framework::WaitKeysPluginNamed(std::string_view name) const {
  for (const Declaration& declaration : declarations_) {
    if (declaration.name == name) return declaration.wait_keys;
  }
  return nullptr;
}

bool Framework::PreemptionMayLift(std::string_view pre_filter_plugin) const {
  for (const framework::PreFilterPlugin* plugin : pre_filter_) {
    if (plugin->Name() == pre_filter_plugin) return plugin->PreemptionMayLiftRejection();
  }
  return false;
}

bool Framework::ScreensBasicResources(const FilterSkips& skip) const {
  for (size_t i = 0; i < filter_screens_basic_.size(); ++i) {
    if (filter_screens_basic_[i] && (i >= skip.size() || !skip[i])) return true;
  }
  return false;
}

std::optional<absl::Duration> Framework::NodeMetricsPollInterval(std::string_view* consumer) const {
  std::optional<absl::Duration> interval;
  for (const WeightedScorePlugin& weighted : score_) {
    const auto* metrics = dynamic_cast<const framework::NodeMetricsConsumer*>(weighted.plugin);
    if (metrics == nullptr) continue;
    if (interval.has_value() && *interval <= metrics->NodeMetricsPollInterval()) continue;
    interval = metrics->NodeMetricsPollInterval();
    if (consumer != nullptr) *consumer = weighted.plugin->Name();
  }
  return interval;
}

}  // namespace kubesched::runtime
