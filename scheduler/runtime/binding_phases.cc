// The binding cycle's extension points: Reserve and Unreserve, Permit, PreBind, Bind and
// PostBind. Each is observed as a whole and, in a sampled cycle, per plugin call.

#include <algorithm>

#include "scheduler/runtime/framework.h"
#include "scheduler/runtime/phases_internal.h"

namespace kubesched::runtime {

using framework::Code;
using framework::Status;
using internal::ObservePoint;
using internal::Stamp;
using internal::TimePlugin;
using metrics::ExtensionPoint;

Status Framework::RunReserve(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kReserve, reserve_.size(), [&] {
    for (size_t i = 0; i < reserve_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kReserve, i), state,
                                 [&] { return reserve_[i]->Reserve(state, pod, node); });
      if (!status.IsSuccess()) return Stamp(std::move(status), reserve_[i]->Name());
    }
    return Status();
  });
}

void Framework::RunUnreserve(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view node) const {
  ObservePoint(metrics_, ExtensionPoint::kUnreserve, reserve_.size(), [&] {
    for (size_t i = reserve_.size(); i-- > 0;) {
      TimePlugin(timings_, Slot(ExtensionPoint::kUnreserve, i), state,
                 [&] { reserve_[i]->Unreserve(state, pod, node); });
    }
  });
}

Status Framework::RunPermit(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node, PermitWait* wait) const {
  wait->plugins.clear();
  wait->timeout = framework::kMaxPermitTimeout;
  return ObservePoint(metrics_, ExtensionPoint::kPermit, permit_.size(), [&] {
    for (size_t i = 0; i < permit_.size(); ++i) {
      absl::Duration timeout = framework::kMaxPermitTimeout;
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kPermit, i), state,
                                 [&] { return permit_[i]->Permit(state, pod, node, &timeout); });
      if (status.IsWait()) {
        wait->plugins.push_back(permit_[i]->Name());
        wait->timeout = std::clamp(timeout, absl::ZeroDuration(), wait->timeout);
        continue;
      }
      if (!status.IsSuccess()) return Stamp(std::move(status), permit_[i]->Name());
    }
    return wait->plugins.empty() ? Status() : Status::Wait();
  });
}

Status Framework::RunPreBind(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kPreBind, pre_bind_.size(), [&] {
    for (size_t i = 0; i < pre_bind_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kPreBind, i), state,
                                 [&] { return pre_bind_[i]->PreBind(state, pod, node); });
      if (!status.IsSuccess() && !status.IsSkip()) {
        return Stamp(std::move(status), pre_bind_[i]->Name());
      }
    }
    return Status();
  });
}

Status Framework::RunBind(framework::CycleState& state, const framework::PodInfo& pod,
                          std::string_view node) const {
  return ObservePoint(metrics_, ExtensionPoint::kBind, bind_.size(), [&] {
    for (size_t i = 0; i < bind_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kBind, i), state,
                                 [&] { return bind_[i]->Bind(state, pod, node); });
      if (status.IsSkip()) continue;
      return Stamp(std::move(status), bind_[i]->Name());
    }
    return Status::Error("no bind plugin bound the pod");
  });
}

void Framework::RunPostBind(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node) const {
  ObservePoint(metrics_, ExtensionPoint::kPostBind, post_bind_.size(), [&] {
    for (size_t i = 0; i < post_bind_.size(); ++i) {
      TimePlugin(timings_, Slot(ExtensionPoint::kPostBind, i), state,
                 [&] { post_bind_[i]->PostBind(state, pod, node); });
    }
  });
}

}  // namespace kubesched::runtime
