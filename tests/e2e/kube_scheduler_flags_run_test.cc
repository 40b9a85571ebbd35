// `kubesched run` with the flags of a kube-scheduler manifest, against kubesched-testapi: a bare
// --leader-elect, the lease named by --leader-elect-resource-name, the server from --master, and
// with --logging-format=json every line on stderr a JSON object, down to a fatal error.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::StringOf;

// Every line of a JSON log, parsed; a line that is not a JSON object fails the test.
std::vector<rapidjson::Document> JsonLog(const std::string& log) {
  std::vector<rapidjson::Document> lines;
  for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipEmpty())) {
    INFO("log line: " << line);
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(line.data(), line.size());
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc.IsObject());
    REQUIRE(doc.HasMember("ts"));
    REQUIRE(doc["ts"].IsNumber());
    REQUIRE(doc.HasMember("msg"));
    REQUIRE(doc.HasMember("caller"));
    lines.push_back(std::move(doc));
  }
  return lines;
}

// The log's lines whose "msg" contains `text`.
std::vector<const rapidjson::Document*> WithMessage(const std::vector<rapidjson::Document>& lines,
                                                    std::string_view text) {
  std::vector<const rapidjson::Document*> found;
  for (const rapidjson::Document& line : lines) {
    if (StringOf(line["msg"]).find(text) != std::string::npos) found.push_back(&line);
  }
  return found;
}

// The test API server's kubeconfig with its server replaced by one where nothing listens, so that
// only --master can lead kubesched to the API server.
std::string KubeconfigWithDeadServer(const TestApiProcess& server) {
  std::ifstream in(server.kubeconfig());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(server.url());
  REQUIRE(at != std::string::npos);
  text.replace(at, server.url().size(), "https://127.0.0.1:1");
  const std::string path = server.dir() + "/dead-server.kubeconfig";
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("run: kube-scheduler's flags: bare --leader-elect, the lease's name, --master, JSON log",
          "[run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  testing::TestApiClient api(apiserver);
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"},)"
             R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})");
  api.Create("/api/v1/namespaces/default/pods",
             R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},)"
             R"("spec":{"schedulerName":"kubesched","containers":[{"name":"c","image":"i"}]}})");

  // The bare --leader-elect comes before --shutdown-grace, which must keep its value.
  auto scheduler = testing::StartKubeschedRun(
      {.kubeconfig = KubeconfigWithDeadServer(apiserver),
       .leader_elect = true,
       .identity = "json-replica",
       .verbosity = 2,
       .extra_args = {"--master", apiserver.url(), "--logging-format=json",
                      "--leader-elect-resource-name", "my-scheduler", "--profiling",
                      "--feature-gates=NoSuchGate=true,SidecarContainers=true"}});
  const std::string lease = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/";
  testing::RequireEventually("the lease my-scheduler is held by json-replica", *scheduler, [&] {
    int status = 0;
    rapidjson::Document held = api.Get(lease + "my-scheduler", &status);
    return status == 200 && held["spec"].HasMember("holderIdentity") &&
           StringOf(held["spec"]["holderIdentity"]) == "json-replica";
  });
  testing::RequireEventually("pod p is bound", *scheduler, [&] {
    rapidjson::Document pod = api.GetOk("/api/v1/namespaces/default/pods/p");
    const rapidjson::Value& spec = pod["spec"];
    return spec.HasMember("nodeName") && StringOf(spec["nodeName"]) == "node-a";
  });
  testing::WaitForLog(*scheduler, "bound to node node-a");
  int status = 0;
  api.Get(lease + "kubesched", &status);
  CHECK(status == 404);  // the configuration's default name was overridden

  auto exit_code = scheduler->Stop(SIGTERM, absl::Seconds(15));
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 0);
  const std::vector<rapidjson::Document> lines = JsonLog(scheduler->ReadStderr());
  REQUIRE_FALSE(lines.empty());

  const auto bound = WithMessage(lines, "bound to node node-a");
  REQUIRE(bound.size() == 1);
  const rapidjson::Document& line = *bound[0];
  CHECK((*bound[0])["v"].GetInt() == 2);
  CHECK(StringOf(line["pod"]["name"]) == "p");
  CHECK(StringOf(line["pod"]["namespace"]) == "default");
  CHECK(StringOf(line["node"]) == "node-a");
  CHECK_THAT(StringOf(line["caller"]), Catch::StartsWith("run/api_reporter.cc:"));

  const auto profiling = WithMessage(lines, "--profiling=true is accepted");
  REQUIRE(profiling.size() == 1);
  CHECK(StringOf((*profiling[0])["level"]) == "warning");
  CHECK(WithMessage(lines, "unknown feature gate \"NoSuchGate\"").size() == 1);
  CHECK(WithMessage(lines, "SidecarContainers").empty());
  CHECK(WithMessage(lines, "server from --master").size() == 1);
}

TEST_CASE("run: with --logging-format=json a fatal error is a JSON line too", "[run][e2e]") {
  auto result = testing::RunCommand(
      {.argv = {KUBESCHED_BINARY, "run", "--logging-format=json", "--kubeconfig",
                "/nonexistent/kubeconfig", "--health-bind-address", "127.0.0.1:0",
                "--metrics-bind-address", "127.0.0.1:0"}},
      absl::Seconds(30));
  REQUIRE(result.ok());
  CHECK(result->exit_code == 1);
  const std::vector<rapidjson::Document> lines = JsonLog(result->stderr_text);
  REQUIRE(lines.size() == 1);
  CHECK(StringOf(lines[0]["msg"]) == "stopping on an error");
  CHECK(StringOf(lines[0]["err"]) ==
        "kubeconfig /nonexistent/kubeconfig (--kubeconfig): file not found");
}

}  // namespace
}  // namespace kubesched
