// The cache's PodGroups, published to snapshots as a GangState.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "scheduler/cache/cache.h"
#include "scheduler/util/clock.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

std::shared_ptr<const api::PodGroup> Group(const std::string& name, int32_t min_member) {
  auto group = std::make_shared<api::PodGroup>();
  group->meta.namespace_name = "ml";
  group->meta.name = name;
  group->min_member = min_member;
  return group;
}

TEST_CASE("PodGroups reach the next snapshot, and a snapshot keeps what it saw", "[cache]") {
  util::FakeClock clock{absl::UnixEpoch()};
  cache::Cache cache(&clock);
  framework::Snapshot first;
  cache.UpdateSnapshot(&first);
  CHECK(first.gangs().size() == 0);

  const auto train = Group("train", 4);
  cache.SetPodGroup(train);
  framework::Snapshot second;
  cache.UpdateSnapshot(&second);
  CHECK(second.gangs().Find("ml/train") == train.get());
  CHECK(first.gangs().Find("ml/train") == nullptr);

  const auto resized = Group("train", 8);
  cache.SetPodGroup(resized);
  cache.UpdateSnapshot(&first);
  CHECK(first.gangs().Find("ml/train")->min_member == 8);
  CHECK(second.gangs().Find("ml/train")->min_member == 4);

  cache.RemovePodGroup("ml/train");
  cache.UpdateSnapshot(&first);
  CHECK(first.gangs().Find("ml/train") == nullptr);
  CHECK(second.gangs().Find("ml/train") == train.get());
}

TEST_CASE("a snapshot update without a PodGroup change keeps the published groups", "[cache]") {
  util::FakeClock clock{absl::UnixEpoch()};
  cache::Cache cache(&clock);
  cache.SetPodGroup(Group("train", 2));
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  const framework::GangState* published = &snapshot.gangs();

  cache.AddNode(testing::NodeBuilder("n1").Ptr());
  cache.RemovePodGroup("ml/never-added");  // nothing to remove: no change either
  cache.UpdateSnapshot(&snapshot);
  CHECK(&snapshot.gangs() == published);

  cache.SetPodGroup(Group("eval", 1));
  cache.UpdateSnapshot(&snapshot);
  CHECK(&snapshot.gangs() != published);
  CHECK(snapshot.gangs().size() == 2);
}

framework::GangMembership Implicit(const std::string& name, int32_t min_member) {
  framework::GangMembership gang;
  gang.key = "ml/" + name;
  gang.name = name;
  gang.implicit = true;
  gang.min_member = min_member;
  return gang;
}

framework::GangMembership Labelled(const std::string& name) {
  framework::GangMembership gang;
  gang.key = "ml/" + name;
  gang.name = name;
  return gang;
}

// A gang member as the cache keeps it: its key and no requests.
framework::GangMember Pod(const std::string& key) {
  framework::GangMember member;
  member.pod_key = key;
  return member;
}

// What ForEachGang reported, by key.
std::map<std::string, cache::Cache::GangView> Gangs(const cache::Cache& cache) {
  std::map<std::string, cache::Cache::GangView> gangs;
  cache.ForEachGang([&](const cache::Cache::GangView& view) {
    CHECK(gangs.count(std::string(view.key)) == 0);
    gangs[std::string(view.key)] = view;
  });
  return gangs;
}

TEST_CASE("ForEachGang reports PodGroups and implicit groups with their counts and minMember",
          "[cache]") {
  util::FakeClock clock{absl::UnixEpoch()};
  cache::Cache cache(&clock);
  cache.SetPodGroup(Group("train", 4));
  cache.SetPodGroup(Group("idle", 2));
  cache.SetGangMember(Labelled("train"), Pod("ml/t0"));
  cache.SetGangMember(Labelled("train"), Pod("ml/t1"));
  cache.SetGangMember(Implicit("job", 3), Pod("ml/j0"));
  cache.SetGangMember(Labelled("missing"), Pod("ml/lost"));  // names no PodGroup: no group
  cache.AddNode(testing::NodeBuilder("n1").Ptr());
  REQUIRE(cache
              .AddPod(framework::MakePodInfo(testing::PodBuilder("t0", "ml")
                                                 .Label(framework::kPodGroupLabel, "train")
                                                 .NodeName("n1")
                                                 .Ptr(),
                                             0))
              .ok());

  std::map<std::string, cache::Cache::GangView> gangs = Gangs(cache);
  REQUIRE(gangs.size() == 3);
  CHECK(gangs["ml/train"].group != nullptr);
  CHECK(gangs["ml/train"].min_member == 4);
  CHECK(gangs["ml/train"].counts.pods == 2);
  CHECK(gangs["ml/train"].counts.assigned == 1);
  CHECK(gangs["ml/idle"].counts.pods == 0);
  CHECK(gangs["ml/job"].group == nullptr);
  CHECK(gangs["ml/job"].min_member == 3);
  CHECK(gangs["ml/job"].counts.pods == 1);

  // The counts are the same once a snapshot has taken the changes.
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  gangs = Gangs(cache);
  CHECK(gangs["ml/train"].counts.pods == 2);
  CHECK(gangs["ml/job"].counts.pods == 1);
}

TEST_CASE("an implicit group is forgotten with its last member, and says it was the last",
          "[cache]") {
  util::FakeClock clock{absl::UnixEpoch()};
  cache::Cache cache(&clock);
  cache.SetGangMember(Implicit("job", 2), Pod("ml/a"));
  cache.SetGangMember(Implicit("job", 2), Pod("ml/b"));
  cache.SetGangMember(Implicit("job", 5), Pod("ml/b"));  // the last word on minMember wins
  CHECK(Gangs(cache)["ml/job"].min_member == 5);
  CHECK(cache.RemoveGangMember("ml/a") == std::nullopt);
  CHECK(cache.RemoveGangMember("ml/never") == std::nullopt);
  CHECK(cache.RemoveGangMember("ml/b") == std::optional<std::string>("ml/job"));
  CHECK(Gangs(cache).empty());
  // A PodGroup's last member going says so too; the object stays.
  cache.SetPodGroup(Group("train", 1));
  cache.SetGangMember(Labelled("train"), Pod("ml/t"));
  CHECK(cache.RemoveGangMember("ml/t") == std::optional<std::string>("ml/train"));
  CHECK(Gangs(cache).size() == 1);
}

}  // namespace
}  // namespace kubesched
