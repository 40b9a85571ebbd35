#pragma once

// Dynamic Resource Allocation devices in queue quota: which devices of a pod's claims count, by
// resource and model (the queue configuration's `devices`, framework::DeviceResources), so that a
// GPU from a ResourceClaim counts to `nvidia.com/gpu` and `nvidia.com/gpu.A100` as a device
// plugin's GPU on an A100 node does.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/queues.h"
#include "scheduler/api/dra.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/device_resources.h"
#include "scheduler/framework/dra_state.h"

namespace kubesched::quota {

// Devices of one resource and one model: the model attribute's value as NormalizeDeviceModel
// gives it, not yet named through `models` (a reload may rename it); kEmptySymbol for a kind
// without a model attribute or a device without the attribute.
struct DeviceCount {
  api::ResourceId resource = 0;
  api::Symbol model = api::kEmptySymbol;
  int64_t count = 0;
  friend bool operator==(const DeviceCount&, const DeviceCount&) = default;
};

// Devices by resource and model: a pod's, a slice's. Kept sorted, without zero counts, so that
// two tallies of the same devices compare equal.
class DeviceTally {
 public:
  void Add(api::ResourceId resource, api::Symbol model, int64_t count);
  // Adds `sign` times every count of `other`.
  void Add(const DeviceTally& other, int sign);
  // One device of `kind`.
  void AddDevice(const framework::DeviceResources::Kind& kind, const api::Device& device);
  bool empty() const { return counts_.empty(); }
  const std::vector<DeviceCount>& counts() const { return counts_; }
  friend bool operator==(const DeviceTally&, const DeviceTally&) = default;

 private:
  std::vector<DeviceCount> counts_;
};

// The configuration's `devices` compiled; null when it lists none.
std::shared_ptr<const framework::DeviceResources> CompileDeviceResources(
    const config::QueuesConfig& config);

struct PodDevices {
  DeviceTally tally;
  // Some device of the pod's claims is published by no slice seen yet: it counts nothing until
  // one is (the informers may deliver claims before slices).
  bool unresolved = false;
  friend bool operator==(const PodDevices&, const PodDevices&) = default;
};

// The devices that the pod's claims hold, as queue quota charges them: an allocated claim counts
// for the first pod its status.reservedFor names (the pod it was allocated for, as kubesched
// writes it; the first of a shared claim's pods), so that a claim shared by several pods counts
// once. Devices allocated with admin access take no device (as upstream counts them) and count
// nothing. A claim that does not exist (yet) counts nothing.
PodDevices CountPodDevices(const framework::DeviceResources& resources, const api::Pod& pod,
                           const framework::DraState& dra);

// The devices of `slice` that count (its models are the models queue quota knows of).
DeviceTally CountSliceDevices(const framework::DeviceResources& resources,
                              const api::ResourceSlice& slice);

// The "namespace/name" of the first pod in the claim's status.reservedFor; "" when none.
std::string FirstConsumerKey(const api::ResourceClaim& claim);

}  // namespace kubesched::quota
