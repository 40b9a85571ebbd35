#include "scheduler/client/event_recorder.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "scheduler/util/log.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;
using testing::PodBuilder;

// 2026-01-02T03:04:05.123456789Z
const absl::Time kStart = absl::FromUnixSeconds(1767323045) + absl::Nanoseconds(123456789);

void AnswerWith(FakeTransport& transport, int status) {
  transport.OnDo([status](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{status, "{}"};
  });
}

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document document;
  document.Parse(text.c_str());
  REQUIRE(document.IsObject());
  return document;
}

std::string Str(const rapidjson::Value& value) {
  REQUIRE(value.IsString());
  return std::string(value.GetString(), value.GetStringLength());
}

// "<pod>.<16 lowercase hex digits>", as client-go names events.
bool IsEventName(const std::string& name, const std::string& pod) {
  const std::string prefix = pod + ".";
  if (name.size() != prefix.size() + 16 || name.compare(0, prefix.size(), prefix) != 0) {
    return false;
  }
  return name.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
}

EventRecorderOptions Options() {
  EventRecorderOptions options;
  options.reporting_instance = "host-a_1234";
  options.sweep_interval = absl::ZeroDuration();  // the tests sweep on the fake clock
  return options;
}

// Records through a started recorder and returns the requests once all were sent.
struct Harness {
  explicit Harness(EventRecorderOptions options = Options())
      : clock(kStart), recorder(&transport, &clock, std::move(options)) {
    AnswerWith(transport, 201);
    recorder.Start();
  }
  std::vector<HttpRequest> Flush() {
    recorder.Stop(absl::Seconds(10));
    return transport.requests();
  }
  FakeTransport transport;
  util::FakeClock clock;
  EventRecorder recorder;
};

TEST_CASE("TruncateEventNote keeps notes up to 1024 bytes", "[writer]") {
  const std::string exact(1024, 'a');
  CHECK(TruncateEventNote(exact) == exact);
  CHECK(TruncateEventNote("short") == "short");
  CHECK(TruncateEventNote("") == "");
}

TEST_CASE("TruncateEventNote cuts at byte 1020 and appends ' ...'", "[writer]") {
  const std::string long_note = std::string(1020, 'a') + "bbbbb";  // 1025 bytes
  const std::string truncated = TruncateEventNote(long_note);
  CHECK(truncated.size() == 1024);
  CHECK(truncated == std::string(1020, 'a') + " ...");
}

TEST_CASE("TruncateEventNote never splits a UTF-8 sequence", "[writer]") {
  // "é" is 2 bytes, "€" 3, "😀" 4; place each so that byte 1020 falls inside it.
  for (const std::string character : {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    const std::string prefix(1019, 'a');
    const std::string note = prefix + character + std::string(100, 'z');
    const std::string truncated = TruncateEventNote(note);
    INFO("character of " << character.size() << " bytes");
    CHECK(truncated == prefix + " ...");
  }
  // A character that ends exactly at byte 1020 is kept.
  const std::string prefix(1018, 'a');
  const std::string note = prefix + "\xC3\xA9" + std::string(100, 'z');
  CHECK(TruncateEventNote(note) == prefix + "\xC3\xA9 ...");
}

TEST_CASE("Scheduled event body follows events.k8s.io/v1", "[writer]") {
  Harness h;
  const api::Pod pod = PodBuilder("web-1", "shop").Build();
  CHECK(h.recorder.Scheduled(pod, "node-9"));
  const auto requests = h.Flush();

  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].target == "/apis/events.k8s.io/v1/namespaces/shop/events");
  CHECK(requests[0].content_type == "application/json");
  const rapidjson::Document body = Parse(requests[0].body);
  CHECK(Str(body["apiVersion"]) == "events.k8s.io/v1");
  CHECK(Str(body["kind"]) == "Event");
  CHECK(IsEventName(Str(body["metadata"]["name"]), "web-1"));
  CHECK(Str(body["metadata"]["namespace"]) == "shop");
  CHECK(Str(body["eventTime"]) == "2026-01-02T03:04:05.123456Z");
  CHECK(Str(body["reportingController"]) == "kubesched");
  CHECK(Str(body["reportingInstance"]) == "host-a_1234");
  CHECK(Str(body["action"]) == "Binding");
  CHECK(Str(body["reason"]) == "Scheduled");
  CHECK(Str(body["type"]) == "Normal");
  CHECK(Str(body["note"]) == "Successfully assigned shop/web-1 to node-9");
  const rapidjson::Value& regarding = body["regarding"];
  CHECK(Str(regarding["apiVersion"]) == "v1");
  CHECK(Str(regarding["kind"]) == "Pod");
  CHECK(Str(regarding["namespace"]) == "shop");
  CHECK(Str(regarding["name"]) == "web-1");
  CHECK(Str(regarding["uid"]) == pod.meta.uid);
  CHECK_FALSE(body.HasMember("related"));
  CHECK(h.recorder.sent() == 1);
}

TEST_CASE("an event about a ConfigMap names it as the regarding object", "[writer]") {
  Harness h;
  api::ObjectMeta map;
  map.namespace_name = "queue-config";
  map.name = "kubesched-queues";
  map.uid = "map-uid";
  CHECK(h.recorder.RecordAbout("ConfigMap", map, EventKind::kWarning, "QueueConfigRejected",
                               "Reload", "queues.tree[0] (root.a).max.cpu: bad"));
  const auto requests = h.Flush();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].target == "/apis/events.k8s.io/v1/namespaces/queue-config/events");
  const rapidjson::Document body = Parse(requests[0].body);
  CHECK(IsEventName(Str(body["metadata"]["name"]), "kubesched-queues"));
  CHECK(Str(body["type"]) == "Warning");
  CHECK(Str(body["reason"]) == "QueueConfigRejected");
  CHECK(Str(body["action"]) == "Reload");
  const rapidjson::Value& regarding = body["regarding"];
  CHECK(Str(regarding["kind"]) == "ConfigMap");
  CHECK(Str(regarding["name"]) == "kubesched-queues");
  CHECK(Str(regarding["uid"]) == "map-uid");
}

TEST_CASE("FailedScheduling is a Warning whose note is truncated and escaped", "[writer]") {
  Harness h;
  const std::string message = "0/2 nodes: \"quoted\"\nnext line " + std::string(2000, 'x');
  CHECK(h.recorder.FailedScheduling(PodBuilder("p").Build(), message));
  const auto requests = h.Flush();
  REQUIRE(requests.size() == 1);
  const rapidjson::Document body = Parse(requests[0].body);
  CHECK(Str(body["type"]) == "Warning");
  CHECK(Str(body["reason"]) == "FailedScheduling");
  CHECK(Str(body["action"]) == "Scheduling");
  CHECK(Str(body["note"]) == message.substr(0, 1020) + " ...");
}

TEST_CASE("Preempted names the preemptor's UID and relates it", "[writer]") {
  Harness h;
  const api::Pod victim = PodBuilder("low", "ns").Build();
  const api::Pod preemptor = PodBuilder("high", "ns").Build();
  CHECK(h.recorder.Preempted(victim, preemptor, "n1"));
  const auto requests = h.Flush();
  REQUIRE(requests.size() == 1);
  const rapidjson::Document body = Parse(requests[0].body);
  CHECK(Str(body["reason"]) == "Preempted");
  CHECK(Str(body["action"]) == "Preempting");
  CHECK(Str(body["type"]) == "Normal");
  CHECK(Str(body["note"]) == "Preempted by pod " + preemptor.meta.uid + " on node n1");
  CHECK(Str(body["regarding"]["name"]) == "low");
  CHECK(Str(body["related"]["name"]) == "high");
  CHECK(Str(body["related"]["uid"]) == preemptor.meta.uid);
}

TEST_CASE("events at the same instant get distinct names", "[writer]") {
  Harness h;
  const api::Pod pod = PodBuilder("p").Build();
  CHECK(h.recorder.Scheduled(pod, "n1"));
  CHECK(h.recorder.FailedScheduling(pod, "m"));
  const auto requests = h.Flush();
  REQUIRE(requests.size() == 2);
  CHECK(Str(Parse(requests[0].body)["metadata"]["name"]) !=
        Str(Parse(requests[1].body)["metadata"]["name"]));
}

TEST_CASE("events are rate-limited per pod with a token bucket", "[writer]") {
  Harness h;  // burst 3, one more every 30 s
  const api::Pod noisy = PodBuilder("noisy").Build();
  const api::Pod quiet = PodBuilder("quiet").Build();
  CHECK(h.recorder.FailedScheduling(noisy, "1"));
  CHECK(h.recorder.FailedScheduling(noisy, "2"));
  CHECK(h.recorder.FailedScheduling(noisy, "3"));
  CHECK_FALSE(h.recorder.FailedScheduling(noisy, "4"));
  CHECK(h.recorder.FailedScheduling(quiet, "other pods are not affected"));

  h.clock.Advance(absl::Seconds(29));
  CHECK_FALSE(h.recorder.FailedScheduling(noisy, "5"));
  h.clock.Advance(absl::Seconds(1));
  CHECK(h.recorder.FailedScheduling(noisy, "6"));
  CHECK_FALSE(h.recorder.FailedScheduling(noisy, "7"));

  CHECK(h.recorder.rate_limited() == 3);
  CHECK(h.Flush().size() == 5);
}

TEST_CASE("rate limiter memory is bounded, idle objects are forgotten first", "[writer]") {
  EventRecorderOptions options = Options();
  options.max_tracked_objects = 4;
  Harness h(options);
  const api::Pod busy = PodBuilder("busy").Build();
  for (int i = 0; i < 3; ++i) CHECK(h.recorder.FailedScheduling(busy, "m" + std::to_string(i)));
  for (const char* name : {"a", "b", "c"})
    CHECK(h.recorder.Scheduled(PodBuilder(name).Build(), "n"));
  CHECK(h.recorder.tracked_objects() == 4);

  // a, b, c refill in 30 s; busy needs 90 s. A new pod evicts only the full buckets.
  h.clock.Advance(absl::Seconds(60));
  CHECK(h.recorder.Scheduled(PodBuilder("d").Build(), "n"));
  CHECK(h.recorder.tracked_objects() == 2);
  CHECK(h.recorder.FailedScheduling(busy, "x1"));
  CHECK(h.recorder.FailedScheduling(busy, "x2"));
  CHECK_FALSE(h.recorder.FailedScheduling(busy, "x3"));  // busy kept its state

  // All busy: the least recently used go, and the map stays within its cap.
  for (int i = 0; i < 100; ++i) {
    h.clock.Advance(absl::Milliseconds(1));
    h.recorder.FailedScheduling(PodBuilder("pod-" + std::to_string(i)).Build(), "m");
    CHECK(h.recorder.tracked_objects() <= 4);
  }
}

TEST_CASE("Record returns at once while the transport is stuck", "[writer]") {
  EventRecorderOptions options = Options();
  options.queue_capacity = 2;
  FakeTransport transport;
  absl::Notification entered;
  absl::Notification release;
  transport.OnDo([&](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    if (!entered.HasBeenNotified()) entered.Notify();
    release.WaitForNotification();
    return HttpResponse{201, "{}"};
  });
  util::FakeClock clock(kStart);
  EventRecorder recorder(&transport, &clock, options);
  recorder.Start();

  const absl::Time before = absl::Now();
  CHECK(recorder.Scheduled(PodBuilder("p0").Build(), "n"));
  entered.WaitForNotification();  // the worker is stuck in the first POST
  CHECK(recorder.Scheduled(PodBuilder("p1").Build(), "n"));
  CHECK(recorder.Scheduled(PodBuilder("p2").Build(), "n"));
  CHECK_FALSE(recorder.Scheduled(PodBuilder("p3").Build(), "n"));  // queue full
  CHECK_FALSE(recorder.Scheduled(PodBuilder("p4").Build(), "n"));
  CHECK(absl::Now() - before < absl::Seconds(2));
  CHECK(recorder.queue_dropped() == 2);
  CHECK(recorder.rate_limited() == 0);

  release.Notify();
  recorder.Stop(absl::Seconds(10));
  CHECK(recorder.sent() == 3);
  CHECK(transport.requests().size() == 3);
}

TEST_CASE("failed event sends are counted, not retried", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 500);
  std::vector<std::string> logged;
  util::SetLogSinkForTesting(
      [&](std::string_view, std::string_view line) { logged.emplace_back(line); });
  util::FakeClock clock(kStart);
  EventRecorder recorder(&transport, &clock, Options());
  recorder.Start();
  CHECK(recorder.Scheduled(PodBuilder("p").Build(), "n"));
  recorder.Stop(absl::Seconds(10));
  util::SetLogSinkForTesting({});
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].find("dropped event Scheduled about pod default/p") != std::string::npos);
  CHECK(recorder.send_failures() == 1);
  CHECK(recorder.sent() == 0);
  CHECK(transport.requests().size() == 1);
}

}  // namespace
}  // namespace kubesched::client
