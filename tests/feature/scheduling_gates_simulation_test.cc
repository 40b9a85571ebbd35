// Scheduling gates through simulate and explain: a pod that carries spec.schedulingGates is
// reported pending with upstream's message and is never tried, while the pods around it are
// scheduled as before; explain gives the same reason without node verdicts.

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

constexpr char kCluster[] =
    "apiVersion: v1\nkind: List\nitems:\n"
    "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n"
    "- apiVersion: v1\n  kind: Node\n  metadata: {name: node-0}\n"
    "  status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}\n";

// A one-cpu pod; `gates` is the YAML list of its scheduling gates ("" for none).
std::string PodYaml(const std::string& name, const std::string& gates = "") {
  return absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                      ", namespace: default}\nspec:\n  schedulerName: kubesched\n",
                      gates.empty() ? "" : absl::StrCat("  schedulingGates: ", gates, "\n"),
                      "  containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]\n");
}

const PodResult* Find(const SimulationReport& report, const std::string& name) {
  for (const auto& pod : report.pod_results) {
    if (pod.name == name) return &pod;
  }
  return nullptr;
}

TEST_CASE("simulate reports a gated pod pending with upstream's message, never tried",
          "[simulation][gates]") {
  const TempFile cluster(kCluster, "cluster.yaml");
  const TempFile workload(PodYaml("before") +
                              PodYaml("gated", "[{name: example.com/foo}, {name: bar}]") +
                              PodYaml("after"),
                          "workload.yaml");
  auto report = RunSimulation({cluster.path(), workload.path()}, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK(report->scheduled == 2);
  CHECK(report->unschedulable == 1);
  const PodResult* gated = Find(*report, "gated");
  REQUIRE(gated != nullptr);
  CHECK_FALSE(gated->node.has_value());
  CHECK(gated->attempts == 0);
  CHECK(gated->message == "waiting for scheduling gates: [example.com/foo bar]");
  for (const char* name : {"before", "after"}) {
    INFO(name);
    const PodResult* pod = Find(*report, name);
    REQUIRE(pod != nullptr);
    CHECK(pod->node == "node-0");
    CHECK_FALSE(pod->message.has_value());
  }
  CHECK(SimulationJson(*report).find(
            "\"message\": \"waiting for scheduling gates: [example.com/foo bar]\"") !=
        std::string::npos);
}

TEST_CASE("explain of a gated pod says it waits for its gates, with no node verdicts",
          "[simulation][gates]") {
  const TempFile cluster(kCluster, "cluster.yaml");
  const TempFile pod(PodYaml("gated", "[{name: example.com/foo}]"), "pod.yaml");
  auto report = RunExplain({cluster.path(), pod.path()}, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK(report->message == "waiting for scheduling gates: [example.com/foo]");
  CHECK(report->nodes.empty());
  CHECK_FALSE(report->selected.has_value());
  CHECK(ExplainJson(*report).find("\"message\": \"waiting for scheduling gates: "
                                  "[example.com/foo]\"") != std::string::npos);
}

}  // namespace
}  // namespace kubesched::scheduler
