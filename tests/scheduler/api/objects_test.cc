#include "scheduler/api/objects.h"

#include <catch2/catch.hpp>
#include <string>

namespace kubesched::api {
namespace {

TEST_CASE("tolerations tolerate taints as upstream's ToleratesTaint", "[api]") {
  using Op = TolerationOperator;
  using Effect = TaintEffect;
  struct Case {
    std::string name;
    Toleration toleration;
    Taint taint;
    bool tolerated;
  };
  const Case cases[] = {
      {"equal key, value and effect",
       {"k", Op::kEqual, "v", Effect::kNoSchedule, {}},
       {"k", "v", Effect::kNoSchedule},
       true},
      {"different value",
       {"k", Op::kEqual, "v", Effect::kNoSchedule, {}},
       {"k", "w", Effect::kNoSchedule},
       false},
      {"different key",
       {"k", Op::kEqual, "v", Effect::kNoSchedule, {}},
       {"j", "v", Effect::kNoSchedule},
       false},
      {"different effect",
       {"k", Op::kEqual, "v", Effect::kNoSchedule, {}},
       {"k", "v", Effect::kNoExecute},
       false},
      {"empty effect tolerates every effect",
       {"k", Op::kEqual, "v", Effect::kNone, {}},
       {"k", "v", Effect::kPreferNoSchedule},
       true},
      {"Exists ignores the value",
       {"k", Op::kExists, "", Effect::kNoSchedule, {}},
       {"k", "anything", Effect::kNoSchedule},
       true},
      {"Exists still compares the key",
       {"k", Op::kExists, "", Effect::kNone, {}},
       {"j", "v", Effect::kNoSchedule},
       false},
      {"empty key with Exists tolerates every taint",
       {"", Op::kExists, "", Effect::kNone, {}},
       {"any", "thing", Effect::kNoExecute},
       true},
      {"empty key with Exists keeps the effect check",
       {"", Op::kExists, "", Effect::kNoSchedule, {}},
       {"any", "thing", Effect::kNoExecute},
       false},
      {"empty key with Equal is no wildcard",
       {"", Op::kEqual, "v", Effect::kNone, {}},
       {"k", "v", Effect::kNoSchedule},
       false},
      {"equal empty values match",
       {"k", Op::kEqual, "", Effect::kNone, {}},
       {"k", "", Effect::kNoSchedule},
       true},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(c.toleration.Tolerates(c.taint) == c.tolerated);
  }
}

}  // namespace
}  // namespace kubesched::api
