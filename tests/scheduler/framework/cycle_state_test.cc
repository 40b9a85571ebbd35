#include "scheduler/framework/cycle_state.h"

#include <catch2/catch.hpp>
#include <memory>

namespace kubesched::framework {
namespace {

struct Counter final : StateData {
  int value = 0;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<Counter>(*this); }
};

TEST_CASE("a cloned cycle state owns copies of the data, and stays a dry run if it was one",
          "[framework]") {
  const CycleState::Key key = CycleState::AllocateKey("CycleStateTest");
  CycleState state;
  CHECK_FALSE(state.dry_run());
  auto counter = std::make_unique<Counter>();
  counter->value = 1;
  state.Write(key, std::move(counter));
  state.set_dry_run(true);
  state.set_record_plugin_metrics(true);

  const std::unique_ptr<CycleState> copy = state.Clone();
  CHECK(copy->dry_run());
  CHECK_FALSE(copy->record_plugin_metrics());  // clones are never timed
  copy->ReadMutable<Counter>(key)->value = 2;
  CHECK(state.Read<Counter>(key)->value == 1);
  CHECK(copy->Read<Counter>(key)->value == 2);
}

}  // namespace
}  // namespace kubesched::framework
