#pragma once

// Upstream's v1 plugin defaulting (pkg/scheduler/apis/config/v1/default_plugins.go,
// mergePlugins): how a profile's plugin lists combine with the default set. Kept apart from the
// parser so that policies built from other sources (a watched ConfigMap) merge the same way.

#include <array>
#include <string_view>

#include "config/config.h"

namespace kubesched::config {

// A PluginSet field of Plugins with its v1 JSON name.
struct ExtensionPointField {
  std::string_view name;
  PluginSet Plugins::*set;
};

// Every extension point of Plugins, multiPoint first, then in upstream's field order.
inline constexpr std::array<ExtensionPointField, 13> kExtensionPointFields = {{
    {"multiPoint", &Plugins::multi_point},
    {"preEnqueue", &Plugins::pre_enqueue},
    {"queueSort", &Plugins::queue_sort},
    {"preFilter", &Plugins::pre_filter},
    {"filter", &Plugins::filter},
    {"postFilter", &Plugins::post_filter},
    {"preScore", &Plugins::pre_score},
    {"score", &Plugins::score},
    {"reserve", &Plugins::reserve},
    {"permit", &Plugins::permit},
    {"preBind", &Plugins::pre_bind},
    {"bind", &Plugins::bind},
    {"postBind", &Plugins::post_bind},
}};

// One extension point, as upstream's mergePluginSet:
// - disabled = the custom disabled names followed by the default disabled names;
// - enabled = the default enabled entries not disabled by name (none if '*' is disabled), where a
//   custom enabled entry with the same name replaces the default one in place (its weight wins,
//   including an unset weight), followed by the other custom enabled entries in their order.
PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom);

// MergePluginSet on every extension point.
Plugins MergeDefaults(const Plugins& defaults, const Plugins& custom);

}  // namespace kubesched::config
