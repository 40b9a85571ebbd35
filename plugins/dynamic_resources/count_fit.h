#pragma once

// Whether a node serves a CountRequest, from the snapshot's summary of its devices
// (framework::NodeDeviceSummary) and the devices claims hold, without gathering or searching: for
// claims that ask for any `count` matching devices, the search finds them exactly when the node
// has `count` free devices that match, whatever their order. What the counting cannot decide as
// the search would, it leaves to the search: devices whose selector verdicts are not all known
// yet (or failed), pools that depend on other nodes' slices or name a device twice, and slices
// that select nodes (which are not summarized per node).

#include "plugins/dynamic_resources/allocator.h"
#include "scheduler/framework/device_profiles.h"
#include "scheduler/framework/dra_state.h"
#include "scheduler/framework/node_info.h"

namespace kubesched::plugins::dynamic_resources {

enum class CountFit : uint8_t {
  kFits,    // enough free devices match
  kTaken,   // too few are free, but enough would be if claims held none
  kTooFew,  // too few match even then
  kSearch,  // undecided here: the full search answers
};

// `node` is a NodeInfo of the snapshot `dra` belongs to: its own_devices() are the summary and
// holds of that snapshot.
CountFit FitByCount(const CountRequest& request, const framework::DraState& dra,
                    const framework::NodeInfo& node);

// Whether FitByCount answers kTooFew for every node whose own devices `profile` describes (null:
// a node without devices), in a snapshot where no slice offers devices to several nodes.
bool TooFewOnProfile(const CountRequest& request, const framework::DeviceProfile* profile);

}  // namespace kubesched::plugins::dynamic_resources
