#pragma once

// Pieces of config decoding shared by config.cc and plugin_args.cc. Internal to config/.

#include <yaml-cpp/yaml.h>

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/config.h"
#include "config/plugin_args.h"
#include "config/queues.h"
#include "config/yaml_reader.h"

namespace kubesched::config {

// OK for a plugin kubesched has (plugins::names::kAll); otherwise InvalidArgument without a path:
// `plugin "VolumeBinding" is not supported by kubesched` for an upstream plugin kubesched lacks,
// `unknown plugin "Foo"` for anything else.
absl::Status CheckPluginName(std::string_view name);

// True for a name a disabled list may carry: a kubesched plugin, an upstream-only one (configs
// written for kube-scheduler disable those) or "*".
bool IsDisableableName(std::string_view name);

// Checks the apiVersion and kind fields of `map` (kubescheduler.config.k8s.io/v1 or v1beta3, and
// `kind`). When `required` is false, absent fields are fine (typed plugin args carry them
// optionally).
void CheckTypeMeta(yaml::Reader& reader, const YAML::Node& map, std::string_view path,
                   std::string_view kind, bool required);

// Decodes and validates the args of `plugin_name`, which CheckPluginName accepted. A null node
// gives DefaultPluginArgs. Errors name the field under `path` ("<path>.scoringStrategy.type: ..."),
// or the field alone when `path` is empty. Never throws.
absl::StatusOr<PluginArgs> DecodePluginArgs(std::string_view plugin_name, const YAML::Node& args,
                                            std::string_view path);

// Decodes the `queues` section at `path`. `in_file` allows the fields only the configuration file
// may set (configMap, ledger, ledgerInterval). Errors are recorded in `reader`.
void DecodeQueuesSection(yaml::Reader& reader, const YAML::Node& node, std::string_view path,
                         bool in_file, QueuesConfig* out);

// Decodes `queues.devices` at `path` (config/queue_devices.cc). Errors are recorded in `reader`.
void DecodeQueueDevices(yaml::Reader& reader, const YAML::Node& node, std::string_view path,
                        QueuesConfig* out);

// Decodes the file's `policyConfigMap` ({namespace, name}, both required) at `path`. Defined in
// config.cc.
void DecodePolicyConfigMap(yaml::Reader& reader, const YAML::Node& node, std::string_view path,
                           PolicyConfigMap* out);

}  // namespace kubesched::config
