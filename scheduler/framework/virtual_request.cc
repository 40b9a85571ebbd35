#include "scheduler/framework/virtual_request.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::framework {

absl::StatusOr<api::ResourceList> ParseVirtualRequest(std::string_view json) {
  // The object decoder's resource-list reader gives the same quantity rules and messages as
  // requests in a pod spec; it reads a member, so the value is wrapped in one.
  const std::string wrapped = absl::StrCat("{\"virtualRequest\":", util::Absl(json), "}");
  rapidjson::Document doc;
  doc.Parse(wrapped.data(), wrapped.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a JSON resource list: ", rapidjson::GetParseError_En(doc.GetParseError())));
  }
  const rapidjson::Value& value = doc["virtualRequest"];
  if (!value.IsObject()) {
    return absl::InvalidArgumentError("not a JSON resource list: expected an object");
  }
  api::ResourceList out;
  const api::internal::Path root;
  if (absl::Status status = api::internal::ReadResources(doc, "virtualRequest", root, &out);
      !status.ok()) {
    return status;
  }
  return out;
}

api::ResourceList ComputeVirtualRequest(const api::Pod& pod, const api::ResourceList& requests,
                                        absl::Status* error) {
  *error = absl::OkStatus();
  const auto& annotations = pod.meta.annotations;
  auto it = annotations.find(std::string(kVirtualRequestAnnotation));
  if (it == annotations.end()) return requests;
  absl::StatusOr<api::ResourceList> parsed = ParseVirtualRequest(it->second);
  if (!parsed.ok()) {
    *error = parsed.status();
    return requests;
  }
  return *std::move(parsed);
}

}  // namespace kubesched::framework
