#include "tests/testapi/dra_validation.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {

absl::Status CheckDraObject(const ResourceType& type, const rapidjson::Value& object) {
  if (type.group != "resource.k8s.io") return absl::OkStatus();
  // kubesched's decoder refuses exactly the shapes the API server's validation refuses that a
  // scheduler depends on; its message names the object and the field.
  absl::StatusOr<api::Object> decoded = api::DecodeObjectValue(object, type.kind);
  if (decoded.ok()) return absl::OkStatus();
  std::string_view message = util::Std(decoded.status().message());
  // "ResourceClaim ns/name: spec...: why" -> "spec...: why".
  if (const size_t colon = message.find(": "); colon != std::string_view::npos) {
    message.remove_prefix(colon + 2);
  }
  return MarkInvalid(absl::InvalidArgumentError(
      absl::StrCat(type.kind, ".", type.group, " \"", StringAt(object, "metadata.name"),
                   "\" is invalid: ", util::Absl(message))));
}

}  // namespace kubesched::testapi
