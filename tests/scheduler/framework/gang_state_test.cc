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

}  // namespace
}  // namespace kubesched::framework
