#include "scheduler/cmd/report_commands.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "scheduler/util/exit_codes.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::SourcePath;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result Run(int (*command)(const std::vector<std::string>&, std::ostream&, std::ostream&),
           std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

const std::string kCluster = SourcePath("examples/cluster.yaml");
const std::string kWorkload = SourcePath("examples/workload.yaml");
const std::string kPod = SourcePath("examples/pod.yaml");

TEST_CASE("simulate's and explain's help name every live and summary flag", "[cli]") {
  const Result simulate = Run(Simulate, {"simulate", "--help"});
  for (const char* flag :
       {"--kubeconfig", "--context", "--config-map", "--compare", "--pods-output"}) {
    CHECK_THAT(simulate.out, Catch::Contains(flag));
  }
  const Result explain = Run(Explain, {"explain", "--help"});
  for (const char* flag : {"--kubeconfig", "--context", "--namespace", "--config-map", "--nodes",
                           "--top", "pod/NAME"}) {
    CHECK_THAT(explain.out, Catch::Contains(flag));
  }
}

TEST_CASE("simulate and explain refuse inputs that exclude each other", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"simulate", "--cluster", kCluster, "--kubeconfig", "k"}, "exclude each other"},
      {{"simulate"}, "or --kubeconfig for a live cluster"},
      {{"simulate", "--cluster", kCluster, "--context", "c"}, "need --kubeconfig"},
      {{"simulate", "--cluster", kCluster, "--pods-output", "some"}, "--pods-output must be"},
      {{"simulate", "--cluster", kCluster, "--compare", "x", "--metrics", "m"}, "exclude"},
      {{"explain", "--kubeconfig", "k"}, "need a POD"},
      {{"explain", "-n", "ns", "a", "b"}, "one POD"},
      {{"explain", "--cluster", kCluster, "--pod", kPod, "web"}, "exclude each other"},
      {{"explain", "--cluster", kCluster, "--pod", kPod, "--nodes", "some"}, "--nodes must be"},
      {{"explain", "--cluster", kCluster, "--pod", kPod, "--top", "-1"}, "--top"},
      {{"explain", "--kubeconfig", "/nonexistent/kubeconfig", "deploy/web"}, "pod/NAME"},
  };
  for (const auto& c : cases) {
    const Result r = Run(c.args[0] == "simulate" ? Simulate : Explain, c.args);
    INFO(c.args[0] << " -> " << r.err);
    CHECK(r.code == kExitUsage);
    CHECK_THAT(r.err, Catch::Contains(c.error));
  }
}

TEST_CASE("simulate --pods-output none prints no pod lines and ends with the summary", "[cli]") {
  const Result r = Run(Simulate, {"simulate", "--cluster", kCluster, "--workload", kWorkload,
                                  "--pods-output", "none"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, !Catch::Contains("NAMESPACE"));
  CHECK_THAT(r.out, Catch::Contains("UNSCHEDULABLE BECAUSE"));
  CHECK_THAT(r.out, Catch::Contains("QUEUE             PODS  SCHEDULED  PENDING"));
  CHECK_THAT(r.err, !Catch::Contains("simulating:"));  // not a terminal: no progress
}

TEST_CASE("explain prints a summary by default and every node with --nodes all", "[cli]") {
  const Result summary =
      Run(Explain, {"explain", "--cluster", kCluster, "--pod", kPod, "--top", "2"});
  REQUIRE(summary.code == 0);
  CHECK_THAT(summary.out, Catch::Contains("nodes are available"));
  CHECK_THAT(summary.out, Catch::Contains("Top 2 of"));
  CHECK_THAT(summary.out, Catch::Contains("Failed nodes by reason"));
  const Result all =
      Run(Explain, {"explain", "--cluster", kCluster, "--pod", kPod, "--nodes", "all"});
  REQUIRE(all.code == 0);
  CHECK_THAT(all.out, Catch::Contains("FILTERS / SCORES"));
}

}  // namespace
}  // namespace kubesched::scheduler
