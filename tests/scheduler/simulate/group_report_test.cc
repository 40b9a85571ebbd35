#include "scheduler/simulate/group_report.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/api/symbol.h"
#include "scheduler/simulate/report_output.h"

namespace kubesched::scheduler {
namespace {

framework::GangMembership Labelled(const std::string& group, const std::string& ns = "ml") {
  framework::GangMembership gang;
  gang.key = ns + "/" + group;
  gang.name = group;
  return gang;
}

framework::GangMembership Implicit(const std::string& group, int32_t min_member) {
  framework::GangMembership gang = Labelled(group);
  gang.implicit = true;
  gang.min_member = min_member;
  return gang;
}

GroupMember Member(const std::string& name, framework::GangMembership gang, bool placed,
                   std::optional<std::string> message = std::nullopt) {
  return {name, std::move(gang), placed, std::move(message)};
}

void AddGroup(framework::GangState* state, const std::string& name, int32_t min_member,
              const std::string& error = "") {
  auto group = std::make_shared<api::PodGroup>();
  group->meta.name = name;
  group->meta.namespace_name = "ml";
  group->meta.namespace_symbol = api::Intern("ml");
  group->min_member = min_member;
  group->error = error;
  state->Set(std::move(group));
}

TEST_CASE("a PodGroup with minMember members placed is Scheduled", "[simulate]") {
  framework::GangState state;
  AddGroup(&state, "train", 2);
  const auto groups = BuildGroupResults(
      {Member("t0", Labelled("train"), true), Member("t1", Labelled("train"), true),
       Member("t2", Labelled("train"), false, "no room")},
      state);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].namespace_name == "ml");
  CHECK(groups[0].name == "train");
  CHECK(groups[0].kind == "PodGroup");
  CHECK(groups[0].min_member == 2);
  CHECK(groups[0].members == 3);
  CHECK(groups[0].placed == 2);
  CHECK(groups[0].state == "Scheduled");
  CHECK(groups[0].reason.empty());  // a member beyond minMember pending is no reason
}

TEST_CASE("a pending group's reason is its first pending member's message by name", "[simulate]") {
  const auto groups = BuildGroupResults({Member("w2", Implicit("job", 3), false, "third"),
                                         Member("w1", Implicit("job", 3), false, std::nullopt),
                                         Member("w0", Implicit("job", 3), false, "first")},
                                        framework::GangState());
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].kind == "implicit");
  CHECK(groups[0].min_member == 3);
  CHECK(groups[0].members == 3);
  CHECK(groups[0].placed == 0);
  CHECK(groups[0].state == "Pending");
  CHECK(groups[0].reason == "first");
}

TEST_CASE("a group placed in part is reported as Partial", "[simulate]") {
  const auto groups = BuildGroupResults(
      {Member("w0", Implicit("job", 3), true), Member("w1", Implicit("job", 3), false, "waits")},
      framework::GangState());
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].placed == 1);
  CHECK(groups[0].state == "Partial");
  CHECK(groups[0].reason == "waits");
}

TEST_CASE("pods naming a PodGroup the dump lacks form a Missing group of unknown size",
          "[simulate]") {
  const auto groups = BuildGroupResults({Member("p", Labelled("ghost"), false, "no such group")},
                                        framework::GangState());
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].kind == "PodGroup");
  CHECK_FALSE(groups[0].min_member.has_value());
  CHECK(groups[0].state == "Missing");
  CHECK(groups[0].reason == "no such group");
}

TEST_CASE("a bad PodGroup spec or a bad membership makes the group Invalid", "[simulate]") {
  framework::GangState state;
  AddGroup(&state, "broken", 0, "spec.minMember must be at least 1 (is 0)");
  framework::GangMembership bad = Implicit("nomin", 0);
  bad.error = "annotation kubesched.io/pod-group needs kubesched.io/pod-group-min-member";
  const auto groups = BuildGroupResults({Member("n", bad, false, "bad")}, state);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].name == "broken");
  CHECK(groups[0].min_member == 0);
  CHECK(groups[0].members == 0);
  CHECK(groups[0].state == "Invalid");
  CHECK(groups[0].reason.empty());  // no pending member to tell why
  CHECK(groups[1].name == "nomin");
  CHECK(groups[1].kind == "implicit");
  CHECK_FALSE(groups[1].min_member.has_value());
  CHECK(groups[1].state == "Invalid");
  CHECK(groups[1].reason == "bad");
}

TEST_CASE("groups are sorted by namespace and name, and pods in no group are left out",
          "[simulate]") {
  framework::GangState state;
  AddGroup(&state, "b", 1);
  const auto groups = BuildGroupResults(
      {Member("x", Implicit("a", 1), true), Member("y", Labelled("z", "aa"), false),
       Member("plain", framework::GangMembership(), true)},
      state);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].namespace_name == "aa");
  CHECK(groups[1].name == "a");
  CHECK(groups[1].state == "Scheduled");
  CHECK(groups[2].name == "b");
  CHECK(groups[2].members == 0);
  CHECK(groups[2].state == "Pending");
}

SimulationReport ReportWithGroups() {
  SimulationReport report;
  report.groups.push_back({"ml", "job", "implicit", 4, 4, 0, "Pending", "0/3 nodes are available"});
  report.groups.push_back({"ml", "ghost", "PodGroup", std::nullopt, 1, 0, "Missing", "gone"});
  report.groups.push_back({"ml", "train", "PodGroup", 3, 3, 3, "Scheduled", ""});
  return report;
}

TEST_CASE("the table ends with one row per group", "[simulate]") {
  const std::string table = SimulationTable(ReportWithGroups());
  CHECK_THAT(table,
             Catch::EndsWith("\n\n"
                             "GROUP     KIND      MIN  MEMBERS  PLACED  STATE      REASON\n"
                             "ml/job    implicit  4    4        0       Pending    0/3 nodes "
                             "are available\n"
                             "ml/ghost  PodGroup  -    1        0       Missing    gone\n"
                             "ml/train  PodGroup  3    3        3       Scheduled\n"));
}

TEST_CASE("the JSON lists the groups after the queues", "[simulate]") {
  const std::string json = SimulationJson(ReportWithGroups());
  CHECK_THAT(json, Catch::Contains("\"queues\": [],\n  \"groups\": [\n"));
  CHECK_THAT(json, Catch::Contains("\"namespace\": \"ml\",\n      \"name\": \"ghost\",\n"
                                   "      \"kind\": \"PodGroup\",\n      \"minMember\": null,\n"
                                   "      \"members\": 1,\n      \"placed\": 0,\n"
                                   "      \"state\": \"Missing\",\n      \"reason\": \"gone\"\n"));
  CHECK_THAT(json, Catch::Contains("\"minMember\": 4,"));
}

TEST_CASE("a report without groups has neither a groups section nor a groups field", "[simulate]") {
  const SimulationReport report;
  CHECK_THAT(SimulationTable(report), !Catch::Contains("GROUP"));
  CHECK_THAT(SimulationJson(report), !Catch::Contains("groups"));
  CHECK_THAT(SimulationJson(report), Catch::EndsWith("\"queues\": []\n}\n"));
}

}  // namespace
}  // namespace kubesched::scheduler
