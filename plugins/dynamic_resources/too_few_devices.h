#pragma once

// The nodes of a snapshot that cannot serve a CountRequest even with all their devices free
// (FitByCount's kTooFew), for PreFilter to hand the core as sure rejections: the core then passes
// over them without reading their NodeInfos. Where pods ask for one device model among several,
// most nodes are such.
//
// Kept from one pod to the next: each node's DeviceProfile by snapshot position, brought up to
// date with the nodes that changed. Per pod, each distinct profile is judged once (nodes with
// alike devices share one) and the nodes' bits are set from that flat array.
//
// Threads: used by PreFilter, on the scheduling thread only.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "plugins/dynamic_resources/allocator.h"
#include "scheduler/framework/device_profiles.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/node_positions.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::plugins::dynamic_resources {

class TooFewDevices {
 public:
  // More distinct profiles than this (devices that differ node by node, such as by serial
  // number) cost more to judge per pod than passing over nodes saves: none are named then.
  static constexpr size_t kMaxProfiles = 256;

  // The nodes with too few matching devices; null when there are none, when slices offer devices
  // to several nodes (FitByCount does not count those), or beyond kMaxProfiles.
  std::shared_ptr<const framework::NodePositions> Find(const CountRequest& request,
                                                       const framework::Snapshot& snapshot);

 private:
  void CatchUp(const framework::Snapshot& snapshot);
  uint32_t IdOf(const framework::DeviceProfile* profile);

  framework::SnapshotMark mark_;
  std::vector<uint32_t> profile_by_position_;  // ids into profiles_
  // By id; profiles are never freed. Forgotten when the positions are counted afresh.
  std::vector<const framework::DeviceProfile*> profiles_;
  absl::flat_hash_map<const framework::DeviceProfile*, uint32_t> ids_;
  std::vector<uint32_t> changed_;  // scratch of CatchUp
  std::vector<uint8_t> too_few_;   // by profile id, for the pod at hand
  // Handed to one cycle at a time; a new one is made while a cycle still holds it.
  std::shared_ptr<framework::NodePositions> nodes_;
};

}  // namespace kubesched::plugins::dynamic_resources
