#include "plugins/coscheduling/coscheduling.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {
namespace {

using framework::Status;

// What the cycle learned of the pod's group in PreFilter; the messages live here because a
// Status holds views.
struct GangCycleState final : framework::StateData {
  std::string key;
  int32_t min_member = 0;
  absl::Duration timeout = Coscheduling::kDefaultTimeout;
  // Members bound or assumed when the cycle's snapshot was taken (waiting members included).
  int32_t assigned = 0;
  // minMember members were already placed: this one goes as an ordinary pod.
  bool running = false;
  // PreFilter let the member through (and the group's quota is held): only then has the group
  // anything to give back when the member fits nowhere.
  bool admitted = false;
  std::string message;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<GangCycleState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kCoscheduling);
  return key;
}

// Reads the group's spec from its PodGroup object, or from the pod for an implicit group. On
// failure, the message the pod waits with.
std::optional<std::string> ResolveSpec(const framework::PodInfo& pod,
                                       const framework::GangState& gangs, GangCycleState* data) {
  const framework::GangMembership& gang = pod.gang;
  data->key = gang.key;
  if (!gang.error.empty()) return gang.error;
  if (gang.implicit) {
    data->min_member = gang.min_member;
    return std::nullopt;
  }
  const api::PodGroup* group = gangs.Find(gang.key);
  if (group == nullptr) {
    return absl::StrCat("pod group \"", gang.key, "\" does not exist (", framework::kPodGroupLabel,
                        "=", gang.name, ")");
  }
  if (!group->error.empty()) return absl::StrCat("pod group ", gang.key, ": ", group->error);
  data->min_member = group->min_member;
  if (group->schedule_timeout_seconds.has_value() && *group->schedule_timeout_seconds > 0) {
    data->timeout = absl::Seconds(*group->schedule_timeout_seconds);
  }
  return std::nullopt;
}

Status QuotaVerdict(const quota::Admission& admission, std::string_view message) {
  switch (admission.verdict) {
    case quota::Verdict::kFits:
      return Status();
    case quota::Verdict::kOverQuota:
      return Status::Unschedulable(message);
    case quota::Verdict::kOverBudget:
    case quota::Verdict::kNoQueue:
      break;
  }
  return Status::Unresolvable(message);
}

}  // namespace

std::string_view Coscheduling::Name() const { return names::kCoscheduling; }

framework::ClusterEventSet Coscheduling::EventsToRegister() const {
  return framework::kDefaultEvents |
         framework::EventBit(framework::ClusterEvent::kPodGroupChanged) |
         framework::EventBit(framework::ClusterEvent::kGangMemberAdded);
}

framework::PreFilterOutcome Coscheduling::PreFilter(framework::CycleState& state,
                                                    const framework::PodInfo& pod,
                                                    const framework::Snapshot& snapshot) {
  if (!pod.gang.InGroup()) return {Status::Skip(), {}};
  auto data = std::make_unique<GangCycleState>();
  GangCycleState& gang = *data;
  Status status;
  if (auto problem = ResolveSpec(pod, snapshot.gangs(), &gang)) {
    gang.message = *std::move(problem);
    status = Status::Unresolvable(gang.message);
  } else {
    const framework::GangCounts counts = snapshot.gangs().CountsOf(gang.key);
    gang.assigned = counts.assigned;
    gang.running = counts.assigned >= gang.min_member;
    if (counts.pods < gang.min_member) {
      gang.message = absl::StrCat("pod group ", gang.key, " has ", counts.pods,
                                  " pod(s), fewer than its minMember ", gang.min_member);
      status = Status::Unresolvable(gang.message);
    } else if (!gang.running && counts.assigned == 0 && tracker_ != nullptr) {
      // With its pods raised to minMember, so a queue's `pods` max is held as well as checked.
      const api::ResourceList need =
          quota::WithMemberPods(framework::GangNeedOf(pod, snapshot.gangs()), gang.min_member);
      const quota::Admission admission = tracker_->AdmitGang(pod, need, gang.min_member);
      gang.message = admission.message;
      status = QuotaVerdict(admission, gang.message);
      if (status.IsSuccess() && !state.dry_run()) {
        if (absl::Status held = tracker_->HoldGang(pod, need); !held.ok()) {
          gang.message = std::string(held.message());
          status = Status::Unschedulable(gang.message);
        }
      }
    }
  }
  gang.admitted = status.IsSuccess();
  state.Write(StateKey(), std::move(data));
  return {std::move(status), {}};
}

framework::PostFilterOutcome Coscheduling::PostFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& /*snapshot*/, absl::Span<const framework::NodeStatus> /*filtered*/,
    const framework::PostFilterHost& /*host*/) {
  framework::PostFilterOutcome outcome;
  auto* data = state.ReadMutable<GangCycleState>(StateKey());
  if (data == nullptr || data->running || !data->admitted) {
    outcome.status = Status::Skip();
    return outcome;
  }
  data->message = absl::StrCat("pod group ", data->key, " cannot be placed whole: ", pod.key,
                               " fits no node, so the group gives back what it holds");
  // A dry run says what would happen; the members waiting keep waiting.
  if (!state.dry_run()) GiveUpGroup(data->key, pod.key, data->message);
  outcome.status = Status::Unschedulable(data->message);
  return outcome;
}

Status Coscheduling::Reserve(framework::CycleState& /*state*/, const framework::PodInfo& /*pod*/,
                             std::string_view /*node_name*/) {
  return Status();
}

void Coscheduling::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                             std::string_view /*node_name*/) {
  const auto* data = state.Read<GangCycleState>(StateKey());
  if (data == nullptr || data->running || data->min_member == 0) return;
  GiveUpGroup(data->key, pod.key,
              absl::StrCat("pod group ", data->key, " was given up: its member ", pod.key,
                           " could not be placed"));
}

Status Coscheduling::Permit(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                            std::string_view /*node_name*/, absl::Duration* timeout) {
  const auto* data = state.Read<GangCycleState>(StateKey());
  if (data == nullptr || data->running || waiting_ == nullptr) return Status();
  // This member is assumed now, after the snapshot that counted the others.
  if (data->assigned + 1 < data->min_member) {
    *timeout = data->timeout;
    return Status::Wait();
  }
  for (const std::string& member : WaitingMembers(data->key, "")) waiting_->Allow(member, Name());
  // Every member is placed: their own charges now stand for the group's hold.
  if (tracker_ != nullptr) tracker_->ReleaseGang(data->key);
  return Status();
}

std::vector<std::string> Coscheduling::WaitingMembers(std::string_view gang_key,
                                                      std::string_view except) const {
  // Collected first: Allow and Reject must not be called from inside ForEach.
  std::vector<std::string> members;
  waiting_->ForEach([&](const framework::PodInfo& waiting, std::string_view) {
    if (waiting.gang.key == gang_key && waiting.key != except) members.push_back(waiting.key);
  });
  return members;
}

void Coscheduling::GiveUpGroup(const std::string& gang_key, std::string_view except,
                               const std::string& message) {
  if (waiting_ != nullptr) {
    for (const std::string& member : WaitingMembers(gang_key, except)) {
      waiting_->Reject(member, Name(), message);
    }
  }
  if (tracker_ != nullptr) tracker_->ReleaseGang(gang_key);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewCoscheduling(const config::PluginArgs& args,
                                                                   const PluginHandle& handle) {
  if (auto status = helper::ExpectNoArgs(args, names::kCoscheduling); !status.ok()) return status;
  return std::make_unique<Coscheduling>(handle.waiting_pods, handle.quota);
}

}  // namespace kubesched::plugins
