#include "plugins/taint_toleration/taint_toleration.h"

#include <cstdint>
#include <vector>

#include "plugins/helper/args.h"
#include "plugins/helper/normalize_score.h"
#include "plugins/names.h"
#include "scheduler/framework/node_table.h"

namespace kubesched::plugins {
namespace {

// The pod's tolerations that can tolerate a PreferNoSchedule taint. The pointers point into the
// pod's spec, which the cycle's PodInfo keeps alive for at least as long as the CycleState.
struct PreferState final : framework::StateData {
  std::vector<const api::Toleration*> tolerations;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreferState>(*this);
  }
};

// The pod's verdict on every taint set of the process (see framework::TaintSets), by id: whether
// it tolerates the set's NoSchedule and NoExecute taints (PreFilter), and how many of its
// PreferNoSchedule taints it does not tolerate (PreScore). Filter and Score then read one entry
// per node. Empty when there are too many taint sets to judge once per pod.
struct TaintSetVerdicts final : framework::StateData {
  std::vector<uint8_t> tolerated;
  std::vector<int32_t> intolerable_prefer;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<TaintSetVerdicts>(*this);
  }
};

// Beyond this many taint sets (a cluster that taints nodes one by one), each node's taints are
// judged when it is filtered or scored instead.
constexpr size_t kMaxJudgedTaintSets = 4096;

framework::CycleState::Key FilterKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey("TaintToleration/filter");
  return key;
}

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kTaintToleration);
  return key;
}

bool CountsForScore(const api::Toleration& toleration) {
  return toleration.effect == api::TaintEffect::kNone ||
         toleration.effect == api::TaintEffect::kPreferNoSchedule;
}

bool Tolerated(const std::vector<api::Toleration>& tolerations, const api::Taint& taint) {
  for (const api::Toleration& t : tolerations) {
    if (t.Tolerates(taint)) return true;
  }
  return false;
}

// Whether a PreferNoSchedule taint is tolerated for scoring: by the tolerations PreScore kept, or,
// when PreScore did not run (a profile may enable Score alone), by filtering inline (still no
// allocation).
bool ToleratedForScore(const PreferState* data, const std::vector<api::Toleration>& all,
                       const api::Taint& taint) {
  if (data != nullptr) {
    for (const api::Toleration* t : data->tolerations) {
      if (t->Tolerates(taint)) return true;
    }
    return false;
  }
  for (const api::Toleration& t : all) {
    if (CountsForScore(t) && t.Tolerates(taint)) return true;
  }
  return false;
}

}  // namespace

std::string_view TaintToleration::Name() const { return names::kTaintToleration; }

// Whether `tolerations` tolerate every NoSchedule and NoExecute taint of `taints`.
bool ToleratesHardTaints(const std::vector<api::Toleration>& tolerations,
                         const std::vector<api::Taint>& taints) {
  for (const api::Taint& taint : taints) {
    if (taint.effect != api::TaintEffect::kNoSchedule &&
        taint.effect != api::TaintEffect::kNoExecute) {
      continue;
    }
    if (!Tolerated(tolerations, taint)) return false;
  }
  return true;
}

// The PreferNoSchedule taints of `taints` that neither PreScore's tolerations (`data`) nor, without
// them, the pod's tolerations that count for scoring tolerate.
int64_t IntolerablePreferTaints(const PreferState* data,
                                const std::vector<api::Toleration>& tolerations,
                                const std::vector<api::Taint>& taints) {
  int64_t intolerable = 0;
  for (const api::Taint& taint : taints) {
    if (taint.effect != api::TaintEffect::kPreferNoSchedule) continue;
    if (!ToleratedForScore(data, tolerations, taint)) ++intolerable;
  }
  return intolerable;
}

framework::PreFilterOutcome TaintToleration::PreFilter(framework::CycleState& state,
                                                       const framework::PodInfo& pod,
                                                       const framework::Snapshot& /*snapshot*/) {
  auto data = std::make_unique<TaintSetVerdicts>();
  if (framework::TaintSets::Count() <= kMaxJudgedTaintSets) {
    const auto& tolerations = pod.get().spec.tolerations;
    framework::TaintSets::ForEach(
        [&](framework::TaintSetId /*id*/, const std::vector<api::Taint>& taints) {
          data->tolerated.push_back(ToleratesHardTaints(tolerations, taints) ? 1 : 0);
        });
  }
  state.Write(FilterKey(), std::move(data));
  return {};
}

framework::Status TaintToleration::Filter(const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node) const {
  return FilterWithRow(state, pod, node, node.row());
}

framework::Status TaintToleration::FilterWithRow(const framework::CycleState& state,
                                                 const framework::PodInfo& pod,
                                                 const framework::NodeInfo& node,
                                                 const framework::NodeRow& row) const {
  if (!row.has_node) return framework::Status(framework::Code::kError, "node not found");
  if (!row.hard_taints) return framework::Status::Success();
  const auto* verdicts = state.Read<TaintSetVerdicts>(FilterKey());
  const bool tolerated =
      verdicts != nullptr && row.taints < verdicts->tolerated.size()
          ? verdicts->tolerated[row.taints] != 0
          : ToleratesHardTaints(pod.get().spec.tolerations, node.node()->spec.taints);
  return tolerated ? framework::Status::Success() : framework::Status::Unresolvable(kReason);
}

void TaintToleration::ClearFailingRows(const framework::CycleState& state,
                                       const framework::PodInfo& /*pod*/,
                                       absl::Span<const framework::NodeRow> rows,
                                       uint8_t* passes) const {
  const auto* verdicts = state.Read<TaintSetVerdicts>(FilterKey());
  const std::vector<uint8_t> no_verdicts;
  // A taint set without a verdict is judged node by node (FilterWithRow).
  const std::vector<uint8_t>& tolerated = verdicts != nullptr ? verdicts->tolerated : no_verdicts;
  for (size_t i = 0; i < rows.size(); ++i) {
    const framework::NodeRow& row = rows[i];
    const bool fits =
        row.has_node &&
        (!row.hard_taints || (row.taints < tolerated.size() && tolerated[row.taints] != 0));
    passes[i] &= static_cast<uint8_t>(fits);
  }
}

bool TaintToleration::FilterReadsOnlyRow(const framework::CycleState& state,
                                         const framework::PodInfo& /*pod*/) const {
  return state.Read<TaintSetVerdicts>(FilterKey()) != nullptr;
}

framework::Status TaintToleration::PreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& /*snapshot*/,
    absl::Span<const framework::NodeInfo* const> /*feasible*/) {
  auto data = std::make_unique<PreferState>();
  for (const api::Toleration& t : pod.get().spec.tolerations) {
    if (CountsForScore(t)) data->tolerations.push_back(&t);
  }
  auto* verdicts = state.ReadMutable<TaintSetVerdicts>(FilterKey());
  if (verdicts != nullptr && !verdicts->tolerated.empty()) {
    verdicts->intolerable_prefer.clear();
    framework::TaintSets::ForEach(
        [&](framework::TaintSetId /*id*/, const std::vector<api::Taint>& taints) {
          verdicts->intolerable_prefer.push_back(static_cast<int32_t>(
              IntolerablePreferTaints(data.get(), pod.get().spec.tolerations, taints)));
        });
  }
  state.Write(StateKey(), std::move(data));
  return framework::Status::Success();
}

int64_t TaintToleration::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& node) const {
  return ScoreWithRow(state, pod, node, node.row());
}

int64_t TaintToleration::ScoreWithRow(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node,
                                      const framework::NodeRow& row) const {
  const framework::NodeInfo* const nodes[] = {&node};
  const framework::NodeRow* const rows[] = {&row};
  int64_t score = 0;
  ScoreRows(state, pod, nodes, rows, &score);
  return score;
}

void TaintToleration::ScoreRows(const framework::CycleState& state, const framework::PodInfo& pod,
                                absl::Span<const framework::NodeInfo* const> nodes,
                                const framework::NodeRow* const* rows, int64_t* scores) const {
  const auto* verdicts = state.Read<TaintSetVerdicts>(FilterKey());
  const std::vector<int32_t> no_verdicts;
  const std::vector<int32_t>& by_set =
      verdicts != nullptr ? verdicts->intolerable_prefer : no_verdicts;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const framework::NodeRow& row = *rows[i];
    if (!row.has_node || !row.prefer_taints) {
      scores[i] = 0;
    } else if (row.taints < by_set.size()) {
      scores[i] = by_set[row.taints];
    } else {
      scores[i] =
          IntolerablePreferTaints(state.Read<PreferState>(StateKey()), pod.get().spec.tolerations,
                                  nodes[i]->node()->spec.taints);
    }
  }
}

void TaintToleration::NormalizeScore(const framework::CycleState& /*state*/,
                                     const framework::PodInfo& /*pod*/,
                                     absl::Span<int64_t> scores) const {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/true, scores);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewTaintToleration(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kTaintToleration); !status.ok()) {
    return status;
  }
  return std::make_unique<TaintToleration>();
}

}  // namespace kubesched::plugins
