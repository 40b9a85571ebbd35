#pragma once

// The one way into yaml-cpp. Every YAML reader of kubesched (cluster files, the configuration
// file, the policy and queue ConfigMaps, kubeconfigs) parses through ParseYamlEvents, which
// bounds what yaml-cpp 0.7 may do with hostile text:
//   - yaml-cpp 0.7 never ends on a stray flow entry (a lone "," outside brackets): it emits
//     empty documents at the same position forever, and YAML::Load grows memory until the
//     kernel steps in. A document that starts where the previous one started is an error.
//   - values created, alias expansions included, are bounded in proportion to the input
//     (alias bombs), and aliases may not nest deeper than yaml-cpp itself allows.
//   - every exception yaml-cpp throws (std::bad_alloc included) becomes a returned error.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/mark.h"

namespace kubesched::api {

// The largest YAML text a configuration-sized document (the configuration file, a ConfigMap
// value, a kubeconfig) may be. The API server stores at most 1 MiB per object.
inline constexpr size_t kMaxConfigYamlBytes = size_t{4} << 20;

// Where and why a parse stopped. A null mark means the failure has no position.
struct YamlParseError {
  YAML::Mark mark = YAML::Mark::null_mark();
  std::string message;

  // "line 3, column 1: <message>", or just the message without a position.
  std::string ToString() const;
};

// Handlers given to ParseYamlEvents stop the parse by throwing this; it never leaves
// ParseYamlEvents.
struct YamlHandlerStop {
  std::string message;
};

// Feeds every event of the (multi-document) YAML `text` to `handler` under the guards above.
// Returns true when the whole text parsed; otherwise fills *error and returns false. Never throws.
bool ParseYamlEvents(std::string_view text, YAML::EventHandler& handler, YamlParseError* error);

// Loads every document of `text` as yaml-cpp nodes (what YAML::LoadAll gives: tags "?" for plain
// and "!" for quoted scalars, repeated keys kept, aliases shared), through ParseYamlEvents.
// Text longer than `max_bytes` is refused before parsing. Errors are InvalidArgument with the
// message of YamlParseError::ToString().
absl::StatusOr<std::vector<YAML::Node>> LoadYamlDocuments(std::string_view text,
                                                          size_t max_bytes = kMaxConfigYamlBytes);

}  // namespace kubesched::api
