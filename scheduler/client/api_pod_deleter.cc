#include "scheduler/client/api_pod_deleter.h"

#include "absl/strings/str_cat.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/status_macros.h"

namespace kubesched::client {

namespace {

std::string DeleteOptionsBody(const std::string& uid) {
  JsonWriter json;
  json.BeginObject()
      .Field("kind", "DeleteOptions")
      .Field("apiVersion", "v1")
      .Key("preconditions")
      .BeginObject()
      .Field("uid", uid)
      .EndObject()
      .EndObject();
  return json.str();
}

}  // namespace

absl::Status ApiPodDeleter::DeletePod(const std::string& namespace_name, const std::string& name,
                                      const std::string& uid) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("pod namespace", namespace_name));
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("pod name", name));
  const std::string what =
      absl::StrCat("deleting pod ", namespace_name, "/", name, " (uid ", uid, ")");

  HttpRequest request;
  request.method = "DELETE";
  request.target = PodPath(namespace_name, name);
  request.body = DeleteOptionsBody(uid);
  request.content_type = "application/json";

  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(what, ": ", response.status().message()));
  }
  switch (response->status) {
    case 200:
    case 202:
      return absl::OkStatus();
    case 404:
      return absl::NotFoundError(StatusFromResponse(*response, what).message());
    case 409:
      return absl::FailedPreconditionError(StatusFromResponse(*response, what).message());
    default:
      return StatusFromResponse(*response, what);
  }
}

}  // namespace kubesched::client
