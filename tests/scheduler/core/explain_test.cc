// explain on a gang member: it changes nothing the scheduler holds (members waiting at Permit, a
// group's quota hold), and it shows the member's group, its need and the room for it.

#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Queue root.ml may run four cpus.
constexpr char kQueues[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
queues:
  tree:
  - name: ml
    max: {cpu: "4"}
)";

// The real scheduler on the embedded cluster, driven one cycle at a time.
struct World {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  DeferredBindExecutor binds;
  std::unique_ptr<Scheduler> scheduler;

  World() {
    auto config = config::ParseConfiguration(kQueues);
    REQUIRE(config.ok());
    SchedulerDeps deps{&clock, &cluster, &binds, nullptr, /*seed=*/1, /*threads=*/1};
    auto created = Scheduler::Create(*config, deps);
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    cluster.Watch(scheduler.get());
  }
  void Add(const api::Object& object) {
    REQUIRE(cluster.Create(object).ok());
    cluster.DeliverEvents();
  }
  void Cycle() {
    REQUIRE(scheduler->ScheduleOne());
    binds.RunPending();
    cluster.DeliverEvents();
  }
  // What root.ml's holds for pod groups amount to, in milli-cpus.
  int64_t HeldCpu() {
    for (const quota::QueueUsage& queue : scheduler->quota().Usage()) {
      if (queue.path == "root.ml") return queue.held.Get(api::kCpu);
    }
    FAIL("no queue root.ml");
    return 0;
  }
};

// A member of the implicit group `group` of `min_member` in queue root.ml, asking for one cpu.
api::Pod Member(const std::string& name, const std::string& group, int min_member) {
  return PodBuilder(name)
      .Container({{"cpu", "1"}})
      .Label("kubesched.io/queue", "root.ml")
      .Annotation(framework::kPodGroupAnnotation, group)
      .Annotation(framework::kPodGroupMinMemberAnnotation, std::to_string(min_member))
      .Build();
}

TEST_CASE("explain on a member that fits nowhere leaves its group's waiting members and hold",
          "[scheduler][gang][explain]") {
  World world;
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "2"}, {"pods", "110"}}).Build());
  for (const char* name : {"a", "b", "c"}) world.Add(Member(name, "job", 3));
  world.Cycle();
  world.Cycle();
  REQUIRE(world.scheduler->waiting_pods().size() == 2);
  const int64_t held = world.HeldCpu();
  REQUIRE(held == 1000);  // three cpus needed, two charged to the waiting members

  // The node is full: scheduling the third member would give the group up.
  const Explanation explanation = world.scheduler->Explain(Member("c", "job", 3));
  CHECK(explanation.selected == nullptr);
  CHECK_THAT(explanation.message,
             Catch::Contains("pod group default/job cannot be placed whole: default/c fits no "
                             "node, so the group gives back what it holds"));
  world.scheduler->SettleWaitingPods();
  CHECK(world.scheduler->waiting_pods().size() == 2);
  CHECK(world.HeldCpu() == held);
}

TEST_CASE("explain on the first member of a group admits it without holding its quota",
          "[scheduler][gang][explain]") {
  World world;
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "8"}, {"pods", "110"}}).Build());
  for (const char* name : {"a", "b"}) world.Add(Member(name, "pair", 2));
  const Explanation explanation = world.scheduler->Explain(Member("a", "pair", 2));
  CHECK(explanation.pre_filter_status.IsSuccess());
  CHECK(explanation.selected != nullptr);
  CHECK(world.HeldCpu() == 0);
  // Scheduling still holds it: the first member's PreFilter holds the pair's two cpus.
  world.Cycle();
  CHECK(world.scheduler->waiting_pods().size() == 1);
  CHECK(world.HeldCpu() == 1000);
}

TEST_CASE("explain on a member of a group over its queue says why, and holds nothing",
          "[scheduler][gang][explain]") {
  World world;
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "8"}, {"pods", "110"}}).Build());
  for (int i = 0; i < 5; ++i) world.Add(Member(absl::StrCat("w", i), "big", 5));
  const Explanation explanation = world.scheduler->Explain(Member("w0", "big", 5));
  CHECK(explanation.pre_filter_status.code() == framework::Code::kUnschedulable);
  CHECK_THAT(std::string(explanation.pre_filter_status.Message()),
             Catch::Contains("queue root.ml: insufficient quota for pod group default/big: cpu"));
  CHECK(world.HeldCpu() == 0);
}

TEST_CASE("explain's group view: members, need and the room left by others",
          "[scheduler][gang][explain]") {
  World world;
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "2"}, {"pods", "110"}}).Build());
  CHECK_FALSE(world.scheduler->ExplainGang(PodBuilder("plain").Build()).has_value());

  // "other" holds room in root.ml: one of its two cpus charged, one held.
  for (const char* name : {"o0", "o1"}) world.Add(Member(name, "other", 2));
  world.Cycle();
  REQUIRE(world.scheduler->waiting_pods().size() == 1);
  for (const char* name : {"a", "b", "c"}) world.Add(Member(name, "job", 3));
  const std::optional<GangExplanation> group = world.scheduler->ExplainGang(Member("a", "job", 3));
  REQUIRE(group.has_value());
  CHECK(group->key == "default/job");
  CHECK(group->implicit);
  CHECK(group->min_member == 3);
  CHECK(group->counts.pods == 3);
  CHECK(group->counts.assigned == 0);
  CHECK(group->phase == "Pending");
  CHECK(group->problem.empty());
  CHECK(group->need.Get(api::kCpu) == 3000);
  CHECK(group->need.Get(api::kPods) == 3);
  CHECK_FALSE(group->need_from_min_resources);
  REQUIRE(group->queue_path.size() == 2);
  CHECK(group->queue_path[0].path == "root.ml");
  CHECK(group->queue_path[0].used.Get(api::kCpu) == 1000);  // o0
  CHECK(group->queue_path[0].held.Get(api::kCpu) == 1000);  // for o1
  CHECK(group->queue_path[1].path == "root");
  // The waiting group's own view leaves its member and its hold out.
  const auto other = world.scheduler->ExplainGang(Member("o1", "other", 2));
  REQUIRE(other.has_value());
  CHECK(other->phase == "Scheduling");
  CHECK(other->queue_path[0].used.Get(api::kCpu) == 0);
  CHECK(other->queue_path[0].held.Get(api::kCpu) == 0);
}

TEST_CASE("explain's group view of a PodGroup: its minResources, or why it cannot be used",
          "[scheduler][gang][explain]") {
  World world;
  api::PodGroup train;
  train.meta.name = "train";
  train.meta.namespace_name = "default";
  train.meta.namespace_symbol = api::Intern("default");
  train.min_member = 4;
  train.min_resources.Set(api::kCpu, 6000);
  world.Add(train);
  const api::Pod member = PodBuilder("t0")
                              .Container({{"cpu", "1"}})
                              .Label(framework::kPodGroupLabel, "train")
                              .Label("kubesched.io/queue", "root.ml")
                              .Build();
  const auto group = world.scheduler->ExplainGang(member);
  REQUIRE(group.has_value());
  CHECK_FALSE(group->implicit);
  CHECK(group->min_member == 4);
  CHECK(group->need_from_min_resources);
  CHECK(group->need.Get(api::kCpu) == 6000);
  CHECK(group->need.Get(api::kPods) == 4);
  CHECK(group->queue_path.size() == 2);

  const auto missing = world.scheduler->ExplainGang(
      PodBuilder("x").Label(framework::kPodGroupLabel, "ghost").Build());
  REQUIRE(missing.has_value());
  CHECK(missing->problem == "pod group \"default/ghost\" does not exist");
  CHECK_FALSE(missing->min_member.has_value());
  CHECK(missing->need.IsZero());
  CHECK(missing->queue_path.empty());
}

}  // namespace
}  // namespace kubesched::scheduler
