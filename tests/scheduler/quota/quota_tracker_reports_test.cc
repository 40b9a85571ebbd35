// QuotaTracker's reports: typed limits that match no node (appearing and clearing as nodes come
// and go, and on reloads) and the pending pods of each queue.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/queues.h"
#include "scheduler/quota/quota_tracker.h"
#include "tests/testing/builders.h"

namespace kubesched::quota {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

config::QueuesConfig Queues(const std::string& yaml) {
  auto parsed = config::ParseQueuesDocument(yaml);
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

constexpr char kTyped[] = R"(
models: {A100: [NVIDIA-A100-*], H100: [NVIDIA-H100-*]}
tree:
- name: research
  max: {nvidia.com/gpu.A100: "4"}
  budget: {nvidia.com/gpu.H100: 100h, period: 168h}
- name: web
  max: {cpu: "10"}
)";

// The warnings as "<queue> <resource> <max|budget>".
std::vector<std::string> Unmatched(QuotaTracker& tracker) {
  std::vector<std::string> out;
  for (const auto& limit : tracker.UnmatchedTypedLimits()) {
    out.push_back(limit.queue + " " + limit.resource + " " + (limit.budget ? "budget" : "max"));
  }
  return out;
}

TEST_CASE("typed limits that match no node are reported until such a node joins",
          "[quota][typed_warnings]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kTyped));
  CHECK(Unmatched(tracker) == std::vector<std::string>{"root.research nvidia.com/gpu.A100 max",
                                                       "root.research nvidia.com/gpu.H100 budget"});
  tracker.SetNode(
      NodeBuilder("a").Label("nvidia.com/gpu.product", "NVIDIA-A100-PCIE-40GB").Build());
  CHECK(Unmatched(tracker) == std::vector<std::string>{"root.research nvidia.com/gpu.H100 budget"});
  tracker.SetNode(
      NodeBuilder("h").Label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").Build());
  CHECK(Unmatched(tracker).empty());
  // The A100 node goes: its limit matches nothing again.
  tracker.RemoveNode("a");
  CHECK(Unmatched(tracker) == std::vector<std::string>{"root.research nvidia.com/gpu.A100 max"});
  const auto limits = tracker.UnmatchedTypedLimits();
  REQUIRE(limits.size() == 1);
  CHECK(limits[0].model == "A100");
  CHECK(limits[0].Message() ==
        "queue root.research: the max on nvidia.com/gpu.A100 matches no node: no node's model "
        "label names model A100 (check the queue configuration's models)");
}

TEST_CASE("a reload that maps the node's label value to the limit's model clears the warning",
          "[quota][typed_warnings]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues("tree: [{name: r, max: {nvidia.com/gpu.A100: '4'}}]"));
  tracker.SetNode(
      NodeBuilder("a").Label("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB").Build());
  // Without models, the node's model is its label value itself.
  CHECK(Unmatched(tracker) == std::vector<std::string>{"root.r nvidia.com/gpu.A100 max"});
  tracker.SetConfig(
      Queues("models: {A100: [NVIDIA-A100-SXM4-80GB]}\n"
             "tree: [{name: r, max: {nvidia.com/gpu.A100: '4'}}]"));
  CHECK(Unmatched(tracker).empty());
}

TEST_CASE("pending pods are counted by the queue they belong to", "[quota][typed_warnings]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kTyped));
  auto pod = [](const std::string& name, const std::string& queue) {
    PodBuilder builder(name, "default");
    builder.Container({{"cpu", "1"}});
    if (!queue.empty()) builder.Label(std::string(kQueueLabel), queue);
    return framework::MakePodInfo(builder.Ptr(), 0);
  };
  const auto a = pod("a", "root.web");
  const auto b = pod("b", "web");
  const auto c = pod("c", "root.research");
  const auto d = pod("d", "root.web.missing");  // counted where its usage would be
  const auto counts = tracker.PendingByQueue({a.get(), b.get(), c.get(), d.get()});
  CHECK(counts.at("root.web") == 3);
  CHECK(counts.at("root.research") == 1);
  CHECK(counts.size() == 2);
}

}  // namespace
}  // namespace kubesched::quota
