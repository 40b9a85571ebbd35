#include "scheduler/client/api_binder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rapidjson/document.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;
using testing::PodBuilder;

HttpResponse Reply(int status, const std::string& message = "") {
  if (message.empty()) return {status, "{}"};
  return {status,
          "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" +
              message + "\",\"code\":" + std::to_string(status) + "}"};
}

// Answers with `statuses` in order, repeating the last one.
void ScriptStatuses(FakeTransport& transport, std::vector<int> statuses) {
  auto calls = std::make_shared<size_t>(0);
  transport.OnDo([statuses, calls](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    const size_t i = std::min((*calls)++, statuses.size() - 1);
    return Reply(statuses[i], "server says " + std::to_string(statuses[i]));
  });
}

struct Harness {
  FakeTransport transport;
  std::vector<absl::Duration> sleeps;
  ApiBinder binder{&transport,
                   ApiBinderOptions{.attempts = 3,
                                    .initial_backoff = absl::Milliseconds(100),
                                    .max_backoff = absl::Seconds(1),
                                    .sleep = [this](absl::Duration d) { sleeps.push_back(d); }}};
};

TEST_CASE("ApiBinder posts a v1 Binding to the pod's binding subresource", "[writer]") {
  Harness h;
  ScriptStatuses(h.transport, {201});
  const api::Pod pod = PodBuilder("web-1", "shop").Build();

  CHECK(h.binder.BindPod(pod, "node-7").IsSuccess());

  const auto requests = h.transport.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].target == "/api/v1/namespaces/shop/pods/web-1/binding");
  CHECK(requests[0].content_type == "application/json");
  rapidjson::Document body;
  body.Parse(requests[0].body.c_str());
  REQUIRE(body.IsObject());
  CHECK(std::string(body["apiVersion"].GetString()) == "v1");
  CHECK(std::string(body["kind"].GetString()) == "Binding");
  CHECK(std::string(body["metadata"]["name"].GetString()) == "web-1");
  CHECK(std::string(body["metadata"]["namespace"].GetString()) == "shop");
  CHECK(std::string(body["metadata"]["uid"].GetString()) == pod.meta.uid);
  CHECK(std::string(body["target"]["apiVersion"].GetString()) == "v1");
  CHECK(std::string(body["target"]["kind"].GetString()) == "Node");
  CHECK(std::string(body["target"]["name"].GetString()) == "node-7");
  CHECK(h.sleeps.empty());
}

TEST_CASE("ApiBinder treats 200 as success too", "[writer]") {
  Harness h;
  ScriptStatuses(h.transport, {200});
  CHECK(h.binder.BindPod(PodBuilder("p").Build(), "n1").IsSuccess());
}

TEST_CASE("ApiBinder: 409 and 404 are errors, not retried, and explain", "[writer]") {
  for (int code : {409, 404}) {
    Harness h;
    ScriptStatuses(h.transport, {code});
    const framework::Status status = h.binder.BindPod(PodBuilder("p", "ns1").Build(), "n1");
    INFO("HTTP " << code << ": " << status.Message());
    CHECK(status.code() == framework::Code::kError);
    CHECK(status.Message().find("ns1/p") != std::string::npos);
    CHECK(status.Message().find("n1") != std::string::npos);
    CHECK(status.Message().find("server says " + std::to_string(code)) != std::string::npos);
    CHECK(h.transport.requests().size() == 1);
    CHECK(h.sleeps.empty());
  }
}

TEST_CASE("ApiBinder retries 429, 5xx and transport failures, then reports an error", "[writer]") {
  for (int code : {429, 500, 502, 503, 504}) {
    Harness h;
    ScriptStatuses(h.transport, {code});
    const framework::Status status = h.binder.BindPod(PodBuilder("p").Build(), "n1");
    INFO("HTTP " << code << ": " << status.Message());
    CHECK(status.code() == framework::Code::kError);
    CHECK(status.Message().find("default/p") != std::string::npos);
    CHECK(status.Message().find("server says " + std::to_string(code)) != std::string::npos);
    CHECK(status.Message().find("3 attempts") != std::string::npos);
    CHECK(h.transport.requests().size() == 3);
    // Backoff doubles from 100 ms, jittered down to half at most.
    REQUIRE(h.sleeps.size() == 2);
    CHECK(h.sleeps[0] >= absl::Milliseconds(50));
    CHECK(h.sleeps[0] <= absl::Milliseconds(100));
    CHECK(h.sleeps[1] >= absl::Milliseconds(100));
    CHECK(h.sleeps[1] <= absl::Milliseconds(200));
  }

  Harness h;
  h.transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return absl::UnavailableError("connection refused");
  });
  const framework::Status status = h.binder.BindPod(PodBuilder("p").Build(), "n1");
  CHECK(status.code() == framework::Code::kError);
  CHECK(status.Message().find("connection refused") != std::string::npos);
  CHECK(status.Message().find("default/p") != std::string::npos);
  CHECK(h.transport.requests().size() == 3);
}

TEST_CASE("ApiBinder succeeds when a retry succeeds", "[writer]") {
  Harness h;
  ScriptStatuses(h.transport, {503, 500, 201});
  CHECK(h.binder.BindPod(PodBuilder("p").Build(), "n1").IsSuccess());
  CHECK(h.transport.requests().size() == 3);
}

TEST_CASE("ApiBinder backoff is capped at max_backoff", "[writer]") {
  FakeTransport transport;
  ScriptStatuses(transport, {500});
  std::vector<absl::Duration> sleeps;
  ApiBinder binder(&transport, {.attempts = 6,
                                .initial_backoff = absl::Milliseconds(400),
                                .max_backoff = absl::Seconds(1),
                                .sleep = [&](absl::Duration d) { sleeps.push_back(d); }});
  CHECK(binder.BindPod(PodBuilder("p").Build(), "n1").code() == framework::Code::kError);
  REQUIRE(sleeps.size() == 5);
  for (absl::Duration d : sleeps) CHECK(d <= absl::Seconds(1));
  CHECK(sleeps[4] >= absl::Milliseconds(500));
}

TEST_CASE("ApiBinder does not retry other client errors", "[writer]") {
  for (int code : {400, 401, 403, 422}) {
    Harness h;
    ScriptStatuses(h.transport, {code});
    const framework::Status status = h.binder.BindPod(PodBuilder("p").Build(), "n1");
    INFO("HTTP " << code);
    CHECK(status.code() == framework::Code::kError);
    CHECK(h.transport.requests().size() == 1);
  }
}

TEST_CASE("ApiBinder refuses names that would change the request path", "[writer]") {
  Harness h;
  ScriptStatuses(h.transport, {201});
  CHECK(h.binder.BindPod(PodBuilder("p").Build(), "../x").code() == framework::Code::kError);
  CHECK(h.binder.BindPod(PodBuilder("a/b").Build(), "n1").code() == framework::Code::kError);
  CHECK(h.binder.BindPod(PodBuilder("p", "").Build(), "n1").code() == framework::Code::kError);
  CHECK(h.transport.requests().empty());
}

}  // namespace
}  // namespace kubesched::client
