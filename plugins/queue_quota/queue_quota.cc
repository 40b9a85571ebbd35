#include "plugins/queue_quota/queue_quota.h"

#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "scheduler/framework/picked_devices.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::Status;

// The pod's verdict, kept for Filter and for the reasons (Status holds views into it).
struct QuotaState final : framework::StateData {
  quota::Admission admission;
  std::string reserve_message;
  // The cycle's snapshot, for Reserve to find the chosen node's devices: valid until the
  // scheduling cycle ends, as Reserve is part of it.
  const framework::Snapshot* snapshot = nullptr;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<QuotaState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kQueueQuota);
  return key;
}

// The devices DynamicResources would give the pod on `node`, counted against each of the pod's
// device limits: the first limit they go over rejects the node.
Status FilterDevices(const quota::Admission& admission, const framework::DeviceResources& devices,
                     const framework::PickedDevices& picks, const framework::PodInfo& pod,
                     const framework::NodeInfo& node) {
  const std::vector<quota::DeviceLimit>& limits = admission.device_limits;
  absl::InlinedVector<int64_t, 8> counts(limits.size(), 0);
  picks.ForEachDevice(node, [&](const api::ResourceSlice& slice, const api::Device& device) {
    const framework::DeviceResources::Kind* kind = devices.KindOf(slice.driver, device);
    if (kind == nullptr) return;
    framework::AttributeTextBuffer buffer;
    const std::string_view model = framework::DeviceResources::ModelText(*kind, device, buffer);
    for (size_t i = 0; i < limits.size(); ++i) {
      const quota::DeviceLimit& limit = limits[i];
      if (limit.resource != kind->resource) continue;
      if (limit.model == api::kEmptySymbol ||
          (!model.empty() && limit.model_names->NamesDeviceModel(model, limit.model))) {
        ++counts[i];
      }
    }
  });
  const api::LabelSet& labels = node.node()->meta.labels;
  for (size_t i = 0; i < limits.size(); ++i) {
    const quota::DeviceLimit& limit = limits[i];
    if (!limit.Exceeded(counts[i], pod.requests.Get(limit.resource), labels)) continue;
    return limit.budget ? Status::Unresolvable(limit.message)
                        : Status::Unschedulable(limit.message);
  }
  return Status::Success();
}

// The devices the pod's claims get on the chosen node, as queue quota counts them.
quota::DeviceTally ReservedDevices(const framework::CycleState& state,
                                   const framework::DeviceResources* devices,
                                   const framework::Snapshot* snapshot,
                                   std::string_view node_name) {
  quota::DeviceTally tally;
  const auto* picks = state.Read<framework::PickedDevices>(framework::PickedDevicesKey());
  if (picks == nullptr || devices == nullptr || snapshot == nullptr) return tally;
  const framework::NodeInfo* node = snapshot->Get(node_name);
  if (node == nullptr) return tally;
  picks->ForEachDevice(*node, [&](const api::ResourceSlice& slice, const api::Device& device) {
    if (const auto* kind = devices->KindOf(slice.driver, device)) tally.AddDevice(*kind, device);
  });
  return tally;
}

}  // namespace

std::string_view QueueQuota::Name() const { return names::kQueueQuota; }

std::vector<std::string> QueueQuota::WaitKeys(const framework::PodInfo& pod) const {
  if (tracker_ == nullptr) return {};
  return tracker_->WaitKeys(pod);
}

framework::PreFilterOutcome QueueQuota::PreFilter(framework::CycleState& state,
                                                  const framework::PodInfo& pod,
                                                  const framework::Snapshot& snapshot) {
  if (tracker_ == nullptr) return {Status::Skip(), {}};
  auto data = std::make_unique<QuotaState>();
  data->admission = tracker_->Admit(pod);
  data->snapshot = &snapshot;
  const quota::Admission& admission = data->admission;
  const bool nothing_per_node = admission.blocked_models.empty() && admission.device_limits.empty();
  Status status;
  switch (admission.verdict) {
    case quota::Verdict::kFits:
      status = nothing_per_node ? Status::Skip() : Status::Success();
      break;
    case quota::Verdict::kOverQuota:
      status = Status::Unschedulable(admission.message);
      break;
    case quota::Verdict::kOverBudget:
    case quota::Verdict::kNoQueue:
      status = Status::Unresolvable(admission.message);
      break;
  }
  state.Write(StateKey(), std::move(data));
  return {std::move(status), {}};
}

Status QueueQuota::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node) const {
  const auto* data = state.Read<QuotaState>(StateKey());
  if (data == nullptr || node.node() == nullptr) return Status::Success();
  const api::LabelSet& labels = node.node()->meta.labels;
  for (const auto& blocked : data->admission.blocked_models) {
    if (blocked.model_names->Names(labels.Get(blocked.label_key), blocked.label_value)) {
      return blocked.budget ? Status::Unresolvable(blocked.message)
                            : Status::Unschedulable(blocked.message);
    }
  }
  if (data->admission.device_limits.empty()) return Status::Success();
  const auto* picks = state.Read<framework::PickedDevices>(framework::PickedDevicesKey());
  const framework::DeviceResources* devices = tracker_->device_resources().get();
  if (picks == nullptr || devices == nullptr) return Status::Success();
  return FilterDevices(data->admission, *devices, *picks, pod, node);
}

Status QueueQuota::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                           std::string_view node_name) {
  if (tracker_ == nullptr) return Status::Success();
  const auto* kept = state.Read<QuotaState>(StateKey());
  const quota::DeviceTally devices =
      pod.get().spec.resource_claims.empty()
          ? quota::DeviceTally()
          : ReservedDevices(state, tracker_->device_resources().get(),
                            kept == nullptr ? nullptr : kept->snapshot, node_name);
  const absl::Status charged = tracker_->Reserve(pod, node_name, devices);
  if (charged.ok()) return Status::Success();
  auto* data = state.ReadMutable<QuotaState>(StateKey());
  if (data == nullptr) {
    state.Write(StateKey(), std::make_unique<QuotaState>());
    data = state.ReadMutable<QuotaState>(StateKey());
  }
  data->reserve_message = std::string(util::Std(charged.message()));
  return Status::Unschedulable(data->reserve_message);
}

void QueueQuota::Unreserve(framework::CycleState& /*state*/, const framework::PodInfo& pod,
                           std::string_view /*node_name*/) {
  if (tracker_ == nullptr) return;
  (void)tracker_->Release(pod.key, /*assumed_only=*/true);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewQueueQuota(const config::PluginArgs& args,
                                                                 const PluginHandle& handle) {
  if (auto status = helper::ExpectNoArgs(args, names::kQueueQuota); !status.ok()) return status;
  return std::make_unique<QueueQuota>(handle.quota);
}

}  // namespace kubesched::plugins
