#include "tests/testapi/tables.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kTableAccept[] =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s."
    "io,application/json";

HttpResponse GetTable(ApiFixture& f, const std::string& target) {
  return f.api.Handle({.method = "GET", .target = target, .accept = kTableAccept});
}

std::vector<std::string> ColumnNames(const rapidjson::Document& table) {
  std::vector<std::string> names;
  for (const auto& column : table["columnDefinitions"].GetArray()) {
    names.emplace_back(column["name"].GetString());
  }
  return names;
}

std::vector<std::string> Cells(const rapidjson::Value& row) {
  std::vector<std::string> cells;
  for (const auto& cell : row["cells"].GetArray()) cells.emplace_back(cell.GetString());
  return cells;
}

TEST_CASE("HumanDuration prints ages as kubectl does", "[testapi]") {
  CHECK(HumanDuration(absl::Seconds(45)) == "45s");
  CHECK(HumanDuration(absl::Seconds(119)) == "119s");
  CHECK(HumanDuration(absl::Seconds(200)) == "3m20s");
  CHECK(HumanDuration(absl::Minutes(5)) == "5m");
  CHECK(HumanDuration(absl::Minutes(33)) == "33m");
  CHECK(HumanDuration(absl::Minutes(185)) == "3h5m");
  CHECK(HumanDuration(absl::Hours(30)) == "30h");
  CHECK(HumanDuration(absl::Hours(50)) == "2d2h");
  CHECK(HumanDuration(absl::Hours(24 * 30)) == "30d");
  CHECK(HumanDuration(absl::Hours(24 * 800)) == "2y70d");
  CHECK(HumanDuration(absl::Seconds(-5)) == "<invalid>");
}

TEST_CASE("Accept headers choose tables, JSON, or nothing this server speaks", "[testapi]") {
  CHECK(WantsTable(kTableAccept));
  CHECK_FALSE(WantsTable("application/json"));
  CHECK_FALSE(WantsTable("application/json, application/json;as=Table;v=v1;g=meta.k8s.io"));
  CHECK(AcceptsJson(""));
  CHECK(AcceptsJson("application/vnd.kubernetes.protobuf,application/json"));
  CHECK(AcceptsJson("*/*"));
  CHECK_FALSE(AcceptsJson("application/vnd.kubernetes.protobuf"));
  CHECK(MediaType(" Application/JSON; charset=utf-8") == "application/json");
}

TEST_CASE("pods are listed as a table with kubectl's columns", "[testapi]") {
  ApiFixture f;
  REQUIRE(f.Call("POST", "/api/v1/namespaces/default/pods",
                 R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"a","image":"i"},)"
                 R"({"name":"b","image":"i"}]}})")
              .status == 201);
  REQUIRE(f.Call("POST", "/api/v1/namespaces/default/pods/web/binding",
                 R"({"metadata":{"name":"web"},"target":{"kind":"Node","name":"node-a"}})")
              .status == 201);
  HttpResponse response = GetTable(f, "/api/v1/namespaces/default/pods");
  REQUIRE(response.status == 200);
  CHECK(response.content_type == kTableContentType);
  rapidjson::Document table = Json(response.body);
  CHECK(StringAt(table, "kind") == "Table");
  CHECK(StringAt(table, "apiVersion") == "meta.k8s.io/v1");
  CHECK_FALSE(StringAt(table, "metadata.resourceVersion").empty());
  CHECK(ColumnNames(table) == std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age",
                                                       "IP", "Node", "Nominated Node",
                                                       "Readiness Gates"});
  CHECK(table["columnDefinitions"][5]["priority"].GetInt() == 1);  // IP: -o wide only
  REQUIRE(table["rows"].Size() == 1);
  std::vector<std::string> cells = Cells(table["rows"][0]);
  CHECK(cells[0] == "web");
  CHECK(cells[1] == "0/2");
  CHECK(cells[2] == "Pending");
  CHECK(cells[3] == "0");
  CHECK((cells[4].ends_with("s") || cells[4] == "0s"));
  CHECK(cells[5] == "<none>");
  CHECK(cells[6] == "node-a");
  CHECK(StringAt(table["rows"][0], "object.kind") == "PartialObjectMetadata");
  CHECK(StringAt(table["rows"][0], "object.metadata.name") == "web");

  // One object, and the plain list when the table is not asked for.
  rapidjson::Document one = Json(GetTable(f, "/api/v1/namespaces/default/pods/web").body);
  CHECK(one["rows"].Size() == 1);
  CHECK(StringAt(Json(f.Get("/api/v1/namespaces/default/pods").body), "kind") == "PodList");
}

TEST_CASE("nodes show status, roles and version, other types name and creation", "[testapi]") {
  ApiFixture f;
  REQUIRE(
      f.Call("POST", "/api/v1/nodes",
             R"({"metadata":{"name":"n1","labels":{"node-role.kubernetes.io/control-plane":""}},)"
             R"("spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready",)"
             R"("status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.0"},)"
             R"("addresses":[{"type":"InternalIP","address":"10.0.0.1"}]}})")
          .status == 201);
  rapidjson::Document nodes = Json(GetTable(f, "/api/v1/nodes").body);
  CHECK(ColumnNames(nodes) == std::vector<std::string>{"Name", "Status", "Roles", "Age", "Version",
                                                       "Internal-IP", "External-IP", "OS-Image",
                                                       "Kernel-Version", "Container-Runtime"});
  std::vector<std::string> cells = Cells(nodes["rows"][0]);
  CHECK(cells[1] == "Ready,SchedulingDisabled");
  CHECK(cells[2] == "control-plane");
  CHECK(cells[4] == "v1.32.0");
  CHECK(cells[5] == "10.0.0.1");
  CHECK(cells[6] == "<none>");

  rapidjson::Document namespaces = Json(GetTable(f, "/api/v1/namespaces").body);
  CHECK(ColumnNames(namespaces) == std::vector<std::string>{"Name", "Status", "Age"});
  CHECK(Cells(namespaces["rows"][0])[1] == "Active");
  rapidjson::Document classes =
      Json(GetTable(f, "/apis/scheduling.k8s.io/v1/priorityclasses").body);
  CHECK(ColumnNames(classes) == std::vector<std::string>{"Name", "Created At"});
}

TEST_CASE("events are listed as kubectl get events prints them", "[testapi]") {
  ApiFixture f;
  REQUIRE(f.Call("POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                 R"({"metadata":{"name":"web.1"},"eventTime":"2026-01-02T03:04:05.000000Z",)"
                 R"("series":{"count":3,"lastObservedTime":"2026-01-02T03:10:05.000000Z"},)"
                 R"("reportingController":"kubesched","reportingInstance":"kubesched-0",)"
                 R"("action":"Scheduling","reason":"FailedScheduling","regarding":{"kind":"Pod",)"
                 R"("namespace":"default","name":"web"},"note":"0/1 nodes are available.",)"
                 R"("type":"Warning"})")
              .status == 201);
  for (const char* target :
       {"/api/v1/namespaces/default/events", "/apis/events.k8s.io/v1/namespaces/default/events"}) {
    rapidjson::Document table = Json(GetTable(f, target).body);
    CHECK(ColumnNames(table) == std::vector<std::string>{"Last Seen", "Type", "Reason", "Object",
                                                         "Subobject", "Source", "Message",
                                                         "First Seen", "Count", "Name"});
    const rapidjson::Value& cells = table["rows"][0]["cells"];
    CHECK(std::string(cells[1].GetString()) == "Warning");
    CHECK(std::string(cells[2].GetString()) == "FailedScheduling");
    CHECK(std::string(cells[3].GetString()) == "pod/web");
    CHECK(std::string(cells[5].GetString()) == "kubesched, kubesched-0");
    CHECK(std::string(cells[6].GetString()) == "0/1 nodes are available.");
    CHECK(cells[8].GetInt() == 3);
    CHECK(std::string(cells[9].GetString()) == "web.1");
  }
}

TEST_CASE("a watch asked for tables sends one-row tables", "[testapi]") {
  ApiFixture f;
  HttpResponse watch = f.api.Handle({.method = "GET",
                                     .target = "/api/v1/namespaces/default/pods?watch=1",
                                     .accept = kTableAccept});
  REQUIRE(watch.stream);
  watch.stream->Start([] {});
  REQUIRE(f.Call("POST", "/api/v1/namespaces/default/pods",
                 R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"a","image":"i"}]}})")
              .status == 201);
  auto output = watch.stream->Poll(absl::Now());
  REQUIRE(output.chunks.size() == 1);
  rapidjson::Document event = Json(output.chunks[0]);
  CHECK(StringAt(event, "type") == "ADDED");
  CHECK(StringAt(event, "object.kind") == "Table");
  CHECK(Cells(event["object"]["rows"][0])[0] == "web");
}

}  // namespace
}  // namespace kubesched::testapi
