// /configz: each plugin's args under kube-scheduler's internal field names.

#include <variant>

#include "scheduler/api/symbol.h"
#include "scheduler/serving/configz_internal.h"

namespace kubesched::serving::internal {
namespace {

void Resources(Writer& out, const std::vector<config::ResourceWeight>& resources) {
  Key(out, "Resources");
  out.StartArray();
  for (const config::ResourceWeight& resource : resources) {
    out.StartObject();
    String(out, "Name", resource.name);
    Key(out, "Weight");
    out.Int64(resource.weight);
    out.EndObject();
  }
  out.EndArray();
}

void Strings(Writer& out, std::string_view key, const std::vector<std::string>& values) {
  Key(out, key);
  if (values.empty()) {
    out.Null();
    return;
  }
  out.StartArray();
  for (const std::string& value : values) out.String(value.c_str());
  out.EndArray();
}

std::string_view StrategyName(config::ScoringStrategyType type) {
  switch (type) {
    case config::ScoringStrategyType::kMostAllocated:
      return "MostAllocated";
    case config::ScoringStrategyType::kRequestedToCapacityRatio:
      return "RequestedToCapacityRatio";
    case config::ScoringStrategyType::kWatermark:
      return "Watermark";
    default:
      return "LeastAllocated";
  }
}

void Write(Writer& out, const config::NodeResourcesFitArgs& args) {
  Strings(out, "IgnoredResources", args.ignored_resources);
  Strings(out, "IgnoredResourceGroups", args.ignored_resource_groups);
  Key(out, "ScoringStrategy");
  out.StartObject();
  String(out, "Type", StrategyName(args.scoring_strategy.type));
  Resources(out, args.scoring_strategy.resources);
  Key(out, "RequestedToCapacityRatio");
  if (args.scoring_strategy.type == config::ScoringStrategyType::kRequestedToCapacityRatio) {
    out.StartObject();
    Key(out, "Shape");
    out.StartArray();
    for (const config::UtilizationShapePoint& point : args.scoring_strategy.shape) {
      out.StartObject();
      Key(out, "Utilization");
      out.Int(point.utilization);
      Key(out, "Score");
      out.Int(point.score);
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
  } else {
    out.Null();
  }
  out.EndObject();
}

void Write(Writer& out, const config::BalancedAllocationArgs& args) {
  Resources(out, args.resources);
}

// The added affinity's selectors are not rendered: whether one is configured is.
void Write(Writer& out, const config::NodeAffinityArgs& args) {
  Key(out, "AddedAffinity");
  if (args.added_affinity.has_value()) {
    out.StartObject();
    out.EndObject();
  } else {
    out.Null();
  }
}

void Write(Writer& out, const config::InterPodAffinityArgs& args) {
  Key(out, "HardPodAffinityWeight");
  out.Int(args.hard_pod_affinity_weight);
  Key(out, "IgnorePreferredTermsOfExistingPods");
  out.Bool(args.ignore_preferred_terms_of_existing_pods);
}

void Write(Writer& out, const config::PodTopologySpreadArgs& args) {
  Key(out, "DefaultConstraints");
  out.StartArray();
  for (const api::TopologySpreadConstraint& constraint : args.default_constraints) {
    out.StartObject();
    Key(out, "MaxSkew");
    out.Int(constraint.max_skew);
    String(out, "TopologyKey", api::SymbolText(constraint.topology_key));
    String(out, "WhenUnsatisfiable",
           constraint.when_unsatisfiable == api::UnsatisfiableConstraintAction::kScheduleAnyway
               ? "ScheduleAnyway"
               : "DoNotSchedule");
    out.EndObject();
  }
  out.EndArray();
  String(out, "DefaultingType",
         args.defaulting_type == config::SpreadDefaultingType::kList ? "List" : "System");
}

void Write(Writer& out, const config::MostAvailableArgs& args) {
  Resources(out, args.resources);
  String(out, "MetricsPollInterval", GoDuration(args.metrics_poll_interval));
  String(out, "MetricsStalenessLimit", GoDuration(args.metrics_staleness_limit));
}

void Write(Writer& out, const config::DefaultPreemptionArgs& args) {
  Key(out, "MinCandidateNodesPercentage");
  out.Int(args.min_candidate_nodes_percentage);
  Key(out, "MinCandidateNodesAbsolute");
  out.Int(args.min_candidate_nodes_absolute);
  Key(out, "NonPreemptibleOverridePriority");
  out.Int(args.non_preemptible_override_priority);
}

void Write(Writer& out, const config::VolumeBindingArgs& args) {
  Key(out, "BindTimeoutSeconds");
  out.Int64(args.bind_timeout_seconds);
  Key(out, "Shape");
  out.Null();
}

void Write(Writer& out, const config::DynamicResourcesArgs& args) {
  String(out, "FilterTimeout", GoDuration(args.filter_timeout));
  Key(out, "BindingTimeout");
  out.Null();
}

}  // namespace

void WritePluginArgs(Writer& out, const config::PluginArgs& args) {
  if (std::holds_alternative<std::monostate>(args)) {
    out.Null();
    return;
  }
  out.StartObject();
  std::visit(
      [&out](const auto& typed) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(typed)>, std::monostate>) {
          Write(out, typed);
        }
      },
      args);
  out.EndObject();
}

}  // namespace kubesched::serving::internal
