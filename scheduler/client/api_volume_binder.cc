#include "scheduler/client/api_volume_binder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";

// The object of type T in a response body; an error naming `what` when the body is not one.
template <typename T>
absl::StatusOr<std::shared_ptr<const T>> DecodeAnswer(const HttpResponse& response,
                                                      std::string_view what) {
  auto decoded = api::DecodeObjects(response.body, what);
  if (!decoded.ok()) return decoded.status();
  for (auto& object : decoded->objects) {
    if (auto* typed = std::get_if<T>(&object)) {
      return std::make_shared<const T>(std::move(*typed));
    }
  }
  return absl::InternalError(
      absl::StrCat(util::Absl(what), ": the server's answer is not the object written"));
}

absl::StatusOr<HttpResponse> Patch(HttpTransport& transport, std::string target, std::string body,
                                   std::string_view what) {
  HttpRequest request;
  request.method = "PATCH";
  request.target = std::move(target);
  request.body = std::move(body);
  request.content_type = std::string(kMergePatch);
  absl::StatusOr<HttpResponse> response = transport.Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(util::Absl(what), ": ", response.status().message()));
  }
  KUBESCHED_RETURN_IF_ERROR(StatusFromResponse(*response, what));
  return response;
}

}  // namespace

std::string ApiVolumeBinder::ClaimRefPatch(const api::PersistentVolume& volume) {
  JsonWriter json;
  json.BeginObject().Key("metadata").BeginObject();
  // In a merge patch, a resourceVersion is a precondition: 409 if the PV moved on.
  json.Field("resourceVersion", volume.meta.resource_version);
  const auto bound_by = volume.meta.annotations.find(api::kBoundByControllerAnnotation);
  if (bound_by != volume.meta.annotations.end()) {
    json.Key("annotations").BeginObject().Field(bound_by->first, bound_by->second).EndObject();
  }
  json.EndObject().Key("spec").BeginObject().Key("claimRef").BeginObject();
  if (volume.claim_ref.has_value()) {
    const api::ObjectReference& ref = *volume.claim_ref;
    json.Field("kind", "PersistentVolumeClaim")
        .Field("apiVersion", "v1")
        .Field("namespace", ref.namespace_name)
        .Field("name", ref.name);
    if (!ref.uid.empty()) json.Field("uid", ref.uid);
  }
  json.EndObject().EndObject().EndObject();
  return json.str();
}

std::string ApiVolumeBinder::SelectedNodePatch(const api::PersistentVolumeClaim& claim) {
  const auto selected = claim.meta.annotations.find(api::kSelectedNodeAnnotation);
  JsonWriter json;
  json.BeginObject().Key("metadata").BeginObject().Key("annotations").BeginObject();
  json.Field(api::kSelectedNodeAnnotation,
             selected != claim.meta.annotations.end() ? selected->second : "");
  json.EndObject().EndObject().EndObject();
  return json.str();
}

absl::StatusOr<framework::VolumeWriteResult> ApiVolumeBinder::BindVolume(
    const api::PersistentVolume& volume) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("persistentvolume name", volume.meta.name));
  if (!volume.claim_ref.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("binding persistentvolume ", volume.meta.name, ": no claimRef to write"));
  }
  const std::string what =
      absl::StrCat("binding persistentvolume ", volume.meta.name, " to claim ",
                   volume.claim_ref->namespace_name, "/", volume.claim_ref->name);
  auto response = Patch(*transport_, absl::StrCat("/api/v1/persistentvolumes/", volume.meta.name),
                        ClaimRefPatch(volume), what);
  if (!response.ok()) return response.status();
  auto stored = DecodeAnswer<api::PersistentVolume>(*response, what);
  if (!stored.ok()) return stored.status();
  return framework::VolumeWriteResult{*std::move(stored), nullptr};
}

absl::StatusOr<framework::VolumeWriteResult> ApiVolumeBinder::SelectNode(
    const api::PersistentVolumeClaim& claim) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("claim namespace", claim.meta.namespace_name));
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("claim name", claim.meta.name));
  const std::string what = absl::StrCat("selecting a node for persistentvolumeclaim ",
                                        claim.meta.namespace_name, "/", claim.meta.name);
  auto response = Patch(*transport_,
                        absl::StrCat("/api/v1/namespaces/", claim.meta.namespace_name,
                                     "/persistentvolumeclaims/", claim.meta.name),
                        SelectedNodePatch(claim), what);
  if (!response.ok()) return response.status();
  auto stored = DecodeAnswer<api::PersistentVolumeClaim>(*response, what);
  if (!stored.ok()) return stored.status();
  return framework::VolumeWriteResult{nullptr, *std::move(stored)};
}

}  // namespace kubesched::client
