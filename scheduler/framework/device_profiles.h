#pragma once

// The shapes of the devices a node's own ResourceSlices offer, in the order of the node's
// NodeDeviceSummary, interned: nodes that offer alike devices share one DeviceProfile, so that
// DynamicResources' Filter reads the same few cache lines for all of them instead of each node's
// own summary. Profiles are never freed (as taint sets are not), so a pointer to one stays valid
// for the life of the process.

#include <cstddef>
#include <vector>

#include "scheduler/api/dra.h"

namespace kubesched::framework {

struct DeviceProfile {
  // False for a summary that is not self-contained (its devices depend on other nodes' slices,
  // or a pool names a device twice): such nodes are searched, not counted. One profile stands for
  // all of them.
  bool countable = true;
  std::vector<api::DeviceShape> shapes;
};

// Thread-safe.
class DeviceProfiles {
 public:
  static const DeviceProfile* Intern(std::vector<api::DeviceShape> shapes);
  static const DeviceProfile* Uncountable();
  // Profiles handed out so far, Uncountable() included.
  static size_t Count();
};

}  // namespace kubesched::framework
