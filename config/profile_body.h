#pragma once

// The decoder of a profile's body, shared with policy/: a per-pod policy is a profile with a
// name and an optional node-affinity template, and is decoded by the same strict rules.

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace kubesched::config {

// Decodes the fields a policy shares with a profile (plugins, pluginConfig and
// percentageOfNodesToScore) of the map `node`, whose field names the caller has checked. The
// plugins are as written: the caller merges them with the defaults (config/merge.h). Errors are
// recorded in `reader`.
void DecodeProfileBody(yaml::Reader& reader, const YAML::Node& node, std::string_view path,
                       Profile* out);

}  // namespace kubesched::config
