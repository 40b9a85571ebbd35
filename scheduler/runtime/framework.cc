// Building a profile's framework: instantiating its plugins once each, expanding multiPoint into
// each extension point's list, and resolving the profile's metrics. The extension points run in
// scheduling_phases.cc and binding_phases.cc, the plugins' declarations in declarations.cc.

#include "scheduler/runtime/framework.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/util/strings.h"

namespace kubesched::runtime {
namespace {

using metrics::ExtensionPoint;

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

}  // namespace

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
  KUBESCHED_EXPAND(pre_enqueue_, framework::PreEnqueuePlugin, pre_enqueue, "preEnqueue");
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
  if (filter_.size() > FilterSkips::kMaxFilters) {
    return wrap(
        absl::InvalidArgumentError(absl::StrCat(filter_.size(), " filter plugins enabled; at most ",
                                                FilterSkips::kMaxFilters, " are supported")));
  }
  filter_pre_filter_index_ = IndexOfSamePlugin(filter_, pre_filter_);
  for (const framework::FilterPlugin* filter : filter_) {
    filter_names_.push_back(filter->Name());
    requests_filter_.push_back(dynamic_cast<const framework::RequestsFilterPlugin*>(filter));
    row_filter_.push_back(dynamic_cast<const framework::RowFilterPlugin*>(filter));
    filter_reads_pods_.push_back(filter->FilterReadsPods());
  }
  for (size_t i = 0; i < filter_.size(); ++i) {
    const int pre = filter_pre_filter_index_[i];
    if (pre < 0) continue;
    const auto* extensions = pre_filter_[pre]->pre_filter_extensions();
    if (extensions != nullptr) extensions_.push_back({extensions, pre_filter_[pre]->Name(), i});
  }
  std::vector<framework::ScorePlugin*> score_plugins;
  for (const auto& s : score_) {
    score_plugins.push_back(s.plugin);
    row_score_.push_back(dynamic_cast<const framework::RowScorePlugin*>(s.plugin));
  }
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
