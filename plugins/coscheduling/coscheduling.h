#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/waiting_pods.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::plugins {

// Coscheduling (kubesched extension, on by default; README "Gangs"): the pods of a gang are
// placed all together or not at all. A gang is a PodGroup of kubernetes-sigs' scheduler-plugins
// (label scheduling.x-k8s.io/pod-group) or an implicit group of plain pods (annotations
// kubesched.io/pod-group and kubesched.io/pod-group-min-member); see gang_membership.h.
//
// PreFilter (once per member): the group must exist and be valid, and have at least minMember
// pods; before its first member is placed, its whole need (spec.minResources, else the requests
// of its first minMember members by creation) must fit the member's queue and every ancestor, and
// is then held there (QuotaTracker::HoldGang) so two groups never each take half. A pod outside any
// group, or a member of a group already running with minMember members, is skipped. Permit: a
// member waits, reserved, until minMember members are reserved; the last one allows them all. The
// wait ends after spec.scheduleTimeoutSeconds (default 60 s). PostFilter (after preemption found
// nothing): a member that fits nowhere rejects the members waiting, so the group gives back what it
// held at once rather than at its timeout. Unreserve: a member given up (timeout, rejection, failed
// bind) gives up the others and the group's quota hold.
// A dry run (CycleState::dry_run, explain) gets the same verdicts and messages, but holds no
// quota and gives nothing up.
class Coscheduling final : public framework::PreFilterPlugin,
                           public framework::PostFilterPlugin,
                           public framework::ReservePlugin,
                           public framework::PermitPlugin {
 public:
  static constexpr absl::Duration kDefaultTimeout = absl::Seconds(60);

  // null `waiting` (a configuration check): members are let through one by one.
  Coscheduling(framework::WaitingPods* waiting, quota::QuotaTracker* tracker)
      : waiting_(waiting), tracker_(tracker) {}

  std::string_view Name() const override;
  // A new member, a PodGroup created or changed, or room freed may complete a group.
  framework::ClusterEventSet EventsToRegister() const override;
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // Its one Unschedulable rejection is group quota, which preempting the queue's lower-priority
  // pods may lift (DefaultPreemption, with QuotaTracker::GangPreemptionView); the others are
  // unresolvable.
  bool PreemptionMayLiftRejection() const override { return true; }
  framework::PostFilterOutcome PostFilter(framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::Snapshot& snapshot,
                                          absl::Span<const framework::NodeStatus> filtered,
                                          const framework::PostFilterHost& host) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 std::string_view node_name) override;
  framework::Status Permit(framework::CycleState& state, const framework::PodInfo& pod,
                           std::string_view node_name, absl::Duration* timeout) override;

 private:
  // Rejects every waiting member of `gang_key` but `except` with `message` and frees the
  // group's quota hold.
  void GiveUpGroup(const std::string& gang_key, std::string_view except,
                   const std::string& message);
  // The keys of the gang's members waiting at Permit, but `except`.
  std::vector<std::string> WaitingMembers(std::string_view gang_key, std::string_view except) const;

  framework::WaitingPods* const waiting_;
  quota::QuotaTracker* const tracker_;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewCoscheduling(const config::PluginArgs& args,
                                                                   const PluginHandle& handle);

}  // namespace kubesched::plugins
