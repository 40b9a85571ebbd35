#pragma once

// The resource types kubesched-testapi serves, with the discovery facts the real API publishes for
// them (kind, short names, verbs, subresources) and the fields each one can be selected on.

#include <string>
#include <string_view>
#include <vector>

#include "rapidjson/fwd.h"

namespace kubesched::testapi {

struct ResourceType {
  std::string group{};    // "" for the core group
  std::string version{};  // "v1"
  std::string plural{};   // "pods"; the URL segment
  std::string singular{};
  std::string kind{};  // "Pod"
  bool namespaced = true;
  std::vector<std::string> short_names{};
  std::vector<std::string> verbs{};
  // Subresources and the verbs each accepts: {"status", {"get","patch","update"}}.
  std::vector<std::pair<std::string, std::vector<std::string>>> subresources{};
  // Field selector labels beyond metadata.name / metadata.namespace, as JSON paths.
  std::vector<std::string> selectable_fields{};
  // Reads a selectable field's value from an object when that is not simply the string at its
  // path (core v1 Events' "source"); null reads every field with StringAt.
  std::string (*field_value)(const rapidjson::Value& object, std::string_view field) = nullptr;
  // Served from a CustomResourceDefinition: strategic merge patches are refused (415), as the
  // real API server refuses them for custom resources.
  bool custom = false;

  // "v1" or "group/version", as in an object's apiVersion.
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  std::string list_kind() const { return kind + "List"; }
  bool HasSubresource(std::string_view name) const;
  // True for the fields a field selector may name on this type.
  bool IsSelectableField(std::string_view field) const;
  // A stable identifier, "pods" or "events.events.k8s.io", used in the state file and stats.
  std::string id() const { return group.empty() ? plural : plural + "." + group; }
};

// Every served type, in discovery order. The references stay valid for the program's lifetime.
const std::vector<ResourceType>& AllResourceTypes();

// The type served at /api/v1 (group "") or /apis/<group>/<version> under `plural`, or null.
const ResourceType* FindResourceType(std::string_view group, std::string_view version,
                                     std::string_view plural);

// The type for an object's apiVersion and kind (for --load and the state file), or null.
const ResourceType* FindResourceTypeByKind(std::string_view api_version, std::string_view kind);

}  // namespace kubesched::testapi
