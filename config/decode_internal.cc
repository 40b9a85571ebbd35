#include "config/decode_internal.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "plugins/names.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

namespace names = plugins::names;
using util::Absl;

constexpr std::string_view kApiVersionV1 = "kubescheduler.config.k8s.io/v1";
// v1beta3 has the same shape as v1 for everything kubesched reads; older betas do not.
constexpr std::string_view kApiVersionV1beta3 = "kubescheduler.config.k8s.io/v1beta3";

template <typename Range>
bool Contains(const Range& range, std::string_view name) {
  return std::find(range.begin(), range.end(), name) != range.end();
}

}  // namespace

absl::Status CheckPluginName(std::string_view name) {
  if (Contains(names::kAll, name)) return absl::OkStatus();
  if (Contains(names::kUpstreamOnly, name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("plugin \"", Absl(name), "\" is not supported by kubesched"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown plugin \"", Absl(name), "\""));
}

bool IsDisableableName(std::string_view name) {
  return name == "*" || Contains(names::kAll, name) || Contains(names::kUpstreamOnly, name);
}

void CheckTypeMeta(yaml::Reader& reader, const YAML::Node& map, std::string_view path,
                   std::string_view kind, bool required) {
  const std::string version_path = yaml::Field(path, "apiVersion");
  const std::string kind_path = yaml::Field(path, "kind");
  std::string got_version;
  std::string got_kind;
  reader.String(yaml::Get(map, "apiVersion"), version_path, &got_version);
  reader.String(yaml::Get(map, "kind"), kind_path, &got_kind);
  if (!reader.ok()) return;
  if (got_version.empty()) {
    if (required) reader.Fail(version_path, absl::StrCat("required: ", Absl(kApiVersionV1)));
  } else if (got_version != kApiVersionV1 && got_version != kApiVersionV1beta3) {
    reader.Fail(version_path, absl::StrCat("unsupported version \"", got_version, "\"; want ",
                                           Absl(kApiVersionV1), " (or v1beta3)"));
  }
  if (got_kind.empty()) {
    if (required) reader.Fail(kind_path, absl::StrCat("required: ", Absl(kind)));
  } else if (got_kind != kind) {
    reader.Fail(kind_path, absl::StrCat("must be ", Absl(kind), ", got \"", got_kind, "\""));
  }
}

}  // namespace kubesched::config
