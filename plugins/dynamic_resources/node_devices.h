#pragma once

// The devices that ResourceSlices offer to one node, in a stable order: pools by driver and pool
// name, the slices of a pool by name, the devices of a slice as published. Of each pool, the
// newest generation among the slices that reach the node counts, as upstream gathers pools:
//
// - a pool is complete when that generation has as many slices as it announces, counted among
//   the slices for the node or, when those are fewer, among every node's slices (a pool may
//   spread over nodes);
// - a pool whose generation some other node's slices already replaced with a newer one is left
//   out altogether (its driver is moving it elsewhere);
// - a pool is invalid when two of its slices name the same device.
//
// The devices of incomplete and invalid pools are not offered (an All request over such a pool
// is an error, so the pools themselves are listed).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
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
    bool invalid = false;     // two of its slices name one device
    size_t first_device = 0;  // [first_device, end_device) in devices(); empty unless usable
    size_t end_device = 0;
    bool usable() const { return !incomplete && !invalid; }
  };
  struct DeviceRef {
    const api::ResourceSlice* slice = nullptr;
    const api::Device* device = nullptr;
    uint32_t pool = 0;  // index in pools()
    DeviceId id() const { return {slice->driver, slice->pool.name, device->name}; }
  };
  // What the slices of other nodes say of a pool generation the node sees only part of: how many
  // slices carry it, and whether a newer generation exists.
  struct Census {
    int64_t slices = 0;
    bool newer = false;
  };
  using CensusFn = absl::FunctionRef<Census(api::Symbol driver, api::Symbol pool, int64_t)>;

  // Replaces the contents with the devices `slices` (every slice of the cluster) offer to the
  // node. Slices that pick devices per device (perDeviceNodeSelection) or name no place are left
  // out. Vectors are reused, so a NodeDevices kept across nodes allocates only when a node offers
  // more than any before it.
  void Gather(absl::Span<const api::ResourceSlice* const> slices, std::string_view node_name,
              const api::LabelSet& node_labels);
  // The same from a snapshot's index (framework::DraState): `local`, the slices that name the
  // node (null: none), and those of `shared` that select it; the state counts every node's slices.
  void Gather(const framework::SliceList* local, const framework::SliceList& shared,
              std::string_view node_name, const api::LabelSet& node_labels,
              const framework::DraState& state);

  const std::vector<Pool>& pools() const { return pools_; }
  const std::vector<DeviceRef>& devices() const { return devices_; }
  bool HasInvalidPool() const { return has_invalid_pool_; }

 private:
  void BuildPools(CensusFn census);
  bool DuplicateDevice(size_t first_slice, size_t end_slice);

  std::vector<const api::ResourceSlice*> slices_;
  std::vector<Pool> pools_;
  std::vector<DeviceRef> devices_;
  std::vector<api::Symbol> names_;  // scratch of DuplicateDevice
  bool has_invalid_pool_ = false;
};

// Whether a slice offers its devices to the node (nodeName, nodeSelector or allNodes).
bool SliceAppliesToNode(const api::ResourceSlice& slice, std::string_view node_name,
                        const api::LabelSet& node_labels);

}  // namespace kubesched::plugins::dynamic_resources
