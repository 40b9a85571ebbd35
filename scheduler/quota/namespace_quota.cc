#include "scheduler/quota/namespace_quota.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rapidjson/document.h"
#include "scheduler/api/quantity.h"

namespace kubesched::quota {

absl::Status ParseNamespaceQuota(std::string_view text, api::ResourceList* max,
                                 std::vector<api::ResourceId>* limited) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError("must be a JSON object of resource quantities");
  }
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string name(it->name.GetString(), it->name.GetStringLength());
    std::string value;
    if (it->value.IsString()) {
      value.assign(it->value.GetString(), it->value.GetStringLength());
    } else if (it->value.IsInt64()) {
      value = absl::StrCat(it->value.GetInt64());
    } else if (it->value.IsDouble()) {
      value = absl::StrFormat("%.17g", it->value.GetDouble());
    } else {
      return absl::InvalidArgumentError(absl::StrCat(name, ": not a quantity"));
    }
    auto quantity = api::Quantity::Parse(value);
    if (!quantity.ok() || quantity->milli() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": \"", value, "\" is not a quantity"));
    }
    const api::ResourceId id = api::InternResource(name);
    if (std::find(limited->begin(), limited->end(), id) == limited->end()) limited->push_back(id);
    max->Set(id, api::CanonicalAmount(id, *quantity));
  }
  return absl::OkStatus();
}

}  // namespace kubesched::quota
