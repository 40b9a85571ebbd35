#include "scheduler/client/api_pod_deleter.h"

#include <catch2/catch.hpp>
#include <string>

#include "rapidjson/document.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;

void AnswerWith(FakeTransport& transport, int status) {
  transport.OnDo([status](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{
        status, "{\"kind\":\"Status\",\"message\":\"reason " + std::to_string(status) + "\"}"};
  });
}

TEST_CASE("ApiPodDeleter sends DELETE with a UID precondition", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  ApiPodDeleter deleter(&transport);

  CHECK(deleter.DeletePod("team-a", "victim-0", "uid-123").ok());

  const auto requests = transport.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "DELETE");
  CHECK(requests[0].target == "/api/v1/namespaces/team-a/pods/victim-0");
  CHECK(requests[0].content_type == "application/json");
  rapidjson::Document body;
  body.Parse(requests[0].body.c_str());
  REQUIRE(body.IsObject());
  CHECK(std::string(body["kind"].GetString()) == "DeleteOptions");
  CHECK(std::string(body["apiVersion"].GetString()) == "v1");
  CHECK(std::string(body["preconditions"]["uid"].GetString()) == "uid-123");
}

TEST_CASE("ApiPodDeleter maps response codes", "[writer]") {
  struct Case {
    int http;
    absl::StatusCode expected;
  };
  for (const Case& c :
       {Case{200, absl::StatusCode::kOk}, Case{202, absl::StatusCode::kOk},
        Case{404, absl::StatusCode::kNotFound}, Case{409, absl::StatusCode::kFailedPrecondition},
        Case{403, absl::StatusCode::kPermissionDenied},
        Case{429, absl::StatusCode::kResourceExhausted},
        Case{500, absl::StatusCode::kUnavailable}}) {
    FakeTransport transport;
    AnswerWith(transport, c.http);
    ApiPodDeleter deleter(&transport);
    const absl::Status status = deleter.DeletePod("ns", "p", "u");
    INFO("HTTP " << c.http << ": " << status);
    CHECK(status.code() == c.expected);
    if (!status.ok()) {
      CHECK(std::string(status.message()).find("ns/p") != std::string::npos);
      CHECK(std::string(status.message()).find("reason " + std::to_string(c.http)) !=
            std::string::npos);
    }
  }
}

TEST_CASE("ApiPodDeleter passes transport failures through with the pod named", "[writer]") {
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return absl::DeadlineExceededError("timed out");
  });
  ApiPodDeleter deleter(&transport);
  const absl::Status status = deleter.DeletePod("ns", "p", "u");
  CHECK(absl::IsDeadlineExceeded(status));
  CHECK(std::string(status.message()).find("ns/p") != std::string::npos);
  CHECK(std::string(status.message()).find("timed out") != std::string::npos);
}

TEST_CASE("ApiPodDeleter rejects names that are not path segments", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  ApiPodDeleter deleter(&transport);
  CHECK(absl::IsInvalidArgument(deleter.DeletePod("ns", "a?b", "u")));
  CHECK(absl::IsInvalidArgument(deleter.DeletePod("..", "p", "u")));
  CHECK(absl::IsInvalidArgument(deleter.DeletePod("ns", "", "u")));
  CHECK(transport.requests().empty());
}

}  // namespace
}  // namespace kubesched::client
