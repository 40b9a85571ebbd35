// The NodeMetrics poller behind MostAvailable in `run`: list decoding, ADDED/MODIFIED/DELETED,
// failures retried, 404 logged once, and the background thread.

#include "scheduler/client/metrics_poller.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "scheduler/util/log.h"
#include "tests/testing/fake_transport.h"
#include "tests/testing/wait.h"

namespace kubesched::client {
namespace {

class Recorder : public ClusterEventHandler {
 public:
  void OnPod(const Event<api::Pod>&) override {}
  void OnNode(const Event<api::Node>&) override {}
  void OnNamespace(const Event<api::Namespace>&) override {}
  void OnPriorityClass(const Event<api::PriorityClass>&) override {}
  void OnNodeMetrics(const Event<api::NodeMetrics>& event) override {
    absl::MutexLock lock(&mu_);
    const char* type = event.type == EventType::kAdded      ? "ADDED"
                       : event.type == EventType::kModified ? "MODIFIED"
                                                            : "DELETED";
    events_.push_back(
        absl::StrCat(type, " ", event.object->meta.name, " ", event.object->usage.Get(api::kCpu)));
  }
  std::vector<std::string> Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(events_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
};

// A NodeMetricsList as metrics-server answers it (items carry no kind).
std::string ListJson(const std::vector<std::pair<std::string, std::string>>& cpu_by_node) {
  std::string items;
  for (const auto& [node, cpu] : cpu_by_node) {
    if (!items.empty()) items += ",";
    absl::StrAppend(&items, R"({"metadata":{"name":")", node,
                    R"("},"timestamp":"2024-05-01T10:00:00Z","window":"20.05s",)",
                    R"("usage":{"cpu":")", cpu, R"(","memory":"1Gi"}})");
  }
  return absl::StrCat(R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1",)",
                      R"("metadata":{},"items":[)", items, "]}");
}

struct Logged {
  Logged() {
    util::SetLogSinkForTesting([this](std::string_view level, std::string_view message) {
      lines.push_back(absl::StrCat(std::string(level), " ", std::string(message)));
    });
  }
  ~Logged() { util::SetLogSinkForTesting({}); }
  std::vector<std::string> lines;
};

TEST_CASE("metrics poller delivers samples, changes and removals", "[client][most_available]") {
  testing::FakeTransport transport;
  Recorder recorder;
  MetricsPoller poller(&transport, &recorder, absl::Seconds(30));
  std::string body = ListJson({{"n1", "250m"}, {"n2", "2"}});
  transport.OnDo([&body](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
    CHECK(request.method == "GET");
    CHECK(request.target == "/apis/metrics.k8s.io/v1beta1/nodes");
    return HttpResponse{200, body};
  });
  REQUIRE(poller.PollOnce().ok());
  CHECK(recorder.Take() == std::vector<std::string>{"ADDED n1 250", "ADDED n2 2000"});
  body = ListJson({{"n2", "3"}});
  REQUIRE(poller.PollOnce().ok());
  CHECK(recorder.Take() == std::vector<std::string>{"MODIFIED n2 3000", "DELETED n1 250"});
  CHECK(poller.Stats().polls == 2);
  CHECK(poller.Stats().samples == 3);
  CHECK(poller.Stats().failures == 0);
}

TEST_CASE("metrics poller skips a bad item and keeps the others", "[client][most_available]") {
  Logged logged;
  testing::FakeTransport transport;
  Recorder recorder;
  MetricsPoller poller(&transport, &recorder, absl::Seconds(30));
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{200, ListJson({{"n1", "lots"}, {"n2", "1"}})};
  });
  REQUIRE(poller.PollOnce().ok());
  CHECK(recorder.Take() == std::vector<std::string>{"ADDED n2 1000"});
  REQUIRE(logged.lines.size() == 1);
  CHECK_THAT(logged.lines[0], Catch::StartsWith("W ") && Catch::Contains("n1"));
}

TEST_CASE("metrics poller logs a missing metrics API once and keeps polling",
          "[client][most_available]") {
  Logged logged;
  testing::FakeTransport transport;
  Recorder recorder;
  MetricsPoller poller(&transport, &recorder, absl::Seconds(30));
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{404, R"({"kind":"Status","reason":"NotFound","code":404})"};
  });
  CHECK(absl::IsNotFound(poller.PollOnce()));
  CHECK(absl::IsNotFound(poller.PollOnce()));
  REQUIRE(logged.lines.size() == 1);
  CHECK_THAT(logged.lines[0], Catch::StartsWith("I ") && Catch::Contains("metrics-server"));
  CHECK(poller.Stats().failures == 2);
  CHECK(recorder.Take().empty());
}

TEST_CASE("metrics poller logs failures and recovers at the next poll",
          "[client][most_available]") {
  Logged logged;
  testing::FakeTransport transport;
  Recorder recorder;
  MetricsPoller poller(&transport, &recorder, absl::Seconds(30));
  int call = 0;
  transport.OnDo([&call](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
    CHECK(request.max_retries == 0);
    switch (call++) {
      case 0:
        return absl::UnavailableError("connection refused");
      case 1:
        return HttpResponse{500, "{}"};
      case 2:
        return HttpResponse{200, "not json"};
      default:
        return HttpResponse{200, ListJson({{"n1", "1"}})};
    }
  });
  CHECK_FALSE(poller.PollOnce().ok());
  CHECK_FALSE(poller.PollOnce().ok());
  CHECK_FALSE(poller.PollOnce().ok());
  REQUIRE(poller.PollOnce().ok());
  CHECK(recorder.Take() == std::vector<std::string>{"ADDED n1 1000"});
  CHECK(logged.lines.size() == 3);
  for (const auto& line : logged.lines)
    CHECK_THAT(line, Catch::StartsWith("W metrics poll failed"));
}

TEST_CASE("metrics poller polls on its own thread until stopped", "[client][most_available]") {
  testing::FakeTransport transport;
  Recorder recorder;
  std::atomic<int> calls{0};
  transport.OnDo([&calls](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    ++calls;
    return HttpResponse{200, ListJson({{"n1", "1"}})};
  });
  MetricsPoller poller(&transport, &recorder, absl::Milliseconds(10));
  poller.Start();
  testing::WaitUntil([&calls] { return calls.load() >= 3; });
  const absl::Time stop_at = absl::Now();
  poller.Stop();
  CHECK(absl::Now() - stop_at < absl::Seconds(2));
  CHECK(calls.load() >= 3);
  const std::vector<std::string> events = recorder.Take();
  REQUIRE(events.size() >= 3);
  CHECK(events[0] == "ADDED n1 1000");
  CHECK(events[1] == "MODIFIED n1 1000");
}

}  // namespace
}  // namespace kubesched::client
