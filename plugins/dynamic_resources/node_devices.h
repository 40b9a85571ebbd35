#pragma once

// The devices that ResourceSlices offer to one node, in a stable order: pools by driver and pool
// name, the slices of a pool by name, the devices of a slice as published. Only the newest
// generation of each pool counts; a pool is incomplete while fewer slices of that generation are
// seen than it announces.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "scheduler/api/dra.h"
#include "scheduler/api/labels.h"
#include "scheduler/framework/dra_state.h"

namespace kubesched::plugins::dynamic_resources {

using DeviceId = api::DeviceId;

// "driver/pool/device", for messages and tests.
std::string DeviceIdText(const DeviceId& id);

class NodeDevices {
 public:
  struct Pool {
    api::Symbol driver = api::kEmptySymbol;
    api::Symbol name = api::kEmptySymbol;
    bool incomplete = false;
    size_t first_device = 0;  // [first_device, end_device) in devices()
    size_t end_device = 0;
  };
  struct DeviceRef {
    const api::ResourceSlice* slice = nullptr;
    const api::Device* device = nullptr;
    uint32_t pool = 0;  // index in pools()
    DeviceId id() const { return {slice->driver, slice->pool.name, device->name}; }
  };

  // Replaces the contents with the devices `slices` offer to the node. Slices that pick devices
  // per device (perDeviceNodeSelection) or name no place are left out. Vectors are reused, so a
  // NodeDevices kept across nodes allocates only when a node offers more than any before it.
  void Gather(absl::Span<const api::ResourceSlice* const> slices, std::string_view node_name,
              const api::LabelSet& node_labels);
  // The same from a snapshot's index (framework::DraState): `local`, the slices that name the
  // node (null: none), and those of `shared` that select it.
  void Gather(const framework::SliceList* local, const framework::SliceList& shared,
              std::string_view node_name, const api::LabelSet& node_labels);

  const std::vector<Pool>& pools() const { return pools_; }
  const std::vector<DeviceRef>& devices() const { return devices_; }

 private:
  void BuildPools();

  std::vector<const api::ResourceSlice*> slices_;
  std::vector<Pool> pools_;
  std::vector<DeviceRef> devices_;
};

// Whether a slice offers its devices to the node (nodeName, nodeSelector or allNodes).
bool SliceAppliesToNode(const api::ResourceSlice& slice, std::string_view node_name,
                        const api::LabelSet& node_labels);

}  // namespace kubesched::plugins::dynamic_resources
