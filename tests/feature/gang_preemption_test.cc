// Preemption and pod groups through the real scheduler on the embedded cluster: a group being
// placed preempts only where every missing member finds room, a placed group's members go only
// together, NonPreemptible still protects, and members waiting at Permit are sent back rather
// than deleted.

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/feature/gang_world.h"

namespace kubesched::scheduler {
namespace {

using gang_testing::InQueue;
using gang_testing::Member;
using gang_testing::MlQueue;
using gang_testing::World;
using testing::NodeBuilder;
using testing::PodBuilder;

// A plain pod bound to `node`, asking for `cpu`, at `priority`.
api::Pod Running(const std::string& name, const std::string& node, const std::string& cpu,
                 int32_t priority) {
  api::Pod pod = PodBuilder(name).Container({{"cpu", cpu}}).NodeName(node).Build();
  pod.spec.priority = priority;
  return pod;
}

api::Pod Prioritized(api::Pod pod, int32_t priority) {
  pod.spec.priority = priority;
  return pod;
}

int Evicted(const World& world, const std::string& prefix) {
  int n = 0;
  for (const auto& [key, preemptor] : world.observer.evicted) {
    n += key.rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

TEST_CASE("a group preempts when the victims make room for every member", "[gang][preemption]") {
  World world;
  world.Nodes(4, "2");
  for (int i = 0; i < 4; ++i) {
    world.Add(Running(absl::StrCat("low", i), absl::StrCat("n", i), "2", 0));
  }
  for (int i = 0; i < 3; ++i) {
    world.Add(Prioritized(Member(absl::StrCat("w", i), "job", 3, "2"), 100));
  }
  world.Run();
  CHECK(world.Bound("default/w") == 3);
  CHECK(Evicted(world, "default/low") == 3);  // one node per member, no more
}

TEST_CASE("a group preempts nobody when the victims cannot make room for every member",
          "[gang][preemption]") {
  World world;
  world.Nodes(3, "2");
  world.Add(Running("low0", "n0", "2", 0));
  world.Add(Running("low1", "n1", "2", 0));
  world.Add(Running("high", "n2", "2", 1000));
  for (int i = 0; i < 3; ++i) {
    world.Add(Prioritized(Member(absl::StrCat("w", i), "job", 3, "2"), 100));
  }
  world.Run();
  CHECK(world.Bound("default/w") == 0);
  CHECK(world.observer.evicted.empty());
  bool said_why = false;
  for (int i = 0; i < 3; ++i) {
    said_why = said_why || world.Message(absl::StrCat("default/w", i))
                                   .find(
                                       "preemption: pod group default/job needs room for 3 "
                                       "more member(s); removing lower-priority pods makes room "
                                       "on 2 node(s)") != std::string::npos;
  }
  CHECK(said_why);
}

// Three 2-cpu members of a group with `min_member` fill three 2-cpu nodes; then a higher-priority
// pod wants one node's room. How many members it evicted.
int EvictedForOnePod(int min_member) {
  World world;
  world.Nodes(3, "2");
  for (int i = 0; i < 3; ++i) world.Add(Member(absl::StrCat("g", i), "low", min_member, "2"));
  world.Run();
  REQUIRE(world.Bound("default/g") == 3);
  world.Add(Prioritized(PodBuilder("urgent").Container({{"cpu", "2"}}).Build(), 100));
  world.Run();
  CHECK(world.Bound("default/urgent") == 1);
  return Evicted(world, "default/g");
}

TEST_CASE("preempting one member of a placed group preempts the group", "[gang][preemption]") {
  // Room for one pod was needed; the group cannot run short of a member, so all of it went.
  CHECK(EvictedForOnePod(3) == 3);
}

TEST_CASE("members beyond minMember may go alone", "[gang][preemption]") {
  CHECK(EvictedForOnePod(2) == 1);  // two members stay: the group keeps its minMember
}

TEST_CASE("a NonPreemptible member protects its whole group", "[gang][preemption]") {
  World world;
  world.Nodes(2, "2");
  world.Add(Member("g0", "low", 2, "2"));
  api::Pod guarded = Member("g1", "low", 2, "2");
  guarded.meta.annotations[framework::kPreemptionPolicyAnnotation] = framework::kNonPreemptible;
  world.Add(guarded);
  world.Run();
  REQUIRE(world.Bound("default/g") == 2);
  world.Add(Prioritized(PodBuilder("urgent").Container({{"cpu", "2"}}).Build(), 100));
  world.Run();
  CHECK(world.Bound("default/urgent") == 0);
  CHECK(world.observer.evicted.empty());
}

TEST_CASE("members waiting at Permit are sent back to the queue, not deleted",
          "[gang][preemption]") {
  World world;
  world.Nodes(2, "2");
  // Two members of three: the third is gated, so the first two wait at Permit on the two nodes.
  world.Add(Member("g0", "low", 3, "2"));
  world.Add(Member("g1", "low", 3, "2"));
  api::Pod gated = Member("g2", "low", 3, "2");
  gated.spec.scheduling_gates.push_back("example.com/hold");
  world.Add(gated);
  world.RunWithoutTimers();
  REQUIRE(world.scheduler->waiting_pods().size() == 2);
  world.Add(Prioritized(PodBuilder("urgent").Container({{"cpu", "2"}}).Build(), 100));
  world.RunWithoutTimers();
  // Room for one pod was needed; the group cannot keep half of what it holds, so both went.
  CHECK(world.scheduler->waiting_pods().size() == 0);
  world.Run();
  CHECK(world.Bound("default/urgent") == 1);
  CHECK(world.observer.evicted.empty());  // nobody deleted
  for (const char* name : {"g0", "g1", "g2"}) {
    INFO(name);
    CHECK(world.cluster.GetPod(absl::StrCat("default/", name)) != nullptr);
  }
}

TEST_CASE("a group held back by its queue's quota preempts the queue's lower-priority pods",
          "[gang][preemption][quota]") {
  World world(MlQueue(R"(cpu: "4")"));
  world.Nodes(2, "8");
  for (int i = 0; i < 4; ++i) {
    world.Add(
        InQueue(Running(absl::StrCat("low", i), absl::StrCat("n", i % 2), "1", 0), "root.ml"));
  }
  world.Add(Running("other", "n0", "1", 0));  // in no queue: freeing it frees no quota
  for (int i = 0; i < 2; ++i) {
    world.Add(InQueue(Prioritized(Member(absl::StrCat("w", i), "job", 2), 100), "root.ml"));
  }
  world.Run();
  CHECK(world.Bound("default/w") == 2);
  // The group needs 2 of the queue's 4 cpu; both nodes have room: two victims, no more.
  CHECK(Evicted(world, "default/low") == 2);
  CHECK(world.cluster.GetPod("default/other") != nullptr);
}

TEST_CASE("a group whose queue cannot be freed enough preempts nobody",
          "[gang][preemption][quota]") {
  World world(MlQueue(R"(cpu: "4")"));
  world.Nodes(2, "8");
  world.Add(InQueue(Running("low", "n0", "1", 0), "root.ml"));
  world.Add(InQueue(Running("peer", "n1", "3", 100), "root.ml"));  // same priority: stays
  for (int i = 0; i < 2; ++i) {
    world.Add(InQueue(Prioritized(Member(absl::StrCat("w", i), "job", 2, "2"), 100), "root.ml"));
  }
  world.Run();
  CHECK(world.Bound("default/w") == 0);
  CHECK(world.observer.evicted.empty());
  CHECK_THAT(world.Message("default/w0"), Catch::Contains("queue root.ml: insufficient quota"));
}

// Random groups of two priorities on random clusters, the low ones placed first: whatever
// preemption does, every group has 0 or at least minMember members bound, no node holds more than
// its cpu, and nothing waits at Permit at the end.
TEST_CASE("random groups preempting random groups keep every group whole", "[gang][preemption]") {
  size_t evictions = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    World world;
    world.Nodes(2 + static_cast<int>(random() % 4), "4");
    std::map<std::string, int> min_member, cpu_of;
    for (const int32_t priority : {0, 100}) {
      const int groups = 1 + static_cast<int>(random() % 3);
      for (int g = 0; g < groups; ++g) {
        const std::string group = absl::StrCat("p", priority, "g", g);
        min_member[group] = 1 + static_cast<int>(random() % 5);
        const int size = min_member[group] + static_cast<int>(random() % 2);
        for (int i = 0; i < size; ++i) {
          const std::string name = absl::StrCat(group, "-", i);
          cpu_of["default/" + name] = 1 + static_cast<int>(random() % 3);
          world.Add(Prioritized(
              Member(name, group, min_member[group], std::to_string(cpu_of["default/" + name])),
              priority));
        }
      }
      world.Run();
    }
    std::map<std::string, int> cpu_on_node, bound_of;
    for (const auto& [key, cpu] : cpu_of) {
      const auto pod = world.cluster.GetPod(key);
      if (pod == nullptr || pod->spec.node_name.empty()) continue;
      cpu_on_node[pod->spec.node_name] += cpu;
      ++bound_of[key.substr(std::string("default/").size(), key.find('-') - 8)];
    }
    for (const auto& [node, cpu] : cpu_on_node) CHECK(cpu <= 4);
    for (const auto& [group, minimum] : min_member) {
      INFO("group " << group << " bound " << bound_of[group] << " of min " << minimum);
      CHECK((bound_of[group] == 0 || bound_of[group] >= minimum));
    }
    CHECK(world.scheduler->waiting_pods().size() == 0);
    evictions += world.observer.evicted.size();
  }
  CHECK(evictions > 0);  // the clusters are small enough that some groups had to preempt
}

}  // namespace
}  // namespace kubesched::scheduler
