// The volume plugins' args: VolumeBinding's, with upstream's v1 field names, default and
// validation.

#include <string>

#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "config/plugin_args_internal.h"
#include "config/yaml_reader.h"

namespace kubesched::config {

using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Reader;

absl::StatusOr<PluginArgs> DecodeVolumeBindingArgs(const YAML::Node& node, std::string_view path) {
  Reader r;
  VolumeBindingArgs args;
  if (!r.Map(node, path, {"apiVersion", "kind", "bindTimeoutSeconds", "shape"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "VolumeBindingArgs", /*required=*/false);
  r.Int64(Get(node, "bindTimeoutSeconds"), Field(path, "bindTimeoutSeconds"),
          &args.bind_timeout_seconds);
  if (r.ok() && args.bind_timeout_seconds < 0) {
    r.Fail(Field(path, "bindTimeoutSeconds"),
           absl::StrCat("Invalid value: ", args.bind_timeout_seconds,
                        ": invalid BindTimeoutSeconds, should not be a negative value"));
  }
  // Upstream accepts a shape only with the VolumeCapacityPriority feature gate, which kubesched
  // does not have (capacity scoring).
  if (r.ok() && HasValue(Get(node, "shape"))) {
    r.Fail(Field(path, "shape"), "unsupported when VolumeCapacityPriority feature is disabled");
  }
  if (!r.ok()) return r.status();
  return PluginArgs(args);
}

}  // namespace kubesched::config
