#include "plugins/taint_toleration/taint_toleration.h"

#include <vector>

#include "plugins/helper/args.h"
#include "plugins/helper/normalize_score.h"
#include "plugins/names.h"

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

framework::Status TaintToleration::Filter(const framework::CycleState& /*state*/,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status(framework::Code::kError, "node not found");
  if (!node.hard_taints()) return framework::Status::Success();
  const auto& tolerations = pod.get().spec.tolerations;
  for (const api::Taint& taint : n->spec.taints) {
    if (taint.effect != api::TaintEffect::kNoSchedule &&
        taint.effect != api::TaintEffect::kNoExecute) {
      continue;
    }
    if (!Tolerated(tolerations, taint)) return framework::Status::Unresolvable(kReason);
  }
  return framework::Status::Success();
}

framework::Status TaintToleration::PreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& /*snapshot*/,
    absl::Span<const framework::NodeInfo* const> /*feasible*/) {
  auto data = std::make_unique<PreferState>();
  for (const api::Toleration& t : pod.get().spec.tolerations) {
    if (CountsForScore(t)) data->tolerations.push_back(&t);
  }
  state.Write(StateKey(), std::move(data));
  return framework::Status::Success();
}

int64_t TaintToleration::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return 0;
  const auto* data = state.Read<PreferState>(StateKey());
  int64_t intolerable = 0;
  for (const api::Taint& taint : n->spec.taints) {
    if (taint.effect != api::TaintEffect::kPreferNoSchedule) continue;
    if (!ToleratedForScore(data, pod.get().spec.tolerations, taint)) ++intolerable;
  }
  return intolerable;
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
