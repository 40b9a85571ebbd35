#include "scheduler/cmd/cli.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <sstream>

#include "rapidjson/document.h"
#include "scheduler/cmd/kube_scheduler_flags.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::SourcePath;
using testing::TempFile;

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult Cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

const std::string kCluster = SourcePath("examples/cluster.yaml");
const std::string kWorkload = SourcePath("examples/workload.yaml");

TEST_CASE("help and version are printed with exit code 0", "[cli]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"simulate", "--help"}, {"explain", "--help"}, {"run", "--help"}}) {
    const auto r = Cli(args);
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("Usage:") != std::string::npos);
  }
  const auto version = Cli({"--version"});
  CHECK(version.code == kExitOk);
  CHECK(version.out.rfind("kubesched ", 0) == 0);
}

TEST_CASE("usage errors exit with code 2 and say what is wrong", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"frobnicate"}, "unknown command"},
      {{"simulate"}, "--cluster is required"},
      {{"simulate", "--cluster", kCluster, "--bogus", "1"}, "unknown flag --bogus"},
      {{"simulate", "--cluster", kCluster, "--output", "xml"}, "--output must be table or json"},
      {{"simulate", "--cluster"}, "needs a value"},
      {{"explain", "--cluster", kCluster}, "--pod are required"},
      {{"run", "--bogus", "1"}, "unknown flag --bogus"},
      {{"run", "extra"}, "unexpected argument \"extra\""},
      {{"run", "--kube-api-qps", "fast"}, "--kube-api-qps must be a non-negative number"},
      {{"run", "--kube-api-qps", "nan"}, "--kube-api-qps must be a non-negative number"},
      {{"run", "--kube-api-qps", "inf"}, "--kube-api-qps must be a non-negative number"},
      {{"run", "--leader-elect=maybe"}, "--leader-elect must be true or false"},
      {{"run", "--leader-elect", "true"},
       "unexpected argument \"true\": --leader-elect is a boolean flag and takes its value "
       "after \"=\" (--leader-elect=true)"},
      {{"run", "--leader-elect", "--no-such-flag"}, "unknown flag --no-such-flag"},
      {{"run", "--write-config-to", "/tmp/x"}, "--write-config-to is not supported"},
      {{"run", "--feature-gates", "Foo=maybe"}, "--feature-gates: \"Foo=maybe\" is not"},
      {{"run", "--leader-elect-renew-deadline", "20s"},
       "leaderElection.leaseDuration (with the --leader-elect* flags applied): must be greater "
       "than renewDeadline (20s), got 15s"},
      {{"run", "--leader-elect-resource-lock=configmapsleases"},
       "--leader-elect-resource-lock: only \"leases\" is supported"},
      {{"run", "--shutdown-grace", "soon"}, "--shutdown-grace must be a duration"},
      {{"run", "--relist-interval", "10s"},
       "--relist-interval must be 0 or a duration of at least 1m such as 30m, got \"10s\""},
      {{"run", "--relist-interval", "often"}, "--relist-interval must be 0 or a duration"},
      {{"run", "--bind-workers", "0"}, "--bind-workers must be in 1..1024"},
      {{"run", "-v", "loud"}, "-v must be a number from 0 to 10, got \"loud\""},
      {{"run", "-v=11"}, "-v must be a number from 0 to 10"},
      {{"simulate", "--cluster", kCluster, "-v", "2"}, "unknown flag --v"},
      {{"run", "--health-bind-address", "nope"}, "want host:port"},
      {{"run", "--health-bind-address", "localhost:80"}, "is not an IP address"},
      {{"--config", "/nonexistent/config.yaml"}, "cannot read"},
      {{"simulate", "--cluster", kCluster, "--threads", "100000"},
       "--threads must be in 0..1024 (0: the default), got 100000"},
      {{"run", "--threads", "1025"}, "--threads must be in 0..1024"},
      {{"--config", "/dev/zero"}, "/dev/zero: cannot read: larger than the limit of 4194304 bytes"},
  };
  for (const auto& c : cases) {
    INFO(c.message);
    const auto r = Cli(c.args);
    CHECK(r.code == kExitUsage);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}

TEST_CASE("run --help names every flag run accepts", "[cli]") {
  const auto r = Cli({"run", "--help"});
  REQUIRE(r.code == kExitOk);
  const ExtraFlags flags = KubeSchedulerFlags();
  std::vector<std::string> names = flags.values;
  names.insert(names.end(), flags.booleans.begin(), flags.booleans.end());
  for (const std::string& name : names) {
    INFO(name);
    CHECK_THAT(r.out, Catch::Contains("--" + name));
  }
}

TEST_CASE("a command line that starts with -v runs, as kube-scheduler's does", "[cli]") {
  const auto r = Cli({"-v=2", "--kubeconfig", "/nonexistent/kubeconfig"});
  CHECK(r.code == kExitFailure);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent/kubeconfig (--kubeconfig): file not found"));
}

TEST_CASE("run with a bare --leader-elect reads the next flag as a flag", "[cli]") {
  // --kubeconfig keeps its value: the run gets as far as looking for the file.
  const auto r = Cli({"run", "--leader-elect", "--kubeconfig", "/nonexistent/kubeconfig"});
  CHECK(r.code == kExitFailure);
  CHECK_THAT(r.err, Catch::Contains("kubeconfig /nonexistent/kubeconfig (--kubeconfig): file not "
                                    "found"));
}

TEST_CASE("a bad configuration exits with code 2 naming the plugin and field", "[cli]") {
  TempFile config(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kubesched
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 0}]
)");
  const auto r = Cli({"simulate", "--cluster", kCluster, "--config", config.path()});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("NodeResourcesFit") != std::string::npos);
  CHECK(r.err.find("weight") != std::string::npos);
}

TEST_CASE("a configuration with extenders exits with code 2 and says why", "[cli]") {
  TempFile config(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://extender.example:8888
  filterVerb: filter
)");
  const auto r = Cli({"simulate", "--cluster", kCluster, "--config", config.path()});
  CHECK(r.code == kExitUsage);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("kubesched does not call scheduler extenders"));
}

TEST_CASE("a bad queue tree exits with code 2 naming the queue and field", "[cli][quota]") {
  TempFile config(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
queues:
  tree:
  - name: prod
    max: {cpu: "900"}
    queues: [{name: search, max: {cpu: "1000"}}]
)");
  const auto r = Cli({"simulate", "--cluster", kCluster, "--config", config.path()});
  CHECK(r.code == kExitUsage);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("queues.tree[0].queues[0] (root.prod.search).max.cpu: 1000 is "
                                    "above root.prod's max 900"));
}

TEST_CASE("the queue quota example simulates the shipped cluster", "[cli][quota]") {
  const auto r = Cli({"simulate", "--cluster", kCluster, "--workload", kWorkload, "--config",
                      SourcePath("config/examples/queues.yaml"), "--output", "json"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"name\": \"root.prod.search\""));
  CHECK_THAT(r.out, Catch::Contains("\"queue\": \"root."));
}

TEST_CASE("run without a reachable cluster configuration exits with code 1", "[cli]") {
  const auto r = Cli({"run", "--kubeconfig", "/nonexistent/kubeconfig"});
  CHECK(r.code == kExitFailure);
  CHECK(r.err.find("kubeconfig /nonexistent/kubeconfig (--kubeconfig): file not found") !=
        std::string::npos);
}

TEST_CASE("an unreadable input file exits with code 1", "[cli]") {
  const auto r = Cli({"simulate", "--cluster", "/nonexistent.yaml"});
  CHECK(r.code == kExitFailure);
  CHECK(r.err.find("/nonexistent.yaml") != std::string::npos);
}

TEST_CASE("an endless cluster file ends with an error at the size limit", "[cli]") {
  const auto r = Cli({"simulate", "--cluster", "/dev/zero"});
  CHECK(r.code == kExitFailure);
  CHECK(r.err == "error: cannot read /dev/zero: larger than the limit of 268435456 bytes\n");
}

TEST_CASE("a configuration of one stray comma exits with code 2 naming the position", "[cli]") {
  const TempFile config(",");
  const auto r = Cli({"simulate", "--cluster", kCluster, "--config", config.path()});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find(config.path() + ": line 1, column 1: ") != std::string::npos);
}

TEST_CASE("names that are not UTF-8 leave simulate's JSON valid", "[cli]") {
  TempFile cluster(
      "{\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": [\n"
      "  {\"kind\": \"Node\", \"apiVersion\": \"v1\", \"metadata\": {\"name\": \"n\xff\"},\n"
      "   \"status\": {\"capacity\": {\"cpu\": \"2\", \"memory\": \"1Gi\", \"pods\": \"10\"}}},\n"
      "  {\"kind\": \"Pod\", \"apiVersion\": \"v1\",\n"
      "   \"metadata\": {\"namespace\": \"default\", \"name\": \"p\xc3\"},\n"
      "   \"spec\": {\"schedulerName\": \"kubesched\", \"containers\": [{\"name\": \"c\"}]}}]}",
      "cluster.json");
  const auto r = Cli({"simulate", "--cluster", cluster.path(), "--output", "json"});
  REQUIRE(r.code == kExitOk);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(r.out.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["pods"][0]["name"].GetString()) == "p\xEF\xBF\xBD");
  CHECK(std::string(doc["pods"][0]["node"].GetString()) == "n\xEF\xBF\xBD");
}

TEST_CASE("skipped input objects give exit code 3 after a full report", "[cli]") {
  TempFile cluster(R"({"kind": "List", "apiVersion": "v1", "items": [
  {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"},
   "status": {"capacity": {"cpu": "2", "memory": "1Gi", "pods": "10"}}},
  {"kind": "Pod", "apiVersion": "v1", "metadata": {"namespace": "default", "name": "neg"},
   "spec": {"schedulerName": "kubesched",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]}},
  {"kind": "Pod", "apiVersion": "v1", "metadata": {"namespace": "default", "name": "ok"},
   "spec": {"schedulerName": "kubesched", "containers": [{"name": "c"}]}}]})",
                   "cluster.json");
  const auto r = Cli({"simulate", "--cluster", cluster.path(), "--output", "json"});
  CHECK(r.code == kExitSkippedInput);
  CHECK(r.err.find("Pod default/neg") != std::string::npos);
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(doc["summary"]["scheduled"].GetInt() == 1);
}

TEST_CASE("simulate's JSON has the documented fields", "[cli]") {
  const auto r =
      Cli({"simulate", "--cluster", kCluster, "--workload", kWorkload, "--output", "json"});
  REQUIRE(r.code == kExitOk);
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  for (const char* key : {"summary", "pods", "preemptions", "nodes", "queues"}) {
    CHECK(doc.HasMember(key));
  }
  const auto& summary = doc["summary"];
  for (const char* key : {"pods", "scheduled", "unschedulable", "skipped", "preempted", "seconds",
                          "podsPerSecond", "attemptLatencySeconds"}) {
    CHECK(summary.HasMember(key));
  }
  for (const char* key : {"p50", "p90", "p99"}) {
    CHECK(summary["attemptLatencySeconds"].HasMember(key));
  }
  const auto& pod = doc["pods"][0];
  for (const char* key :
       {"namespace", "name", "node", "nominatedNode", "policy", "queue", "attempts", "message"}) {
    CHECK(pod.HasMember(key));
  }
  const auto& node = doc["nodes"][0];
  for (const char* key : {"name", "allocatable", "requested", "pods"}) CHECK(node.HasMember(key));
  CHECK(node["allocatable"]["cpu"].IsString());
}

TEST_CASE("explain's JSON has the documented fields and selects a feasible node", "[cli]") {
  const auto r = Cli({"explain", "--cluster", kCluster, "--pod", SourcePath("examples/pod.yaml"),
                      "--output", "json"});
  REQUIRE(r.code == kExitOk);
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["pod"].GetString()) == "ml-training/train-bert-0");
  REQUIRE(doc["selected"].IsString());
  const std::string selected = doc["selected"].GetString();
  CHECK(selected.rfind("gpu-a100-", 0) == 0);  // preferred A100 and room for 4 GPUs
  bool found = false;
  for (const auto& node : doc["nodes"].GetArray()) {
    CHECK(node.HasMember("filters"));
    CHECK(node.HasMember("scores"));
    CHECK(node.HasMember("total"));
    if (selected == node["name"].GetString()) {
      found = true;
      CHECK(node["feasible"].GetBool());
      for (const auto& f : node["filters"].GetArray()) {
        const std::string code = f["code"].GetString();
        CHECK((code == "Success" || code == "Skip"));
      }
    }
  }
  CHECK(found);
}

TEST_CASE("explain's table marks the selected node", "[cli]") {
  const auto r = Cli({"explain", "--cluster", kCluster, "--pod", SourcePath("examples/pod.yaml")});
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("selected: gpu-a100-") != std::string::npos);
  // The control-plane taint is not tolerated; the GPU taint is.
  CHECK(r.out.find("TaintToleration: node(s) had untolerated taint(s)") != std::string::npos);
  CHECK(r.out.find("NodeAffinity") != std::string::npos);
}

TEST_CASE("the built binary runs the README's example", "[cli]") {
  const std::string command = std::string(KUBESCHED_BINARY) + " simulate --cluster " + kCluster +
                              " --workload " + kWorkload + " > /dev/null";
  CHECK(std::system(command.c_str()) == 0);
}

}  // namespace
}  // namespace kubesched::scheduler
