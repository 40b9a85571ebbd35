#pragma once

// A pod's spec.resourceClaims resolved to its ResourceClaims, with upstream's verdicts and
// messages (resourceclaim.Name and the plugin's foreachPodResourceClaim):
//
// - a claim named by resourceClaimName is used as is;
// - a claim from a template is the one status.resourceClaimStatuses names for it, and must be
//   controlled by the pod; an entry with an empty name means the pod needs no claim for it; no
//   entry means the claim is not created yet;
// - a claim that does not exist, is being deleted, or is not the pod's own keeps the pod pending
//   (UnschedulableAndUnresolvable), to be tried again when a claim changes.

#include <memory>
#include <vector>

#include "scheduler/api/dra.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/dra_state.h"
#include "scheduler/framework/status.h"

namespace kubesched::plugins::dynamic_resources {

// What the pod alone decides, for PreEnqueue: Success when every entry names a claim, or names a
// template whose claim the pod's status names (or says is not needed); otherwise
// UnschedulableAndUnresolvable with upstream's message (`pod "ns/name": ResourceClaim not created
// yet`).
framework::Status CheckClaimNames(const api::Pod& pod);

struct ResolvedClaims {
  framework::Status status;
  // On success, each claim the pod needs once, in spec order (entries that need none left out).
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
};

// The pod's claims as `dra` has them, checked as described above.
ResolvedClaims ResolveClaims(const api::Pod& pod, const framework::DraState& dra);

// Whether the claim's status.reservedFor names the pod (by UID, as upstream; a pod without a UID,
// as simulate's workload pods may be, by name).
bool ReservedForPod(const api::ResourceClaim& claim, const api::Pod& pod);

}  // namespace kubesched::plugins::dynamic_resources
