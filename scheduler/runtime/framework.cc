#include "scheduler/runtime/framework.h"

#include <algorithm>
#include <new>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "scheduler/api/symbol.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/util/strings.h"

namespace kubesched::runtime {
namespace {

using framework::Code;
using framework::Status;

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const config::PluginRef* FindEnabled(const config::PluginSet& set, std::string_view name) {
  for (const auto& ref : set.enabled) {
    if (ref.name == name) return &ref;
  }
  return nullptr;
}

// One extension point's plugins after multiPoint expansion (upstream's expandMultiPointPlugins):
// multiPoint plugins that implement the point and are neither disabled there nor given again
// explicitly, followed by the point's own enabled list.
template <typename Interface>
struct Expanded {
  std::vector<std::pair<Interface*, const config::PluginRef*>> plugins;
};

Status Stamp(Status status, std::string_view plugin) {
  status.set_plugin(plugin);
  return status;
}

using metrics::ExtensionPoint;
using SteadyClock = std::chrono::steady_clock;

int64_t NanosecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start).count();
}

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

Code CodeOf(const Status& status) { return status.code(); }
Code CodeOf(const framework::PreFilterOutcome& outcome) { return outcome.status.code(); }
Code CodeOf(const framework::PostFilterOutcome& outcome) { return outcome.status.code(); }
Code CodeOf(const PreFilterSummary& summary) { return summary.status.code(); }
Code CodeOf(const PreScoreSummary& summary) { return summary.status.code(); }

// Runs one extension point's `plugins` (`run`), observing the whole as upstream does when the
// profile has metrics. `run` returns a Status-like result, or nothing (always Success). A point
// without plugins takes no time: it is observed as 0 s without reading the clock (each read
// costs ~20 ns, and several points are empty in most profiles).
template <typename Run>
auto ObservePoint(metrics::ProfileMetrics* metrics, ExtensionPoint point, size_t plugins,
                  Run&& run) {
  using Result = decltype(run());
  if (metrics == nullptr) return run();
  const bool timed = plugins > 0;
  const auto start = timed ? SteadyClock::now() : SteadyClock::time_point();
  const auto seconds = [&] { return timed ? SecondsSince(start) : 0.0; };
  if constexpr (std::is_void_v<Result>) {
    run();
    metrics->ObserveExtensionPoint(point, Code::kSuccess, seconds());
  } else {
    Result result = run();
    metrics->ObserveExtensionPoint(point, CodeOf(result), seconds());
    return result;
  }
}

// One plugin call (`call`), timed into `slot` when the cycle is sampled.
template <typename Call>
auto TimePlugin(metrics::PluginTimings* timings, int slot, const framework::CycleState& state,
                Call&& call) {
  using Result = decltype(call());
  if (timings == nullptr || !state.record_plugin_metrics()) return call();
  const auto start = SteadyClock::now();
  if constexpr (std::is_void_v<Result>) {
    call();
    timings->Observe(slot, Code::kSuccess, NanosecondsSince(start));
  } else {
    Result result = call();
    timings->Observe(slot, CodeOf(result), NanosecondsSince(start));
    return result;
  }
}

}  // namespace

ScorePhaseTimer::ScorePhaseTimer(metrics::ProfileMetrics* metrics)
    : metrics_(metrics),
      start_(metrics != nullptr ? SteadyClock::now() : SteadyClock::time_point()) {}

ScorePhaseTimer::~ScorePhaseTimer() {
  if (metrics_ != nullptr) {
    metrics_->ObserveExtensionPoint(ExtensionPoint::kScore, Code::kSuccess, SecondsSince(start_));
  }
}

absl::StatusOr<std::unique_ptr<Framework>> Framework::Create(const config::Profile& profile,
                                                             const plugins::PluginHandle& handle,
                                                             const plugins::RegistryMap& registry) {
  std::unique_ptr<Framework> fw(new Framework());
  if (auto status = fw->Build(profile, handle, registry); !status.ok()) return status;
  return fw;
}

absl::StatusOr<framework::Plugin*> Framework::Instantiate(const std::string& name,
                                                          const config::Profile& profile,
                                                          const plugins::PluginHandle& handle,
                                                          const plugins::RegistryMap& registry) {
  for (const auto& plugin : owned_) {
    if (plugin->Name() == name) return plugin.get();
  }
  auto factory = registry.find(name);
  if (factory == registry.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile \"", profile.scheduler_name, "\": unknown plugin \"", name, "\""));
  }
  config::PluginArgs args = config::DefaultPluginArgs(name);
  for (const auto& entry : profile.plugin_config) {
    if (entry.name == name) args = entry.args;
  }
  auto plugin = factory->second(args, handle);
  if (!plugin.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile \"", profile.scheduler_name, "\": ", plugin.status().message()));
  }
  owned_.push_back(std::move(*plugin));
  return owned_.back().get();
}

namespace {

// Collects the plugins of one extension point. `point` is the config's list for that point and
// `point_name` its name for error messages.
template <typename Interface, typename InstantiateFn>
absl::StatusOr<Expanded<Interface>> Expand(const config::Plugins& plugins,
                                           const config::PluginSet& point,
                                           std::string_view point_name, InstantiateFn instantiate) {
  Expanded<Interface> out;
  const bool all_disabled = Contains(point.disabled, "*");
  for (const auto& ref : plugins.multi_point.enabled) {
    if (all_disabled || Contains(point.disabled, ref.name)) continue;
    if (FindEnabled(point, ref.name) != nullptr) continue;  // given explicitly below
    auto plugin = instantiate(ref.name);
    if (!plugin.ok()) return plugin.status();
    if (auto* typed = dynamic_cast<Interface*>(*plugin)) out.plugins.emplace_back(typed, &ref);
  }
  for (const auto& ref : point.enabled) {
    auto plugin = instantiate(ref.name);
    if (!plugin.ok()) return plugin.status();
    auto* typed = dynamic_cast<Interface*>(*plugin);
    if (typed == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("plugin \"", ref.name, "\" does not implement ", util::Absl(point_name)));
    }
    out.plugins.emplace_back(typed, &ref);
  }
  return out;
}

template <typename Interface>
std::vector<Interface*> Plain(const Expanded<Interface>& expanded) {
  std::vector<Interface*> out;
  for (const auto& [plugin, ref] : expanded.plugins) out.push_back(plugin);
  return out;
}

// Index of the plugin object `target` among `candidates`, compared as framework::Plugin.
template <typename A, typename B>
std::vector<int> IndexOfSamePlugin(const std::vector<A*>& targets,
                                   const std::vector<B*>& candidates) {
  std::vector<int> out;
  for (auto* target : targets) {
    const framework::Plugin* base = target;
    int found = -1;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (static_cast<const framework::Plugin*>(candidates[i]) == base) found = static_cast<int>(i);
    }
    out.push_back(found);
  }
  return out;
}

}  // namespace

absl::Status Framework::Build(const config::Profile& profile, const plugins::PluginHandle& handle,
                              const plugins::RegistryMap& registry) {
  profile_name_ = profile.scheduler_name;
  percentage_ = profile.percentage_of_nodes_to_score;
  auto instantiate = [&](const std::string& name) {
    return Instantiate(name, profile, handle, registry);
  };
  const auto& p = profile.plugins;
  auto wrap = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile \"", profile_name_, "\": ", s.message()));
  };

  auto queue_sort = Expand<framework::QueueSortPlugin>(p, p.queue_sort, "queueSort", instantiate);
  if (!queue_sort.ok()) return wrap(queue_sort.status());
  if (queue_sort->plugins.size() != 1) {
    return wrap(absl::InvalidArgumentError(absl::StrCat(
        "exactly one queueSort plugin must be enabled, found ", queue_sort->plugins.size())));
  }
  queue_sort_ = queue_sort->plugins[0].first;

#define KUBESCHED_EXPAND(field, Interface, point, name)               \
  {                                                                   \
    auto expanded = Expand<Interface>(p, p.point, name, instantiate); \
    if (!expanded.ok()) return wrap(expanded.status());               \
    field = Plain(*expanded);                                         \
  }
  KUBESCHED_EXPAND(pre_filter_, framework::PreFilterPlugin, pre_filter, "preFilter");
  KUBESCHED_EXPAND(filter_, framework::FilterPlugin, filter, "filter");
  KUBESCHED_EXPAND(post_filter_, framework::PostFilterPlugin, post_filter, "postFilter");
  KUBESCHED_EXPAND(pre_score_, framework::PreScorePlugin, pre_score, "preScore");
  KUBESCHED_EXPAND(reserve_, framework::ReservePlugin, reserve, "reserve");
  KUBESCHED_EXPAND(permit_, framework::PermitPlugin, permit, "permit");
  KUBESCHED_EXPAND(pre_bind_, framework::PreBindPlugin, pre_bind, "preBind");
  KUBESCHED_EXPAND(bind_, framework::BindPlugin, bind, "bind");
  KUBESCHED_EXPAND(post_bind_, framework::PostBindPlugin, post_bind, "postBind");
#undef KUBESCHED_EXPAND

  auto score = Expand<framework::ScorePlugin>(p, p.score, "score", instantiate);
  if (!score.ok()) return wrap(score.status());
  for (const auto& [plugin, ref] : score->plugins) {
    // An explicit score entry's weight wins over the multiPoint one; unset means 1.
    int64_t weight = ref->weight;
    if (const auto* explicit_ref = FindEnabled(p.score, ref->name);
        explicit_ref != nullptr && explicit_ref->weight != 0) {
      weight = explicit_ref->weight;
    }
    score_.push_back({plugin, weight == 0 ? 1 : weight});
  }
  if (bind_.empty()) {
    return wrap(absl::InvalidArgumentError("at least one bind plugin must be enabled"));
  }
  filter_pre_filter_index_ = IndexOfSamePlugin(filter_, pre_filter_);
  for (const framework::FilterPlugin* filter : filter_) {
    filter_names_.push_back(filter->Name());
    requests_filter_.push_back(dynamic_cast<const framework::RequestsFilterPlugin*>(filter));
    filter_reads_pods_.push_back(filter->FilterReadsPods());
  }
  for (size_t i = 0; i < filter_.size(); ++i) {
    const int pre = filter_pre_filter_index_[i];
    if (pre < 0) continue;
    const auto* extensions = pre_filter_[pre]->pre_filter_extensions();
    if (extensions != nullptr) extensions_.push_back({extensions, pre_filter_[pre]->Name(), i});
  }
  std::vector<framework::ScorePlugin*> score_plugins;
  for (const auto& s : score_) score_plugins.push_back(s.plugin);
  score_pre_score_index_ = IndexOfSamePlugin(score_plugins, pre_score_);
  CollectDeclarations();
  if (handle.metrics != nullptr) ResolveMetrics(handle.metrics);
  return absl::OkStatus();
}

void Framework::ResolveMetrics(metrics::SchedulerMetrics* metrics) {
  scheduler_metrics_ = metrics;
  metrics_ = &metrics->Profile(profile_name_);
  timings_ = &metrics->plugin_timings();
  auto add = [this](ExtensionPoint point, const auto& plugins) {
    auto& slots = slots_[static_cast<size_t>(point)];
    for (const auto* plugin : plugins) slots.push_back(timings_->Register(plugin->Name(), point));
  };
  add(ExtensionPoint::kPreFilter, pre_filter_);
  add(ExtensionPoint::kFilter, filter_);
  add(ExtensionPoint::kPostFilter, post_filter_);
  add(ExtensionPoint::kPreScore, pre_score_);
  add(ExtensionPoint::kReserve, reserve_);
  add(ExtensionPoint::kUnreserve, reserve_);
  add(ExtensionPoint::kPermit, permit_);
  add(ExtensionPoint::kPreBind, pre_bind_);
  add(ExtensionPoint::kBind, bind_);
  add(ExtensionPoint::kPostBind, post_bind_);
  for (const auto& weighted : score_) {
    const auto* plugin = weighted.plugin;
    slots_[static_cast<size_t>(ExtensionPoint::kScore)].push_back(
        timings_->Register(plugin->Name(), ExtensionPoint::kScore));
    slots_[static_cast<size_t>(ExtensionPoint::kScoreExtensionNormalize)].push_back(
        plugin->normalizer() == nullptr
            ? -1
            : timings_->Register(plugin->Name(), ExtensionPoint::kScoreExtensionNormalize));
  }
}

framework::Status ExcludedByPreFilter(const PreFilterSummary& summary) {
  const std::string reason =
      absl::StrCat("node(s) didn't satisfy plugin(s) [",
                   util::Absl(util::Join(summary.restricting_plugins, " ")), "]");
  Status status = Status::Unresolvable(api::StableText(reason));
  if (!summary.restricting_plugins.empty()) status.set_plugin(summary.restricting_plugins.front());
  return status;
}

PreFilterSummary Framework::RunPreFilter(framework::CycleState& state,
                                         const framework::PodInfo& pod,
                                         const framework::Snapshot& snapshot,
                                         std::string_view except) const {
  if (!except.empty()) return RunPreFilterPlugins(state, pod, snapshot, except);
  // A new cycle: upstream samples whether its plugin calls are timed here (schedulePod).
  state.set_record_plugin_metrics(timings_ != nullptr && metrics::PluginTimings::SampleCycle());
  return ObservePoint(metrics_, ExtensionPoint::kPreFilter, pre_filter_.size(),
                      [&] { return RunPreFilterPlugins(state, pod, snapshot, except); });
}

PreFilterSummary Framework::RunPreFilterPlugins(framework::CycleState& state,
                                                const framework::PodInfo& pod,
                                                const framework::Snapshot& snapshot,
                                                std::string_view except) const {
  PreFilterSummary summary;
  std::vector<bool> skipped_pre_filter(pre_filter_.size(), false);
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    if (!except.empty() && pre_filter_[i]->Name() == except) {
      skipped_pre_filter[i] = true;
      continue;
    }
    auto outcome = TimePlugin(timings_, Slot(ExtensionPoint::kPreFilter, i), state,
                              [&] { return pre_filter_[i]->PreFilter(state, pod, snapshot); });
    if (outcome.status.IsSkip()) {
      skipped_pre_filter[i] = true;
      continue;
    }
    if (!outcome.status.IsSuccess()) {
      summary.status = Stamp(std::move(outcome.status), pre_filter_[i]->Name());
      return summary;
    }
    if (outcome.result.node_names.has_value()) {
      summary.restricting_plugins.push_back(pre_filter_[i]->Name());
      if (!summary.node_names.has_value()) {
        summary.node_names = std::move(outcome.result.node_names);
      } else {
        absl::erase_if(*summary.node_names, [&](const std::string& name) {
          return !outcome.result.node_names->contains(name);
        });
      }
    }
  }
  summary.skip_filter.resize(filter_.size(), false);
  for (size_t i = 0; i < filter_.size(); ++i) {
    const int pre = filter_pre_filter_index_[i];
    summary.skip_filter[i] =
        (pre >= 0 && skipped_pre_filter[pre]) || (!except.empty() && filter_[i]->Name() == except);
  }
  return summary;
}

bool Framework::HasActiveExtensions(const std::vector<bool>& skip) const {
  for (const Extension& extension : extensions_) {
    if (extension.filter_index >= skip.size() || !skip[extension.filter_index]) return true;
  }
  return false;
}

Status Framework::RunPreFilterExtensionAddPod(framework::CycleState& state,
                                              const framework::PodInfo& pod,
                                              const framework::PodInfo& added,
                                              const framework::NodeInfo& node,
                                              const std::vector<bool>& skip) const {
  for (const Extension& extension : extensions_) {
    if (extension.filter_index < skip.size() && skip[extension.filter_index]) continue;
    Status status = extension.extensions->AddPod(state, pod, added, node);
    if (!status.IsSuccess()) return Stamp(std::move(status), extension.name);
  }
  return Status::Success();
}

Status Framework::RunPreFilterExtensionRemovePod(framework::CycleState& state,
                                                 const framework::PodInfo& pod,
                                                 const framework::PodInfo& removed,
                                                 const framework::NodeInfo& node,
                                                 const std::vector<bool>& skip) const {
  for (const Extension& extension : extensions_) {
    if (extension.filter_index < skip.size() && skip[extension.filter_index]) continue;
    Status status = extension.extensions->RemovePod(state, pod, removed, node);
    if (!status.IsSuccess()) return Stamp(std::move(status), extension.name);
  }
  return Status::Success();
}

Status Framework::RunFilter(const framework::CycleState& state, const framework::PodInfo& pod,
                            const framework::NodeInfo& node, const std::vector<bool>& skip,
                            std::vector<Status>* all_statuses) const {
  Status first;
  if (all_statuses == nullptr) {
    RunFilterInto(state, pod, node, skip, first);
    return first;
  }
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) {
      all_statuses->push_back(Stamp(Status::Skip(), filter_names_[i]));
      continue;
    }
    Status status = filter_[i]->Filter(state, pod, node);
    all_statuses->push_back(Stamp(status, filter_names_[i]));
    if (!status.IsSuccess() && first.IsSuccess()) {
      status.set_plugin(filter_names_[i]);
      first = std::move(status);
    }
  }
  return first;
}

void Framework::RunFilterInto(const framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::NodeInfo& node, const std::vector<bool>& skip,
                              Status& out) const {
  if (state.record_plugin_metrics() && timings_ != nullptr &&
      metrics::PluginTimings::SampleCall()) {
    out = RunFilterTimed(state, pod, node, skip);
    return;
  }
  bool ran = false;
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) continue;
    // Constructed in `out` from the plugin's prvalue (no move): copying a Status just built
    // stalls on its fresh stores, and this runs for every node.
    out.~Status();
    ::new (static_cast<void*>(&out)) Status(filter_[i]->Filter(state, pod, node));
    ran = true;
    if (!out.IsSuccess()) {
      out.set_plugin(filter_names_[i]);
      return;
    }
  }
  if (!ran) out = Status();
}

bool Framework::FiltersJudgeByRequests(const std::vector<bool>& skip) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) continue;
    if (filter_reads_pods_[i] && requests_filter_[i] == nullptr) return false;
  }
  return true;
}

Status Framework::RunFilterOnRequests(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node,
                                      const std::vector<bool>& skip,
                                      const api::ResourceList& requested, int64_t num_pods) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) continue;
    Status status = requests_filter_[i] != nullptr
                        ? requests_filter_[i]->FilterRequests(state, pod, node, requested, num_pods)
                        : filter_[i]->Filter(state, pod, node);
    if (!status.IsSuccess()) {
      status.set_plugin(filter_names_[i]);
      return status;
    }
  }
  return Status();
}

// Filter on a sampled node of a sampled cycle: one clock read per plugin boundary (the end of one
// call is the start of the next), so a timed node costs (plugins + 1) reads and no lock or
// allocation.
Status Framework::RunFilterTimed(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const framework::NodeInfo& node,
                                 const std::vector<bool>& skip) const {
  auto start = SteadyClock::now();
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) continue;
    Status status = filter_[i]->Filter(state, pod, node);
    const auto end = SteadyClock::now();
    timings_->Observe(Slot(ExtensionPoint::kFilter, i), status.code(),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
    start = end;
    if (!status.IsSuccess()) return Stamp(std::move(status), filter_[i]->Name());
  }
  return Status();
}

framework::PostFilterOutcome Framework::RunPostFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot, absl::Span<const framework::NodeStatus> filtered,
    const framework::PostFilterHost& host) const {
  // Upstream's DefaultPreemption counts every PostFilter run as a preemption attempt.
  if (scheduler_metrics_ != nullptr && !post_filter_.empty()) {
    scheduler_metrics_->CountPreemptionAttempt();
  }
  return ObservePoint(metrics_, ExtensionPoint::kPostFilter, post_filter_.size(), [&] {
    framework::PostFilterOutcome last;
    last.status = Status::Unschedulable("no PostFilter plugin could help");
    for (size_t i = 0; i < post_filter_.size(); ++i) {
      auto outcome = TimePlugin(timings_, Slot(ExtensionPoint::kPostFilter, i), state, [&] {
        return post_filter_[i]->PostFilter(state, pod, snapshot, filtered, host);
      });
      outcome.status.set_plugin(post_filter_[i]->Name());
      if (outcome.status.IsSuccess() || outcome.status.code() == Code::kError) return outcome;
      last = std::move(outcome);
    }
    return last;
  });
}

PreScoreSummary Framework::RunPreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot,
    absl::Span<const framework::NodeInfo* const> feasible) const {
  return ObservePoint(metrics_, ExtensionPoint::kPreScore, pre_score_.size(), [&] {
    PreScoreSummary summary;
    std::vector<bool> skipped(pre_score_.size(), false);
    for (size_t i = 0; i < pre_score_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kPreScore, i), state, [&] {
        return pre_score_[i]->PreScore(state, pod, snapshot, feasible);
      });
      if (status.IsSkip()) {
        skipped[i] = true;
      } else if (!status.IsSuccess()) {
        summary.status = Stamp(std::move(status), pre_score_[i]->Name());
        return summary;
      }
    }
    summary.skip_score.resize(score_.size(), false);
    for (size_t i = 0; i < score_.size(); ++i) {
      const int pre = score_pre_score_index_[i];
      summary.skip_score[i] = pre >= 0 && skipped[pre];
    }
    return summary;
  });
}

int64_t Framework::RunScoreTimed(size_t k, const framework::CycleState& state,
                                 const framework::PodInfo& pod,
                                 const framework::NodeInfo& node) const {
  if (timings_ == nullptr || !metrics::PluginTimings::SampleCall()) {
    return score_[k].plugin->Score(state, pod, node);
  }
  const auto start = SteadyClock::now();
  const int64_t score = score_[k].plugin->Score(state, pod, node);
  timings_->Observe(Slot(ExtensionPoint::kScore, k), Code::kSuccess, NanosecondsSince(start));
  return score;
}

void Framework::RunNormalizeScore(size_t k, const framework::CycleState& state,
                                  const framework::PodInfo& pod, absl::Span<int64_t> scores) const {
  const framework::ScoreNormalizer* normalizer = score_[k].plugin->normalizer();
  if (normalizer == nullptr) return;
  TimePlugin(timings_, Slot(ExtensionPoint::kScoreExtensionNormalize, k), state,
             [&] { normalizer->NormalizeScore(state, pod, scores); });
}

Status Framework::RunReserve(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kReserve, reserve_.size(), [&] {
    for (size_t i = 0; i < reserve_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kReserve, i), state,
                                 [&] { return reserve_[i]->Reserve(state, pod, node); });
      if (!status.IsSuccess()) return Stamp(std::move(status), reserve_[i]->Name());
    }
    return Status();
  });
}

void Framework::RunUnreserve(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view node) const {
  ObservePoint(metrics_, ExtensionPoint::kUnreserve, reserve_.size(), [&] {
    for (size_t i = reserve_.size(); i-- > 0;) {
      TimePlugin(timings_, Slot(ExtensionPoint::kUnreserve, i), state,
                 [&] { reserve_[i]->Unreserve(state, pod, node); });
    }
  });
}

Status Framework::RunPermit(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kPermit, permit_.size(), [&] {
    for (size_t i = 0; i < permit_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kPermit, i), state,
                                 [&] { return permit_[i]->Permit(state, pod, node); });
      if (status.code() == Code::kWait) {
        status = Status::Unschedulable("permit wait is not supported");
      }
      if (!status.IsSuccess()) return Stamp(std::move(status), permit_[i]->Name());
    }
    return Status();
  });
}

Status Framework::RunPreBind(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kPreBind, pre_bind_.size(), [&] {
    for (size_t i = 0; i < pre_bind_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kPreBind, i), state,
                                 [&] { return pre_bind_[i]->PreBind(state, pod, node); });
      if (!status.IsSuccess() && !status.IsSkip()) {
        return Stamp(std::move(status), pre_bind_[i]->Name());
      }
    }
    return Status();
  });
}

Status Framework::RunBind(framework::CycleState& state, const framework::PodInfo& pod,
                          std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kBind, bind_.size(), [&] {
    for (size_t i = 0; i < bind_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kBind, i), state,
                                 [&] { return bind_[i]->Bind(state, pod, node); });
      if (status.IsSkip()) continue;
      return Stamp(std::move(status), bind_[i]->Name());
    }
    return Status::Error("no bind plugin bound the pod");
  });
}

void Framework::RunPostBind(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node) const {
  ObservePoint(metrics_, ExtensionPoint::kPostBind, post_bind_.size(), [&] {
    for (size_t i = 0; i < post_bind_.size(); ++i) {
      TimePlugin(timings_, Slot(ExtensionPoint::kPostBind, i), state,
                 [&] { post_bind_[i]->PostBind(state, pod, node); });
    }
  });
}

absl::Status CheckQueueSortsAgree(const std::vector<std::unique_ptr<Framework>>& frameworks) {
  for (const auto& fw : frameworks) {
    if (fw->queue_sort()->Name() != frameworks.front()->queue_sort()->Name()) {
      return absl::InvalidArgumentError(absl::StrCat("profile \"", fw->profile_name(),
                                                     "\": the queueSort plugin must be the same "
                                                     "in all profiles"));
    }
  }
  return absl::OkStatus();
}

}  // namespace kubesched::runtime
