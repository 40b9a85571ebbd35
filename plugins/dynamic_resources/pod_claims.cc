#include "plugins/dynamic_resources/pod_claims.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/api/symbol.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

using framework::Status;

Status Unresolvable(std::string message) { return Status::Unresolvable(api::StableText(message)); }

// The name of the claim behind one entry: its resourceClaimName, or the generated claim the pod's
// status names. `*name` null: the pod needs no claim for the entry.
Status ClaimName(const api::Pod& pod, const api::PodResourceClaim& entry, const std::string** name,
                 bool* generated) {
  *generated = false;
  if (!entry.resource_claim_name.empty()) {
    *name = &entry.resource_claim_name;
    return Status::Success();
  }
  if (entry.resource_claim_template_name.empty()) {
    return Unresolvable(absl::StrCat("pod \"", pod.meta.namespace_name, "/", pod.meta.name,
                                     "\", spec.resourceClaim \"", entry.name,
                                     "\": none of the supported fields are set"));
  }
  for (const api::PodResourceClaimStatus& status : pod.status.resource_claim_statuses) {
    if (status.name != entry.name) continue;
    *name = status.resource_claim_name.empty() ? nullptr : &status.resource_claim_name;
    *generated = true;
    return Status::Success();
  }
  return Unresolvable(absl::StrCat("pod \"", pod.meta.namespace_name, "/", pod.meta.name,
                                   "\": ResourceClaim not created yet"));
}

// metav1.IsControlledBy: the claim's controller reference names the pod's UID (or, for a pod
// without one, its name).
bool ControlledBy(const api::ResourceClaim& claim, const api::Pod& pod) {
  return std::any_of(claim.meta.owner_references.begin(), claim.meta.owner_references.end(),
                     [&pod](const api::OwnerReference& owner) {
                       return owner.controller && owner.uid == pod.meta.uid &&
                              (!pod.meta.uid.empty() || owner.name == pod.meta.name);
                     });
}

}  // namespace

Status CheckClaimNames(const api::Pod& pod) {
  for (const api::PodResourceClaim& entry : pod.spec.resource_claims) {
    const std::string* name = nullptr;
    bool generated = false;
    Status status = ClaimName(pod, entry, &name, &generated);
    if (!status.IsSuccess()) return status;
  }
  return Status::Success();
}

ResolvedClaims ResolveClaims(const api::Pod& pod, const framework::DraState& dra) {
  ResolvedClaims resolved;
  const std::string& namespace_name = pod.meta.namespace_name;
  for (const api::PodResourceClaim& entry : pod.spec.resource_claims) {
    const std::string* name = nullptr;
    bool generated = false;
    resolved.status = ClaimName(pod, entry, &name, &generated);
    if (!resolved.status.IsSuccess()) return resolved;
    if (name == nullptr) continue;
    const std::string key = framework::DraState::Key(namespace_name, *name);
    std::shared_ptr<const api::ResourceClaim> claim = dra.claims.Get(key);
    if (claim == nullptr) {
      resolved.status = Unresolvable(absl::StrCat("could not find ResourceClaim \"", key, "\""));
      return resolved;
    }
    if (claim->meta.deletion_timestamp.has_value()) {
      resolved.status =
          Unresolvable(absl::StrCat("resourceclaim \"", *name, "\" is being deleted"));
      return resolved;
    }
    if (generated && !ControlledBy(*claim, pod)) {
      resolved.status =
          Unresolvable(absl::StrCat("ResourceClaim ", key, " was not created for pod ",
                                    namespace_name, "/", pod.meta.name, " (pod is not owner)"));
      return resolved;
    }
    // Two entries may name one claim: it is allocated and reserved once.
    if (std::find(resolved.claims.begin(), resolved.claims.end(), claim) == resolved.claims.end()) {
      resolved.claims.push_back(std::move(claim));
    }
  }
  return resolved;
}

bool ReservedForPod(const api::ResourceClaim& claim, const api::Pod& pod) {
  return std::any_of(claim.reserved_for.begin(), claim.reserved_for.end(),
                     [&pod](const api::ResourceClaimConsumer& consumer) {
                       return consumer.uid == pod.meta.uid &&
                              (!pod.meta.uid.empty() || consumer.name == pod.meta.name);
                     });
}

}  // namespace kubesched::plugins::dynamic_resources
