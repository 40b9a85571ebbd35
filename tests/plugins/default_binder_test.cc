// DefaultBinder: binds through the handle's PodBinder.

#include "plugins/default_binder/default_binder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using plugin_testing::Info;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;

// Records binds; fails when told to.
class RecordingBinder final : public framework::PodBinder {
 public:
  framework::Status BindPod(const api::Pod& pod, std::string_view node_name) override {
    bound.push_back(pod.Key() + "->" + std::string(node_name));
    if (fail) return framework::Status::Error("conflict");
    return framework::Status::Success();
  }
  std::vector<std::string> bound;
  bool fail = false;
};

TEST_CASE("default binder binds through the handle's binder", "[plugins][defaultbinder]") {
  RecordingBinder binder;
  auto plugin =
      Unwrap<plugins::DefaultBinder>(plugins::NewDefaultBinder(std::monostate{}, {&binder}));
  CycleState state;
  CHECK(plugin->Bind(state, *Info(PodBuilder("web", "prod")), "node7").IsSuccess());
  CHECK(binder.bound == std::vector<std::string>{"prod/web->node7"});
}

TEST_CASE("default binder passes on the binder's error", "[plugins][defaultbinder]") {
  RecordingBinder binder;
  binder.fail = true;
  auto plugin =
      Unwrap<plugins::DefaultBinder>(plugins::NewDefaultBinder(std::monostate{}, {&binder}));
  CycleState state;
  const auto status = plugin->Bind(state, *Info(PodBuilder("web")), "node7");
  CHECK(status.code() == Code::kError);
  CHECK(status.Message() == "conflict");
}

TEST_CASE("default binder without a binder fails to bind", "[plugins][defaultbinder]") {
  auto plugin = Unwrap<plugins::DefaultBinder>(plugins::NewDefaultBinder(std::monostate{}, {}));
  CycleState state;
  CHECK(plugin->Bind(state, *Info(PodBuilder("web")), "node7").code() == Code::kError);
}

}  // namespace
}  // namespace kubesched
