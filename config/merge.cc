#include "config/merge.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "plugins/names.h"

namespace kubesched::config {
namespace {

namespace names = plugins::names;

constexpr char kAllPlugins[] = "*";  // disables every default plugin of a point

}  // namespace

Plugins DefaultPlugins() {
  // Upstream's default multiPoint list (v1 getDefaultPlugins) restricted to the plugins kubesched
  // has, in upstream's order, with upstream's score weights. Filters run in this order, so the
  // cheap node-level checks come first, as upstream.
  Plugins plugins;
  plugins.multi_point.enabled = {
      // PreEnqueue only: keeps gated pods out of the queue, first as upstream has it.
      {std::string(names::kSchedulingGates), 0},
      {std::string(names::kPrioritySort), 0},
      // kubesched's: first, so a pod its queue cannot take costs no other plugin's PreFilter.
      {std::string(names::kQueueQuota), 0},
      {std::string(names::kNodeUnschedulable), 0},
      {std::string(names::kNodeName), 0},
      {std::string(names::kTaintToleration), 3},
      {std::string(names::kNodeAffinity), 2},
      {std::string(names::kNodePorts), 0},
      {std::string(names::kNodeResourcesFit), 1},
      {std::string(names::kVolumeRestrictions), 0},
      {std::string(names::kNodeVolumeLimits), 0},
      {std::string(names::kVolumeBinding), 0},
      {std::string(names::kVolumeZone), 0},
      {std::string(names::kPodTopologySpread), 2},
      {std::string(names::kInterPodAffinity), 2},
      // Before preemption, as upstream puts it since DRA went GA (Kubernetes 1.34).
      {std::string(names::kDynamicResources), 0},
      {std::string(names::kDefaultPreemption), 0},
      // After preemption: a member gives its group up only when no victims make room for it.
      {std::string(names::kCoscheduling), 0},
      {std::string(names::kNodeResourcesBalancedAllocation), 1},
      {std::string(names::kImageLocality), 1},
      {std::string(names::kDefaultBinder), 0},
  };
  return plugins;
}

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet merged;
  merged.disabled = custom.disabled;
  merged.disabled.insert(merged.disabled.end(), defaults.disabled.begin(), defaults.disabled.end());
  const absl::flat_hash_set<std::string> disabled(merged.disabled.begin(), merged.disabled.end());

  // Name -> index in custom.enabled; a later duplicate wins, as in upstream's map.
  absl::flat_hash_map<std::string, size_t> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;

  std::vector<bool> replaced(custom.enabled.size(), false);
  if (!disabled.contains(kAllPlugins)) {
    for (const PluginRef& plugin : defaults.enabled) {
      if (disabled.contains(plugin.name)) continue;
      const auto it = custom_index.find(plugin.name);
      if (it == custom_index.end()) {
        merged.enabled.push_back(plugin);
        continue;
      }
      // Re-configured default: keep the default's position so the run order stays upstream's.
      merged.enabled.push_back(custom.enabled[it->second]);
      replaced[it->second] = true;
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced[i]) merged.enabled.push_back(custom.enabled[i]);
  }
  return merged;
}

Plugins MergeDefaults(const Plugins& defaults, const Plugins& custom) {
  Plugins merged;
  for (const ExtensionPointField& point : kExtensionPointFields) {
    merged.*point.set = MergePluginSet(defaults.*point.set, custom.*point.set);
  }
  return merged;
}

}  // namespace kubesched::config
