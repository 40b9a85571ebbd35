// explain and simulate on a live cluster: the binary against kubesched-testapi. A live explain
// gives exactly what explain gives on a dump of the same state, a bound pod is judged as if it
// were pending, and neither command writes anything to the cluster.

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;

std::string NodeJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"(","labels":{"kubernetes.io/hostname":")", name,
                      R"("}},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},)",
                      R"("allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
}

std::string PodJson(const std::string& name, const std::string& cpu, const std::string& node = "") {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
                      node.empty() ? "" : absl::StrCat(R"("nodeName":")", node, R"(",)"),
                      R"("containers":[{"name":"c","image":"busybox","resources":)",
                      R"({"requests":{"cpu":")", cpu, R"(","memory":"100Mi"}}}]}})");
}

testing::CommandResult Kubesched(std::vector<std::string> args) {
  args.insert(args.begin(), KUBESCHED_BINARY);
  auto result = testing::RunCommand({.argv = std::move(args)}, absl::Seconds(60));
  REQUIRE(result.ok());
  return *result;
}

// Three 4-CPU nodes; "big" (3 CPU) bound to node-0, "web" (1 CPU) pending.
void CreateCluster(testing::TestApiClient& api) {
  for (int i = 0; i < 3; ++i) api.Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i)));
  api.Create("/api/v1/namespaces/default/pods", PodJson("big", "3", "node-0"));
  api.Create("/api/v1/namespaces/default/pods", PodJson("web", "1"));
  REQUIRE(api.Send("POST", "/testapi/stats/reset").status == 200);
}

// What the server holds, as one dump file: a List of every item of its lists, each item given
// the kind its list implies (list responses leave it out).
std::string WriteDump(testing::TestApiClient& api, const TestApiProcess& server) {
  rapidjson::Document dump(rapidjson::kObjectType);
  auto& alloc = dump.GetAllocator();
  dump.AddMember("apiVersion", "v1", alloc);
  dump.AddMember("kind", "List", alloc);
  rapidjson::Value items(rapidjson::kArrayType);
  for (const char* list : {"/api/v1/nodes", "/api/v1/pods", "/api/v1/namespaces",
                           "/apis/scheduling.k8s.io/v1/priorityclasses"}) {
    rapidjson::Document page = api.GetOk(list);
    std::string kind = page["kind"].GetString();
    kind.resize(kind.size() - 4);  // "NodeList" -> "Node"
    for (auto& item : page["items"].GetArray()) {
      rapidjson::Value copy(item, alloc);
      if (!copy.HasMember("kind"))
        copy.AddMember("kind", rapidjson::Value(kind.c_str(), alloc), alloc);
      if (!copy.HasMember("apiVersion"))
        copy.AddMember("apiVersion", rapidjson::Value(page["apiVersion"], alloc), alloc);
      items.PushBack(copy, alloc);
    }
  }
  dump.AddMember("items", items, alloc);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  dump.Accept(writer);
  const std::string path = server.dir() + "/dump.json";
  std::ofstream(path) << buffer.GetString();
  return path;
}

std::string WritePod(testing::TestApiClient& api, const TestApiProcess& server,
                     const std::string& name) {
  const std::string path = server.dir() + "/" + name + ".json";
  std::ofstream(path) << api.Send("GET", "/api/v1/namespaces/default/pods/" + name).body;
  return path;
}

// The server saw reads only (get, list, watch) since the last stats reset.
void RequireOnlyReads(testing::TestApiClient& api) {
  rapidjson::Document stats = api.GetOk("/testapi/stats");
  int reads = 0;
  for (const auto& member : stats["requests"].GetObject()) {
    const std::string key = member.name.GetString();
    if (key.starts_with("code ")) continue;
    INFO(key);
    CHECK((key.starts_with("get ") || key.starts_with("list ") || key.starts_with("watch ")));
    reads += member.value.GetInt();
  }
  CHECK(reads > 0);
}

TEST_CASE("explain POD on a live cluster equals explain on a dump of it", "[explain][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  CreateCluster(api);
  const std::string kubeconfig = (*server)->kubeconfig();

  for (const std::string pod : {"web", "big"}) {
    const testing::CommandResult live = Kubesched(
        {"explain", "--kubeconfig", kubeconfig, "-n", "default", "pod/" + pod, "--output", "json"});
    INFO(live.stderr_text);
    REQUIRE(live.exit_code == 0);
    const std::string dump = WriteDump(api, **server);
    const testing::CommandResult dumped = Kubesched(
        {"explain", "--cluster", dump, "--pod", WritePod(api, **server, pod), "--output", "json"});
    INFO(dumped.stderr_text);
    REQUIRE(dumped.exit_code == 0);
    CHECK(live.stdout_text == dumped.stdout_text);
  }
  RequireOnlyReads(api);
}

TEST_CASE("explain judges a bound pod of a live cluster as if it were pending", "[explain][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  CreateCluster(api);
  const testing::CommandResult summary =
      Kubesched({"explain", "--kubeconfig", (*server)->kubeconfig(), "big"});
  INFO(summary.stdout_text << summary.stderr_text);
  REQUIRE(summary.exit_code == 0);
  // Counted once, off its node: every node has room for it.
  CHECK_THAT(summary.stdout_text, Catch::Contains("3/3 nodes are available."));
  CHECK_THAT(summary.stdout_text, Catch::Contains("selected: node-"));
  CHECK_THAT(summary.stdout_text, !Catch::Contains("node name"));

  const testing::CommandResult missing =
      Kubesched({"explain", "--kubeconfig", (*server)->kubeconfig(), "-n", "other", "big"});
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.stderr_text, Catch::Contains("pod other/big not found"));
  RequireOnlyReads(api);
}

TEST_CASE("simulate --kubeconfig schedules the pending pods and writes nothing",
          "[simulate][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  CreateCluster(api);
  const testing::CommandResult result =
      Kubesched({"simulate", "--kubeconfig", (*server)->kubeconfig(), "--pods-output", "pending"});
  INFO(result.stdout_text << result.stderr_text);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.stdout_text, Catch::Contains("1 pods: 1 scheduled, 0 unschedulable"));
  CHECK_THAT(result.stdout_text, !Catch::Contains("web"));  // placed: not listed as pending
  // stderr is a pipe here: no progress line.
  CHECK_THAT(result.stderr_text, !Catch::Contains("simulating:"));
  RequireOnlyReads(api);
  rapidjson::Document web = api.GetOk("/api/v1/namespaces/default/pods/web");
  CHECK_FALSE(web["spec"].HasMember("nodeName"));
}

// The configuration read from a ConfigMap of the cluster: MostAllocated stacks "web" beside "big"
// on node-0, where upstream's defaults (LeastAllocated) spread it to an empty node.
TEST_CASE("explain --config-map judges with the configuration a ConfigMap of the cluster holds",
          "[explain][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  CreateCluster(api);
  api.Create("/api/v1/namespaces/default/configmaps",
             R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sched",)"
             R"("namespace":"default"},"data":{"config.yaml":)"
             R"("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n)"
             R"(profiles:\n- schedulerName: kubesched\n  pluginConfig:\n)"
             R"(  - {name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}\n",)"
             R"("broken.yaml":"apiVersion: kubescheduler.config.k8s.io/v1\nprofiles: 7\n"}})");
  REQUIRE(api.Send("POST", "/testapi/stats/reset").status == 200);
  const std::string kubeconfig = (*server)->kubeconfig();
  const auto explain = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"explain", "--kubeconfig", kubeconfig, "web"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Kubesched(std::move(args));
  };

  const testing::CommandResult defaults = explain({});
  INFO(defaults.stdout_text << defaults.stderr_text);
  REQUIRE(defaults.exit_code == 0);
  CHECK_THAT(defaults.stdout_text, !Catch::Contains("selected: node-0"));
  const testing::CommandResult stacked = explain({"--config-map", "default/sched"});
  INFO(stacked.stdout_text << stacked.stderr_text);
  REQUIRE(stacked.exit_code == 0);
  CHECK_THAT(stacked.stdout_text, Catch::Contains("selected: node-0"));
  CHECK(explain({"--config-map", "default/sched:config.yaml"}).stdout_text == stacked.stdout_text);

  // Each mistake is named, and nothing is explained under a configuration not asked for.
  const std::vector<std::pair<std::vector<std::string>, std::string>> mistakes = {
      {{"--config-map", "default/missing"}, "reading ConfigMap default/missing: HTTP 404"},
      {{"--config-map", "sched"}, "--config-map must be NAMESPACE/NAME or NAMESPACE/NAME:KEY"},
      {{"--config-map", "default/sched:nokey"}, "has no key nokey"},
      {{"--config-map", "default/sched:broken.yaml"}, "ConfigMap default/sched:broken.yaml: "},
      {{"--config-map", "default/sched", "--config", "x.yaml"}, "exclude each other"},
  };
  for (const auto& [extra, message] : mistakes) {
    const testing::CommandResult refused = explain(extra);
    INFO(absl::StrJoin(extra, " ") << "\n" << refused.stdout_text << refused.stderr_text);
    CHECK(refused.exit_code != 0);
    CHECK_THAT(refused.stderr_text, Catch::Contains(message));
    CHECK_THAT(refused.stdout_text, !Catch::Contains("selected:"));
  }
  RequireOnlyReads(api);
}

// A kubeconfig whose current context names a server nothing listens on, beside the test server's
// context "test".
std::string KubeconfigWithDeadCurrentContext(const TestApiProcess& server) {
  std::ifstream in(server.kubeconfig());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = absl::StrReplaceAll(
      text, {{"current-context: test", "current-context: dead"},
             {"contexts:\n", "contexts:\n- name: dead\n  context: {cluster: dead, user: test}\n"},
             {"clusters:\n",
              absl::StrCat("clusters:\n- name: dead\n  cluster: {server: 'https://127.0.0.1:",
                           testing::FreeLocalPort(), "'}\n")}});
  const std::string path = server.dir() + "/two-contexts.kubeconfig";
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("explain and simulate --context pick the kubeconfig context to read",
          "[explain][simulate][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  CreateCluster(api);
  const std::string kubeconfig = KubeconfigWithDeadCurrentContext(**server);

  const testing::CommandResult chosen =
      Kubesched({"explain", "--kubeconfig", kubeconfig, "--context", "test", "web"});
  INFO(chosen.stdout_text << chosen.stderr_text);
  CHECK(chosen.exit_code == 0);
  CHECK_THAT(chosen.stdout_text, Catch::Contains("selected: node-"));
  const testing::CommandResult simulated = Kubesched(
      {"simulate", "--kubeconfig", kubeconfig, "--context", "test", "--pods-output", "none"});
  INFO(simulated.stdout_text << simulated.stderr_text);
  CHECK(simulated.exit_code == 0);
  CHECK_THAT(simulated.stdout_text, Catch::Contains("1 pods: 1 scheduled, 0 unschedulable"));

  // Without --context the current one is read: its server does not answer, and that is said.
  const testing::CommandResult current = Kubesched({"explain", "--kubeconfig", kubeconfig, "web"});
  INFO(current.stdout_text << current.stderr_text);
  CHECK(current.exit_code != 0);
  CHECK_THAT(current.stderr_text, Catch::Contains("error: "));
  CHECK_THAT(current.stdout_text, !Catch::Contains("selected:"));
  const testing::CommandResult unknown =
      Kubesched({"explain", "--kubeconfig", kubeconfig, "--context", "nosuch", "web"});
  CHECK(unknown.exit_code != 0);
  CHECK_THAT(unknown.stderr_text, Catch::Contains("nosuch"));
  const testing::CommandResult dump_only =
      Kubesched({"simulate", "--cluster", "x.yaml", "--context", "test"});
  CHECK(dump_only.exit_code != 0);
  CHECK_THAT(dump_only.stderr_text,
             Catch::Contains("--context and --config-map need --kubeconfig"));
  RequireOnlyReads(api);
}

}  // namespace
}  // namespace kubesched
