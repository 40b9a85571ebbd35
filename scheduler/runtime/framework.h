#pragma once

// A profile made real: the plugin instances of one profile, in order, per extension point, and
// the code that runs each extension point. Built once from a config::Profile.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "config/config.h"
#include "plugins/registry.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::runtime {

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
  std::vector<bool> skip_filter;
};

// Upstream's status for nodes left out by PreFilter's node-name restriction:
// "node(s) didn't satisfy plugin(s) [NodeAffinity]".
framework::Status ExcludedByPreFilter(const PreFilterSummary& summary);

struct PreScoreSummary {
  framework::Status status;
  std::vector<bool> skip_score;  // per score plugin
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

  const framework::QueueSortPlugin* queue_sort() const { return queue_sort_; }
  const std::vector<framework::PreFilterPlugin*>& pre_filter_plugins() const { return pre_filter_; }
  const std::vector<framework::FilterPlugin*>& filter_plugins() const { return filter_; }
  const std::vector<framework::PostFilterPlugin*>& post_filter_plugins() const {
    return post_filter_;
  }
  const std::vector<framework::PreScorePlugin*>& pre_score_plugins() const { return pre_score_; }
  const std::vector<WeightedScorePlugin>& score_plugins() const { return score_; }

  // `except` (optional): a plugin whose PreFilter is not run and whose Filter is skipped
  // (quota-aware preemption re-runs the phase past QueueQuota's rejection to learn what the others
  // say).
  PreFilterSummary RunPreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                const framework::Snapshot& snapshot,
                                std::string_view except = {}) const;

  // Runs the filter plugins on one node in order. Stops at the first non-success unless
  // `all_statuses` is given, in which case every plugin runs and each status is appended.
  framework::Status RunFilter(const framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::NodeInfo& node, const std::vector<bool>& skip,
                              std::vector<framework::Status>* all_statuses = nullptr) const;

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

  // Reserve in order; on failure, Unreserve of all reserve plugins (reverse order) is the
  // caller's job through RunUnreserve.
  framework::Status RunReserve(framework::CycleState& state, const framework::PodInfo& pod,
                               std::string_view node) const;
  void RunUnreserve(framework::CycleState& state, const framework::PodInfo& pod,
                    std::string_view node) const;
  framework::Status RunPermit(framework::CycleState& state, const framework::PodInfo& pod,
                              std::string_view node) const;
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

  std::string profile_name_;
  std::optional<int32_t> percentage_;
  std::vector<std::unique_ptr<framework::Plugin>> owned_;
  const framework::QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<framework::PreFilterPlugin*> pre_filter_;
  std::vector<framework::FilterPlugin*> filter_;
  // For each filter plugin, the index of the same plugin in pre_filter_ (or -1).
  std::vector<int> filter_pre_filter_index_;
  std::vector<framework::PostFilterPlugin*> post_filter_;
  std::vector<framework::PreScorePlugin*> pre_score_;
  std::vector<WeightedScorePlugin> score_;
  std::vector<int> score_pre_score_index_;
  std::vector<framework::ReservePlugin*> reserve_;
  std::vector<framework::PermitPlugin*> permit_;
  std::vector<framework::PreBindPlugin*> pre_bind_;
  std::vector<framework::BindPlugin*> bind_;
  std::vector<framework::PostBindPlugin*> post_bind_;
};

// One queue serves every profile, so all profiles must use the same QueueSort plugin (as upstream
// requires).
absl::Status CheckQueueSortsAgree(const std::vector<std::unique_ptr<Framework>>& frameworks);

}  // namespace kubesched::runtime
