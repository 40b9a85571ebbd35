#include "scheduler/client/api_binder.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

TEST_CASE("ApiBinder: 404 is an error, not retried, and explains", "[writer]") {
  Harness h;
  ScriptStatuses(h.transport, {404});
  const framework::Status status = h.binder.BindPod(PodBuilder("p", "ns1").Build(), "n1");
  INFO(status.Message());
  CHECK(status.code() == framework::Code::kError);
  CHECK(status.Message().find("ns1/p") != std::string::npos);
  CHECK(status.Message().find("n1") != std::string::npos);
  CHECK(status.Message().find("server says 404") != std::string::npos);
  CHECK(h.transport.requests().size() == 1);
  CHECK(h.sleeps.empty());
}

// The pod as a GET returns it: its UID and node ("" = unbound).
HttpResponse PodObject(const std::string& uid, const std::string& node) {
  return {200, absl::StrCat(R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns1","uid":")",
                            uid, R"("},"spec":{"nodeName":")", node, R"("}})")};
}

// POSTs answered by `posts` in order (the last repeats); an empty optional is a dropped
// connection. GETs of the pod answered by `pod`.
void ScriptServer(FakeTransport& transport, std::vector<std::optional<int>> posts,
                  HttpResponse pod) {
  auto calls = std::make_shared<size_t>(0);
  transport.OnDo([posts, pod, calls](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
    if (request.method == "GET") return pod;
    const size_t i = std::min((*calls)++, posts.size() - 1);
    if (!posts[i].has_value()) return absl::UnavailableError("connection reset by peer");
    return Reply(*posts[i], "server says " + std::to_string(*posts[i]));
  });
}

size_t CountMethod(const FakeTransport& transport, const std::string& method) {
  size_t count = 0;
  for (const HttpRequest& request : transport.requests()) count += request.method == method;
  return count;
}

TEST_CASE("ApiBinder resolves a 409 by where the pod is", "[writer]") {
  const api::Pod pod = PodBuilder("p", "ns1").Build();
  struct Case {
    std::string uid;
    std::string node;
    bool bound_here;
  };
  for (const Case& c : {Case{pod.meta.uid, "n1", true}, Case{pod.meta.uid, "n2", false},
                        Case{"another-uid", "n1", false}, Case{pod.meta.uid, "", false}}) {
    Harness h;
    ScriptServer(h.transport, {409}, PodObject(c.uid, c.node));
    const framework::Status status = h.binder.BindPod(pod, "n1");
    INFO("uid " << c.uid << " node '" << c.node << "': " << status.Message());
    CHECK(status.IsSuccess() == c.bound_here);
    if (!c.bound_here) CHECK(status.Message().find("server says 409") != std::string::npos);
    CHECK(CountMethod(h.transport, "POST") == 1);
    CHECK(CountMethod(h.transport, "GET") == 1);
  }
  // The pod is gone.
  Harness h;
  ScriptServer(h.transport, {409}, Reply(404, "pods \"p\" not found"));
  CHECK(h.binder.BindPod(pod, "n1").code() == framework::Code::kError);
}

TEST_CASE("ApiBinder: a lost answer keeps the bind going until the server says what happened",
          "[writer]") {
  const api::Pod pod = PodBuilder("p", "ns1").Build();
  SECTION("the first Binding landed: the next one's 409 shows the pod bound here") {
    Harness h;
    ScriptServer(h.transport, {std::nullopt, 409}, PodObject(pod.meta.uid, "n1"));
    CHECK(h.binder.BindPod(pod, "n1").IsSuccess());
    CHECK(CountMethod(h.transport, "POST") == 2);
  }
  SECTION("past the attempts, through 5xx and an unbound pod, until an answer") {
    Harness h;
    ScriptServer(h.transport, {std::nullopt, std::nullopt, 500, std::nullopt, 409, 503, 201},
                 PodObject(pod.meta.uid, ""));
    CHECK(h.binder.BindPod(pod, "n1").IsSuccess());
    CHECK(CountMethod(h.transport, "POST") == 7);
    // Backoff grows to max_backoff and stays there.
    REQUIRE(h.sleeps.size() == 6);
    for (absl::Duration d : h.sleeps) CHECK(d <= absl::Seconds(1));
  }
  SECTION("the pod was deleted meanwhile") {
    Harness h;
    ScriptServer(h.transport, {std::nullopt, 404}, PodObject(pod.meta.uid, ""));
    CHECK(h.binder.BindPod(pod, "n1").code() == framework::Code::kError);
  }
  SECTION("the fence closes: nothing more is sent") {
    FakeTransport transport;
    ScriptServer(transport, {std::nullopt}, PodObject(pod.meta.uid, ""));
    int asked = 0;
    ApiBinder binder(
        &transport,
        {.attempts = 3, .sleep = [](absl::Duration) {}, .may_send = [&] { return ++asked <= 4; }});
    const framework::Status status = binder.BindPod(pod, "n1");
    CHECK(status.code() == framework::Code::kError);
    CHECK(status.Message().find("may no longer bind") != std::string::npos);
    CHECK(status.Message().find("connection reset by peer") != std::string::npos);
    CHECK(CountMethod(transport, "POST") == 4);
  }
}

TEST_CASE("ApiBinder retries 429 and 5xx, then reports an error", "[writer]") {
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
