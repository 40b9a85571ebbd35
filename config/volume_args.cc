// The args of the plugins that bind what a pod uses besides room: VolumeBinding's and
// DynamicResources', with upstream's v1 field names, defaults and validation.

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

absl::StatusOr<PluginArgs> DecodeDynamicResourcesArgs(const YAML::Node& node,
                                                      std::string_view path) {
  Reader r;
  DynamicResourcesArgs args;
  if (!r.Map(node, path, {"apiVersion", "kind", "filterTimeout", "bindingTimeout"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "DynamicResourcesArgs", /*required=*/false);
  const YAML::Node timeout = Get(node, "filterTimeout");
  if (HasValue(timeout)) r.Duration(timeout, Field(path, "filterTimeout"), &args.filter_timeout);
  if (r.ok() && args.filter_timeout < absl::ZeroDuration()) {
    r.Fail(Field(path, "filterTimeout"),
           absl::StrCat("Invalid value: \"", absl::FormatDuration(args.filter_timeout),
                        "\": must be zero or positive"));
  }
  // Upstream accepts bindingTimeout only with the DRADeviceBindingConditions feature gate (alpha
  // in Kubernetes 1.34), which kubesched does not have: devices with binding conditions.
  if (r.ok() && HasValue(Get(node, "bindingTimeout"))) {
    r.Fail(Field(path, "bindingTimeout"),
           "disabled field, enable the DRADeviceBindingConditions feature gate");
  }
  if (!r.ok()) return r.status();
  return PluginArgs(args);
}

}  // namespace kubesched::config
