#include "scheduler/client/ledger_store.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "rapidjson/document.h"
#include "scheduler/quota/ledger_json.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;

constexpr char kPath[] = "/api/v1/namespaces/kube-system/configmaps/ledger";

quota::Ledger Example() {
  quota::Ledger ledger;
  ledger.written_at = absl::FromUnixSeconds(1767323045);
  ledger.entries.push_back({"root.gpu", "cpu", 3600, absl::FromUnixSeconds(1767225600)});
  return ledger;
}

// The ConfigMap as the server returns it (the create body has the same shape).
std::string ConfigMapJson(const std::string& ledger_json) {
  return LedgerStore::CreateBody("kube-system", "ledger", ledger_json);
}

HttpResponse Status(int code) {
  return HttpResponse{code, R"({"kind":"Status","message":"says the server"})"};
}

TEST_CASE("LedgerStore::Read: the ledger, nothing on 404, errors named", "[ledger_store]") {
  FakeTransport transport;
  LedgerStore store(&transport);
  std::string body;
  int code = 200;
  transport.OnDo([&](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
    CHECK(request.method == "GET");
    CHECK(request.target == kPath);
    return HttpResponse{code, body};
  });

  body = ConfigMapJson(quota::EncodeLedger(Example()));
  auto read = store.Read("kube-system", "ledger");
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK((*read)->written_at == Example().written_at);
  REQUIRE((*read)->entries.size() == 1);
  CHECK((*read)->entries[0].queue == "root.gpu");
  CHECK((*read)->entries[0].used_unit_seconds == 3600);

  code = 404;
  body = R"({"kind":"Status","reason":"NotFound"})";
  read = store.Read("kube-system", "ledger");
  REQUIRE(read.ok());
  CHECK(!read->has_value());

  code = 403;
  read = store.Read("kube-system", "ledger");
  CHECK(absl::IsPermissionDenied(read.status()));
  CHECK(absl::StrContains(read.status().message(), "kube-system/ledger"));

  code = 200;
  body = ConfigMapJson("{not json");
  read = store.Read("kube-system", "ledger");
  CHECK(absl::IsInvalidArgument(read.status()));
  CHECK(absl::StrContains(read.status().message(),
                          "reading ledger ConfigMap kube-system/ledger: ledger.json: not valid"));

  body = R"({"kind":"ConfigMap","metadata":{"name":"ledger"},"data":{"other":"x"}})";
  read = store.Read("kube-system", "ledger");
  CHECK(absl::IsInvalidArgument(read.status()));
  CHECK(absl::StrContains(read.status().message(), "no data key ledger.json"));

  body = "<html>";
  read = store.Read("kube-system", "ledger");
  CHECK(absl::IsInvalidArgument(read.status()));

  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return absl::UnavailableError("connection refused");
  });
  read = store.Read("kube-system", "ledger");
  CHECK(absl::IsUnavailable(read.status()));
  CHECK(absl::StrContains(read.status().message(), "connection refused"));

  CHECK(absl::IsInvalidArgument(store.Read("kube-system", "../x").status()));
}

TEST_CASE("LedgerStore::Write: merge patch, create when missing, patch after a create race",
          "[ledger_store]") {
  FakeTransport transport;
  LedgerStore store(&transport);
  const std::string ledger_json = quota::EncodeLedger(Example());

  SECTION("exists: one merge patch of the data key") {
    transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
      return HttpResponse{200, "{}"};
    });
    REQUIRE(store.Write("kube-system", "ledger", Example()).ok());
    const auto requests = transport.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "PATCH");
    CHECK(requests[0].target == kPath);
    CHECK(requests[0].content_type == "application/merge-patch+json");
    rapidjson::Document patch;
    patch.Parse(requests[0].body.c_str());
    REQUIRE(patch.IsObject());
    CHECK(std::string(patch["data"]["ledger.json"].GetString()) == ledger_json);
    CHECK(patch.MemberCount() == 1);
  }

  SECTION("missing: created") {
    transport.OnDo([](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      return request.method == "PATCH" ? Status(404) : HttpResponse{201, "{}"};
    });
    REQUIRE(store.Write("kube-system", "ledger", Example()).ok());
    const auto requests = transport.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].method == "POST");
    CHECK(requests[1].target == "/api/v1/namespaces/kube-system/configmaps");
    rapidjson::Document object;
    object.Parse(requests[1].body.c_str());
    REQUIRE(object.IsObject());
    CHECK(std::string(object["kind"].GetString()) == "ConfigMap");
    CHECK(std::string(object["metadata"]["name"].GetString()) == "ledger");
    CHECK(std::string(object["metadata"]["namespace"].GetString()) == "kube-system");
    CHECK(std::string(object["data"]["ledger.json"].GetString()) == ledger_json);
  }

  SECTION("created by someone else meanwhile: patched after all") {
    int patches = 0;
    transport.OnDo([&patches](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      if (request.method == "POST") return Status(409);
      return ++patches == 1 ? Status(404) : HttpResponse{200, "{}"};
    });
    REQUIRE(store.Write("kube-system", "ledger", Example()).ok());
    CHECK(transport.requests().size() == 3);
  }

  SECTION("errors name the ConfigMap") {
    transport.OnDo([](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      return request.method == "PATCH" ? Status(404) : Status(403);
    });
    absl::Status status = store.Write("kube-system", "ledger", Example());
    CHECK(absl::IsPermissionDenied(status));
    CHECK(absl::StrContains(status.message(), "writing ledger ConfigMap kube-system/ledger"));
    CHECK(absl::StrContains(status.message(), "says the server"));
  }

  SECTION("a name that is not a path segment is refused without a request") {
    CHECK(absl::IsInvalidArgument(store.Write("kube-system", "a/b", Example())));
    CHECK(transport.requests().empty());
  }
}

}  // namespace
}  // namespace kubesched::client
