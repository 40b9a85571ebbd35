#include "scheduler/client/reflector.h"

#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "scheduler/util/clock.h"
#include "scheduler/util/log.h"
#include "tests/scheduler/client/scripted_api_server.h"
#include "tests/testing/wait.h"

namespace kubesched::client {
namespace {

using test::BadPodJson;
using test::BookmarkLine;
using test::Gone;
using test::ListBody;
using test::Ok;
using test::PodJson;
using test::ScriptedApiServer;
using test::StatusJson;
using test::WatchLine;
using test::WatchScript;
using testing::WaitUntil;

constexpr char kPods[] = "/api/v1/pods";
constexpr char kEncodedPodSelector[] =
    "fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";

// What a test needs to know about one delivered event.
struct Seen {
  EventType type;
  std::string key;
  std::string resource_version;
  std::string old_resource_version;  // kModified only

  bool operator==(const Seen&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Seen& seen) {
  const char* type = seen.type == EventType::kAdded      ? "ADDED"
                     : seen.type == EventType::kModified ? "MODIFIED"
                                                         : "DELETED";
  out << type << " " << seen.key << "@" << seen.resource_version;
  if (!seen.old_resource_version.empty()) out << " (was @" << seen.old_resource_version << ")";
  return out;
}

const api::ObjectMeta& Meta(const api::Object& object) {
  return std::visit([](const auto& typed) -> const api::ObjectMeta& { return typed.meta; }, object);
}

class EventLog {
 public:
  void Record(const ObjectEvent& event) {
    const api::ObjectMeta& meta = Meta(*event.object);
    Seen seen{
        event.type, meta.namespace_name.empty() ? meta.name : meta.namespace_name + "/" + meta.name,
        meta.resource_version, event.old_object ? Meta(*event.old_object).resource_version : ""};
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(seen));
  }
  std::vector<Seen> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  size_t size() const { return events().size(); }

 private:
  mutable std::mutex mu_;
  std::vector<Seen> events_;
};

ReflectorOptions FastOptions() {
  ReflectorOptions options;
  options.page_size = 2;
  options.backoff_initial = absl::Milliseconds(1);
  options.backoff_max = absl::Milliseconds(4);
  return options;
}

// A reflector of pods running on its own thread for the duration of a test.
class RunningReflector {
 public:
  RunningReflector(ScriptedApiServer& server, ReflectorOptions options = FastOptions())
      : reflector_(
            PodResourceKind(), server.transport(),
            [this](const ObjectEvent& event) { log_.Record(event); }, options),
        thread_([this](std::stop_token stop) { reflector_.Run(stop); }) {}

  Reflector& reflector() { return reflector_; }
  const EventLog& log() const { return log_; }

 private:
  EventLog log_;
  Reflector reflector_;
  std::jthread thread_;  // last: stopped and joined before the reflector goes
};

Seen Added(std::string key, std::string rv) { return {EventType::kAdded, key, rv, ""}; }
Seen Modified(std::string key, std::string old_rv, std::string rv) {
  return {EventType::kModified, key, rv, old_rv};
}
Seen Deleted(std::string key, std::string rv) { return {EventType::kDeleted, key, rv, ""}; }

std::string Pod(std::string name) { return "default/" + name; }

// Holds the process's client log sink for a test.
class CapturedLog {
 public:
  CapturedLog() {
    util::SetLogSinkForTesting([this](std::string_view level, std::string_view message) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(std::string(level) + " " + std::string(message));
    });
  }
  ~CapturedLog() { util::SetLogSinkForTesting(nullptr); }
  std::vector<std::string> LinesContaining(std::string_view text) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> matching;
    for (const std::string& line : lines_) {
      if (line.find(text) != std::string::npos) matching.push_back(line);
    }
    return matching;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("query values are percent-encoded except unreserved characters", "[reflector]") {
  CHECK(UrlEncodeQueryValue("status.phase!=Succeeded,status.phase!=Failed") ==
        "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
  CHECK(UrlEncodeQueryValue("a b/c?d&e=f+g~h_i-j.k") == "a%20b%2Fc%3Fd%26e%3Df%2Bg~h_i-j.k");
  CHECK(UrlEncodeQueryValue("\xC3\xA9") == "%C3%A9");
  CHECK(UrlEncodeQueryValue("") == "");
}

TEST_CASE("the watched kinds have the API paths and the pod selector", "[reflector]") {
  CHECK(PodResourceKind().list_path == "/api/v1/pods");
  CHECK(PodResourceKind().field_selector == "status.phase!=Succeeded,status.phase!=Failed");
  CHECK(NodeResourceKind().list_path == "/api/v1/nodes");
  CHECK(NamespaceResourceKind().list_path == "/api/v1/namespaces");
  CHECK(PriorityClassResourceKind().list_path == "/apis/scheduling.k8s.io/v1/priorityclasses");
  CHECK(PodDisruptionBudgetResourceKind().list_path == "/apis/policy/v1/poddisruptionbudgets");
  CHECK(ConfigMapResourceKind("kube-system").list_path ==
        "/api/v1/namespaces/kube-system/configmaps");
}

TEST_CASE("a list of three pages is delivered as ADDED in order, then watched from its version",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("100", {PodJson("a", "1"), PodJson("b", "2")}, "tok 1")));
  server.QueueList(kPods, Ok(ListBody("100", {PodJson("c", "3"), PodJson("d", "4")}, "tok2")));
  server.QueueList(kPods, Ok(ListBody("100", {PodJson("e", "5")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 1; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "1"), Added(Pod("b"), "2"),
                                                    Added(Pod("c"), "3"), Added(Pod("d"), "4"),
                                                    Added(Pod("e"), "5")});
  CHECK(running.reflector().HasSynced());

  const std::vector<std::string> lists = server.ListTargets(kPods);
  REQUIRE(lists.size() == 3);
  CHECK(lists[0] == std::string(kPods) + "?" + kEncodedPodSelector + "&limit=2");
  CHECK(lists[1] == std::string(kPods) + "?" + kEncodedPodSelector + "&limit=2&continue=tok%201");
  CHECK(lists[2] == std::string(kPods) + "?" + kEncodedPodSelector + "&limit=2&continue=tok2");

  const std::string watch = server.WatchTargets(kPods)[0];
  CHECK(absl::StartsWith(watch, std::string(kPods) + "?" + kEncodedPodSelector + "&watch=true"));
  CHECK(Contains(watch, "&resourceVersion=100&"));
  CHECK(Contains(watch, "&allowWatchBookmarks=true&"));
  const size_t timeout_at = watch.find("timeoutSeconds=");
  REQUIRE(timeout_at != std::string::npos);
  const int timeout_seconds = std::stoi(watch.substr(timeout_at + 15));
  CHECK(timeout_seconds >= 300);
  CHECK(timeout_seconds < 600);

  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.kind == "Pod");
  CHECK(stats.lists == 1);
  CHECK(stats.relists == 0);
  CHECK(stats.events == 5);
  CHECK(stats.last_resource_version == "100");
}

TEST_CASE("watch events are applied and a bookmark sets the next watch's resourceVersion",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("10", {PodJson("a", "10")})));
  server.QueueWatch(kPods,
                    WatchScript{{WatchLine("ADDED", PodJson("b", "11")),
                                 WatchLine("MODIFIED", PodJson("a", "12")),
                                 WatchLine("DELETED", PodJson("b", "13")), BookmarkLine("20")}});
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "10"), Added(Pod("b"), "11"),
                                                    Modified(Pod("a"), "10", "12"),
                                                    Deleted(Pod("b"), "13")});
  const std::vector<std::string> watches = server.WatchTargets(kPods);
  CHECK(Contains(watches[0], "resourceVersion=10&"));
  CHECK(Contains(watches[1], "resourceVersion=20&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.last_resource_version == "20");
  CHECK(stats.watch_errors == 0);
  CHECK(stats.events == 4);
}

TEST_CASE("after a normal end or a connection error the watch resumes from the last version",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("10", {})));
  server.QueueWatch(kPods, WatchScript{{WatchLine("ADDED", PodJson("a", "15"))}});
  server.QueueWatch(kPods, WatchScript{{WatchLine("ADDED", PodJson("b", "16"))},
                                       absl::UnavailableError("connection reset by peer")});
  server.QueueWatch(
      kPods,
      WatchScript{{}, HttpResponse{500, StatusJson(500, "InternalError", "etcd unavailable")}});
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 4; }));
  const std::vector<std::string> watches = server.WatchTargets(kPods);
  CHECK(Contains(watches[0], "resourceVersion=10&"));
  CHECK(Contains(watches[1], "resourceVersion=15&"));
  CHECK(Contains(watches[2], "resourceVersion=16&"));
  CHECK(Contains(watches[3], "resourceVersion=16&"));  // the 500 carried no events
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "15"), Added(Pod("b"), "16")});
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.watch_errors == 2);
  CHECK(stats.lists == 1);  // errors re-watch, they do not relist
}

TEST_CASE("HTTP 410 on a watch relists and delivers exactly the difference", "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods,
                   Ok(ListBody("5", {PodJson("a", "1"), PodJson("b", "1"), PodJson("c", "1")})));
  server.QueueWatch(kPods, WatchScript{{}, Gone()});
  server.QueueList(kPods,
                   Ok(ListBody("9", {PodJson("a", "1"), PodJson("b", "7"), PodJson("d", "8")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "1"), Added(Pod("b"), "1"),
                                                    Added(Pod("c"), "1"),
                                                    Modified(Pod("b"), "1", "7"),
                                                    Added(Pod("d"), "8"), Deleted(Pod("c"), "1")});
  const std::vector<std::string> lists = server.ListTargets(kPods);
  REQUIRE(lists.size() == 2);
  CHECK(lists[1] == lists[0]);  // a fresh, consistent list: no version, no continue token
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=9&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.lists == 2);
  CHECK(stats.relists == 1);
  CHECK(stats.watch_errors == 0);
}

TEST_CASE("an ERROR event with a 410 Status relists, and the rest of that stream is ignored",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("5", {PodJson("a", "4"), PodJson("b", "5")})));
  server.QueueWatch(
      kPods,
      WatchScript{{WatchLine("MODIFIED", PodJson("a", "6")),
                   WatchLine("ERROR", StatusJson(410, "Expired", "too old resource version")),
                   WatchLine("ADDED", PodJson("z", "7"))}});
  server.QueueList(kPods, Ok(ListBody("10", {PodJson("a", "6"), PodJson("c", "8")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "4"), Added(Pod("b"), "5"),
                                                    Modified(Pod("a"), "4", "6"),
                                                    Added(Pod("c"), "8"), Deleted(Pod("b"), "5")});
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=10&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.relists == 1);
  CHECK(stats.lists == 2);
}

TEST_CASE("an ERROR event other than 410 re-watches from the last version without relisting",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("5", {})));
  server.QueueWatch(kPods,
                    WatchScript{{WatchLine("ADDED", PodJson("a", "6")),
                                 WatchLine("ERROR", StatusJson(500, "InternalError", "boom")),
                                 WatchLine("ADDED", PodJson("z", "7"))}});
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "6")});
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=6&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.watch_errors == 1);
  CHECK(stats.lists == 1);
  CHECK(stats.relists == 0);
}

TEST_CASE("a continue token that expires mid-list restarts the list in one request",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("20", {PodJson("a", "1"), PodJson("b", "2")}, "t1")));
  server.QueueList(kPods, Gone());
  server.QueueList(kPods,
                   Ok(ListBody("30", {PodJson("a", "1"), PodJson("b", "2"), PodJson("c", "3")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 1; }));
  CHECK(running.log().events() ==
        std::vector<Seen>{Added(Pod("a"), "1"), Added(Pod("b"), "2"), Added(Pod("c"), "3")});
  const std::vector<std::string> lists = server.ListTargets(kPods);
  REQUIRE(lists.size() == 3);
  CHECK(Contains(lists[1], "continue=t1"));
  CHECK(lists[2] == std::string(kPods) + "?" + kEncodedPodSelector);  // no limit, no continue
  CHECK(Contains(server.WatchTargets(kPods)[0], "resourceVersion=30&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.lists == 1);
  CHECK(stats.relists == 0);
}

TEST_CASE("objects that do not decode are counted and skipped, a stored one is kept",
          "[reflector]") {
  CapturedLog captured;
  ScriptedApiServer server;
  server.QueueList(kPods,
                   Ok(ListBody("1", {PodJson("a", "1"), BadPodJson("x", "1"), PodJson("c", "1")})));
  server.QueueWatch(kPods,
                    WatchScript{{"this is not JSON", WatchLine("ADDED", BadPodJson("y", "2")),
                                 WatchLine("ADDED", PodJson("d", "2")),
                                 WatchLine("MODIFIED", BadPodJson("a", "3"))},
                                Gone()});
  // The relist still has the undecodable `a`: the stored `a` must not be reported deleted.
  server.QueueList(kPods,
                   Ok(ListBody("4", {BadPodJson("a", "3"), PodJson("c", "1"), PodJson("d", "2")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() ==
        std::vector<Seen>{Added(Pod("a"), "1"), Added(Pod("c"), "1"), Added(Pod("d"), "2")});
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.decode_errors == 5);     // x, the non-JSON line, y, a modified, a relisted
  CHECK(stats.rejected_objects == 3);  // x, y, a@3: the relist repeats a@3
  CHECK(stats.relists == 1);
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=4&"));
  // Each skipped object version is logged by name, once.
  CHECK(captured.LinesContaining("Pod default/x").size() == 1);
  CHECK(captured.LinesContaining("Pod default/y").size() == 1);
  CHECK(captured.LinesContaining("Pod default/a").size() == 1);
}

TEST_CASE("a new version of a rejected object is logged again, a repeated one is not",
          "[reflector]") {
  CapturedLog captured;
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("1", {BadPodJson("x", "1")})));
  server.QueueWatch(kPods, WatchScript{{WatchLine("ADDED", BadPodJson("x", "1")),
                                        WatchLine("MODIFIED", BadPodJson("x", "2"))}});
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(captured.LinesContaining("Pod default/x").size() == 2);
  CHECK(running.reflector().Stats().rejected_objects == 2);
  CHECK(running.reflector().Stats().decode_errors == 3);
}

std::string TooLargeStatusJson(const std::string& requested, const std::string& current) {
  return absl::StrCat(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)",
      R"("message":"Timeout: Too large resource version: )", requested, ", current: ", current,
      R"(","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge",)",
      R"("message":"Too large resource version"}],"retryAfterSeconds":1},"code":504})");
}

int64_t Relists(const ReflectorStats& stats, RelistReason reason) {
  return stats.relists_by_reason[static_cast<size_t>(reason)];
}

TEST_CASE("a watch answered 504 Too large resource version relists and drops the vanished",
          "[reflector]") {
  CapturedLog captured;
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("500", {PodJson("a", "400"), PodJson("b", "450")})));
  server.QueueWatch(kPods, WatchScript{{}, HttpResponse{504, TooLargeStatusJson("500", "6")}});
  // The server lost its state: `a` exists again at a lower version, `b` is gone, `c` is new.
  server.QueueList(kPods, Ok(ListBody("7", {PodJson("a", "5"), PodJson("c", "6")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "400"), Added(Pod("b"), "450"),
                                                    Modified(Pod("a"), "400", "5"),
                                                    Added(Pod("c"), "6"),
                                                    Deleted(Pod("b"), "450")});
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=7&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.relists == 1);
  CHECK(Relists(stats, RelistReason::kTooLarge) == 1);
  CHECK(stats.watch_errors == 0);
  CHECK(captured.LinesContaining("listing /api/v1/pods again (too_large)").size() == 1);
}

TEST_CASE("an ERROR event saying the resourceVersion is too large relists", "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("500", {PodJson("a", "400")})));
  server.QueueWatch(kPods, WatchScript{{WatchLine("ERROR", TooLargeStatusJson("500", "3"))}});
  server.QueueList(kPods, Ok(ListBody("3", {})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() ==
        std::vector<Seen>{Added(Pod("a"), "400"), Deleted(Pod("a"), "400")});
  CHECK(Relists(running.reflector().Stats(), RelistReason::kTooLarge) == 1);
}

TEST_CASE("a BOOKMARK below the last resourceVersion seen relists, and the stream is left",
          "[reflector]") {
  CapturedLog captured;
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("500", {PodJson("a", "400")})));
  server.QueueWatch(kPods, WatchScript{{BookmarkLine("501"), BookmarkLine("9"),
                                        WatchLine("ADDED", PodJson("z", "10"))}});
  server.QueueList(kPods, Ok(ListBody("12", {PodJson("d", "11")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() ==
        std::vector<Seen>{Added(Pod("a"), "400"), Added(Pod("d"), "11"), Deleted(Pod("a"), "400")});
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=12&"));
  const ReflectorStats stats = running.reflector().Stats();
  CHECK(stats.relists == 1);
  CHECK(Relists(stats, RelistReason::kBookmarkWentBack) == 1);
  CHECK(captured.LinesContaining("resourceVersion 9, below the 501 already seen").size() == 1);
}

TEST_CASE("a due resync relists, and watches end when it is due", "[reflector]") {
  util::FakeClock clock(absl::FromUnixSeconds(1000));
  ReflectorOptions options = FastOptions();
  options.clock = &clock;
  options.resync_interval = absl::Seconds(90);
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("5", {PodJson("a", "4")})));
  server.QueueWatch(
      kPods, WatchScript{.lines = {}, .on_start = [&clock] { clock.Advance(absl::Seconds(90)); }});
  server.QueueList(kPods, Ok(ListBody("8", {PodJson("a", "4")})));
  RunningReflector running(server, options);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(Contains(server.WatchTargets(kPods)[0], "timeoutSeconds=90"));
  CHECK(Contains(server.WatchTargets(kPods)[1], "resourceVersion=8&"));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "4")});
  CHECK(Relists(running.reflector().Stats(), RelistReason::kResync) == 1);
}

TEST_CASE("a DELETED event whose object does not decode still deletes the stored object",
          "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("1", {PodJson("a", "1")})));
  server.QueueWatch(kPods, WatchScript{{WatchLine("DELETED", BadPodJson("a", "2"))}});
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 2; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "1"), Deleted(Pod("a"), "1")});
  CHECK(running.reflector().Stats().decode_errors == 1);
}

TEST_CASE("events replayed after a re-watch are applied idempotently", "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPods, Ok(ListBody("1", {})));
  server.QueueWatch(kPods, WatchScript{{WatchLine("ADDED", PodJson("a", "2"))}});
  server.QueueWatch(kPods, WatchScript{{WatchLine("ADDED", PodJson("a", "2")),       // duplicate
                                        WatchLine("ADDED", PodJson("a", "3")),       // -> MODIFIED
                                        WatchLine("MODIFIED", PodJson("b", "4")),    // -> ADDED
                                        WatchLine("DELETED", PodJson("z", "5"))}});  // unknown
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 3; }));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "2"),
                                                    Modified(Pod("a"), "2", "3"),
                                                    Added(Pod("b"), "4")});
  CHECK(Contains(server.WatchTargets(kPods)[2], "resourceVersion=5&"));
}

TEST_CASE("a failing initial list is retried, and each distinct failure is logged once",
          "[reflector]") {
  CapturedLog captured;
  ScriptedApiServer server;
  const HttpResponse forbidden{
      403, StatusJson(403, "Forbidden",
                      "pods is forbidden: User \\\"system:serviceaccount:kube-system:kubesched\\\" "
                      "cannot list resource \\\"pods\\\"")};
  for (int i = 0; i < 3; ++i) server.QueueList(kPods, forbidden);
  server.QueueList(kPods, absl::UnavailableError("connect to 10.0.0.1:6443: connection refused"));
  server.QueueList(kPods, absl::UnavailableError("connect to 10.0.0.1:6443: connection refused"));
  server.QueueList(kPods, Ok(ListBody("7", {PodJson("a", "1")})));
  RunningReflector running(server);

  REQUIRE(WaitUntil([&] { return running.reflector().HasSynced(); }));
  CHECK(server.ListTargets(kPods).size() == 6);
  const std::vector<std::string> failures = captured.LinesContaining("Pod reflector: list");
  REQUIRE(failures.size() == 2);
  CHECK(Contains(failures[0], "W "));
  CHECK(Contains(failures[0], "pods is forbidden: User"));
  CHECK(Contains(failures[0], "(HTTP 403)"));
  CHECK(Contains(failures[0], "RBAC"));
  CHECK(Contains(failures[1], "connection refused"));
  CHECK(running.log().events() == std::vector<Seen>{Added(Pod("a"), "1")});
}

TEST_CASE("a reflector stops promptly while its watch is open or while it backs off",
          "[reflector]") {
  ScriptedApiServer server;
  ReflectorOptions slow = FastOptions();
  slow.backoff_initial = absl::Minutes(5);
  slow.backoff_max = absl::Minutes(5);

  SECTION("watching") {
    auto running = std::make_unique<RunningReflector>(server, slow);
    REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 1; }));
    const absl::Time before = absl::Now();
    running.reset();
    CHECK(absl::Now() - before < absl::Seconds(1));
  }
  SECTION("backing off after a failed list") {
    server.QueueList(kPods, HttpResponse{500, ""});
    CapturedLog quiet;
    auto running = std::make_unique<RunningReflector>(server, slow);
    REQUIRE(WaitUntil([&] { return server.ListTargets(kPods).size() == 1; }));
    const absl::Time before = absl::Now();
    running.reset();
    CHECK(absl::Now() - before < absl::Seconds(1));
    CHECK(server.ListTargets(kPods).size() == 1);
  }
}

}  // namespace
}  // namespace kubesched::client
