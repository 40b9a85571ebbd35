#pragma once

// Text dumps of parsed configurations for tests: two configurations are equal when their dumps
// are, and a failing CHECK shows the difference readably. Header-only.

#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/config.h"
#include "config/merge.h"
#include "config/plugin_args.h"
#include "scheduler/util/strings.h"

namespace kubesched::testing {

using config::BalancedAllocationArgs;
using config::Configuration;
using config::ExtensionPointField;
using config::InterPodAffinityArgs;
using config::kExtensionPointFields;
using config::NodeAffinityArgs;
using config::NodeResourcesFitArgs;
using config::PluginArgs;
using config::PluginConfig;
using config::PluginRef;
using config::PluginSet;
using config::Profile;
using config::ResourceWeight;
using config::ScoringStrategy;

// "cpu:1, memory:1"
inline std::string Dump(const std::vector<ResourceWeight>& resources) {
  std::vector<std::string> parts;
  for (const ResourceWeight& r : resources) parts.push_back(absl::StrCat(r.name, ":", r.weight));
  return absl::StrJoin(parts, ", ");
}

inline std::string Dump(const ScoringStrategy& strategy) {
  std::vector<std::string> shape;
  for (const auto& p : strategy.shape) shape.push_back(absl::StrCat(p.utilization, "->", p.score));
  return absl::StrCat("type=", static_cast<int>(strategy.type), " resources=[",
                      Dump(strategy.resources), "] shape=[", absl::StrJoin(shape, ", "), "]");
}

inline std::string Dump(const PluginArgs& args) {
  struct Visitor {
    std::string operator()(const std::monostate&) const { return "none"; }
    std::string operator()(const NodeResourcesFitArgs& a) const {
      return absl::StrCat("fit ignored=[", absl::StrJoin(a.ignored_resources, ", "), "] groups=[",
                          absl::StrJoin(a.ignored_resource_groups, ", "), "] ",
                          Dump(a.scoring_strategy));
    }
    std::string operator()(const BalancedAllocationArgs& a) const {
      return absl::StrCat("balanced resources=[", Dump(a.resources), "]");
    }
    std::string operator()(const NodeAffinityArgs& a) const {
      if (!a.added_affinity.has_value()) return "affinity none";
      std::vector<int32_t> weights;
      for (const auto& term : a.added_affinity->preferred) weights.push_back(term.weight);
      const size_t required =
          a.added_affinity->required.has_value() ? a.added_affinity->required->terms.size() : 0;
      return absl::StrCat("affinity required_terms=", required, " preferred_weights=[",
                          absl::StrJoin(weights, ", "), "]");
    }
    std::string operator()(const InterPodAffinityArgs& a) const {
      return absl::StrCat("interpod hard=", a.hard_pod_affinity_weight, " ignore_preferred=",
                          a.ignore_preferred_terms_of_existing_pods ? "true" : "false");
    }
    // "spread type=List defaults=[zone/1/DoNotSchedule min=2, ...]"
    std::string operator()(const config::PodTopologySpreadArgs& a) const {
      std::vector<std::string> parts;
      for (const auto& c : a.default_constraints) {
        const bool hard =
            c.when_unsatisfiable == api::UnsatisfiableConstraintAction::kDoNotSchedule;
        parts.push_back(absl::StrCat(util::Absl(api::SymbolText(c.topology_key)), "/", c.max_skew,
                                     "/", hard ? "DoNotSchedule" : "ScheduleAnyway",
                                     c.min_domains ? absl::StrCat(" min=", *c.min_domains) : ""));
      }
      const bool system = a.defaulting_type == config::SpreadDefaultingType::kSystem;
      return absl::StrCat("spread type=", system ? "System" : "List", " defaults=[",
                          absl::StrJoin(parts, ", "), "]");
    }
    std::string operator()(const config::MostAvailableArgs& a) const {
      return absl::StrCat("mostavailable resources=[", Dump(a.resources),
                          "] poll=", absl::FormatDuration(a.metrics_poll_interval),
                          " stale=", absl::FormatDuration(a.metrics_staleness_limit));
    }
    std::string operator()(const config::DefaultPreemptionArgs& a) const {
      return absl::StrCat("preemption percentage=", a.min_candidate_nodes_percentage,
                          " absolute=", a.min_candidate_nodes_absolute,
                          " override=", a.non_preemptible_override_priority);
    }
    std::string operator()(const config::VolumeBindingArgs& a) const {
      return absl::StrCat("volumebinding timeout=", a.bind_timeout_seconds);
    }
    std::string operator()(const config::DynamicResourcesArgs& a) const {
      return absl::StrCat("dynamicresources filterTimeout=",
                          absl::FormatDuration(a.filter_timeout));
    }
  };
  return std::visit(Visitor{}, args);
}

// "A, B:3, -C": enabled names (with weights when set), then disabled names.
inline std::string Dump(const PluginSet& set) {
  std::vector<std::string> parts;
  for (const PluginRef& p : set.enabled) {
    parts.push_back(p.weight == 0 ? p.name : absl::StrCat(p.name, ":", p.weight));
  }
  for (const std::string& name : set.disabled) parts.push_back("-" + name);
  return absl::StrJoin(parts, ", ");
}

inline std::string Dump(const Profile& profile) {
  std::string out = absl::StrCat("profile ", profile.scheduler_name, " percentage=",
                                 profile.percentage_of_nodes_to_score.has_value()
                                     ? absl::StrCat(*profile.percentage_of_nodes_to_score)
                                     : "unset",
                                 "\n");
  for (const ExtensionPointField& point : kExtensionPointFields) {
    const std::string set = Dump(profile.plugins.*point.set);
    if (!set.empty()) absl::StrAppend(&out, "  ", util::Absl(point.name), ": ", set, "\n");
  }
  for (const PluginConfig& config : profile.plugin_config) {
    absl::StrAppend(&out, "  args ", config.name, ": ", Dump(config.args), "\n");
  }
  return out;
}

inline std::string Dump(const Configuration& config) {
  std::string out =
      absl::StrCat("percentage=", config.percentage_of_nodes_to_score,
                   " backoff=", config.pod_initial_backoff_seconds, "..",
                   config.pod_max_backoff_seconds, " parallelism=", config.parallelism, "\n");
  const config::ClientConnection& client = config.client_connection;
  absl::StrAppend(&out, "client kubeconfig=", client.kubeconfig, " qps=", client.qps,
                  " burst=", client.burst, " contentType=", client.content_type, "\n");
  const config::LeaderElection& election = config.leader_election;
  absl::StrAppend(&out, "leaderElection elect=", election.leader_elect,
                  " lease=", absl::FormatDuration(election.lease_duration),
                  " renew=", absl::FormatDuration(election.renew_deadline),
                  " retry=", absl::FormatDuration(election.retry_period),
                  " lock=", election.resource_namespace, "/", election.resource_name, "\n");
  for (const Profile& profile : config.profiles) absl::StrAppend(&out, Dump(profile));
  return out;
}

}  // namespace kubesched::testing
