// Series aggregation of the event recorder: repeats of an event become one events.k8s.io/v1
// Event whose series (count, lastObservedTime) is PATCHed, on a fake clock.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rapidjson/document.h"
#include "scheduler/client/event_recorder.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;
using testing::PodBuilder;

const absl::Time kStart = absl::FromUnixSeconds(1767323045);
constexpr char kUnschedulable[] = "0/3 nodes are available: 3 Insufficient cpu.";

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

struct Harness {
  Harness() : clock(kStart), recorder(&transport, &clock, Options()) {
    transport.OnDo([this](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      if (request.method == "PATCH") return HttpResponse{patch_status, "{}"};
      return HttpResponse{201, "{}"};
    });
    recorder.Start();
  }
  static EventRecorderOptions Options() {
    EventRecorderOptions options;
    options.reporting_instance = "host-a";
    options.sweep_interval = absl::ZeroDuration();
    return options;
  }
  // Stops the recorder (which writes what the series held back) and returns the requests.
  std::vector<HttpRequest> Flush() {
    recorder.Stop(absl::Seconds(10));
    return transport.requests();
  }
  bool Fail(const api::Pod& pod, const std::string& note = kUnschedulable) {
    return recorder.FailedScheduling(pod, note);
  }

  int patch_status = 200;
  FakeTransport transport;
  util::FakeClock clock;
  EventRecorder recorder;
};

// The series a PATCH sets: {count, lastObservedTime}.
std::pair<int, std::string> PatchedSeries(const HttpRequest& request) {
  REQUIRE(request.method == "PATCH");
  CHECK(request.content_type == "application/strategic-merge-patch+json");
  const rapidjson::Document body = Parse(request.body);
  CHECK(body.MemberCount() == 1);
  return {body["series"]["count"].GetInt(), Str(body["series"]["lastObservedTime"])};
}

TEST_CASE("repeats of a FailedScheduling become one Event with a series", "[writer][series]") {
  Harness h;
  const api::Pod pod = PodBuilder("web", "shop").Build();
  for (int i = 0; i < 4; ++i) {
    CHECK(h.Fail(pod));
    h.clock.Advance(absl::Seconds(2));
  }
  CHECK(h.recorder.aggregated() == 3);
  const auto requests = h.Flush();

  // POST, the second occurrence at once, the rest (held back by the interval) at Stop.
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].method == "POST");
  const rapidjson::Document created = Parse(requests[0].body);
  CHECK_FALSE(created.HasMember("series"));
  const std::string name = Str(created["metadata"]["name"]);
  for (size_t i = 1; i < requests.size(); ++i) {
    CHECK(requests[i].target == "/apis/events.k8s.io/v1/namespaces/shop/events/" + name);
  }
  CHECK(PatchedSeries(requests[1]) ==
        std::pair<int, std::string>{2, "2026-01-02T03:04:07.000000Z"});
  CHECK(PatchedSeries(requests[2]) ==
        std::pair<int, std::string>{4, "2026-01-02T03:04:11.000000Z"});
  CHECK(h.recorder.sent() == 3);
}

TEST_CASE("a series is written at most once per interval, and the sweep writes what waited",
          "[writer][series]") {
  Harness h;  // series_update_interval 30 s, series_finish_time 6 min
  const api::Pod pod = PodBuilder("web").Build();
  h.Fail(pod);  // t0: POST
  h.clock.Advance(absl::Seconds(1));
  h.Fail(pod);  // t1: count 2 at once
  h.clock.Advance(absl::Seconds(1));
  h.Fail(pod);                                         // t2: count 3 waits
  h.recorder.SweepSeries(kStart + absl::Seconds(10));  // not due yet
  h.clock.Advance(absl::Seconds(29));
  h.Fail(pod);  // t31: due, count 4 at once
  h.clock.Advance(absl::Seconds(1));
  h.Fail(pod);                                                            // t32: count 5 waits
  h.recorder.SweepSeries(kStart + absl::Seconds(61));                     // due: count 5
  h.recorder.SweepSeries(kStart + absl::Seconds(32) + absl::Minutes(6));  // finished, clean
  CHECK(h.recorder.tracked_series() == 0);
  h.clock.Advance(absl::Minutes(7));
  h.Fail(pod);  // a finished series: a new Event
  const auto requests = h.Flush();

  std::vector<std::string> shape;
  for (const HttpRequest& request : requests) {
    shape.push_back(request.method == "POST"
                        ? "POST"
                        : "PATCH " + std::to_string(PatchedSeries(request).first));
  }
  CHECK(shape == std::vector<std::string>{"POST", "PATCH 2", "PATCH 4", "PATCH 5", "POST"});
  CHECK(Str(Parse(requests[0].body)["metadata"]["name"]) !=
        Str(Parse(requests[4].body)["metadata"]["name"]));
}

TEST_CASE("a different note starts a new Event after writing the last count of the old one",
          "[writer][series]") {
  Harness h;
  const api::Pod pod = PodBuilder("web").Build();
  for (int i = 0; i < 3; ++i) h.Fail(pod);
  h.Fail(pod, "0/4 nodes are available: 4 Insufficient cpu.");
  h.Fail(pod, "0/4 nodes are available: 4 Insufficient cpu.");
  const auto requests = h.Flush();
  REQUIRE(requests.size() == 5);
  CHECK(requests[0].method == "POST");
  CHECK(PatchedSeries(requests[1]).first == 2);
  CHECK(PatchedSeries(requests[2]).first == 3);
  CHECK(requests[3].method == "POST");
  CHECK(Str(Parse(requests[3].body)["note"]) == "0/4 nodes are available: 4 Insufficient cpu.");
  CHECK(PatchedSeries(requests[4]).first == 2);
  CHECK(requests[4].target.ends_with(Str(Parse(requests[3].body)["metadata"]["name"])));
}

TEST_CASE("other pods, reasons and types are separate series", "[writer][series]") {
  Harness h;
  const api::Pod a = PodBuilder("a").Build();
  const api::Pod b = PodBuilder("b").Build();
  h.Fail(a);
  h.Fail(b);
  h.recorder.Record(a, nullptr, EventKind::kNormal, "FailedScheduling", "Scheduling",
                    kUnschedulable);
  h.recorder.Scheduled(a, "n1");
  CHECK(h.recorder.aggregated() == 0);
  CHECK(h.recorder.tracked_series() == 4);
  for (const HttpRequest& request : h.Flush()) CHECK(request.method == "POST");
}

TEST_CASE("a series PATCH answered 404 creates the event again with its series",
          "[writer][series]") {
  Harness h;
  h.patch_status = 404;  // the event expired on the server
  const api::Pod pod = PodBuilder("web").Build();
  h.Fail(pod);
  h.clock.Advance(absl::Seconds(5));
  h.Fail(pod);
  const auto requests = h.Flush();
  REQUIRE(requests.size() == 3);
  CHECK(requests[1].method == "PATCH");
  CHECK(requests[2].method == "POST");
  const rapidjson::Document first = Parse(requests[0].body);
  const rapidjson::Document again = Parse(requests[2].body);
  CHECK(Str(again["metadata"]["name"]) == Str(first["metadata"]["name"]));
  CHECK(Str(again["eventTime"]) == Str(first["eventTime"]));
  CHECK(again["series"]["count"].GetInt() == 2);
  CHECK(Str(again["series"]["lastObservedTime"]) == "2026-01-02T03:04:10.000000Z");
  CHECK(Str(again["note"]) == kUnschedulable);
  CHECK(h.recorder.send_failures() == 0);
}

TEST_CASE("a series PATCH refused otherwise is counted, not retried", "[writer][series]") {
  Harness h;
  h.patch_status = 422;
  const api::Pod pod = PodBuilder("web").Build();
  h.Fail(pod);
  h.Fail(pod);
  CHECK(h.Flush().size() == 2);
  CHECK(h.recorder.send_failures() == 1);
}

TEST_CASE("repeats cost no rate-limit tokens and the series map stays bounded",
          "[writer][series]") {
  EventRecorderOptions options = Harness::Options();
  options.max_tracked_objects = 4;
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{200, "{}"};
  });
  util::FakeClock clock(kStart);
  EventRecorder recorder(&transport, &clock, options);
  const api::Pod pod = PodBuilder("web").Build();
  for (int i = 0; i < 50; ++i) CHECK(recorder.FailedScheduling(pod, kUnschedulable));
  CHECK(recorder.rate_limited() == 0);
  CHECK(recorder.aggregated() == 49);
  for (int i = 0; i < 100; ++i) {
    clock.Advance(absl::Milliseconds(1));
    recorder.FailedScheduling(PodBuilder("pod-" + std::to_string(i)).Build(), kUnschedulable);
    CHECK(recorder.tracked_series() <= 4);
  }
}

}  // namespace
}  // namespace kubesched::client
