#pragma once

// A profile made real: the plugin instances of one profile, in order, per extension point, and
// the code that runs each extension point. Built once from a config::Profile.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "config/config.h"
#include "plugins/registry/registry.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/metrics/extension_point.h"
#include "scheduler/runtime/filter_skips.h"

namespace kubesched::metrics {
class PluginTimings;
class ProfileMetrics;
class SchedulerMetrics;
}  // namespace kubesched::metrics

namespace kubesched::runtime {

// The verdict on a pod with resource claims in a profile where no plugin allocates them, under the
// name of upstream's plugin that would.
inline constexpr std::string_view kDynamicResources = "DynamicResources";
inline constexpr std::string_view kClaimsWithoutAllocator =
    "pod has resource claims (spec.resourceClaims), but no plugin of its profile allocates them "
    "(the DynamicResources plugin is not enabled)";

struct WeightedScorePlugin {
  framework::ScorePlugin* plugin = nullptr;
  int64_t weight = 1;
};

// Result of the PreFilter phase for one pod.
struct PreFilterSummary {
  framework::Status status;  // first rejection or error, stamped with its plugin
  // Intersection of the plugins' node-name restrictions; nullopt = all nodes.
  std::optional<absl::flat_hash_set<std::string>> node_names;
  // Plugins that restricted node_names, for the reason given to excluded nodes.
  std::vector<std::string_view> restricting_plugins;
  // Per filter plugin (same index as filter_plugins()): true if its PreFilter said Skip.
  FilterSkips skip_filter;
  // The union of the plugins' sure rejections (framework::PreFilterResult); null: none.
  std::shared_ptr<const framework::NodePositions> sure_rejections;
};

// Upstream's status for nodes left out by PreFilter's node-name restriction:
// "node(s) didn't satisfy plugin(s) [NodeAffinity]".
framework::Status ExcludedByPreFilter(const PreFilterSummary& summary);

struct PreScoreSummary {
  framework::Status status;
  std::vector<bool> skip_score;  // per score plugin
};

// Observes the Score extension point (every score plugin over every feasible node, normalizing
// included) when it goes out of scope; does nothing without metrics.
class ScorePhaseTimer {
 public:
  explicit ScorePhaseTimer(metrics::ProfileMetrics* metrics);
  ~ScorePhaseTimer();
  ScorePhaseTimer(const ScorePhaseTimer&) = delete;
  ScorePhaseTimer& operator=(const ScorePhaseTimer&) = delete;

 private:
  metrics::ProfileMetrics* metrics_;
  std::chrono::steady_clock::time_point start_;
};

class Framework {
 public:
  // Instantiates the profile's plugins (each once, shared by all its extension points), expands
  // multiPoint to the points each plugin implements, and checks there is exactly one QueueSort
  // and at least one Bind plugin. Errors name the profile and plugin.
  // `registry` is the map of plugin factories (the binary's own by default; tests add theirs).
  static absl::StatusOr<std::unique_ptr<Framework>> Create(
      const config::Profile& profile, const plugins::PluginHandle& handle,
      const plugins::RegistryMap& registry = plugins::Registry());

  const std::string& profile_name() const { return profile_name_; }
  std::optional<int32_t> percentage_of_nodes_to_score() const { return percentage_; }

  const std::vector<framework::PreEnqueuePlugin*>& pre_enqueue_plugins() const {
    return pre_enqueue_;
  }
  const framework::QueueSortPlugin* queue_sort() const { return queue_sort_; }
  const std::vector<framework::PreFilterPlugin*>& pre_filter_plugins() const { return pre_filter_; }
  const std::vector<framework::FilterPlugin*>& filter_plugins() const { return filter_; }
  const std::vector<framework::PostFilterPlugin*>& post_filter_plugins() const {
    return post_filter_;
  }
  const std::vector<framework::PermitPlugin*>& permit_plugins() const { return permit_; }
  const std::vector<framework::PreScorePlugin*>& pre_score_plugins() const { return pre_score_; }
  const std::vector<WeightedScorePlugin>& score_plugins() const { return score_; }

  // Whether the pod may enter activeQ: the PreEnqueue plugins in order, stopping at the first
  // that does not succeed, whose status is returned stamped with its plugin (Success when all
  // pass). Safe from any thread; not timed into the metrics, as it runs for every pod added or
  // updated and costs a few nanoseconds for a pod without gates.
  framework::Status RunPreEnqueue(const framework::PodInfo& pod) const;

  // `except` (optional): plugins whose PreFilter is not run and whose Filter is skipped
  // (quota-aware preemption re-runs the phase past the quota rejections to learn what the others
  // say). Without `except` this is the start of a scheduling cycle: with metrics, it decides
  // whether the cycle's plugin calls are timed (CycleState::record_plugin_metrics).
  PreFilterSummary RunPreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                const framework::Snapshot& snapshot,
                                absl::Span<const std::string_view> except = {}) const;

  // Whether a plugin with PreFilter extensions ran its PreFilter in the cycle whose filter skips
  // are `skip`: then the PreFilter state depends on the pods of each node.
  bool HasActiveExtensions(const FilterSkips& skip) const;
  // Upstream's RunPreFilterExtensionAddPod / RemovePod over the plugins that were not skipped;
  // the first failure is returned, stamped with its plugin.
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState& state,
                                                const framework::PodInfo& pod,
                                                const framework::PodInfo& added,
                                                const framework::NodeInfo& node,
                                                const FilterSkips& skip) const;
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState& state,
                                                   const framework::PodInfo& pod,
                                                   const framework::PodInfo& removed,
                                                   const framework::NodeInfo& node,
                                                   const FilterSkips& skip) const;

  // Runs the filter plugins on one node in order. Stops at the first non-success unless
  // `all_statuses` is given, in which case every plugin runs and each status is appended.
  framework::Status RunFilter(const framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::NodeInfo& node, const FilterSkips& skip,
                              std::vector<framework::Status>* all_statuses = nullptr) const;
  // RunFilter(state, pod, node, skip) written into `out`: each plugin's verdict is built in
  // place, so a node that fails (every node, for a preemptor) costs no Status copy.
  void RunFilterInto(const framework::CycleState& state, const framework::PodInfo& pod,
                     const framework::NodeInfo& node, const FilterSkips& skip,
                     framework::Status& out) const {
    RunFilterInto(state, pod, node, node.row(), skip, out);
  }
  // The same with the node's row (node.row()'s values) read by the caller, from the snapshot's
  // table: the filters that take rows (framework::RowFilterPlugin) then never touch `node`.
  void RunFilterInto(const framework::CycleState& state, const framework::PodInfo& pod,
                     const framework::NodeInfo& node, const framework::NodeRow& row,
                     const FilterSkips& skip, framework::Status& out) const;

  // Whether, in a cycle whose filter skips are `skip`, every filter that runs either reads no
  // pods or is a RequestsFilterPlugin: then RunFilterOnRequests gives RunFilter's verdict for a
  // copy of a node that differs from it only in its pods.
  bool FiltersJudgeByRequests(const FilterSkips& skip) const;
  // Whether every filter that runs for `pod` judges the pod and the node alone
  // (FilterPlugin::FilterJudgesPodAndNodeAlone). Asked once per pod, after PreFilter.
  bool FiltersJudgePodAndNodeAlone(const framework::CycleState& state,
                                   const framework::PodInfo& pod, const FilterSkips& skip) const;
  // Whether every filter that runs for `pod` is a RowFilterPlugin that reads only the node's row
  // (RowFilterPlugin::FilterReadsOnlyRow). Asked once per pod, after PreFilter.
  bool FiltersReadOnlyRows(const framework::CycleState& state, const framework::PodInfo& pod,
                           const FilterSkips& skip) const;
  // Clears passes[i] for each node of `rows` (a run of the snapshot's table) that any running
  // filter may reject (RowFilterPlugin::ClearFailingRows); a flag left set is a node RunFilter
  // passes. Only when FiltersReadOnlyRows holds for the pod.
  void ClearFailingRows(const framework::CycleState& state, const framework::PodInfo& pod,
                        const FilterSkips& skip, absl::Span<const framework::NodeRow> rows,
                        uint8_t* passes) const;
  // RunFilter's verdict on a copy of `node` whose pods' requests sum to `requested` and which
  // holds `num_pods` pods (see FiltersJudgeByRequests): the plugins that read no pods run on
  // `node` itself, the RequestsFilterPlugins on those sums.
  framework::Status RunFilterOnRequests(const framework::CycleState& state,
                                        const framework::PodInfo& pod,
                                        const framework::NodeInfo& node, const FilterSkips& skip,
                                        const api::ResourceList& requested, int64_t num_pods) const;

  // Runs PostFilter plugins in order until one succeeds (nominates a node) or errs; otherwise
  // returns the last rejection, whose message joins the FailedScheduling message.
  framework::PostFilterOutcome RunPostFilter(framework::CycleState& state,
                                             const framework::PodInfo& pod,
                                             const framework::Snapshot& snapshot,
                                             absl::Span<const framework::NodeStatus> filtered,
                                             const framework::PostFilterHost& host) const;

  PreScoreSummary RunPreScore(framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::Snapshot& snapshot,
                              absl::Span<const framework::NodeInfo* const> feasible) const;

  // Score plugin `k` (index into score_plugins()) on one node. Inline: it runs per node, and
  // costs one predictable branch more than calling the plugin unless the cycle is sampled.
  int64_t RunScore(size_t k, const framework::CycleState& state, const framework::PodInfo& pod,
                   const framework::NodeInfo& node) const {
    if (state.record_plugin_metrics()) [[unlikely]] {
      return RunScoreTimed(k, state, pod, node);
    }
    return score_[k].plugin->Score(state, pod, node);
  }
  // The same with the node's row read by the caller (see RunFilterInto): a plugin that takes rows
  // (framework::RowScorePlugin) then never touches `node`.
  int64_t RunScore(size_t k, const framework::CycleState& state, const framework::PodInfo& pod,
                   const framework::NodeInfo& node, const framework::NodeRow& row) const {
    if (state.record_plugin_metrics()) [[unlikely]] {
      return RunScoreTimed(k, state, pod, node);
    }
    if (const framework::RowScorePlugin* by_row = row_score_[k]; by_row != nullptr) {
      return by_row->ScoreWithRow(state, pod, node, row);
    }
    return score_[k].plugin->Score(state, pod, node);
  }
  // RunScore of plugin `k` on a chunk of nodes (rows[i] being nodes[i]'s row) into scores: one
  // call per chunk for a plugin that takes rows (RowScorePlugin::ScoreRows).
  void RunScoreChunk(size_t k, const framework::CycleState& state, const framework::PodInfo& pod,
                     absl::Span<const framework::NodeInfo* const> nodes,
                     const framework::NodeRow* const* rows, int64_t* scores) const;
  // NormalizeScore of score plugin `k`, if it has a normalizer.
  void RunNormalizeScore(size_t k, const framework::CycleState& state,
                         const framework::PodInfo& pod, absl::Span<int64_t> scores) const;
  // Times the Score extension point from now until the timer goes out of scope.
  ScorePhaseTimer TimeScorePhase() const { return ScorePhaseTimer(metrics_); }

  // What the profile's plugins declare for the core (framework/plugin.h), so that the core
  // names no plugin. Looked up by plugin name (a few string compares, once per failed attempt).
  //
  // The cluster events that may help a pod the named plugins rejected: the union of what they
  // registered; every event when `plugins` is empty or names a plugin this profile lacks.
  framework::ClusterEventSet EventsHelping(const std::vector<std::string>& plugins) const;
  // The named plugin as a WaitKeysPlugin; null when it is none or not in this profile.
  const framework::WaitKeysPlugin* WaitKeysPluginNamed(std::string_view name) const;
  // Whether removing pods may lift a PreFilter rejection by the named plugin.
  bool PreemptionMayLift(std::string_view pre_filter_plugin) const;
  // Whether, in a cycle whose filter skips are `skip`, a filter runs that rejects pods short of
  // cpu, memory, ephemeral storage or pod count
  // (RequestsFilterPlugin::RejectsShortOfBasicResources).
  bool ScreensBasicResources(const FilterSkips& skip) const;
  // The first score plugin that reports a watermark; null when none does.
  framework::WatermarkReporter* watermark_reporter() const { return watermark_reporter_; }
  // The shortest node metrics poll interval the score plugins ask for; nullopt when none reads
  // node metrics. `consumer` (optional) is set to the name of the plugin that asks for it.
  std::optional<absl::Duration> NodeMetricsPollInterval(std::string_view* consumer = nullptr) const;

  // Reserve in order; on failure, Unreserve of all reserve plugins (reverse order) is the
  // caller's job through RunUnreserve.
  framework::Status RunReserve(framework::CycleState& state, const framework::PodInfo& pod,
                               std::string_view node) const;
  void RunUnreserve(framework::CycleState& state, const framework::PodInfo& pod,
                    std::string_view node) const;
  // Every Permit plugin in order, as upstream: a rejection stops there; Wait from some plugins
  // (and success from the rest) returns Wait with `wait` naming them and the shortest timeout
  // they asked for, capped at framework::kMaxPermitTimeout.
  struct PermitWait {
    std::vector<std::string_view> plugins;
    absl::Duration timeout = absl::InfiniteDuration();
  };
  framework::Status RunPermit(framework::CycleState& state, const framework::PodInfo& pod,
                              std::string_view node, PermitWait* wait) const;
  framework::Status RunPreBind(framework::CycleState& state, const framework::PodInfo& pod,
                               std::string_view node) const;
  framework::Status RunBind(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node) const;
  void RunPostBind(framework::CycleState& state, const framework::PodInfo& pod,
                   std::string_view node) const;

 private:
  Framework() = default;
  absl::Status Build(const config::Profile& profile, const plugins::PluginHandle& handle,
                     const plugins::RegistryMap& registry);
  absl::StatusOr<framework::Plugin*> Instantiate(const std::string& name,
                                                 const config::Profile& profile,
                                                 const plugins::PluginHandle& handle,
                                                 const plugins::RegistryMap& registry);
  PreFilterSummary RunPreFilterPlugins(framework::CycleState& state, const framework::PodInfo& pod,
                                       const framework::Snapshot& snapshot,
                                       absl::Span<const std::string_view> except) const;
  // Fills the declarations' look-ups from the plugins (after every list is built).
  void CollectDeclarations();
  // Resolves this profile's series and registers every (plugin, extension point) for timing.
  void ResolveMetrics(metrics::SchedulerMetrics* metrics);
  int64_t RunScoreTimed(size_t k, const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::NodeInfo& node) const;
  framework::Status RunFilterTimed(const framework::CycleState& state,
                                   const framework::PodInfo& pod, const framework::NodeInfo& node,
                                   const FilterSkips& skip) const;
  // The timing slot of the `index`-th plugin of `point`'s list; -1 without metrics.
  int Slot(metrics::ExtensionPoint point, size_t index) const {
    const std::vector<int>& slots = slots_[static_cast<size_t>(point)];
    return index < slots.size() ? slots[index] : -1;
  }

  std::string profile_name_;
  std::optional<int32_t> percentage_;
  std::vector<std::unique_ptr<framework::Plugin>> owned_;
  std::vector<framework::PreEnqueuePlugin*> pre_enqueue_;
  const framework::QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<framework::PreFilterPlugin*> pre_filter_;
  std::vector<framework::FilterPlugin*> filter_;
  // For each filter plugin: its name (no virtual call per failing node), its
  // RequestsFilterPlugin side (or null), and whether it reads pods.
  std::vector<std::string_view> filter_names_;
  std::vector<const framework::RequestsFilterPlugin*> requests_filter_;
  // For each filter plugin / score plugin: its side that takes rows, or null.
  std::vector<const framework::RowFilterPlugin*> row_filter_;
  std::vector<const framework::RowScorePlugin*> row_score_;
  std::vector<bool> filter_reads_pods_;
  // For each filter plugin, the index of the same plugin in pre_filter_ (or -1).
  std::vector<int> filter_pre_filter_index_;
  // The PreFilter plugins with extensions, each with the index of its Filter (whose skip flag
  // says whether its PreFilter ran).
  struct Extension {
    const framework::PreFilterExtensions* extensions = nullptr;
    std::string_view name;
    size_t filter_index = 0;
  };
  std::vector<Extension> extensions_;
  std::vector<framework::PostFilterPlugin*> post_filter_;
  std::vector<framework::PreScorePlugin*> pre_score_;
  std::vector<WeightedScorePlugin> score_;
  std::vector<int> score_pre_score_index_;
  std::vector<framework::ReservePlugin*> reserve_;
  std::vector<framework::PermitPlugin*> permit_;
  std::vector<framework::PreBindPlugin*> pre_bind_;
  std::vector<framework::BindPlugin*> bind_;
  std::vector<framework::PostBindPlugin*> post_bind_;

  // What the plugins declare, by plugin (one entry per instance in owned_).
  struct Declaration {
    std::string_view name;
    framework::ClusterEventSet events = framework::kDefaultEvents;
    const framework::WaitKeysPlugin* wait_keys = nullptr;
  };
  std::vector<Declaration> declarations_;
  // Per filter plugin: whether it rejects pods short of basic resources.
  std::vector<bool> filter_screens_basic_;
  framework::WatermarkReporter* watermark_reporter_ = nullptr;
  // Whether a PreFilter plugin allocates resource claims (else pods with claims are refused).
  bool allocates_claims_ = false;

  // Metrics (all null without): the profile's series, the per-plugin timings, and per extension
  // point the timing slot of each plugin in that point's list (Unreserve: the reserve list;
  // ScoreExtensionNormalize: the score list, -1 for plugins without a normalizer).
  metrics::SchedulerMetrics* scheduler_metrics_ = nullptr;
  metrics::ProfileMetrics* metrics_ = nullptr;
  metrics::PluginTimings* timings_ = nullptr;
  std::array<std::vector<int>, metrics::kExtensionPointCount> slots_;
};

// One queue serves every profile, so all profiles must use the same QueueSort plugin (as upstream
// requires).
absl::Status CheckQueueSortsAgree(const std::vector<std::unique_ptr<Framework>>& frameworks);

}  // namespace kubesched::runtime
