#include "scheduler/framework/virtual_request.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "scheduler/util/strings.h"

namespace kubesched::framework {

api::ResourceList ComputeVirtualRequest(const api::Pod& pod, const api::ResourceList& requests,
                                        absl::Status* error) {
  *error = absl::OkStatus();
  const auto& annotations = pod.meta.annotations;
  auto it = annotations.find(std::string(kVirtualRequestAnnotation));
  if (it == annotations.end()) return requests;
  absl::StatusOr<api::ResourceList> parsed = api::DecodeResourceListJson(it->second);
  if (!parsed.ok()) {
    *error = parsed.status();
    return requests;
  }
  return *std::move(parsed);
}

}  // namespace kubesched::framework
