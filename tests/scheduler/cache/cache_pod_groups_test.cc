// The cache's PodGroups, published to snapshots as a GangState.

#include <catch2/catch.hpp>
#include <memory>
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

}  // namespace
}  // namespace kubesched
