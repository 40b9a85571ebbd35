// explain and simulate on a live cluster: the binary against kubesched-testapi. A live explain
// gives exactly what explain gives on a dump of the same state, a bound pod is judged as if it
// were pending, and neither command writes anything to the cluster.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
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

}  // namespace
}  // namespace kubesched
