#include "plugins/queue_quota/queue_quota.h"

#include <string>
#include <vector>

#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::Status;

// The pod's verdict, kept for Filter and for the reasons (Status holds views into it).
struct QuotaState final : framework::StateData {
  quota::Admission admission;
  std::string reserve_message;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<QuotaState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kQueueQuota);
  return key;
}

}  // namespace

std::string_view QueueQuota::Name() const { return names::kQueueQuota; }

std::vector<std::string> QueueQuota::WaitKeys(const framework::PodInfo& pod) const {
  if (tracker_ == nullptr) return {};
  return tracker_->WaitKeys(pod);
}

framework::PreFilterOutcome QueueQuota::PreFilter(framework::CycleState& state,
                                                  const framework::PodInfo& pod,
                                                  const framework::Snapshot& /*snapshot*/) {
  if (tracker_ == nullptr) return {Status::Skip(), {}};
  auto data = std::make_unique<QuotaState>();
  data->admission = tracker_->Admit(pod);
  const quota::Admission& admission = data->admission;
  const bool nothing_per_node = admission.blocked_models.empty();
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

Status QueueQuota::Filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
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
  return Status::Success();
}

Status QueueQuota::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                           std::string_view node_name) {
  if (tracker_ == nullptr) return Status::Success();
  const absl::Status charged = tracker_->Reserve(pod, node_name);
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
