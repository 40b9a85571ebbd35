#include "scheduler/run/api_reporter.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/async_writer.h"
#include "scheduler/client/event_recorder.h"
#include "scheduler/client/pod_status_writer.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/util/clock.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::scheduler {
namespace {

using client::HttpRequest;
using client::HttpResponse;
using testing::PodBuilder;

constexpr char kEvents[] = "POST /apis/events.k8s.io/v1/namespaces/ns/events";

// The reporter over the real recorder and status writer, with a transport that accepts every
// write.
struct Harness {
  Harness()
      : clock(absl::FromUnixSeconds(1'767'323'045)),
        events(&transport, &clock, client::EventRecorderOptions()),
        status(&transport),
        reporter(&events, &status, &status_queue, &clock) {
    transport.OnDo([](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      return HttpResponse{request.method == "POST" ? 201 : 200, "{}"};
    });
    events.Start();
    status_queue.Start();
  }

  // Sends what is queued, then lists the requests as "METHOD target <body>", sorted: the events
  // and the status writes go out on two threads, in no set order.
  std::vector<std::string> Flush() {
    status_queue.Stop(absl::Seconds(10));
    events.Stop(absl::Seconds(10));
    std::vector<std::string> requests;
    for (const HttpRequest& request : transport.requests()) {
      requests.push_back(absl::StrCat(request.method, " ", request.target, " ", request.body));
    }
    std::sort(requests.begin(), requests.end());
    return requests;
  }

  testing::FakeTransport transport;
  util::FakeClock clock;
  client::EventRecorder events;
  client::PodStatusWriter status;
  client::AsyncWriter status_queue;
  ApiReporter reporter;
};

framework::PodInfoPtr Pod(const std::string& name) {
  return framework::MakePodInfo(PodBuilder(name, "ns").Ptr(), 0);
}

TEST_CASE("an unschedulable pod gets a FailedScheduling event and PodScheduled=False", "[run]") {
  Harness h;
  h.reporter.OnUnschedulable(*Pod("p"), "0/3 nodes are available", 1);
  const std::vector<std::string> requests = h.Flush();
  REQUIRE(requests.size() == 2);
  CHECK(absl::StartsWith(requests[0], "PATCH /api/v1/namespaces/ns/pods/p/status "));
  CHECK(absl::StrContains(requests[0], R"("type":"PodScheduled")"));
  CHECK(absl::StrContains(requests[0], "0/3 nodes are available"));
  CHECK(absl::StartsWith(requests[1], kEvents));
  CHECK(absl::StrContains(requests[1], R"("reason":"FailedScheduling")"));
}

// Status patches answered 500 while `refuse` holds; everything else accepted.
void RefuseStatusWhile(Harness& h, const std::atomic<bool>& refuse) {
  h.transport.OnDo([&refuse](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
    if (request.method == "PATCH" && refuse.load()) {
      return HttpResponse{500, R"({"kind":"Status","message":"etcd is away"})"};
    }
    return HttpResponse{request.method == "POST" ? 201 : 200, "{}"};
  });
}

int StatusPatches(const testing::FakeTransport& transport) {
  int patches = 0;
  for (const HttpRequest& request : transport.requests()) patches += request.method == "PATCH";
  return patches;
}

// Waits (bounded) until the status queue has run `count` writes in all.
void WaitForWrites(const client::AsyncWriter& queue, uint64_t count) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (queue.completed() < count && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  REQUIRE(queue.completed() >= count);
}

TEST_CASE("a reason the API refused is written again after a backoff", "[run]") {
  Harness h;
  std::atomic<bool> refuse{true};
  RefuseStatusWhile(h, refuse);
  h.reporter.OnUnschedulable(*Pod("p"), "0/3 nodes are available", 1);
  WaitForWrites(h.status_queue, 1);
  CHECK(h.reporter.unwritten_reasons() == 1);

  h.reporter.RetryUnwrittenReasons();  // within the first second's backoff: nothing
  h.clock.Advance(absl::Seconds(1));
  h.reporter.RetryUnwrittenReasons();  // refused again: the next try waits 2 s
  WaitForWrites(h.status_queue, 2);
  h.clock.Advance(absl::Seconds(1));
  h.reporter.RetryUnwrittenReasons();
  CHECK(StatusPatches(h.transport) == 2);

  refuse = false;
  h.clock.Advance(absl::Seconds(1));
  h.reporter.RetryUnwrittenReasons();
  WaitForWrites(h.status_queue, 3);
  CHECK(h.reporter.unwritten_reasons() == 0);
  h.Flush();
  CHECK(StatusPatches(h.transport) == 3);
  for (const HttpRequest& request : h.transport.requests()) {
    if (request.method == "PATCH")
      CHECK(absl::StrContains(request.body, "0/3 nodes are available"));
  }
}

TEST_CASE("a reason not written is dropped once the pod is bound", "[run]") {
  Harness h;
  std::atomic<bool> refuse{true};
  RefuseStatusWhile(h, refuse);
  h.reporter.OnUnschedulable(*Pod("p"), "0/3 nodes are available", 1);
  WaitForWrites(h.status_queue, 1);
  h.reporter.OnBound(*Pod("p"), "n1", 2);
  CHECK(h.reporter.unwritten_reasons() == 0);
  h.clock.Advance(absl::Minutes(1));
  h.reporter.RetryUnwrittenReasons();
  h.Flush();
  CHECK(StatusPatches(h.transport) == 1);
}

TEST_CASE("a bound pod gets a Scheduled event and nothing else", "[run]") {
  Harness h;
  h.reporter.OnBound(*Pod("p"), "n1", 1);
  const std::vector<std::string> requests = h.Flush();
  REQUIRE(requests.size() == 1);
  CHECK(absl::StartsWith(requests[0], kEvents));
  CHECK(absl::StrContains(requests[0], R"("reason":"Scheduled")"));
}

TEST_CASE("a rejected bind is a FailedScheduling event that says so", "[run]") {
  Harness h;
  h.reporter.OnBindFailed(*Pod("p"), "n1", "node n1 is gone");
  const std::vector<std::string> requests = h.Flush();
  REQUIRE(requests.size() == 1);
  CHECK(absl::StrContains(requests[0], R"("reason":"FailedScheduling")"));
  CHECK(absl::StrContains(requests[0], "binding rejected: node n1 is gone"));
}

TEST_CASE("a preemptor's nominated node is written, and cleared when it loses it", "[run]") {
  Harness h;
  h.reporter.OnPreempted(*Pod("high"), "n1", {"ns/low"});
  api::Pod nominated = PodBuilder("other", "ns").Build();
  nominated.status.nominated_node_name = "n1";
  h.reporter.OnNominationCleared(
      *framework::MakePodInfo(std::make_shared<const api::Pod>(nominated), 0));
  const std::vector<std::string> requests = h.Flush();
  REQUIRE(requests.size() == 2);
  CHECK(absl::StartsWith(requests[0], "PATCH /api/v1/namespaces/ns/pods/high/status "));
  CHECK(absl::StrContains(requests[0], R"("nominatedNodeName":"n1")"));
  CHECK(absl::StartsWith(requests[1], "PATCH /api/v1/namespaces/ns/pods/other/status "));
  CHECK(absl::StrContains(requests[1], R"("nominatedNodeName":null)"));
}

TEST_CASE("a victim is marked DisruptionTarget at once and gets a Preempted event after", "[run]") {
  Harness h;
  h.reporter.OnEvicting(*Pod("low"), *Pod("high"), "n1");
  // Written on the calling thread, before the victim is deleted.
  REQUIRE(h.transport.requests().size() == 1);
  CHECK(absl::StrContains(h.transport.requests()[0].body, R"("type":"DisruptionTarget")"));
  CHECK(absl::StrContains(h.transport.requests()[0].body,
                          "kubesched: preempting to accommodate a higher priority pod"));
  h.reporter.OnEvicted(*Pod("low"), *Pod("high"), "n1");
  const std::vector<std::string> requests = h.Flush();
  REQUIRE(requests.size() == 2);
  CHECK(absl::StartsWith(requests[0], "PATCH /api/v1/namespaces/ns/pods/low/status "));
  CHECK(absl::StartsWith(requests[1], kEvents));
  CHECK(absl::StrContains(requests[1], R"("reason":"Preempted")"));
  CHECK(absl::StrContains(requests[1], "Preempted by pod ns-high-uid on node n1"));
}

}  // namespace
}  // namespace kubesched::scheduler
