// Gangs through the real scheduler on the embedded cluster: all of a group or none, groups formed
// by a PodGroup object or by annotations, the messages pending members get, group quota, and a
// randomized check that no group is ever left part-placed, no queue goes over its max and no node
// over its capacity.

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "tests/feature/gang_world.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using gang_testing::Group;
using gang_testing::InQueue;
using gang_testing::Member;
using gang_testing::MlQueue;
using gang_testing::World;
using testing::NodeBuilder;
using testing::PodBuilder;

TEST_CASE("a group that fits is placed whole", "[gang][simulation]") {
  World world;
  world.Nodes(2, "2");
  for (int i = 0; i < 4; ++i) world.Add(Member(absl::StrCat("w", i), "job", 4));
  world.Run();
  CHECK(world.Bound("default/w") == 4);
}

TEST_CASE("a group with room for only some of its members places none", "[gang][simulation]") {
  World world;
  world.Nodes(2, "2");
  for (int i = 0; i < 5; ++i) world.Add(Member(absl::StrCat("w", i), "job", 5));
  world.Run();  // ends: the group waits for a cluster event, not for a timer
  CHECK(world.Bound("default/w") == 0);
  CHECK(world.scheduler->waiting_pods().size() == 0);
  int gave_back = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string message = world.Message(absl::StrCat("default/w", i));
    gave_back += message.find("pod group default/job cannot be placed whole") != std::string::npos;
  }
  CHECK(gave_back >= 1);
  // A node more and the group fits.
  world.Add(NodeBuilder("n9").Capacity({{"cpu", "2"}, {"pods", "110"}}).Build());
  world.Run();
  CHECK(world.Bound("default/w") == 5);
}

TEST_CASE("a group short of pods waits for them, then goes at once", "[gang][simulation]") {
  World world;
  world.Nodes(1, "8");
  world.Add(Member("a", "job", 3));
  world.Add(Member("b", "job", 3));
  world.Run();
  CHECK(world.Bound("default/") == 0);
  CHECK_THAT(world.Message("default/a"),
             Catch::StartsWith(
                 "0/1 nodes are available: pod group default/job has 2 pod(s), fewer than its "
                 "minMember 3."));
  world.Add(Member("c", "job", 3));
  world.Run();
  CHECK(world.Bound("default/") == 3);
}

TEST_CASE("members beyond minMember are placed as ordinary pods", "[gang][simulation]") {
  World world;
  world.Nodes(1, "3");
  for (int i = 0; i < 4; ++i) world.Add(Member(absl::StrCat("w", i), "job", 2));
  world.Run();
  CHECK(world.Bound("default/w") == 3);  // room for three; the group needed two
}

TEST_CASE("a PodGroup object forms the group of the pods labelled with it", "[gang][simulation]") {
  World world;
  world.Nodes(1, "4");
  world.Add(Group("train", 2));
  for (const char* name : {"t0", "t1"}) {
    world.Add(PodBuilder(name)
                  .Container({{"cpu", "1"}})
                  .Label(framework::kPodGroupLabel, "train")
                  .Build());
  }
  world.Add(PodBuilder("lost")
                .Container({{"cpu", "1"}})
                .Label(framework::kPodGroupLabel, "none")
                .Build());
  world.Run();
  CHECK(world.Bound("default/t") == 2);
  CHECK_THAT(world.Message("default/lost"),
             Catch::StartsWith("0/1 nodes are available: pod group \"default/none\" does not "
                               "exist (scheduling.x-k8s.io/pod-group=none)."));
  // The group appears: its pod is scheduled without further ado.
  world.Add(Group("none", 1));
  world.Run();
  CHECK(world.observer.bound.count("default/lost") == 1);
}

TEST_CASE("the PodGroup status says how many members are placed and whether that is enough",
          "[gang][simulation]") {
  World world;
  world.Nodes(1, "2");
  world.Add(Group("fits", 2));
  world.Add(Group("toobig", 3));
  for (const char* name : {"f0", "f1"}) {
    world.Add(PodBuilder(name)
                  .Container({{"cpu", "1"}})
                  .Label(framework::kPodGroupLabel, "fits")
                  .Build());
  }
  world.Run();
  const auto fits = world.cluster.GetPodGroup("default/fits");
  REQUIRE(fits != nullptr);
  CHECK(fits->status.phase == "Scheduled");
  CHECK(fits->status.scheduled == 2);
  REQUIRE(fits->status.schedule_start_time.has_value());
  CHECK(*fits->status.schedule_start_time <= world.clock.Now());
  // A group that cannot fit (the node is full now) is given up and says so.
  for (const char* name : {"t0", "t1", "t2"}) {
    world.Add(PodBuilder(name)
                  .Container({{"cpu", "1"}})
                  .Label(framework::kPodGroupLabel, "toobig")
                  .Build());
  }
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "2"}, {"pods", "110"}}).Build());
  world.Run();
  const auto too_big = world.cluster.GetPodGroup("default/toobig");
  REQUIRE(too_big != nullptr);
  CHECK(world.Bound("default/t") == 0);
  CHECK(too_big->status.phase == "Pending");
  CHECK(too_big->status.scheduled == 0);
}

TEST_CASE("bad groups keep their pods pending with the reason", "[gang][simulation]") {
  World world;
  world.Nodes(1, "4");
  api::PodGroup broken = Group("broken", 0);
  broken.error = "spec.minMember must be at least 1 (is 0)";
  world.Add(broken);
  world.Add(PodBuilder("b").Label(framework::kPodGroupLabel, "broken").Build());
  world.Add(PodBuilder("two")
                .Label(framework::kPodGroupLabel, "x")
                .Annotation(framework::kPodGroupAnnotation, "y")
                .Build());
  world.Add(PodBuilder("nomin").Annotation(framework::kPodGroupAnnotation, "z").Build());
  world.Run();
  CHECK(world.observer.bound.empty());
  CHECK_THAT(world.Message("default/b"),
             Catch::Contains("pod group default/broken: spec.minMember must be at least 1 (is 0)"));
  CHECK_THAT(world.Message("default/two"), Catch::Contains("the pod names two pod groups"));
  CHECK_THAT(world.Message("default/nomin"),
             Catch::Contains("annotation kubesched.io/pod-group needs "
                             "kubesched.io/pod-group-min-member"));
}

TEST_CASE("a group over its queue's quota places no member and says why", "[gang][simulation]") {
  World world(MlQueue(R"(cpu: "4")"));
  world.Nodes(2, "8");
  for (int i = 0; i < 3; ++i) {
    world.Add(InQueue(Member(absl::StrCat("a", i), "a", 3), "root.ml"));
  }
  world.Run();
  CHECK(world.Bound("default/a") == 3);
  for (int i = 0; i < 2; ++i) {
    world.Add(InQueue(Member(absl::StrCat("b", i), "b", 2), "root.ml"));
  }
  world.Run();
  CHECK(world.Bound("default/b") == 0);  // one cpu left, the group needs two
  CHECK_THAT(world.Message("default/b0"),
             Catch::Contains("queue root.ml: insufficient quota for pod group default/b: cpu"));
}

TEST_CASE("a group's quota need is what its first minMember members ask", "[gang][simulation]") {
  World world(MlQueue(R"(cpu: "3")"));
  world.Nodes(2, "8");
  // minMember 2 of three pods: the two created first ask 1 and 3 cpu, so the group needs 4, over
  // the queue's max, whichever member is tried first (the small one: higher priority). The last
  // one, beyond minMember, does not count.
  const std::tuple<const char*, const char*, int64_t, int32_t> members[] = {
      {"small", "1", 10, 10}, {"large", "3", 20, 0}, {"extra", "1", 30, 0}};
  for (const auto& [name, cpu, created, priority] : members) {
    api::Pod pod = InQueue(Member(name, "job", 2, cpu), "root.ml");
    pod.spec.priority = priority;
    pod.meta.creation_timestamp = absl::FromUnixSeconds(1'600'000'000 + created);
    world.Add(pod);
  }
  world.Run();
  CHECK(world.Bound("default/") == 0);
  CHECK_THAT(world.Message("default/small"),
             Catch::Contains("insufficient quota for pod group default/job: cpu (used 0, max 3, "
                             "group needs 4)"));
}

TEST_CASE("a queue's pods max counts a group's minMember pods", "[gang][simulation]") {
  World world(MlQueue(R"(pods: "4")"));
  world.Nodes(4, "8");
  for (int i = 0; i < 3; ++i) {
    for (const char* group : {"a", "b"}) {
      world.Add(InQueue(Member(absl::StrCat(group, i), group, 3), "root.ml"));
    }
  }
  world.Run();
  // One group of three fits the queue's four pods; the other would make six.
  CHECK(world.Bound("default/") == 3);
  const bool a_placed = world.Bound("default/a") == 3;
  CHECK_THAT(world.Message(a_placed ? "default/b0" : "default/a0"),
             Catch::Contains(absl::StrCat("insufficient quota for pod group default/",
                                          a_placed ? "b" : "a", ": pods (used 3")));
}

// Random groups on random clusters: whatever happens, a group is never left with fewer than
// minMember members bound, no node holds more than its cpu, and once every group that fits alone
// has been given the cluster to itself, it is placed.
TEST_CASE("random groups are placed whole or not at all", "[gang][simulation]") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    World world;
    const int nodes = 1 + static_cast<int>(random() % 4);
    world.Nodes(nodes, "4");
    std::map<std::string, int> min_member, size;
    const int groups = 2 + static_cast<int>(random() % 4);
    for (int g = 0; g < groups; ++g) {
      const std::string group = absl::StrCat("g", g);
      min_member[group] = 1 + static_cast<int>(random() % 6);
      size[group] = min_member[group] + static_cast<int>(random() % 2);
    }
    // Members of all groups arrive interleaved.
    std::map<std::string, int> cpu_of;
    for (int i = 0; i < 8; ++i) {
      for (int g = 0; g < groups; ++g) {
        const std::string group = absl::StrCat("g", g);
        if (i >= size[group]) continue;
        const std::string name = absl::StrCat(group, "-", i);
        cpu_of["default/" + name] = 1 + static_cast<int>(random() % 2);
        world.Add(
            Member(name, group, min_member[group], std::to_string(cpu_of["default/" + name])));
      }
    }
    world.Run();
    std::map<std::string, int> cpu_on_node;
    for (const auto& [key, node] : world.observer.bound) cpu_on_node[node] += cpu_of[key];
    for (const auto& [node, cpu] : cpu_on_node) CHECK(cpu <= 4);
    int placed_groups = 0;
    for (const auto& [group, minimum] : min_member) {
      const int bound = world.Bound(absl::StrCat("default/", group, "-"));
      INFO("group " << group << " bound " << bound << " of min " << minimum);
      CHECK((bound == 0 || bound >= minimum));
      placed_groups += bound > 0;
    }
    CHECK(world.scheduler->waiting_pods().size() == 0);
    // A group of at most 2 members fits one 4-cpu node whatever they ask: some group must have
    // been placed then (no two half-placed groups blocking each other).
    bool one_fits_alone = false;
    for (const auto& [group, minimum] : min_member) one_fits_alone |= minimum <= 2;
    if (one_fits_alone) CHECK(placed_groups >= 1);
  }
}

TEST_CASE("the shipped gang example places finetune and eval whole and no llm-pretrain worker",
          "[gang][simulation]") {
  auto report = RunSimulation({testing::SourcePath("examples/cluster.yaml"),
                               testing::SourcePath("examples/gangs.yaml"), /*seed=*/1, 1},
                              config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK(report->problems.empty());
  std::map<std::string, int> placed, pods;
  for (const auto& pod : report->pod_results) {
    const std::string group = pod.name.substr(0, pod.name.rfind('-'));
    ++pods[group];
    if (pod.node.has_value()) ++placed[group];
    if (group == "llm-pretrain-worker") {
      CHECK_THAT(pod.message.value_or(""),
                 Catch::Contains("pod group ml-training/llm-pretrain cannot be placed whole"));
    }
  }
  CHECK(pods["llm-pretrain-worker"] == 4);
  CHECK(placed["llm-pretrain-worker"] == 0);
  CHECK(placed["finetune-worker"] == 3);
  CHECK(placed["eval"] == 2);
}

TEST_CASE("the shipped gang configuration refuses the group its queue cannot hold whole",
          "[gang][simulation]") {
  auto config = config::LoadConfigurationFile(testing::SourcePath("config/examples/gangs.yaml"));
  REQUIRE(config.ok());
  auto report = RunSimulation({testing::SourcePath("examples/cluster.yaml"),
                               testing::SourcePath("examples/gangs.yaml"), /*seed=*/1, 1},
                              *config);
  REQUIRE(report.ok());
  int finetune = 0;
  for (const auto& pod : report->pod_results) {
    if (pod.name.rfind("llm-pretrain", 0) == 0) {
      CHECK_FALSE(pod.node.has_value());
      CHECK_THAT(pod.message.value_or(""),
                 Catch::Contains("queue root.ml-training: insufficient quota for pod group "
                                 "ml-training/llm-pretrain: nvidia.com/gpu (used 8, max 32, group "
                                 "needs 32)"));
    }
    if (pod.name.rfind("finetune", 0) == 0 && pod.node.has_value()) ++finetune;
  }
  CHECK(finetune == 3);
}

}  // namespace
}  // namespace kubesched::scheduler
