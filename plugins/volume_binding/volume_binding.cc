#include "plugins/volume_binding/volume_binding.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "plugins/volume_binding/binding.h"
#include "plugins/volume_binding/pod_volumes.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::Status;
using volume_binding::BindPlan;
using volume_binding::PodVolumes;

// The pod's state for one scheduling cycle and its binding cycle.
struct CycleData final : framework::StateData {
  // From PreFilter; shared by the copies preemption makes, as it never changes. Points into
  // `snapshot`, so valid until the cycle ends (Reserve is the last to read it).
  std::shared_ptr<const PodVolumes> volumes;
  const framework::Snapshot* snapshot = nullptr;
  // From Reserve, when the pod has claims to bind: read by PreBind and Unreserve on a bind worker.
  std::shared_ptr<const BindPlan> plan;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<CycleData>(*this);
  }
};

framework::CycleState::Key Key() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kVolumeBinding);
  return key;
}

}  // namespace

VolumeBinding::VolumeBinding(absl::Duration bind_timeout, framework::VolumeAssumeCache* cache,
                             framework::VolumeBinder* binder)
    : bind_timeout_(bind_timeout), cache_(cache), binder_(binder) {}

std::string_view VolumeBinding::Name() const { return names::kVolumeBinding; }

framework::ClusterEventSet VolumeBinding::EventsToRegister() const {
  return framework::kDefaultEvents | framework::EventBit(framework::ClusterEvent::kStorageChanged);
}

framework::PreFilterOutcome VolumeBinding::PreFilter(framework::CycleState& state,
                                                     const framework::PodInfo& pod,
                                                     const framework::Snapshot& snapshot) {
  // Most pods have no volumes at all: answer them before anything else is built.
  if (pod.get().spec.volumes.empty()) return {Status::Skip(), {}};
  volume_binding::Collected collected = volume_binding::CollectPodVolumes(pod, snapshot.storage());
  if (!collected.status.IsSuccess()) return {std::move(collected.status), {}};
  auto data = std::make_unique<CycleData>();
  data->volumes = std::make_shared<const PodVolumes>(std::move(collected.volumes));
  data->snapshot = &snapshot;
  state.Write(Key(), std::move(data));
  return {Status::Success(),
          framework::PreFilterResult{std::move(collected.eligible_nodes), nullptr}};
}

Status VolumeBinding::Filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                             const framework::NodeInfo& node) const {
  const auto* data = state.Read<CycleData>(Key());
  if (data == nullptr || data->volumes == nullptr) {
    return Status::Error("VolumeBinding: no PreFilter state");
  }
  if (node.node() == nullptr) return Status::Error("node not found");
  const volume_binding::NodeVerdict verdict =
      volume_binding::EvaluateNode(*data->volumes, *node.node());
  if (verdict.ok()) return Status::Success();
  Status status(framework::Code::kUnschedulableAndUnresolvable);
  if (verdict.node_conflict) status.AddReason(volume_binding::kReasonNodeConflict);
  if (verdict.bind_conflict) status.AddReason(volume_binding::kReasonBindConflict);
  if (verdict.pv_missing) status.AddReason(volume_binding::kReasonPvNotExist);
  return status;
}

Status VolumeBinding::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                              std::string_view node_name) {
  auto* data = state.ReadMutable<CycleData>(Key());
  // No claims, or only bound ones: nothing to bind (upstream's allBound).
  if (data == nullptr || data->volumes == nullptr || data->volumes->to_bind.empty()) {
    return Status::Success();
  }
  const framework::NodeInfo* node =
      data->snapshot != nullptr ? data->snapshot->Get(node_name) : nullptr;
  if (node == nullptr || node->node() == nullptr) {
    return Status::Error(absl::StrCat("VolumeBinding: node \"", util::Absl(node_name),
                                      "\" is not in the cycle's snapshot"));
  }
  volume_binding::NodeDecision decision;
  if (!volume_binding::EvaluateNode(*data->volumes, *node->node(), &decision).ok()) {
    return Status::Error(absl::StrCat("VolumeBinding: the pod's volumes do not fit node \"",
                                      util::Absl(node_name), "\""));
  }
  auto plan = std::make_shared<BindPlan>(volume_binding::MakeBindPlan(decision, *node->node()));
  if (cache_ != nullptr) {
    if (absl::Status status = cache_->AssumeVolumes(pod.key, plan->assumption); !status.ok()) {
      return Status::Error(absl::StrCat("VolumeBinding: assuming volumes: ",
                                        util::Absl(util::Std(status.message()))));
    }
  }
  data->plan = std::move(plan);
  return Status::Success();
}

void VolumeBinding::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                              std::string_view /*node_name*/) {
  const auto* data = state.Read<CycleData>(Key());
  if (data == nullptr || data->plan == nullptr || cache_ == nullptr) return;
  cache_->ForgetVolumes(pod.key);
}

Status VolumeBinding::PreBind(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                              std::string_view /*node_name*/) {
  const auto* data = state.Read<CycleData>(Key());
  if (data == nullptr || data->plan == nullptr) return Status::Success();
  if (binder_ == nullptr) return Status::Error("binding volumes: no volume binder");
  return volume_binding::BindPodVolumes(*data->plan, *binder_, cache_, bind_timeout_);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewVolumeBinding(const config::PluginArgs& args,
                                                                    const PluginHandle& handle) {
  auto typed = helper::ArgsAs<config::VolumeBindingArgs>(args, names::kVolumeBinding);
  if (!typed.ok()) return typed.status();
  if (typed->bind_timeout_seconds < 0) {
    return helper::ArgsError(names::kVolumeBinding, "bindTimeoutSeconds", "must not be negative");
  }
  return std::make_unique<VolumeBinding>(absl::Seconds(typed->bind_timeout_seconds),
                                         handle.volume_cache, handle.volume_binder);
}

}  // namespace kubesched::plugins
