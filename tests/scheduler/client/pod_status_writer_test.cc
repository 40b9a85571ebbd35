#include "scheduler/client/pod_status_writer.h"

#include <catch2/catch.hpp>
#include <string>

#include "rapidjson/document.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;
using testing::PodBuilder;

const absl::Time kNow = absl::FromUnixSeconds(1767323045);  // 2026-01-02T03:04:05Z

void AnswerWith(FakeTransport& transport, int status) {
  transport.OnDo([status](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{status,
                        "{\"kind\":\"Status\",\"message\":\"why " + std::to_string(status) + "\"}"};
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

api::Pod PodWithCondition(std::string type, std::string status, std::string reason,
                          std::string message) {
  api::Pod pod = PodBuilder("p", "ns").Build();
  pod.status.conditions.push_back({"Ready", "False", "", ""});
  pod.status.conditions.push_back(
      {std::move(type), std::move(status), std::move(reason), std::move(message)});
  return pod;
}

TEST_CASE("SetUnschedulable patches the PodScheduled condition", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  PodStatusWriter writer(&transport);
  const std::string message =
      "0/3 nodes are available: 3 node(s) had untolerated taint "
      "{\"dedicated\": \"gpu\"}.\nsecond line \\ with backslash";

  REQUIRE(writer.SetUnschedulable(PodBuilder("web", "shop").Build(), message, kNow).ok());

  const auto requests = transport.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == "/api/v1/namespaces/shop/pods/web/status");
  CHECK(requests[0].content_type == "application/strategic-merge-patch+json");
  const rapidjson::Document body = Parse(requests[0].body);
  const rapidjson::Value& conditions = body["status"]["conditions"];
  REQUIRE(conditions.IsArray());
  REQUIRE(conditions.Size() == 1);
  const rapidjson::Value& condition = conditions[0];
  CHECK(Str(condition["type"]) == "PodScheduled");
  CHECK(Str(condition["status"]) == "False");
  CHECK(Str(condition["reason"]) == "Unschedulable");
  CHECK(Str(condition["message"]) == message);
  CHECK(condition["lastProbeTime"].IsNull());
  CHECK(Str(condition["lastTransitionTime"]) == "2026-01-02T03:04:05Z");
  CHECK(body.MemberCount() == 2);
  CHECK(Str(body["metadata"]["uid"]) == "shop-web-uid");
  CHECK(body["metadata"].MemberCount() == 1);
}

TEST_CASE("status patches name the pod's uid, and a successor's refusal means the pod is gone",
          "[writer]") {
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{409,
                        R"({"kind":"Status","reason":"Conflict","message":"Operation cannot be )"
                        R"(fulfilled on pods \"web\": Precondition failed: UID in precondition: )"
                        R"(old, UID in object meta: new"})"};
  });
  PodStatusWriter writer(&transport);
  const api::Pod pod = PodBuilder("web", "shop").Uid("old").Build();

  const absl::Status condition = writer.SetUnschedulable(pod, "0/1 nodes are available", kNow);
  const absl::Status nomination = writer.SetNominatedNodeName(pod, "node-1");

  CHECK(absl::IsNotFound(condition));
  CHECK(absl::IsNotFound(nomination));
  const auto requests = transport.requests();
  REQUIRE(requests.size() == 2);
  for (const HttpRequest& request : requests) {
    CHECK(Str(Parse(request.body)["metadata"]["uid"]) == "old");
  }
}

TEST_CASE("a conflict that is not about the uid stays a conflict", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 409);
  PodStatusWriter writer(&transport);
  CHECK(absl::IsAborted(writer.SetNominatedNodeName(PodBuilder("web").Build(), "node-1")));
}

TEST_CASE("SetUnschedulable keeps a long message whole", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  PodStatusWriter writer(&transport);
  const std::string message(5000, 'x');
  REQUIRE(writer.SetUnschedulable(PodBuilder("p").Build(), message, kNow).ok());
  const rapidjson::Document body = Parse(transport.requests().at(0).body);
  CHECK(Str(body["status"]["conditions"][0]["message"]) == message);
}

TEST_CASE("SetUnschedulable skips the write when the pod already says so", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  PodStatusWriter writer(&transport);
  const api::Pod pod = PodWithCondition("PodScheduled", "False", "Unschedulable", "same");

  CHECK(writer.SetUnschedulable(pod, "same", kNow).ok());
  CHECK(transport.requests().empty());

  // A new message is written, and the transition time of the earlier False is kept.
  CHECK(writer.SetUnschedulable(pod, "different", kNow).ok());
  REQUIRE(transport.requests().size() == 1);
  const rapidjson::Document body = Parse(transport.requests()[0].body);
  CHECK(Str(body["status"]["conditions"][0]["message"]) == "different");
  CHECK_FALSE(body["status"]["conditions"][0].HasMember("lastTransitionTime"));
}

TEST_CASE("SetUnschedulable stamps the transition when the condition flips", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  PodStatusWriter writer(&transport);
  const api::Pod pod = PodWithCondition("PodScheduled", "True", "", "");
  CHECK(writer.SetUnschedulable(pod, "m", kNow).ok());
  REQUIRE(transport.requests().size() == 1);
  const rapidjson::Document body = Parse(transport.requests()[0].body);
  CHECK(Str(body["status"]["conditions"][0]["lastTransitionTime"]) == "2026-01-02T03:04:05Z");
}

TEST_CASE("SetNominatedNodeName sends a merge patch, null to clear", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  PodStatusWriter writer(&transport);
  api::Pod pod = PodBuilder("p", "ns").Build();

  REQUIRE(writer.SetNominatedNodeName(pod, "node-3").ok());
  pod.status.nominated_node_name = "node-3";
  REQUIRE(writer.SetNominatedNodeName(pod, "node-3").ok());  // unchanged: no request
  REQUIRE(writer.SetNominatedNodeName(pod, "").ok());

  const auto requests = transport.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == "/api/v1/namespaces/ns/pods/p/status");
  CHECK(requests[0].content_type == "application/merge-patch+json");
  CHECK(Str(Parse(requests[0].body)["status"]["nominatedNodeName"]) == "node-3");
  const rapidjson::Document cleared = Parse(requests[1].body);
  REQUIRE(cleared["status"].HasMember("nominatedNodeName"));
  CHECK(cleared["status"]["nominatedNodeName"].IsNull());
}

TEST_CASE("AddDisruptionTarget marks a preemption victim once", "[writer]") {
  FakeTransport transport;
  AnswerWith(transport, 200);
  PodStatusWriter writer(&transport);
  const std::string message = "kubesched: preempting to accommodate a higher priority pod";

  REQUIRE(writer.AddDisruptionTarget(PodBuilder("v", "ns").Build(), message, kNow).ok());
  REQUIRE(transport.requests().size() == 1);
  const HttpRequest request = transport.requests()[0];
  CHECK(request.target == "/api/v1/namespaces/ns/pods/v/status");
  CHECK(request.content_type == "application/strategic-merge-patch+json");
  const rapidjson::Document body = Parse(request.body);
  const rapidjson::Value& condition = body["status"]["conditions"][0];
  CHECK(Str(condition["type"]) == "DisruptionTarget");
  CHECK(Str(condition["status"]) == "True");
  CHECK(Str(condition["reason"]) == "PreemptionByScheduler");
  CHECK(Str(condition["message"]) == message);
  CHECK(Str(condition["lastTransitionTime"]) == "2026-01-02T03:04:05Z");

  const api::Pod marked =
      PodWithCondition("DisruptionTarget", "True", "PreemptionByScheduler", message);
  REQUIRE(writer.AddDisruptionTarget(marked, message, kNow).ok());
  CHECK(transport.requests().size() == 1);
}

TEST_CASE("PodStatusWriter reports server and transport failures", "[writer]") {
  {
    FakeTransport transport;
    AnswerWith(transport, 404);
    PodStatusWriter writer(&transport);
    const absl::Status status = writer.SetUnschedulable(PodBuilder("p", "ns").Build(), "m", kNow);
    CHECK(absl::IsNotFound(status));
    CHECK(std::string(status.message()).find("ns/p") != std::string::npos);
    CHECK(std::string(status.message()).find("why 404") != std::string::npos);
  }
  {
    FakeTransport transport;
    AnswerWith(transport, 500);
    PodStatusWriter writer(&transport);
    CHECK(absl::IsUnavailable(writer.SetNominatedNodeName(PodBuilder("p").Build(), "n")));
  }
  {
    FakeTransport transport;
    transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
      return absl::UnavailableError("connection reset");
    });
    PodStatusWriter writer(&transport);
    const absl::Status status =
        writer.AddDisruptionTarget(PodBuilder("p", "ns").Build(), "m", kNow);
    CHECK(absl::IsUnavailable(status));
    CHECK(std::string(status.message()).find("connection reset") != std::string::npos);
    CHECK(std::string(status.message()).find("ns/p") != std::string::npos);
  }
  {
    FakeTransport transport;
    AnswerWith(transport, 200);
    PodStatusWriter writer(&transport);
    CHECK(absl::IsInvalidArgument(writer.SetUnschedulable(PodBuilder("a/b").Build(), "m", kNow)));
    CHECK(transport.requests().empty());
  }
}

}  // namespace
}  // namespace kubesched::client
