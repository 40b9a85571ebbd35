// QuotaTracker's group quota: a pod group's whole need is checked against every queue on its path
// before its first member is placed and then held, so two groups never each take half.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/queues.h"
#include "scheduler/quota/quota_tracker.h"
#include "tests/testing/builders.h"

namespace kubesched::quota {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

constexpr char kGpu[] = "nvidia.com/gpu";

config::QueuesConfig Queues(const std::string& yaml) {
  auto parsed = config::ParseQueuesDocument(yaml);
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

// A pod of `gpus` GPUs in namespace ml, queue `queue`, member of group `group` ("" for none).
framework::PodInfoPtr Pod(const std::string& name, const std::string& queue,
                          const std::string& group, int gpus) {
  PodBuilder builder(name, "ml");
  builder.Container({{kGpu, std::to_string(gpus)}});
  builder.Label(std::string(kQueueLabel), queue);
  if (!group.empty()) builder.Label(framework::kPodGroupLabel, group);
  return framework::MakePodInfo(builder.Ptr(), 0);
}

// The same pod at a higher priority: a preemptor of the pods Pod makes.
framework::PodInfoPtr Above(const framework::PodInfoPtr& pod) {
  return framework::MakePodInfo(pod->pod, 10);
}

framework::PodInfoPtr Bound(const framework::PodInfoPtr& pod, const std::string& node) {
  api::Pod copy = pod->get();
  copy.spec.node_name = node;
  return framework::MakePodInfo(std::make_shared<const api::Pod>(copy), 0);
}

// What `members` pods of `gpus_each` GPUs need, one `pods` each.
api::ResourceList GroupNeed(int members, int gpus_each) {
  api::ResourceList need;
  need.Set(api::InternResource(kGpu), members * gpus_each);
  need.Set(api::kPods, members);
  return need;
}

QueueUsage UsageOf(QuotaTracker& tracker, const std::string& path) {
  for (auto& queue : tracker.Usage()) {
    if (queue.path == path) return queue;
  }
  FAIL("no queue " << path);
  return {};
}

int64_t Used(QuotaTracker& tracker, const std::string& path) {
  return UsageOf(tracker, path).used.Get(api::InternResource(kGpu));
}

int64_t Held(QuotaTracker& tracker, const std::string& path) {
  return UsageOf(tracker, path).held.Get(api::InternResource(kGpu));
}

constexpr char kProd[] = R"(
tree:
- name: prod
  max: {nvidia.com/gpu: "8"}
  queues:
  - name: train
  - name: search
)";

TEST_CASE("a group of n pods needs n pod slots, and a larger pods count stays", "[quota][gangs]") {
  api::ResourceList need;
  need.Set(api::InternResource(kGpu), 4);
  CHECK(WithMemberPods(need, 3).Get(api::kPods) == 3);
  CHECK(WithMemberPods(need, 3).Get(api::InternResource(kGpu)) == 4);
  need.Set(api::kPods, 5);
  CHECK(WithMemberPods(need, 3).Get(api::kPods) == 5);
}

TEST_CASE("a group over its parent's max is refused with one message naming the group",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  REQUIRE(tracker.Reserve(*Pod("web", "root.prod.search", "", 6), "n").ok());
  const Admission admission =
      tracker.AdmitGang(*Pod("w0", "root.prod.train", "train", 1), GroupNeed(4, 1), 4);
  CHECK(admission.verdict == Verdict::kOverQuota);
  CHECK(admission.queue == "root.prod.train");
  CHECK(admission.blocking_queue == "root.prod");
  CHECK(admission.message ==
        "queue root.prod: insufficient quota for pod group ml/train: nvidia.com/gpu (used 6, "
        "max 8, group needs 4)");
  // It waits on the keys a single pod blocked by root.prod waits on.
  CHECK(AdmissionWaitKeys(admission) == std::vector<std::string>{"quota:root.prod"});
  CHECK(tracker.WaitKeys(*Pod("x", "root.prod.train", "", 3)) ==
        std::vector<std::string>{"quota:root.prod"});
}

TEST_CASE("a held group keeps its room: a second group wanting the other half is refused",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  auto first = Pod("a0", "root.prod.train", "a", 1);
  CHECK(tracker.AdmitGang(*first, GroupNeed(6, 1), 6).verdict == Verdict::kFits);
  REQUIRE(tracker.HoldGang(*first, GroupNeed(6, 1)).ok());
  CHECK(Held(tracker, "root.prod") == 6);
  CHECK(Held(tracker, "root.prod.train") == 6);
  CHECK(Held(tracker, "root.prod.search") == 0);
  CHECK(Used(tracker, "root.prod") == 0);

  auto second = Pod("b0", "root.prod.search", "b", 1);
  const Admission refused = tracker.AdmitGang(*second, GroupNeed(4, 1), 4);
  CHECK(refused.verdict == Verdict::kOverQuota);
  CHECK(refused.message ==
        "queue root.prod: insufficient quota for pod group ml/b: nvidia.com/gpu (used 0, held 6 "
        "for pod groups, max 8, group needs 4)");
  const absl::Status hold = tracker.HoldGang(*second, GroupNeed(4, 1));
  CHECK(hold.code() == absl::StatusCode::kResourceExhausted);
  CHECK(hold.message() == refused.message);
  CHECK(Held(tracker, "root.prod") == 6);
  // Its own hold does not count against the held group.
  CHECK(tracker.AdmitGang(*first, GroupNeed(6, 1), 6).verdict == Verdict::kFits);
}

TEST_CASE("a group's view of its queues leaves out its own members and hold, not others'",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  const api::ResourceId gpu = api::InternResource(kGpu);
  REQUIRE(tracker.Reserve(*Pod("web", "root.prod.search", "", 1), "n").ok());
  REQUIRE(tracker.HoldGang(*Pod("b0", "root.prod.search", "b", 1), GroupNeed(2, 1)).ok());
  auto a0 = Pod("a0", "root.prod.train", "a", 1);
  REQUIRE(tracker.HoldGang(*a0, GroupNeed(4, 1)).ok());
  REQUIRE(tracker.Reserve(*a0, "n").ok());  // one member placed: the hold shrinks to 3

  const std::vector<QueueUsage> path = tracker.GangPathUsage(*Pod("a1", "root.prod.train", "a", 1));
  REQUIRE(path.size() == 3);
  CHECK(path[0].path == "root.prod.train");
  CHECK(path[1].path == "root.prod");
  CHECK(path[2].path == "root");
  // root.prod: the web pod and group b's hold count against group a; a0 and a's hold do not.
  CHECK(path[1].used.Get(gpu) == 1);
  CHECK(path[1].held.Get(gpu) == 2);
  CHECK(path[1].max.Get(gpu) == 8);
  CHECK(path[0].used.Get(gpu) == 0);
  CHECK(path[0].held.Get(gpu) == 0);
  // What everyone else sees is unchanged.
  CHECK(Used(tracker, "root.prod") == 2);
  CHECK(Held(tracker, "root.prod") == 5);
  // A member that names no usable leaf queue has no view.
  CHECK(tracker.GangPathUsage(*Pod("z", "root.prod", "z", 1)).empty());
}

TEST_CASE("members of a held group are admitted and reserved, other pods are not",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  REQUIRE(tracker.HoldGang(*Pod("a0", "root.prod.train", "a", 2), GroupNeed(4, 2)).ok());
  for (int i = 0; i < 4; ++i) {
    auto member = Pod("a" + std::to_string(i), "root.prod.train", "a", 2);
    CHECK(tracker.Admit(*member).verdict == Verdict::kFits);
    CHECK(tracker.Reserve(*member, "n").ok());
  }
  CHECK(Used(tracker, "root.prod") == 8);
  CHECK(Held(tracker, "root.prod") == 0);

  QuotaTracker other(&clock, Queues(kProd));
  REQUIRE(other.HoldGang(*Pod("a0", "root.prod.train", "a", 2), GroupNeed(4, 2)).ok());
  REQUIRE(other.Reserve(*Pod("a0", "root.prod.train", "a", 2), "n").ok());
  auto outsider = Pod("x", "root.prod.train", "", 1);
  const Admission admission = other.Admit(*outsider);
  CHECK(admission.verdict == Verdict::kOverQuota);
  CHECK(admission.message ==
        "queue root.prod: insufficient quota for nvidia.com/gpu (used 2, held 6 for pod groups, "
        "max 8, requested 1)");
  CHECK(other.Reserve(*outsider, "n").code() == absl::StatusCode::kResourceExhausted);
  CHECK(other.Reserve(*Pod("c0", "root.prod.search", "c", 1), "n").code() ==
        absl::StatusCode::kResourceExhausted);
}

TEST_CASE("charging members shrinks the hold so usage and hold never double count",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  REQUIRE(tracker.HoldGang(*Pod("a0", "root.prod.train", "a", 1), GroupNeed(4, 1)).ok());
  std::vector<framework::PodInfoPtr> members;
  for (int i = 0; i < 5; ++i)
    members.push_back(Pod("a" + std::to_string(i), "root.prod.train", "a", 1));

  REQUIRE(tracker.Reserve(*members[0], "n").ok());
  REQUIRE(tracker.Reserve(*members[1], "n").ok());
  CHECK(Used(tracker, "root.prod") == 2);
  CHECK(Held(tracker, "root.prod") == 2);
  CHECK(UsageOf(tracker, "root.prod").held.Get(api::kPods) == 2);
  tracker.ChargeBound(*Bound(members[0], "n"));  // confirming a charge changes nothing
  CHECK(Used(tracker, "root.prod") == 2);
  CHECK(Held(tracker, "root.prod") == 2);
  // A member bound without this scheduler's Reserve counts too.
  tracker.ChargeBound(*Bound(members[2], "m"));
  CHECK(Used(tracker, "root.prod") == 3);
  CHECK(Held(tracker, "root.prod") == 1);
  REQUIRE(tracker.Reserve(*members[3], "n").ok());
  REQUIRE(tracker.Reserve(*members[4], "n").ok());  // beyond min_member: the hold stays at 0
  CHECK(Used(tracker, "root.prod") == 5);
  CHECK(Held(tracker, "root.prod") == 0);

  // A member refunded gives its room back to the hold only up to the need.
  tracker.Release(members[4]->key, /*assumed_only=*/true);
  CHECK(Held(tracker, "root.prod") == 0);
  tracker.Release(members[3]->key, /*assumed_only=*/true);
  CHECK(Used(tracker, "root.prod") == 3);
  CHECK(Held(tracker, "root.prod") == 1);
}

TEST_CASE("releasing a group's hold wakes its queues and frees the room", "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  std::vector<std::string> woken;
  tracker.SetWakeHandler([&](const std::vector<std::string>& keys) { woken = keys; });
  REQUIRE(tracker.HoldGang(*Pod("a0", "root.prod.train", "a", 1), GroupNeed(6, 1)).ok());
  auto second = Pod("b0", "root.prod.search", "b", 1);
  REQUIRE(tracker.AdmitGang(*second, GroupNeed(4, 1), 4).verdict == Verdict::kOverQuota);

  tracker.ReleaseGang("ml/a");
  CHECK(woken ==
        std::vector<std::string>{"quota:root.prod.train", "quota:root.prod", "quota:root"});
  CHECK(Held(tracker, "root.prod") == 0);
  CHECK(Held(tracker, "root") == 0);
  CHECK(tracker.AdmitGang(*second, GroupNeed(4, 1), 4).verdict == Verdict::kFits);

  woken.clear();
  tracker.ReleaseGang("ml/a");
  tracker.ReleaseGang("ml/never-held");
  CHECK(woken.empty());
}

TEST_CASE("an ancestor's max blocks a group though its leaf has room", "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(R"(
tree:
- name: prod
  max: {nvidia.com/gpu: "8"}
  queues:
  - {name: train, max: {nvidia.com/gpu: "6"}}
  - {name: search}
)"));
  REQUIRE(tracker.Reserve(*Pod("web", "root.prod.search", "", 5), "n").ok());
  auto member = Pod("w0", "root.prod.train", "train", 1);
  const Admission admission = tracker.AdmitGang(*member, GroupNeed(4, 1), 4);
  CHECK(admission.verdict == Verdict::kOverQuota);
  CHECK(admission.blocking_queue == "root.prod");
  CHECK(tracker.HoldGang(*member, GroupNeed(4, 1)).code() == absl::StatusCode::kResourceExhausted);
  CHECK(Held(tracker, "root.prod.train") == 0);
  // Three fit in root.prod, but the leaf's own max stops seven.
  CHECK(tracker.AdmitGang(*member, GroupNeed(3, 1), 3).verdict == Verdict::kFits);
  CHECK(tracker.AdmitGang(*member, GroupNeed(7, 1), 7).blocking_queue == "root.prod.train");
}

TEST_CASE("a spent budget on the path blocks a group that needs the resource", "[quota][gangs]") {
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  QuotaTracker tracker(&clock, Queues(R"(
tree:
- name: research
  budget: {nvidia.com/gpu: 1000h, period: 168h}
  queues: [{name: train}]
)"));
  REQUIRE(tracker.Reserve(*Pod("job", "root.research.train", "", 10), "n").ok());
  clock.Advance(absl::Hours(100));
  auto member = Pod("w0", "root.research.train", "train", 1);
  const Admission admission = tracker.AdmitGang(*member, GroupNeed(2, 1), 2);
  CHECK(admission.verdict == Verdict::kOverBudget);
  CHECK(admission.message ==
        "queue root.research: budget for nvidia.com/gpu used up (used 1000h of 1000h per 168h); "
        "budget spent, resets at 2023-11-21T22:13:20Z");
  CHECK(AdmissionWaitKeys(admission) == std::vector<std::string>{"budget:root.research"});
  CHECK(tracker.HoldGang(*member, GroupNeed(2, 1)).code() == absl::StatusCode::kResourceExhausted);
  api::ResourceList cpu_only;
  cpu_only.Set(api::InternResource("cpu"), 2000);
  cpu_only.Set(api::kPods, 2);
  CHECK(tracker.AdmitGang(*member, cpu_only, 2).verdict == Verdict::kFits);
}

TEST_CASE("a hold spends no budget", "[quota][gangs]") {
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  QuotaTracker tracker(&clock, Queues(R"(
tree:
- name: research
  budget: {nvidia.com/gpu: 10h}
)"));
  REQUIRE(tracker.HoldGang(*Pod("w0", "root.research", "train", 1), GroupNeed(4, 1)).ok());
  clock.Advance(absl::Hours(100));
  const QueueUsage usage = UsageOf(tracker, "root.research");
  REQUIRE(usage.budgets.size() == 1);
  CHECK(usage.budgets[0].used_hours == 0);
}

TEST_CASE("holding a group again changes nothing", "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  auto member = Pod("a0", "root.prod.train", "a", 1);
  REQUIRE(tracker.HoldGang(*member, GroupNeed(4, 1)).ok());
  CHECK(tracker.HoldGang(*member, GroupNeed(4, 1)).ok());
  CHECK(tracker.HoldGang(*Pod("a1", "root.prod.train", "a", 1), GroupNeed(8, 1)).ok());
  CHECK(Held(tracker, "root.prod") == 4);
  CHECK(Held(tracker, "root") == 4);
}

TEST_CASE("a pod in no group cannot hold", "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  CHECK(tracker.HoldGang(*Pod("x", "root.prod.train", "", 1), GroupNeed(2, 1)).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(tracker.HoldGang(*Pod("y", "root.prod", "g", 1), GroupNeed(2, 1)).code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(Held(tracker, "root") == 0);
}

TEST_CASE("a reload keeps holds by group key and drops those whose queue is gone",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  REQUIRE(tracker.HoldGang(*Pod("a0", "root.prod.train", "a", 1), GroupNeed(6, 1)).ok());
  REQUIRE(tracker.Reserve(*Pod("a0", "root.prod.train", "a", 1), "n").ok());
  auto second = Pod("b0", "root.prod.search", "b", 1);

  tracker.SetConfig(Queues(R"(
tree:
- name: prod
  max: {nvidia.com/gpu: "10"}
  queues: [{name: train}, {name: search}]
)"));
  CHECK(Used(tracker, "root.prod") == 1);
  CHECK(Held(tracker, "root.prod") == 5);
  CHECK(tracker.AdmitGang(*second, GroupNeed(4, 1), 4).verdict == Verdict::kFits);
  CHECK(tracker.AdmitGang(*second, GroupNeed(5, 1), 5).verdict == Verdict::kOverQuota);

  tracker.SetConfig(Queues(R"(
tree:
- name: prod
  max: {nvidia.com/gpu: "10"}
  queues: [{name: search}]
)"));
  CHECK(Held(tracker, "root.prod") == 0);
  CHECK(Held(tracker, "root") == 0);
  CHECK(tracker.AdmitGang(*second, GroupNeed(9, 1), 9).verdict == Verdict::kFits);
}

TEST_CASE("Usage and PathUsage report what is held in each subtree", "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  auto member = Pod("a0", "root.prod.train", "a", 1);
  REQUIRE(tracker.HoldGang(*member, GroupNeed(3, 1)).ok());
  const auto path = tracker.PathUsage(*member);
  REQUIRE(path.size() == 3);
  CHECK(path[0].path == "root.prod.train");
  CHECK(path[0].held.Get(api::InternResource(kGpu)) == 3);
  CHECK(path[0].held.Get(api::kPods) == 3);
  CHECK(path[1].held.Get(api::InternResource(kGpu)) == 3);
  CHECK(path[2].path == "root");
  CHECK(path[2].held.Get(api::InternResource(kGpu)) == 3);
  CHECK(UsageOf(tracker, "root.prod.search").held.IsZero());
  CHECK(UsageOf(tracker, "root.prod").used.IsZero());
}

TEST_CASE("typed per-model limits are not held but still checked per member per node",
          "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(R"(
tree:
- name: prod
  max: {nvidia.com/gpu: "8", nvidia.com/gpu.A100: "2"}
)"));
  tracker.SetNode(NodeBuilder("a100").Label("nvidia.com/gpu.product", "A100").Build());
  api::ResourceList need = GroupNeed(4, 1);
  need.Set(api::InternResource("nvidia.com/gpu.A100"), 4);  // ignored: depends on the nodes
  REQUIRE(tracker.AdmitGang(*Pod("a0", "root.prod", "a", 1), need, 4).verdict == Verdict::kFits);
  REQUIRE(tracker.HoldGang(*Pod("a0", "root.prod", "a", 1), need).ok());
  CHECK(UsageOf(tracker, "root.prod").held.Get(api::InternResource("nvidia.com/gpu.A100")) == 0);
  CHECK(Held(tracker, "root.prod") == 4);
  CHECK(tracker.Reserve(*Pod("a0", "root.prod", "a", 1), "a100").ok());
  CHECK(tracker.Reserve(*Pod("a1", "root.prod", "a", 1), "a100").ok());
  CHECK(tracker.Reserve(*Pod("a2", "root.prod", "a", 1), "a100").code() ==
        absl::StatusCode::kResourceExhausted);
  CHECK(tracker.Reserve(*Pod("a2", "root.prod", "a", 1), "other").ok());
  CHECK(Held(tracker, "root.prod") == 1);
}

TEST_CASE("preemption counts other groups' holds as room it cannot free", "[quota][gangs]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kProd));
  REQUIRE(tracker.Reserve(*Pod("low", "root.prod.search", "", 2), "n").ok());
  REQUIRE(tracker.HoldGang(*Pod("a0", "root.prod.train", "a", 1), GroupNeed(6, 1)).ok());
  auto view = tracker.PreemptionView(*Above(Pod("x", "root.prod.search", "", 3)));
  REQUIRE(view.has_value());
  CHECK(view->blocking_queue() == "root.prod");
  CHECK(view->MayPreempt("ml/low"));
  CHECK_FALSE(view->FitsWithout({"ml/low"}));
  auto small = tracker.PreemptionView(*Above(Pod("y", "root.prod.search", "", 2)));
  REQUIRE(small.has_value());
  CHECK(small->FitsWithout({"ml/low"}));
}

}  // namespace
}  // namespace kubesched::quota
