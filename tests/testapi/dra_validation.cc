#include "tests/testapi/dra_validation.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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

namespace {

const rapidjson::Value* StatusField(const rapidjson::Value& claim, const char* name) {
  if (!claim.IsObject() || !HasMember(claim, "status") || !claim["status"].IsObject()) {
    return nullptr;
  }
  const rapidjson::Value& status = claim["status"];
  if (!HasMember(status, name) || status[name].IsNull()) return nullptr;
  return &status[name];
}

std::vector<std::string> ConsumerUids(const rapidjson::Value* reserved_for) {
  std::vector<std::string> uids;
  if (reserved_for == nullptr || !reserved_for->IsArray()) return uids;
  for (const rapidjson::Value& consumer : reserved_for->GetArray()) {
    uids.push_back(StringAt(consumer, "uid"));
  }
  return uids;
}

}  // namespace

absl::Status CheckClaimStatusUpdate(const ResourceType& type, const rapidjson::Value& before,
                                    const rapidjson::Value& after) {
  if (type.group != "resource.k8s.io" || type.kind != "ResourceClaim") return absl::OkStatus();
  const auto invalid = [&after](std::string_view why) {
    return MarkInvalid(absl::InvalidArgumentError(
        absl::StrCat("ResourceClaim.resource.k8s.io \"", StringAt(after, "metadata.name"),
                     "\" is invalid: ", util::Absl(why))));
  };
  const rapidjson::Value* old_allocation = StatusField(before, "allocation");
  const rapidjson::Value* allocation = StatusField(after, "allocation");
  if (old_allocation != nullptr && allocation != nullptr && *old_allocation != *allocation) {
    return invalid("status.allocation: Invalid value: \"object\": field is immutable");
  }
  const std::vector<std::string> uids = ConsumerUids(StatusField(after, "reservedFor"));
  if (uids.size() > 256) {
    return invalid(absl::StrCat("status.reservedFor: Too many: ", uids.size(),
                                ": must have at most 256 items"));
  }
  for (size_t i = 0; i < uids.size(); ++i) {
    if (std::find(uids.begin(), uids.begin() + static_cast<std::ptrdiff_t>(i), uids[i]) !=
        uids.begin() + static_cast<std::ptrdiff_t>(i)) {
      return invalid(
          absl::StrCat("status.reservedFor[", i, "].uid: Duplicate value: \"", uids[i], "\""));
    }
  }
  if (uids.empty()) return absl::OkStatus();
  if (allocation == nullptr) {
    return invalid(
        "status.reservedFor: Forbidden: may not be specified when `allocated` is not set");
  }
  if (!StringAt(after, "metadata.deletionTimestamp").empty()) {
    const std::vector<std::string> old_uids = ConsumerUids(StatusField(before, "reservedFor"));
    for (const std::string& uid : uids) {
      if (std::find(old_uids.begin(), old_uids.end(), uid) != old_uids.end()) continue;
      return invalid(
          "status.reservedFor: Forbidden: new entries may not be added while "
          "`deallocationRequested` or `deletionTimestamp` are set");
    }
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
