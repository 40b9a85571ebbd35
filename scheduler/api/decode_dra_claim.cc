// Decoding of ResourceClaims and ResourceClaimTemplates (resource.k8s.io/v1; see dra.h).

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode_internal.h"

namespace kubesched::api::internal {
namespace {

// The fields `exactly` and each firstAvailable[] entry share.
absl::Status DecodeRequestSpec(const Json& value, const Path& path, DeviceRequestSpec* out) {
  KUBESCHED_RETURN_IF_ERROR(
      ReadRequiredString(value, "deviceClassName", path, &out->device_class_name));
  KUBESCHED_RETURN_IF_ERROR(DecodeDeviceSelectors(value, path, &out->selectors));
  KUBESCHED_RETURN_IF_ERROR(ReadEnum(
      value, "allocationMode", path,
      {{"ExactCount", DeviceAllocationMode::kExactCount}, {"All", DeviceAllocationMode::kAll}},
      &out->allocation_mode));
  std::optional<int64_t> count;
  KUBESCHED_RETURN_IF_ERROR(ReadInt64(value, "count", path, &count));
  if (out->allocation_mode == DeviceAllocationMode::kExactCount) {
    out->count = count.value_or(1);
    if (out->count < 1) return path.Field("count").Error("must be >= 1");
  } else if (count.has_value()) {
    return path.Field("count").Error("must not be set when allocationMode is All");
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceRequest> DecodeRequest(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  DeviceRequest request;
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "name", path, &request.name));
  absl::StatusOr<const Json*> exactly = FindMember(value, "exactly", path);
  if (!exactly.ok()) return exactly.status();
  if (*exactly != nullptr) {
    const Path at = path.Field("exactly");
    DeviceRequestSpec spec;
    KUBESCHED_RETURN_IF_ERROR(DecodeRequestSpec(**exactly, at, &spec));
    KUBESCHED_RETURN_IF_ERROR(ReadBool(**exactly, "adminAccess", at, &request.admin_access));
    request.exactly = std::move(spec);
  }
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "firstAvailable", path, [&](const Json& element, const Path& at) {
        KUBESCHED_RETURN_IF_ERROR(ExpectObject(element, at));
        DeviceSubRequest sub;
        KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(element, "name", at, &sub.name));
        KUBESCHED_RETURN_IF_ERROR(DecodeRequestSpec(element, at, &sub.spec));
        request.first_available.push_back(std::move(sub));
        return absl::OkStatus();
      }));
  if (request.exactly.has_value() == !request.first_available.empty()) {
    return path.Error("exactly one of exactly, firstAvailable must be set");
  }
  return request;
}

absl::StatusOr<DeviceConstraint> DecodeConstraint(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  DeviceConstraint constraint;
  KUBESCHED_RETURN_IF_ERROR(ReadStringList(value, "requests", path, &constraint.requests));
  std::string attribute;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "matchAttribute", path, &attribute));
  if (!attribute.empty()) {
    if (attribute.find('/') == std::string::npos) {
      return path.Field("matchAttribute")
          .Error(absl::StrCat("\"", attribute, "\" must be a fully qualified name (domain/name)"));
    }
    constraint.match_attribute = Intern(attribute);
  }
  return constraint;
}

absl::StatusOr<DeviceClaimConfiguration> DecodeClaimConfig(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  DeviceClaimConfiguration config;
  KUBESCHED_RETURN_IF_ERROR(ReadStringList(value, "requests", path, &config.requests));
  absl::StatusOr<OpaqueDeviceConfiguration> opaque = DecodeOpaqueConfig(value, path);
  if (!opaque.ok()) return opaque.status();
  config.opaque = *std::move(opaque);
  return config;
}

absl::Status DecodeClaimSpec(const Json& spec, const Path& path, ResourceClaimSpec* out) {
  absl::StatusOr<const Json*> devices = FindMember(spec, "devices", path);
  if (!devices.ok() || *devices == nullptr) return devices.status();
  const Path at = path.Field("devices");
  KUBESCHED_RETURN_IF_ERROR(ReadArray(**devices, "requests", at, DecodeRequest, &out->requests));
  KUBESCHED_RETURN_IF_ERROR(
      ReadArray(**devices, "constraints", at, DecodeConstraint, &out->constraints));
  return ReadArray(**devices, "config", at, DecodeClaimConfig, &out->config);
}

absl::StatusOr<DeviceRequestAllocationResult> DecodeResult(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  DeviceRequestAllocationResult result;
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "request", path, &result.request));
  std::string text;
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "driver", path, &text));
  result.driver = Intern(text);
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "pool", path, &text));
  result.pool = Intern(text);
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "device", path, &text));
  result.device = Intern(text);
  KUBESCHED_RETURN_IF_ERROR(ReadBool(value, "adminAccess", path, &result.admin_access));
  return result;
}

absl::StatusOr<ResourceClaimConsumer> DecodeConsumer(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  ResourceClaimConsumer consumer;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "apiGroup", path, &consumer.api_group));
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "resource", path, &consumer.resource));
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "name", path, &consumer.name));
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(value, "uid", path, &consumer.uid));
  return consumer;
}

absl::Status DecodeAllocation(const Json& allocation, const Path& path, AllocationResult* out) {
  absl::StatusOr<const Json*> devices = FindMember(allocation, "devices", path);
  if (!devices.ok()) return devices.status();
  if (*devices != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(
        ReadArray(**devices, "results", path.Field("devices"), DecodeResult, &out->devices));
  }
  if (const Json* selector = Find(allocation, "nodeSelector")) {
    absl::StatusOr<NodeSelector> decoded =
        DecodeNodeSelector(*selector, path.Field("nodeSelector"));
    if (!decoded.ok()) return decoded.status();
    out->node_selector = *std::move(decoded);
  }
  return absl::OkStatus();
}

absl::Status DecodeClaimStatus(const Json& status, const Path& path, ResourceClaim* out) {
  absl::StatusOr<const Json*> allocation = FindMember(status, "allocation", path);
  if (!allocation.ok()) return allocation.status();
  if (*allocation != nullptr) {
    AllocationResult result;
    KUBESCHED_RETURN_IF_ERROR(DecodeAllocation(**allocation, path.Field("allocation"), &result));
    out->allocation = std::move(result);
  }
  return ReadArray(status, "reservedFor", path, DecodeConsumer, &out->reserved_for);
}

}  // namespace

absl::StatusOr<ResourceClaim> DecodeResourceClaim(const Json& object) {
  ResourceClaim claim;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &claim.meta));
  absl::StatusOr<const Json*> spec = FindMember(object, "spec", Path());
  if (!spec.ok()) return spec.status();
  if (*spec != nullptr)
    KUBESCHED_RETURN_IF_ERROR(DecodeClaimSpec(**spec, Path("spec"), &claim.spec));
  absl::StatusOr<const Json*> status = FindMember(object, "status", Path());
  if (!status.ok()) return status.status();
  if (*status != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(DecodeClaimStatus(**status, Path("status"), &claim));
  }
  return claim;
}

absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(const Json& object) {
  ResourceClaimTemplate claim_template;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &claim_template.meta));
  absl::StatusOr<const Json*> spec = FindMember(object, "spec", Path());
  if (!spec.ok()) return spec.status();
  const Path path("spec");
  if (*spec == nullptr) return path.Error("missing");
  absl::StatusOr<const Json*> claim_spec = FindMember(**spec, "spec", path);
  if (!claim_spec.ok()) return claim_spec.status();
  if (*claim_spec == nullptr) return path.Field("spec").Error("missing");
  KUBESCHED_RETURN_IF_ERROR(
      DecodeClaimSpec(**claim_spec, path.Field("spec"), &claim_template.spec));
  return claim_template;
}

}  // namespace kubesched::api::internal
