#include "scheduler/client/ledger_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/quota/ledger_json.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

using util::Absl;

constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr std::string_view kJson = "application/json";

std::string CollectionPath(std::string_view namespace_name) {
  return absl::StrCat("/api/v1/namespaces/", Absl(namespace_name), "/configmaps");
}

std::string ObjectPath(std::string_view namespace_name, std::string_view name) {
  return absl::StrCat(CollectionPath(namespace_name), "/", Absl(name));
}

absl::Status ValidateRef(std::string_view namespace_name, std::string_view name) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("ledger ConfigMap namespace", namespace_name));
  return ValidatePathSegment("ledger ConfigMap name", name);
}

}  // namespace

std::string LedgerStore::PatchBody(std::string_view ledger_json) {
  JsonWriter json;
  json.BeginObject()
      .Key("data")
      .BeginObject()
      .Field(quota::kLedgerConfigMapKey, ledger_json)
      .EndObject()
      .EndObject();
  return json.str();
}

std::string LedgerStore::CreateBody(std::string_view namespace_name, std::string_view name,
                                    std::string_view ledger_json) {
  JsonWriter json;
  json.BeginObject()
      .Field("apiVersion", "v1")
      .Field("kind", "ConfigMap")
      .Key("metadata")
      .BeginObject()
      .Field("name", name)
      .Field("namespace", namespace_name)
      .Key("labels")
      .BeginObject()
      .Field("app.kubernetes.io/managed-by", "kubesched")
      .EndObject()
      .EndObject()
      .Key("data")
      .BeginObject()
      .Field(quota::kLedgerConfigMapKey, ledger_json)
      .EndObject()
      .EndObject();
  return json.str();
}

absl::StatusOr<HttpResponse> LedgerStore::Send(std::string method, std::string target,
                                               std::string body, std::string content_type) const {
  HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.body = std::move(body);
  request.content_type = std::move(content_type);
  request.timeout = timeout_;
  return transport_->Do(request);
}

absl::StatusOr<std::optional<quota::Ledger>> LedgerStore::Read(std::string_view namespace_name,
                                                               std::string_view name) {
  KUBESCHED_RETURN_IF_ERROR(ValidateRef(namespace_name, name));
  const std::string path = ObjectPath(namespace_name, name);
  const std::string what =
      absl::StrCat("reading ledger ConfigMap ", Absl(namespace_name), "/", Absl(name));
  absl::StatusOr<HttpResponse> response = Send("GET", path, "", "");
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(what, ": ", response.status().message()));
  }
  if (response->status == 404) return std::optional<quota::Ledger>();
  KUBESCHED_RETURN_IF_ERROR(StatusFromResponse(*response, what));

  rapidjson::Document object;
  object.Parse<rapidjson::kParseIterativeFlag>(response->body.data(), response->body.size());
  if (object.HasParseError() || !object.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the response is not a JSON object"));
  }
  auto data = object.FindMember("data");
  const rapidjson::Value* text = nullptr;
  if (data != object.MemberEnd() && data->value.IsObject()) {
    auto member = data->value.FindMember(quota::kLedgerConfigMapKey);
    if (member != data->value.MemberEnd()) text = &member->value;
  }
  if (text == nullptr || !text->IsString()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": no data key ", quota::kLedgerConfigMapKey));
  }
  absl::StatusOr<quota::Ledger> ledger =
      quota::DecodeLedger(std::string_view(text->GetString(), text->GetStringLength()));
  if (!ledger.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", ledger.status().message()));
  }
  return std::optional<quota::Ledger>(*std::move(ledger));
}

absl::Status LedgerStore::Write(std::string_view namespace_name, std::string_view name,
                                const quota::Ledger& ledger) {
  KUBESCHED_RETURN_IF_ERROR(ValidateRef(namespace_name, name));
  const std::string path = ObjectPath(namespace_name, name);
  const std::string what =
      absl::StrCat("writing ledger ConfigMap ", Absl(namespace_name), "/", Absl(name));
  const std::string text = quota::EncodeLedger(ledger);
  auto patch = [&]() -> absl::StatusOr<int> {
    absl::StatusOr<HttpResponse> response =
        Send("PATCH", path, PatchBody(text), std::string(kMergePatch));
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat(what, ": ", response.status().message()));
    }
    if (response->status == 404) return 404;
    KUBESCHED_RETURN_IF_ERROR(StatusFromResponse(*response, what));
    return response->status;
  };

  absl::StatusOr<int> patched = patch();
  if (!patched.ok() || *patched != 404) return patched.status();
  absl::StatusOr<HttpResponse> created =
      Send("POST", CollectionPath(namespace_name), CreateBody(namespace_name, name, text),
           std::string(kJson));
  if (!created.ok()) {
    return absl::Status(created.status().code(),
                        absl::StrCat(what, ": ", created.status().message()));
  }
  if (created->status == 409) {
    // Created by someone else between our PATCH and POST: patch it after all.
    patched = patch();
    if (patched.ok() && *patched == 404) {
      return absl::NotFoundError(absl::StrCat(what, ": created and deleted concurrently"));
    }
    return patched.status();
  }
  return StatusFromResponse(*created, what);
}

}  // namespace kubesched::client
