#include "scheduler/framework/gang_state.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

namespace kubesched::framework {
namespace {

std::shared_ptr<const api::PodGroup> Group(const std::string& ns, const std::string& name,
                                           int32_t min_member) {
  auto group = std::make_shared<api::PodGroup>();
  group->meta.namespace_name = ns;
  group->meta.name = name;
  group->min_member = min_member;
  return group;
}

TEST_CASE("groups are found by the key their pods name", "[framework]") {
  GangState gangs;
  const auto train = Group("ml", "train", 4);
  gangs.Set(train);
  gangs.Set(Group("other", "train", 2));
  CHECK(gangs.Find("ml/train") == train.get());
  CHECK(gangs.Find("other/train")->min_member == 2);
  CHECK(gangs.Find("ml/missing") == nullptr);
  CHECK(gangs.size() == 2);
}

TEST_CASE("a published GangState keeps what it saw while the writer goes on", "[framework]") {
  GangState writer;
  for (int i = 0; i < 100; ++i) writer.Set(Group("ns", "g" + std::to_string(i), i + 1));
  const GangState published = writer;
  writer.Set(Group("ns", "g7", 70));
  writer.Remove("ns/g8");
  writer.Remove("ns/never-there");
  CHECK(published.Find("ns/g7")->min_member == 8);
  CHECK(published.Find("ns/g8") != nullptr);
  CHECK(published.size() == 100);
  CHECK(writer.Find("ns/g7")->min_member == 70);
  CHECK(writer.Find("ns/g8") == nullptr);
  CHECK(writer.size() == 99);
  int visited = 0;
  writer.ForEach([&](const std::string&, const api::PodGroup&) { ++visited; });
  CHECK(visited == 99);
}

GangMember MemberOf(int64_t created_seconds, const std::string& key, int64_t cpu_milli) {
  GangMember member{absl::FromUnixSeconds(created_seconds), key, {}};
  member.requests.Set(api::kCpu, cpu_milli);
  return member;
}

TEST_CASE("a group's need counts its first members by creation, then by key", "[framework]") {
  GangState gangs;
  gangs.SetMember("ml/train", MemberOf(30, "ml/worker-2", 4000));
  gangs.SetMember("ml/train", MemberOf(10, "ml/launcher", 1000));
  gangs.SetMember("ml/train", MemberOf(20, "ml/worker-1", 2000));
  gangs.SetMember("ml/train", MemberOf(20, "ml/worker-0", 3000));  // same time: key decides
  gangs.SetMember("ml/other", MemberOf(0, "ml/x", 500));
  CHECK(gangs.RequestsOfFirst("ml/train", 1).Get(api::kCpu) == 1000);
  CHECK(gangs.RequestsOfFirst("ml/train", 2).Get(api::kCpu) == 4000);  // launcher + worker-0
  CHECK(gangs.RequestsOfFirst("ml/train", 3).Get(api::kCpu) == 6000);
  CHECK(gangs.RequestsOfFirst("ml/train", 9).Get(api::kCpu) == 10000);  // all it has
  CHECK(gangs.RequestsOfFirst("ml/missing", 3).IsZero());

  const GangState published = gangs;
  gangs.RemoveMember("ml/train", "ml/launcher");
  gangs.SetMember("ml/train", MemberOf(40, "ml/worker-0", 9000));      // replaced, now last
  CHECK(gangs.RequestsOfFirst("ml/train", 2).Get(api::kCpu) == 6000);  // worker-1 + worker-2
  CHECK(published.RequestsOfFirst("ml/train", 2).Get(api::kCpu) == 4000);
  gangs.RemoveMember("ml/other", "ml/x");
  gangs.RemoveMember("ml/other", "ml/x");  // gone already: nothing happens
  CHECK(gangs.RequestsOfFirst("ml/other", 1).IsZero());
}

TEST_CASE("a group's phase follows its members placed until its controller takes over",
          "[framework]") {
  CHECK(GangPhase("", {.pods = 3, .assigned = 0}, 3) == kGangPending);
  CHECK(GangPhase("", {.pods = 3, .assigned = 2}, 3) == kGangScheduling);
  CHECK(GangPhase("", {.pods = 4, .assigned = 3}, 3) == kGangScheduled);
  // The scheduler's own phases are recomputed; the controller's are kept.
  CHECK(GangPhase("Scheduled", {.pods = 3, .assigned = 0}, 3) == kGangPending);
  CHECK(GangPhase("Running", {.pods = 3, .assigned = 3}, 3) == kGangRunning);
  CHECK(GangPhase("Finished", {}, 3) == kGangFinished);
  CHECK(GangPhase("Failed", {.pods = 1, .assigned = 1}, 3) == kGangFailed);
  // No usable minMember: a placed member never makes the group scheduled.
  CHECK(GangPhase("", {.pods = 1, .assigned = 1}, 0) == kGangScheduling);
}

}  // namespace
}  // namespace kubesched::framework
