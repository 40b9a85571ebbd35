#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"
#include "scheduler/client/http_transport.h"

namespace kubesched::client {
namespace {

absl::Status StatusFor(int code, std::string body) {
  return StatusFromResponse(HttpResponse{code, std::move(body)}, "bind pod default/p");
}

TEST_CASE("StatusFromResponse maps HTTP codes", "[client]") {
  CHECK(StatusFor(200, "").ok());
  CHECK(StatusFor(201, "{}").ok());
  CHECK(StatusFor(401, "").code() == absl::StatusCode::kUnauthenticated);
  CHECK(StatusFor(403, "").code() == absl::StatusCode::kPermissionDenied);
  CHECK(StatusFor(404, "").code() == absl::StatusCode::kNotFound);
  CHECK(StatusFor(409, R"({"reason":"Conflict"})").code() == absl::StatusCode::kAborted);
  CHECK(StatusFor(409, R"({"reason":"AlreadyExists"})").code() == absl::StatusCode::kAlreadyExists);
  CHECK(StatusFor(410, "").code() == absl::StatusCode::kFailedPrecondition);
  CHECK(StatusFor(422, "").code() == absl::StatusCode::kInvalidArgument);
  CHECK(StatusFor(429, "").code() == absl::StatusCode::kResourceExhausted);
  CHECK(StatusFor(503, "").code() == absl::StatusCode::kUnavailable);
  CHECK(StatusFor(302, "").code() == absl::StatusCode::kUnknown);
}

TEST_CASE("StatusFromResponse explains with the Status message, the body, or the phrase",
          "[client]") {
  CHECK(StatusFor(404, R"({"kind":"Status","message":"pods \"p\" not found","code":404})")
            .message() == "bind pod default/p: pods \"p\" not found (HTTP 404)");
  CHECK(StatusFor(500, "upstream exploded\n").message() ==
        "bind pod default/p: upstream exploded (HTTP 500)");
  CHECK(StatusFor(503, "").message() == "bind pod default/p: Service Unavailable (HTTP 503)");
  // A JSON message of the wrong type is ignored rather than trusted.
  CHECK(StatusFor(400, R"({"message":42})").message() ==
        "bind pod default/p: {\"message\":42} (HTTP 400)");
  const std::string long_body(500, 'x');
  const std::string message(StatusFor(500, long_body).message());
  CHECK(message == "bind pod default/p: " + std::string(200, 'x') + "... (HTTP 500)");
}

}  // namespace
}  // namespace kubesched::client
