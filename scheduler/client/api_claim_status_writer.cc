#include "scheduler/client/api_claim_status_writer.h"

#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

// The finalizer an allocated claim carries, so that it is not deleted while its devices are in use
// (upstream's resourceapi.Finalizer).
constexpr std::string_view kDeleteProtectionFinalizer = "resource.kubernetes.io/delete-protection";

void WriteRequirement(JsonWriter& json, const api::Requirement& requirement) {
  json.BeginObject()
      .Field("key", api::SymbolText(requirement.key))
      .Field("operator", api::SelectorOperatorName(requirement.op));
  if (requirement.op == api::SelectorOperator::kGt ||
      requirement.op == api::SelectorOperator::kLt) {
    json.Key("values").BeginArray().String(absl::StrCat(requirement.number)).EndArray();
  } else if (!requirement.values.empty()) {
    json.Key("values").BeginArray();
    for (const api::Symbol value : requirement.values) json.String(api::SymbolText(value));
    json.EndArray();
  }
  json.EndObject();
}

void WriteNodeSelector(JsonWriter& json, const api::NodeSelector& selector) {
  json.BeginObject().Key("nodeSelectorTerms").BeginArray();
  for (const api::NodeSelectorTerm& term : selector.terms) {
    json.BeginObject();
    if (!term.match_expressions.empty()) {
      json.Key("matchExpressions").BeginArray();
      for (const api::Requirement& requirement : term.match_expressions) {
        WriteRequirement(json, requirement);
      }
      json.EndArray();
    }
    if (!term.match_fields.empty()) {
      json.Key("matchFields").BeginArray();
      for (const api::FieldRequirement& field : term.match_fields) {
        json.BeginObject()
            .Field("key", field.field)
            .Field("operator", api::SelectorOperatorName(field.op));
        json.Key("values").BeginArray();
        for (const std::string& value : field.values) json.String(value);
        json.EndArray().EndObject();
      }
      json.EndArray();
    }
    json.EndObject();
  }
  json.EndArray().EndObject();
}

void WriteConfig(JsonWriter& json, const api::DeviceAllocationConfiguration& config) {
  json.BeginObject().Field("source", config.from_class ? "FromClass" : "FromClaim");
  if (!config.requests.empty()) {
    json.Key("requests").BeginArray();
    for (const std::string& request : config.requests) json.String(request);
    json.EndArray();
  }
  json.Key("opaque").BeginObject().Field("driver", config.opaque.driver);
  if (!config.opaque.parameters_json.empty()) {
    json.Key("parameters").RawValue(config.opaque.parameters_json);
  }
  json.EndObject().EndObject();
}

void WriteAllocation(JsonWriter& json, const api::AllocationResult& allocation) {
  json.BeginObject().Key("devices").BeginObject().Key("results").BeginArray();
  for (const api::DeviceRequestAllocationResult& result : allocation.devices) {
    json.BeginObject()
        .Field("request", result.request)
        .Field("driver", api::SymbolText(result.driver))
        .Field("pool", api::SymbolText(result.pool))
        .Field("device", api::SymbolText(result.device));
    if (result.admin_access) json.Key("adminAccess").Bool(true);
    json.EndObject();
  }
  json.EndArray();
  bool config_open = false;
  for (const api::DeviceAllocationConfiguration& config : allocation.config) {
    // A configuration of a kind this version does not know (no opaque driver) is not repeated.
    if (config.opaque.driver.empty()) continue;
    if (!config_open) json.Key("config").BeginArray();
    config_open = true;
    WriteConfig(json, config);
  }
  if (config_open) json.EndArray();
  json.EndObject();
  if (allocation.node_selector.has_value()) {
    json.Key("nodeSelector");
    WriteNodeSelector(json, *allocation.node_selector);
  }
  json.EndObject();
}

void WriteConsumer(JsonWriter& json, const api::ResourceClaimConsumer& consumer) {
  json.BeginObject();
  if (!consumer.api_group.empty()) json.Field("apiGroup", consumer.api_group);
  json.Field("resource", consumer.resource).Field("name", consumer.name).Field("uid", consumer.uid);
  json.EndObject();
}

// PATCH `target` with `body`; the object the server answers with, or an error naming `what`.
absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> PatchClaim(HttpTransport& transport,
                                                                     std::string target,
                                                                     std::string body,
                                                                     std::string_view content_type,
                                                                     std::string_view what) {
  HttpRequest request;
  request.method = "PATCH";
  request.target = std::move(target);
  request.body = std::move(body);
  request.content_type = std::string(content_type);
  absl::StatusOr<HttpResponse> response = transport.Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(util::Absl(what), ": ", response.status().message()));
  }
  KUBESCHED_RETURN_IF_ERROR(StatusFromResponse(*response, what));
  auto decoded = api::DecodeObjects(response->body, what);
  if (!decoded.ok()) return decoded.status();
  for (auto& object : decoded->objects) {
    if (auto* stored = std::get_if<api::ResourceClaim>(&object)) {
      return std::make_shared<const api::ResourceClaim>(std::move(*stored));
    }
  }
  return absl::InternalError(
      absl::StrCat(util::Absl(what), ": the server's answer is not a ResourceClaim"));
}

std::string ClaimTarget(const api::ResourceClaim& claim) {
  return absl::StrCat("/apis/resource.k8s.io/v1/namespaces/", claim.meta.namespace_name,
                      "/resourceclaims/", claim.meta.name);
}

absl::Status CheckClaimPath(const api::ResourceClaim& claim) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("claim namespace", claim.meta.namespace_name));
  return ValidatePathSegment("claim name", claim.meta.name);
}

std::string StatusTarget(const api::ResourceClaim& claim) {
  return absl::StrCat(ClaimTarget(claim), "/status");
}

}  // namespace

std::string ApiClaimStatusWriter::FinalizerPatch(const api::ResourceClaim& claim) {
  JsonWriter json;
  json.BeginObject().Key("metadata").BeginObject();
  json.Field("resourceVersion", claim.meta.resource_version);
  // A strategic merge patch adds to metadata.finalizers (patchStrategy merge): the claim's other
  // finalizers, which kubesched does not keep, stay.
  json.Key("finalizers").BeginArray().String(kDeleteProtectionFinalizer).EndArray();
  json.EndObject().EndObject();
  return json.str();
}

std::string ApiClaimStatusWriter::ReservationPatch(const api::ResourceClaim& claim,
                                                   const api::AllocationResult* allocation,
                                                   const api::ResourceClaimConsumer& consumer) {
  JsonWriter json;
  // In a merge patch, a resourceVersion is a precondition: 409 if the claim moved on.
  json.BeginObject().Key("metadata").BeginObject();
  json.Field("resourceVersion", claim.meta.resource_version).EndObject();
  json.Key("status").BeginObject();
  if (allocation != nullptr) {
    json.Key("allocation");
    WriteAllocation(json, *allocation);
  }
  // A merge patch replaces a list whole: the claim's consumers, then the pod.
  json.Key("reservedFor").BeginArray();
  for (const api::ResourceClaimConsumer& existing : claim.reserved_for) {
    WriteConsumer(json, existing);
  }
  WriteConsumer(json, consumer);
  json.EndArray().EndObject().EndObject();
  return json.str();
}

std::string ApiClaimStatusWriter::RemoveReservationPatch(const api::ResourceClaim& claim,
                                                         std::string_view consumer_uid) {
  JsonWriter json;
  json.BeginObject();
  if (!claim.meta.uid.empty()) {
    json.Key("metadata").BeginObject().Field("uid", claim.meta.uid).EndObject();
  }
  json.Key("status").BeginObject().Key("reservedFor").BeginArray();
  json.BeginObject().Field("$patch", "delete").Field("uid", consumer_uid).EndObject();
  json.EndArray().EndObject().EndObject();
  return json.str();
}

std::string ApiClaimStatusWriter::DeallocationPatch(const api::ResourceClaim& claim) {
  JsonWriter json;
  json.BeginObject().Key("metadata").BeginObject();
  json.Field("resourceVersion", claim.meta.resource_version).EndObject();
  json.Key("status").BeginObject();
  json.Key("allocation").Null().Key("reservedFor").Null().Key("devices").Null();
  json.EndObject().EndObject();
  return json.str();
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> ApiClaimStatusWriter::WriteReservation(
    const api::ResourceClaim& claim, const api::AllocationResult* allocation,
    const api::ResourceClaimConsumer& consumer) {
  KUBESCHED_RETURN_IF_ERROR(CheckClaimPath(claim));
  const std::string target = ClaimTarget(claim);
  const std::string name = absl::StrCat(claim.meta.namespace_name, "/", claim.meta.name);
  // The status patch builds on the version the finalizer's patch left, which is the claim as
  // decided on in every other respect.
  std::string version = claim.meta.resource_version;
  if (allocation != nullptr) {
    auto protected_claim = PatchClaim(
        *transport_, target, FinalizerPatch(claim), "application/strategic-merge-patch+json",
        absl::StrCat("adding the delete-protection finalizer to resourceclaim ", name));
    if (!protected_claim.ok()) return protected_claim.status();
    version = (*protected_claim)->meta.resource_version;
  }
  api::ResourceClaim decided_on = claim;
  decided_on.meta.resource_version = version;
  return PatchClaim(
      *transport_, StatusTarget(claim), ReservationPatch(decided_on, allocation, consumer),
      "application/merge-patch+json", absl::StrCat("writing the status of resourceclaim ", name));
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> ApiClaimStatusWriter::RemoveReservation(
    const api::ResourceClaim& claim, std::string_view consumer_uid) {
  KUBESCHED_RETURN_IF_ERROR(CheckClaimPath(claim));
  return PatchClaim(*transport_, StatusTarget(claim), RemoveReservationPatch(claim, consumer_uid),
                    "application/strategic-merge-patch+json",
                    absl::StrCat("removing the reservation of resourceclaim ",
                                 claim.meta.namespace_name, "/", claim.meta.name));
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> ApiClaimStatusWriter::Deallocate(
    const api::ResourceClaim& claim) {
  KUBESCHED_RETURN_IF_ERROR(CheckClaimPath(claim));
  return PatchClaim(
      *transport_, StatusTarget(claim), DeallocationPatch(claim), "application/merge-patch+json",
      absl::StrCat("deallocating resourceclaim ", claim.meta.namespace_name, "/", claim.meta.name));
}

}  // namespace kubesched::client
