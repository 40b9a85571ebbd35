// In-process tests of kubesched-testapi: selectors, patches, the store's resourceVersion, history
// and pagination semantics, and the API handlers (called directly, without a socket).

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "tests/testapi/patch.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/selectors.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {
namespace {

rapidjson::Document Json(std::string_view text) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

const ResourceType& Pods() { return *FindResourceType("", "v1", "pods"); }
const ResourceType& Namespaces() { return *FindResourceType("", "v1", "namespaces"); }

// An ApiServer over a fresh store, with the real cluster's bootstrap objects.
struct Fixture {
  explicit Fixture(size_t history = 1000, ApiServerOptions options = {})
      : store(StoreOptions{.history_size = history}), api(&store, &faults, options) {
    REQUIRE(api.Bootstrap().ok());
  }
  HttpResponse Call(std::string method, std::string target, std::string body = "",
                    std::string content_type = "application/json") {
    return api.Handle({.method = std::move(method),
                       .target = std::move(target),
                       .content_type = std::move(content_type),
                       .body = std::move(body)});
  }
  HttpResponse CreatePod(const std::string& name, const std::string& labels = "{}") {
    return Call("POST", "/api/v1/namespaces/default/pods",
                R"({"metadata":{"name":")" + name + R"(","labels":)" + labels +
                    R"(},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  }
  // The lines a watch response has produced so far.
  static std::vector<std::string> Drain(const HttpResponse& response) {
    std::vector<std::string> lines;
    if (!response.stream) return lines;
    auto output = response.stream->Poll(absl::Now());
    for (std::string& chunk : output.chunks) lines.push_back(std::move(chunk));
    return lines;
  }

  Store store;
  Faults faults;
  ApiServer api;
};

std::string ResourceVersionOf(const std::string& json) {
  return StringAt(Json(json), "metadata.resourceVersion");
}

TEST_CASE("label selectors parse and match like the real API", "[testapi]") {
  Labels labels{{"app", "web"}, {"tier", "front"}};
  auto matches = [&labels](std::string_view text) {
    auto selector = LabelSelector::Parse(text);
    REQUIRE(selector.ok());
    return selector->Matches(labels);
  };
  CHECK(matches(""));
  CHECK(matches("app=web"));
  CHECK(matches("app==web,tier"));
  CHECK_FALSE(matches("app!=web"));
  CHECK(matches("app in (db, web)"));
  CHECK_FALSE(matches("app notin (db,web)"));
  CHECK(matches("!missing"));
  CHECK_FALSE(matches("missing"));
  CHECK(matches("missing notin (x)"));
  CHECK_FALSE(LabelSelector::Parse("app in (a").ok());
  CHECK_FALSE(LabelSelector::Parse("a=b,,c").ok());
}

TEST_CASE("field selectors support =, == and != joined by commas", "[testapi]") {
  auto selector = FieldSelector::Parse("spec.nodeName=,status.phase!=Failed");
  REQUIRE(selector.ok());
  auto lookup_pending = [](std::string_view field) -> std::string_view {
    return field == "status.phase" ? "Pending" : "";
  };
  CHECK(selector->Matches(lookup_pending));
  auto bound = [](std::string_view field) -> std::string_view {
    return field == "spec.nodeName" ? "n1" : "";
  };
  CHECK_FALSE(selector->Matches(bound));
  CHECK_FALSE(FieldSelector::Parse("nonsense").ok());
}

TEST_CASE("merge patch follows RFC 7386", "[testapi]") {
  auto doc = Json(R"({"a":{"b":1,"c":2},"list":[1,2],"gone":true})");
  ApplyMergePatch(Json(R"({"a":{"c":null,"d":3},"list":[3],"gone":null})"), &doc);
  CHECK(Serialize(doc) == R"({"a":{"b":1,"d":3},"list":[3]})");
}

TEST_CASE("strategic merge patch merges pod conditions by type", "[testapi]") {
  auto pod = Json(
      R"({"metadata":{"finalizers":["a"]},"status":{"conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False"}]}})");
  auto patch = Json(
      R"({"metadata":{"finalizers":["b"]},"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"type":"Ready","status":"True","reason":"ok"},{"type":"PodScheduled","$patch":"delete"},{"type":"New","status":"Unknown"}]}})");
  REQUIRE(ApplyStrategicMergePatch(patch, &pod).ok());
  CHECK(
      Serialize(pod) ==
      R"({"metadata":{"finalizers":["a","b"]},"status":{"conditions":[{"type":"Ready","status":"True","reason":"ok"},{"type":"New","status":"Unknown"}]}})");
}

TEST_CASE("json patch applies add, replace, remove, test, move and copy", "[testapi]") {
  auto doc = Json(R"({"a":[1,2],"b":{"c":"x"}})");
  REQUIRE(ApplyJsonPatch(Json(R"([{"op":"add","path":"/a/1","value":9},
      {"op":"replace","path":"/b/c","value":"y"},{"op":"test","path":"/b/c","value":"y"},
      {"op":"copy","from":"/b/c","path":"/d"},{"op":"move","from":"/d","path":"/e"},
      {"op":"remove","path":"/a/0"}])"),
                         &doc)
              .ok());
  CHECK(Serialize(doc) == R"({"a":[9,2],"b":{"c":"y"},"e":"y"})");
  CHECK_FALSE(ApplyJsonPatch(Json(R"([{"op":"test","path":"/e","value":"z"}])"), &doc).ok());
}

TEST_CASE("create sets metadata, defaults pods and rejects duplicates", "[testapi]") {
  Fixture f;
  HttpResponse created = f.CreatePod("web");
  REQUIRE(created.status == 201);
  auto pod = Json(created.body);
  CHECK(StringAt(pod, "kind") == "Pod");
  CHECK(StringAt(pod, "metadata.namespace") == "default");
  CHECK_FALSE(StringAt(pod, "metadata.uid").empty());
  CHECK_FALSE(StringAt(pod, "metadata.creationTimestamp").empty());
  CHECK(StringAt(pod, "status.phase") == "Pending");
  CHECK(StringAt(pod, "spec.schedulerName") == "default-scheduler");
  CHECK(pod["spec"]["priority"].IsInt64());

  HttpResponse duplicate = f.CreatePod("web");
  CHECK(duplicate.status == 409);
  CHECK(StringAt(Json(duplicate.body), "reason") == "AlreadyExists");

  HttpResponse generated =
      f.Call("POST", "/api/v1/namespaces/default/pods",
             R"({"metadata":{"generateName":"web-"},"spec":{"containers":[{"name":"c"}]}})");
  REQUIRE(generated.status == 201);
  CHECK(StringAt(Json(generated.body), "metadata.name").size() == std::string("web-").size() + 5);

  HttpResponse no_namespace =
      f.Call("POST", "/api/v1/namespaces/missing/pods",
             R"({"metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}})");
  CHECK(no_namespace.status == 404);
  CHECK(StringAt(Json(no_namespace.body), "message") == "namespaces \"missing\" not found");
}

TEST_CASE("priority admission resolves priorityClassName", "[testapi]") {
  Fixture f;
  REQUIRE(f.Call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                 R"({"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"Never"})")
              .status == 201);
  auto pod = Json(
      f.Call(
           "POST", "/api/v1/namespaces/default/pods",
           R"({"metadata":{"name":"p"},"spec":{"priorityClassName":"high","containers":[{"name":"c"}]}})")
          .body);
  CHECK(pod["spec"]["priority"].GetInt64() == 1000);
  CHECK(StringAt(pod, "spec.preemptionPolicy") == "Never");
  HttpResponse unknown = f.Call(
      "POST", "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"q"},"spec":{"priorityClassName":"nope","containers":[{"name":"c"}]}})");
  CHECK(unknown.status == 403);
}

TEST_CASE("binding sets nodeName and PodScheduled once", "[testapi]") {
  Fixture f;
  REQUIRE(f.CreatePod("web").status == 201);
  std::string binding =
      R"({"kind":"Binding","apiVersion":"v1","metadata":{"name":"web"},"target":{"kind":"Node","name":"n1"}})";
  HttpResponse bound = f.Call("POST", "/api/v1/namespaces/default/pods/web/binding", binding);
  CHECK(bound.status == 201);
  CHECK(StringAt(Json(bound.body), "status") == "Success");
  auto pod = Json(f.Call("GET", "/api/v1/namespaces/default/pods/web").body);
  CHECK(StringAt(pod, "spec.nodeName") == "n1");
  REQUIRE(pod["status"]["conditions"].Size() == 1);
  CHECK(StringAt(pod["status"]["conditions"][0], "type") == "PodScheduled");
  CHECK(StringAt(pod["status"]["conditions"][0], "status") == "True");

  HttpResponse again = f.Call("POST", "/api/v1/namespaces/default/pods/web/binding", binding);
  CHECK(again.status == 409);
  CHECK(StringAt(Json(again.body), "message") ==
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to "
        "node \"n1\"");
  CHECK(f.Call("POST", "/api/v1/namespaces/default/pods/none/binding",
               R"({"target":{"kind":"Node","name":"n1"}})")
            .status == 404);
  CHECK(f.Call("POST", "/api/v1/namespaces/default/pods/none/binding", binding).status == 400);
  CHECK(absl::StrContains(f.api.StatsJson(), "\"binds\":1,\"bindConflicts\":1"));
}

TEST_CASE("a pod with scheduling gates is marked SchedulingGated and cannot be bound",
          "[testapi][gates]") {
  Fixture f;
  HttpResponse created = f.Call("POST", "/api/v1/namespaces/default/pods",
                                R"({"metadata":{"name":"gated"},"spec":{"schedulingGates":)"
                                R"([{"name":"example.com/foo"}],"containers":[{"name":"c"}]}})");
  REQUIRE(created.status == 201);
  const auto pod = Json(created.body);
  REQUIRE(pod["status"]["conditions"].Size() == 1);
  const auto& condition = pod["status"]["conditions"][0];
  CHECK(StringAt(condition, "type") == "PodScheduled");
  CHECK(StringAt(condition, "status") == "False");
  CHECK(StringAt(condition, "reason") == "SchedulingGated");
  CHECK(StringAt(condition, "message") ==
        "Scheduling is blocked due to non-empty scheduling gates");

  const std::string binding =
      R"({"metadata":{"name":"gated"},"target":{"kind":"Node","name":"n1"}})";
  for (const char* target :
       {"/api/v1/namespaces/default/pods/gated/binding", "/api/v1/namespaces/default/bindings"}) {
    INFO(target);
    HttpResponse refused = f.Call("POST", target, binding);
    CHECK(refused.status == 409);
    CHECK(StringAt(Json(refused.body), "reason") == "Conflict");
    CHECK(StringAt(Json(refused.body), "message") ==
          "Operation cannot be fulfilled on pods/binding \"gated\": pod gated has non-empty "
          ".spec.schedulingGates");
  }
  CHECK(StringAt(Json(f.Call("GET", "/api/v1/namespaces/default/pods/gated").body),
                 "spec.nodeName") == "");

  // With its gates removed, it binds.
  REQUIRE(f.Call("PATCH", "/api/v1/namespaces/default/pods/gated",
                 R"({"spec":{"schedulingGates":null}})", "application/merge-patch+json")
              .status == 200);
  CHECK(f.Call("POST", "/api/v1/namespaces/default/pods/gated/binding", binding).status == 201);
}

TEST_CASE("update checks resourceVersion, status and main resource keep each other's half",
          "[testapi]") {
  Fixture f;
  auto pod = Json(f.CreatePod("web").body);
  std::string rv = StringAt(pod, "metadata.resourceVersion");
  HttpResponse stale = f.Call(
      "PUT", "/api/v1/namespaces/default/pods/web",
      R"({"metadata":{"name":"web","resourceVersion":"1"},"spec":{"containers":[{"name":"c"}]}})");
  CHECK(stale.status == 409);
  CHECK(StringAt(Json(stale.body), "reason") == "Conflict");

  HttpResponse status_put = f.Call(
      "PUT", "/api/v1/namespaces/default/pods/web/status",
      R"({"metadata":{"name":"web","resourceVersion":")" + rv +
          R"("},"spec":{"nodeName":"ignored","containers":[{"name":"c"}]},"status":{"phase":"Running"}})");
  REQUIRE(status_put.status == 200);
  auto updated = Json(status_put.body);
  CHECK(StringAt(updated, "status.phase") == "Running");
  CHECK(StringAt(updated, "spec.nodeName").empty());
  CHECK(StringAt(updated, "metadata.uid") == StringAt(pod, "metadata.uid"));

  HttpResponse merge = f.Call("PATCH", "/api/v1/namespaces/default/pods/web",
                              R"({"metadata":{"labels":{"x":"y"}},"status":{"phase":"Failed"}})",
                              "application/merge-patch+json");
  REQUIRE(merge.status == 200);
  CHECK(StringAt(Json(merge.body), "metadata.labels.x") == "y");
  CHECK(StringAt(Json(merge.body), "status.phase") == "Running");
}

TEST_CASE("delete honours uid preconditions and finalizers", "[testapi]") {
  Fixture f;
  REQUIRE(f.CreatePod("web").status == 201);
  HttpResponse wrong =
      f.Call("DELETE", "/api/v1/namespaces/default/pods/web",
             R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"nope"}})");
  CHECK(wrong.status == 409);
  CHECK(f.Call("DELETE", "/api/v1/namespaces/default/pods/web").status == 200);
  CHECK(f.Call("DELETE", "/api/v1/namespaces/default/pods/web").status == 404);

  REQUIRE(f.Call("POST", "/api/v1/namespaces/default/configmaps",
                 R"({"metadata":{"name":"cm","finalizers":["x/y"]}})")
              .status == 201);
  HttpResponse marked = f.Call("DELETE", "/api/v1/namespaces/default/configmaps/cm");
  CHECK(marked.status == 200);
  CHECK_FALSE(StringAt(Json(marked.body), "metadata.deletionTimestamp").empty());
  CHECK(f.Call("PATCH", "/api/v1/namespaces/default/configmaps/cm",
               R"({"metadata":{"finalizers":null}})", "application/merge-patch+json")
            .status == 200);
  CHECK(f.Call("GET", "/api/v1/namespaces/default/configmaps/cm").status == 404);
}

TEST_CASE("a write carrying another uid is refused as the real API refuses it", "[testapi]") {
  Fixture f;
  const std::string uid = StringAt(Json(f.CreatePod("web").body), "metadata.uid");
  HttpResponse stale =
      f.Call("PATCH", "/api/v1/namespaces/default/pods/web/status",
             R"({"metadata":{"uid":"a-deleted-predecessor"},"status":{"nominatedNodeName":"n"}})",
             "application/merge-patch+json");
  CHECK(stale.status == 409);
  CHECK(StringAt(Json(stale.body), "message").find("UID in precondition") != std::string::npos);
  HttpResponse same =
      f.Call("PATCH", "/api/v1/namespaces/default/pods/web/status",
             R"({"metadata":{"uid":")" + uid + R"("},"status":{"nominatedNodeName":"n"}})",
             "application/merge-patch+json");
  CHECK(same.status == 200);
  CHECK(StringAt(Json(same.body), "status.nominatedNodeName") == "n");
}

TEST_CASE("list paginates with continue tokens that expire with the history", "[testapi]") {
  Fixture f(/*history=*/5);
  for (int i = 0; i < 5; ++i) REQUIRE(f.CreatePod("p" + std::to_string(i)).status == 201);
  auto first = Json(f.Call("GET", "/api/v1/namespaces/default/pods?limit=2").body);
  CHECK(first["items"].Size() == 2);
  CHECK(first["metadata"]["remainingItemCount"].GetInt64() == 3);
  std::string token = StringAt(first, "metadata.continue");
  REQUIRE_FALSE(token.empty());
  auto second =
      Json(f.Call("GET", "/api/v1/namespaces/default/pods?limit=2&continue=" + token).body);
  CHECK(StringAt(second["items"][0], "metadata.name") == "p2");
  CHECK(StringAt(second, "metadata.resourceVersion") ==
        StringAt(first, "metadata.resourceVersion"));
  for (int i = 0; i < 6; ++i) REQUIRE(f.CreatePod("q" + std::to_string(i)).status == 201);
  HttpResponse expired = f.Call("GET", "/api/v1/namespaces/default/pods?limit=2&continue=" + token);
  CHECK(expired.status == 410);
  CHECK(StringAt(Json(expired.body), "reason") == "Expired");
  auto selected = Json(
      f.Call("GET", "/api/v1/pods?labelSelector=missing&fieldSelector=metadata.namespace=default")
          .body);
  CHECK(selected["items"].Size() == 0);
  CHECK(f.Call("GET", "/api/v1/pods?fieldSelector=spec.bogus=1").status == 400);
}

TEST_CASE("watch replays from a resourceVersion and answers 410 when it is too old", "[testapi]") {
  Fixture f(/*history=*/3);
  std::string rv = ResourceVersionOf(f.CreatePod("a").body);
  f.CreatePod("b");
  HttpResponse watch =
      f.Call("GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv);
  REQUIRE(watch.stream);
  watch.stream->Start([] {});
  auto lines = Fixture::Drain(watch);
  REQUIRE(lines.size() == 1);
  CHECK(absl::StrContains(lines[0], R"("type":"ADDED")"));
  CHECK(absl::StrContains(lines[0], R"("name":"b")"));
  CHECK(lines[0].back() == '\n');
  f.Call("DELETE", "/api/v1/namespaces/default/pods/a");
  lines = Fixture::Drain(watch);
  REQUIRE(lines.size() == 1);
  CHECK(absl::StrContains(lines[0], R"("type":"DELETED")"));

  for (const char* name : {"c", "d", "e", "f"}) f.CreatePod(name);
  HttpResponse too_old =
      f.Call("GET", "/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + rv);
  CHECK(too_old.status == 410);
  CHECK(StringAt(Json(too_old.body), "reason") == "Expired");

  HttpResponse from_now = f.Call("GET", "/api/v1/namespaces/default/pods?watch=true");
  REQUIRE(from_now.stream);
  from_now.stream->Start([] {});
  CHECK(Fixture::Drain(from_now).size() == 5);  // b c d e f as ADDED
}

TEST_CASE("watch with a selector turns matching transitions into ADDED/DELETED", "[testapi]") {
  Fixture f;
  f.CreatePod("web", R"({"app":"web"})");
  HttpResponse watch = f.Call(
      "GET", "/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dweb&resourceVersion=" +
                 std::to_string(f.store.current_resource_version()));
  REQUIRE(watch.stream);
  watch.stream->Start([] {});
  f.Call("PATCH", "/api/v1/namespaces/default/pods/web", R"({"metadata":{"labels":{"app":"db"}}})",
         "application/merge-patch+json");
  f.Call("PATCH", "/api/v1/namespaces/default/pods/web", R"({"metadata":{"labels":{"app":"web"}}})",
         "application/merge-patch+json");
  auto lines = Fixture::Drain(watch);
  REQUIRE(lines.size() == 2);
  CHECK(absl::StrContains(lines[0], R"("type":"DELETED")"));
  CHECK(absl::StrContains(lines[1], R"("type":"ADDED")"));
}

TEST_CASE("bookmarks carry only the resourceVersion", "[testapi]") {
  Fixture f(1000, ApiServerOptions{.bookmark_interval = absl::Milliseconds(1)});
  HttpResponse watch =
      f.Call("GET", "/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                        std::to_string(f.store.current_resource_version()));
  REQUIRE(watch.stream);
  watch.stream->Start([] {});
  absl::SleepFor(absl::Milliseconds(5));
  auto lines = Fixture::Drain(watch);
  REQUIRE(lines.size() == 1);
  auto event = Json(lines[0]);
  CHECK(StringAt(event, "type") == "BOOKMARK");
  CHECK(StringAt(event, "object.metadata.resourceVersion") ==
        std::to_string(f.store.current_resource_version()));
}

TEST_CASE("faults inject errors, expired watches and closed watches", "[testapi]") {
  Fixture f;
  f.faults.Set(*ParseFaultConfig(
      R"({"errors":[{"verb":"create","resource":"pods","code":429,"count":1}],
          "watchGone":{"count":1,"mode":"event"},"watchCloseAfterEvents":1})"));
  HttpResponse throttled = f.CreatePod("a");
  CHECK(throttled.status == 429);
  bool has_retry_after = false;
  for (const auto& [name, value] : throttled.headers) has_retry_after |= name == "Retry-After";
  CHECK(has_retry_after);
  CHECK(f.CreatePod("a").status == 201);

  HttpResponse gone = f.Call("GET", "/api/v1/pods?watch=1&resourceVersion=1");
  REQUIRE(gone.stream);
  auto output = gone.stream->Poll(absl::Now());
  CHECK(output.finished);
  REQUIRE(output.chunks.size() == 1);
  CHECK(StringAt(Json(output.chunks[0]), "type") == "ERROR");
  CHECK(Json(output.chunks[0])["object"]["code"].GetInt() == 410);

  f.CreatePod("b");
  HttpResponse watch = f.Call("GET", "/api/v1/pods?watch=1");
  REQUIRE(watch.stream);
  watch.stream->Start([] {});
  output = watch.stream->Poll(absl::Now());
  CHECK(output.chunks.size() == 1);
  CHECK(output.finished);
}

TEST_CASE("the state journal keeps objects and resourceVersions across restarts", "[testapi]") {
  std::string path = std::filesystem::temp_directory_path() /
                     ("testapi-state-" + std::to_string(getpid()) + ".jsonl");
  std::filesystem::remove(path);
  uint64_t rv_before = 0;
  {
    Store store(StoreOptions{.journal_path = path});
    REQUIRE(store.Open().ok());
    Faults faults;
    ApiServer api(&store, &faults, {});
    REQUIRE(api.Bootstrap().ok());
    REQUIRE(
        api.Handle({.method = "POST",
                    .target = "/api/v1/namespaces/default/pods",
                    .content_type = "application/json",
                    .body = R"({"metadata":{"name":"kept"},"spec":{"containers":[{"name":"c"}]}})"})
            .status == 201);
    REQUIRE(api.Handle({.method = "DELETE", .target = "/api/v1/namespaces/kube-public"}).status ==
            403);
    rv_before = store.current_resource_version();
    // No Checkpoint: the journal must be enough, as after a SIGKILL.
  }
  Store reopened(StoreOptions{.journal_path = path});
  REQUIRE(reopened.Open().ok());
  CHECK(reopened.current_resource_version() == rv_before);
  CHECK(reopened.Get(Pods(), "default", "kept").ok());
  CHECK(reopened.Count(Namespaces()) == 4);
  auto watcher = reopened.Watch(Pods(), "", rv_before - 1, [] {});
  CHECK(watcher.status().code() == absl::StatusCode::kOutOfRange);
  std::filesystem::remove(path);
}

// The body kubesched's event recorder posts to events.k8s.io/v1.
std::string EventsV1Event(const std::string& name, const std::string& pod_uid) {
  return R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":")" + name +
         R"(","namespace":"default"},"eventTime":"2024-01-01T00:00:00.000001Z",)"
         R"("reportingController":"kubesched","reportingInstance":"kubesched-0","action":"Binding",)"
         R"("reason":"Scheduled","regarding":{"apiVersion":"v1","kind":"Pod","namespace":"default",)"
         R"("name":"web","uid":")" +
         pod_uid + R"("},"note":"Successfully assigned default/web to n1","type":"Normal"})";
}

size_t ItemCount(Fixture& f, const std::string& target) {
  HttpResponse response = f.Call("GET", target);
  INFO(target << " -> " << response.body);
  REQUIRE(response.status == 200);
  return Json(response.body)["items"].Size();
}

TEST_CASE("an event created through events.k8s.io/v1 is a core v1 event too", "[testapi]") {
  Fixture f;
  std::string uid = StringAt(Json(f.CreatePod("web").body), "metadata.uid");
  HttpResponse created = f.Call("POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                                EventsV1Event("web.1", uid));
  REQUIRE(created.status == 201);
  auto as_events_v1 = Json(created.body);
  CHECK(StringAt(as_events_v1, "apiVersion") == "events.k8s.io/v1");
  CHECK(StringAt(as_events_v1, "note") == "Successfully assigned default/web to n1");
  CHECK(StringAt(as_events_v1, "regarding.uid") == uid);
  CHECK_FALSE(as_events_v1.HasMember("message"));
  CHECK_FALSE(as_events_v1.HasMember("deprecatedSource"));

  // What `kubectl describe pod web` asks for.
  std::string describe_query =
      "/api/v1/namespaces/default/events?fieldSelector=" +
      std::string("involvedObject.name%3Dweb,involvedObject.namespace%3D") +
      "default,involvedObject.uid%3D" + uid;
  auto listed = Json(f.Call("GET", describe_query).body);
  REQUIRE(listed["items"].Size() == 1);
  const rapidjson::Value& core = listed["items"][0];
  CHECK(StringAt(listed, "apiVersion") == "v1");
  CHECK(StringAt(core, "metadata.name") == "web.1");
  CHECK(StringAt(core, "metadata.resourceVersion") ==
        StringAt(as_events_v1, "metadata.resourceVersion"));
  CHECK(StringAt(core, "metadata.uid") == StringAt(as_events_v1, "metadata.uid"));
  CHECK(StringAt(core, "message") == "Successfully assigned default/web to n1");
  CHECK(StringAt(core, "involvedObject.kind") == "Pod");
  CHECK(StringAt(core, "reason") == "Scheduled");
  CHECK(StringAt(core, "type") == "Normal");
  CHECK(StringAt(core, "action") == "Binding");
  CHECK(StringAt(core, "eventTime") == "2024-01-01T00:00:00.000001Z");
  CHECK(StringAt(core, "reportingComponent") == "kubesched");
  CHECK(StringAt(core, "reportingInstance") == "kubesched-0");
  CHECK(StringAt(core, "source.component") == "kubesched");
  CHECK(StringAt(core, "source.host") == "kubesched-0");
  CHECK_FALSE(core.HasMember("note"));
  CHECK_FALSE(core.HasMember("regarding"));

  CHECK(StringAt(Json(f.Call("GET", "/api/v1/namespaces/default/events/web.1").body), "kind") ==
        "Event");
  CHECK(ItemCount(f,
                  "/api/v1/events?fieldSelector=involvedObject.kind%3DPod,reason%3DScheduled,"
                  "type%3DNormal,source%3Dkubesched,involvedObject.fieldPath%3D") == 1);
  CHECK(ItemCount(f, "/api/v1/events?fieldSelector=involvedObject.name%3Dother") == 0);
  CHECK(ItemCount(f,
                  "/apis/events.k8s.io/v1/events?fieldSelector=regarding.name%3Dweb,"
                  "regarding.namespace%3Ddefault,regarding.kind%3DPod,regarding.uid%3D" +
                      uid + ",reportingController%3Dkubesched,reason%3DScheduled") == 1);
  CHECK(ItemCount(f, "/apis/events.k8s.io/v1/events?fieldSelector=regarding.uid%3Dnope") == 0);
  CHECK(f.Call("GET", "/apis/events.k8s.io/v1/events?fieldSelector=involvedObject.name%3Dweb")
            .status == 400);

  SECTION("a series patch through events.k8s.io/v1 shows through core v1") {
    HttpResponse patched =
        f.Call("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/web.1",
               R"({"series":{"count":2,"lastObservedTime":"2024-01-01T00:01:00.000000Z"}})",
               "application/strategic-merge-patch+json");
    INFO(patched.body);
    REQUIRE(patched.status == 200);
    CHECK(StringAt(Json(patched.body), "apiVersion") == "events.k8s.io/v1");
    auto core_event = Json(f.Call("GET", "/api/v1/namespaces/default/events/web.1").body);
    CHECK(core_event["series"]["count"].GetInt() == 2);
    CHECK(StringAt(core_event, "metadata.resourceVersion") ==
          StringAt(Json(patched.body), "metadata.resourceVersion"));
    CHECK(StringAt(core_event, "message") == "Successfully assigned default/web to n1");
  }
  SECTION("a delete through core v1 removes it from events.k8s.io/v1") {
    REQUIRE(f.Call("DELETE", "/api/v1/namespaces/default/events/web.1").status == 200);
    CHECK(f.Call("GET", "/apis/events.k8s.io/v1/namespaces/default/events/web.1").status == 404);
  }
}

TEST_CASE("an event created through core v1 is an events.k8s.io/v1 event too", "[testapi]") {
  Fixture f;
  REQUIRE(
      f.Call("POST", "/api/v1/namespaces/default/events",
             R"({"metadata":{"name":"web.2"},"involvedObject":{"kind":"Pod","name":"web",)"
             R"("namespace":"default","fieldPath":"spec.containers{c}"},"reason":"Pulled",)"
             R"("message":"pulled","source":{"component":"kubelet","host":"n1"},"count":3,)"
             R"("firstTimestamp":"2024-01-01T00:00:00Z","lastTimestamp":"2024-01-01T00:02:00Z",)"
             R"("type":"Normal","custom":"kept"})")
          .status == 201);
  auto event = Json(f.Call("GET", "/apis/events.k8s.io/v1/namespaces/default/events/web.2").body);
  CHECK(StringAt(event, "apiVersion") == "events.k8s.io/v1");
  CHECK(StringAt(event, "regarding.fieldPath") == "spec.containers{c}");
  CHECK(StringAt(event, "note") == "pulled");
  CHECK(StringAt(event, "deprecatedSource.component") == "kubelet");
  CHECK(event["deprecatedCount"].GetInt() == 3);
  CHECK(StringAt(event, "deprecatedFirstTimestamp") == "2024-01-01T00:00:00Z");
  CHECK(StringAt(event, "deprecatedLastTimestamp") == "2024-01-01T00:02:00Z");
  CHECK(StringAt(event, "custom") == "kept");
  CHECK_FALSE(event.HasMember("involvedObject"));
  CHECK(ItemCount(f,
                  "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector="
                  "regarding.fieldPath%3Dspec.containers%7Bc%7D") == 1);
  CHECK(ItemCount(f, "/api/v1/events?fieldSelector=source%3Dkubelet") == 1);

  // A replace through events.k8s.io/v1, as the client saw the object there.
  SetString(event, "note", "pulled again", event.GetAllocator());
  HttpResponse replaced =
      f.Call("PUT", "/apis/events.k8s.io/v1/namespaces/default/events/web.2", Serialize(event));
  INFO(replaced.body);
  REQUIRE(replaced.status == 200);
  auto core = Json(f.Call("GET", "/api/v1/namespaces/default/events/web.2").body);
  CHECK(StringAt(core, "message") == "pulled again");
  CHECK(core["count"].GetInt() == 3);
  CHECK(StringAt(core, "source.host") == "n1");
  CHECK(StringAt(core, "metadata.resourceVersion") ==
        StringAt(Json(replaced.body), "metadata.resourceVersion"));
  CHECK(ItemCount(f, "/apis/events.k8s.io/v1/namespaces/default/events") == 1);
  CHECK(ItemCount(f, "/api/v1/namespaces/default/events") == 1);
}

TEST_CASE("a watch through one events view sees events written through the other", "[testapi]") {
  Fixture f;
  std::string rv = std::to_string(f.store.current_resource_version());
  HttpResponse core_watch =
      f.Call("GET",
             "/api/v1/namespaces/default/events?watch=1&fieldSelector=involvedObject.name%3Dweb&"
             "resourceVersion=" +
                 rv);
  HttpResponse events_v1_watch =
      f.Call("GET",
             "/apis/events.k8s.io/v1/events?watch=1&allowWatchBookmarks=true&"
             "fieldSelector=regarding.name%3Dweb&resourceVersion=" +
                 rv);
  REQUIRE(core_watch.stream);
  REQUIRE(events_v1_watch.stream);
  core_watch.stream->Start([] {});
  events_v1_watch.stream->Start([] {});

  REQUIRE(f.Call("POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                 EventsV1Event("web.1", "uid-1"))
              .status == 201);
  REQUIRE(f.Call("POST", "/api/v1/namespaces/default/events",
                 R"({"metadata":{"name":"web.2"},"involvedObject":{"kind":"Pod","name":"web",)"
                 R"("namespace":"default"},"reason":"Pulled","message":"pulled"})")
              .status == 201);

  auto core_lines = Fixture::Drain(core_watch);
  REQUIRE(core_lines.size() == 2);
  auto added = Json(core_lines[0]);
  CHECK(StringAt(added, "type") == "ADDED");
  CHECK(StringAt(added, "object.apiVersion") == "v1");
  CHECK(StringAt(added, "object.metadata.name") == "web.1");
  CHECK(StringAt(added, "object.message") == "Successfully assigned default/web to n1");

  auto events_v1_lines = Fixture::Drain(events_v1_watch);
  REQUIRE(events_v1_lines.size() == 2);
  added = Json(events_v1_lines[1]);
  CHECK(StringAt(added, "type") == "ADDED");
  CHECK(StringAt(added, "object.apiVersion") == "events.k8s.io/v1");
  CHECK(StringAt(added, "object.metadata.name") == "web.2");
  CHECK(StringAt(added, "object.note") == "pulled");
  CHECK(StringAt(added, "object.regarding.name") == "web");
}

TEST_CASE("discovery lists resources with short names", "[testapi]") {
  Fixture f;
  auto core = Json(f.Call("GET", "/api/v1").body);
  CHECK(StringAt(core, "kind") == "APIResourceList");
  bool found_binding = false;
  for (const auto& resource : core["resources"].GetArray()) {
    found_binding |= StringAt(resource, "name") == "pods/binding";
  }
  CHECK(found_binding);
  CHECK(absl::StrContains(f.Call("GET", "/apis").body, R"("name":"coordination.k8s.io")"));
  CHECK(f.Call("GET", "/apis/policy/v1").status == 200);
  CHECK(f.Call("GET", "/openapi/v3/apis/unknown.example/v1").status == 404);
}

TEST_CASE("bearer tokens are required when configured", "[testapi]") {
  Fixture f(1000, ApiServerOptions{.tokens = {"secret"}});
  CHECK(f.Call("GET", "/api/v1/pods").status == 401);
  HttpRequest request{.method = "GET", .target = "/api/v1/pods", .authorization = "Bearer secret"};
  CHECK(f.api.Handle(request).status == 200);
  CHECK(f.Call("GET", "/healthz").status == 200);
}

TEST_CASE("loading a cluster dump keeps the built-in namespaces and priority classes",
          "[testapi]") {
  Fixture f;
  std::ifstream file(KUBESCHED_SOURCE_DIR "/examples/cluster.yaml");
  std::stringstream text;
  text << file.rdbuf();
  REQUIRE(!text.str().empty());
  const absl::Status loaded = f.api.LoadObjects(text.str(), "examples/cluster.yaml");
  INFO(loaded.message());
  REQUIRE(loaded.ok());
  CHECK(f.Call("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical").status ==
        200);
  CHECK(f.store.Count(*FindResourceType("", "v1", "nodes")) == 20);
  // Anything else that already exists is still an error, naming the file.
  const absl::Status again = f.api.LoadObjects(text.str(), "examples/cluster.yaml");
  CHECK(absl::IsAlreadyExists(again));
  CHECK(absl::StrContains(again.message(), "examples/cluster.yaml"));
}

}  // namespace
}  // namespace kubesched::testapi

namespace kubesched::testapi {
namespace {

// What MostAvailable's poller lists in `run`: NodeMetrics loaded or POSTed, served by LIST.
TEST_CASE("node metrics can be loaded, created and listed", "[testapi][most_available]") {
  Fixture f;
  const absl::Status loaded = f.api.LoadObjects(
      "apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: n1}\n"
      "timestamp: '2024-05-01T10:00:00Z'\nwindow: 20s\nusage: {cpu: 250m, memory: 1Gi}\n",
      "metrics.yaml");
  INFO(loaded.message());
  REQUIRE(loaded.ok());
  HttpRequest create{.method = "POST",
                     .target = "/apis/metrics.k8s.io/v1beta1/nodes",
                     .content_type = "application/json",
                     .body = R"({"apiVersion":"metrics.k8s.io/v1beta1","kind":"NodeMetrics",)"
                             R"("metadata":{"name":"n2"},"timestamp":"2024-05-01T10:00:00Z",)"
                             R"("window":"20s","usage":{"cpu":"2","memory":"4Gi"}})"};
  CHECK(f.api.Handle(create).status == 201);
  const auto list = f.Call("GET", "/apis/metrics.k8s.io/v1beta1/nodes");
  REQUIRE(list.status == 200);
  CHECK(absl::StrContains(list.body, R"("name":"n1")"));
  CHECK(absl::StrContains(list.body, R"("cpu":"250m")"));
  CHECK(absl::StrContains(list.body, R"("name":"n2")"));
}

}  // namespace
}  // namespace kubesched::testapi
