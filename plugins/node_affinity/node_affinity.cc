#include "plugins/node_affinity/node_affinity.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/helper/normalize_score.h"
#include "plugins/names.h"
#include "scheduler/framework/policy_affinity.h"

namespace kubesched::plugins {
namespace {

constexpr std::string_view kMetadataName = "metadata.name";

const api::NodeAffinity* PodNodeAffinity(const api::Pod& pod) {
  const auto& affinity = pod.spec.affinity;
  if (!affinity.has_value() || !affinity->node_affinity.has_value()) return nullptr;
  return &*affinity->node_affinity;
}

const api::NodeSelector* PodRequired(const api::Pod& pod) {
  const api::NodeAffinity* affinity = PodNodeAffinity(pod);
  if (affinity == nullptr || !affinity->required.has_value()) return nullptr;
  return &*affinity->required;
}

// spec.nodeSelector: every key must be present on the node with the same value.
bool MatchesNodeSelector(const api::LabelSet& selector, const api::LabelSet& labels) {
  for (const auto& [key, value] : selector.pairs()) {
    const std::optional<api::Symbol> actual = labels.Get(key);
    if (!actual.has_value() || *actual != value) return false;
  }
  return true;
}

// The names a term pins with `metadata.name In (...)`, intersected when a term has several such
// requirements; nullopt when the term pins nothing (any node may match it).
std::optional<absl::flat_hash_set<std::string>> PinnedNames(const api::NodeSelectorTerm& term) {
  std::optional<absl::flat_hash_set<std::string>> names;
  for (const api::FieldRequirement& r : term.match_fields) {
    if (r.field != kMetadataName || r.op != api::SelectorOperator::kIn) continue;
    absl::flat_hash_set<std::string> values(r.values.begin(), r.values.end());
    if (!names.has_value()) {
      names = std::move(values);
      continue;
    }
    absl::erase_if(*names, [&](const std::string& n) { return !values.contains(n); });
  }
  return names;
}

int64_t SumMatchingWeights(const std::vector<api::PreferredSchedulingTerm>& terms,
                           const api::LabelSet& labels, std::string_view node_name) {
  int64_t sum = 0;
  for (const api::PreferredSchedulingTerm& term : terms) {
    if (term.weight != 0 && term.preference.Matches(labels, node_name)) sum += term.weight;
  }
  return sum;
}

// The required terms / preferred terms a per-pod policy adds for this cycle's pod, if any.
const api::NodeSelector* PolicyRequired(const framework::CycleState& state) {
  const auto* added = state.Read<framework::PolicyNodeAffinity>(framework::PolicyNodeAffinityKey());
  return added != nullptr && added->affinity != nullptr && added->affinity->required.has_value()
             ? &*added->affinity->required
             : nullptr;
}

const std::vector<api::PreferredSchedulingTerm>& PolicyPreferred(
    const framework::CycleState& state) {
  static const std::vector<api::PreferredSchedulingTerm> kNone;
  const auto* added = state.Read<framework::PolicyNodeAffinity>(framework::PolicyNodeAffinityKey());
  return added != nullptr && added->affinity != nullptr ? added->affinity->preferred : kNone;
}

}  // namespace

NodeAffinity::NodeAffinity(const config::NodeAffinityArgs& args) {
  if (args.added_affinity.has_value()) {
    added_required_ = args.added_affinity->required;
    added_preferred_ = args.added_affinity->preferred;
  }
}

std::string_view NodeAffinity::Name() const { return names::kNodeAffinity; }

framework::PreFilterOutcome NodeAffinity::PreFilter(framework::CycleState& state,
                                                    const framework::PodInfo& pod,
                                                    const framework::Snapshot& /*snapshot*/) {
  const api::NodeSelector* required = PodRequired(pod.get());
  if (required == nullptr && !added_required_.has_value() && pod.get().spec.node_selector.empty() &&
      PolicyRequired(state) == nullptr) {
    return {framework::Status::Skip(), {}};
  }
  if (required == nullptr || required->terms.empty()) return {};
  // Terms are ORed: one term without a name pin lets every node through.
  absl::flat_hash_set<std::string> union_of_pins;
  for (const api::NodeSelectorTerm& term : required->terms) {
    auto pinned = PinnedNames(term);
    if (!pinned.has_value()) return {};
    union_of_pins.insert(pinned->begin(), pinned->end());
  }
  if (union_of_pins.empty()) return {framework::Status::Unresolvable(kReasonConflict), {}};
  return {framework::Status::Success(),
          framework::PreFilterResult{std::move(union_of_pins), nullptr}};
}

bool NodeAffinity::FilterJudgesPodAndNodeAlone(const framework::CycleState& state,
                                               const framework::PodInfo& /*pod*/) const {
  return PolicyRequired(state) == nullptr;
}

framework::Status NodeAffinity::Filter(const framework::CycleState& state,
                                       const framework::PodInfo& pod,
                                       const framework::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status(framework::Code::kError, "node not found");
  const api::LabelSet& labels = n->meta.labels;
  if (added_required_.has_value() && !added_required_->Matches(labels, n->meta.name)) {
    return framework::Status::Unresolvable(kReasonEnforced);
  }
  if (const api::NodeSelector* policy = PolicyRequired(state);
      policy != nullptr && !policy->Matches(labels, n->meta.name)) {
    return framework::Status::Unresolvable(kReasonPolicy);
  }
  if (!MatchesNodeSelector(pod.get().spec.node_selector, labels)) {
    return framework::Status::Unresolvable(kReasonPod);
  }
  const api::NodeSelector* required = PodRequired(pod.get());
  if (required != nullptr && !required->Matches(labels, n->meta.name)) {
    return framework::Status::Unresolvable(kReasonPod);
  }
  return framework::Status::Success();
}

framework::Status NodeAffinity::PreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& /*snapshot*/,
    absl::Span<const framework::NodeInfo* const> /*feasible*/) {
  const api::NodeAffinity* affinity = PodNodeAffinity(pod.get());
  const bool pod_prefers = affinity != nullptr && !affinity->preferred.empty();
  if (!pod_prefers && added_preferred_.empty() && PolicyPreferred(state).empty()) {
    return framework::Status::Skip();
  }
  return framework::Status::Success();
}

int64_t NodeAffinity::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                            const framework::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return 0;
  int64_t score = SumMatchingWeights(added_preferred_, n->meta.labels, n->meta.name);
  score += SumMatchingWeights(PolicyPreferred(state), n->meta.labels, n->meta.name);
  if (const api::NodeAffinity* affinity = PodNodeAffinity(pod.get()); affinity != nullptr) {
    score += SumMatchingWeights(affinity->preferred, n->meta.labels, n->meta.name);
  }
  return score;
}

void NodeAffinity::NormalizeScore(const framework::CycleState& /*state*/,
                                  const framework::PodInfo& /*pod*/,
                                  absl::Span<int64_t> scores) const {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/false, scores);
}

namespace {

absl::Status ValidateTerm(const api::NodeSelectorTerm& term, const std::string& path) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    if (!term.match_expressions[i].valid) {
      return helper::ArgsError(names::kNodeAffinity,
                               absl::StrCat(path, ".matchExpressions[", i, "]"),
                               "invalid requirement");
    }
  }
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const api::FieldRequirement& r = term.match_fields[i];
    if (!r.valid || r.field != kMetadataName) {
      return helper::ArgsError(names::kNodeAffinity, absl::StrCat(path, ".matchFields[", i, "]"),
                               "invalid requirement (only metadata.name is supported)");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAddedAffinity(const api::NodeAffinity& added) {
  if (added.required.has_value()) {
    for (size_t i = 0; i < added.required->terms.size(); ++i) {
      auto status =
          ValidateTerm(added.required->terms[i],
                       absl::StrCat("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                                    "nodeSelectorTerms[",
                                    i, "]"));
      if (!status.ok()) return status;
    }
  }
  for (size_t i = 0; i < added.preferred.size(); ++i) {
    const std::string path =
        absl::StrCat("addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[", i, "]");
    const int32_t weight = added.preferred[i].weight;
    if (weight < 0 || weight > 100) {
      return helper::ArgsError(names::kNodeAffinity, absl::StrCat(path, ".weight"),
                               "must be in 0..100");
    }
    auto status = ValidateTerm(added.preferred[i].preference, absl::StrCat(path, ".preference"));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeAffinity(const config::PluginArgs& args,
                                                                   const PluginHandle& /*handle*/) {
  auto typed = helper::ArgsAs<config::NodeAffinityArgs>(args, names::kNodeAffinity);
  if (!typed.ok()) return typed.status();
  if (typed->added_affinity.has_value()) {
    if (auto status = ValidateAddedAffinity(*typed->added_affinity); !status.ok()) return status;
  }
  return std::make_unique<NodeAffinity>(*typed);
}

}  // namespace kubesched::plugins
