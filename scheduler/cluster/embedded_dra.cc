// EmbeddedCluster as DynamicResources' API side (framework::ClaimStatusWriter), playing the
// ResourceClaim controller too, so that `simulate` gives pods the claims their templates describe.

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "scheduler/cluster/embedded_cluster.h"

namespace kubesched::cluster {
namespace {

// The characters upstream's generated names use (no vowels, no look-alikes).
constexpr std::string_view kNameAlphabet = "bcdfghjklmnpqrstvwxz2456789";

// Five characters derived from `seed`, in place of generateName's random ones: simulate must
// give the same names on every run.
std::string NameSuffix(size_t seed) {
  std::string suffix;
  for (int i = 0; i < 5; ++i) {
    suffix.push_back(kNameAlphabet[seed % kNameAlphabet.size()]);
    seed /= kNameAlphabet.size();
  }
  return suffix;
}

bool NeedsClaimFromTemplate(const api::Pod& pod, const api::PodResourceClaim& entry) {
  if (entry.resource_claim_template_name.empty()) return false;
  return std::none_of(
      pod.status.resource_claim_statuses.begin(), pod.status.resource_claim_statuses.end(),
      [&entry](const api::PodResourceClaimStatus& s) { return s.name == entry.name; });
}

}  // namespace

void EmbeddedCluster::CreateTemplateClaimsLocked(const std::string& pod_key) {
  if (!pod_key.empty()) {
    CreateTemplateClaimsForLocked(pod_key);
    return;
  }
  std::vector<std::string> keys;
  for (const auto& [name, pod] : pods_) {
    if (pod->spec.node_name.empty() && !pod->spec.resource_claims.empty()) {
      keys.push_back(pod->Key());
    }
  }
  for (const std::string& key : keys) CreateTemplateClaimsForLocked(key);
}

void EmbeddedCluster::CreateTemplateClaimsForLocked(const std::string& pod_key) {
  const size_t slash = pod_key.find('/');
  if (slash == std::string::npos) return;
  const absl::string_view view(pod_key);
  const auto it = pods_.find(PodName{view.substr(0, slash), view.substr(slash + 1)});
  if (it == pods_.end() || !it->second->spec.node_name.empty() || it->second->IsTerminal()) return;
  const std::vector<api::PodResourceClaim>& entries = it->second->spec.resource_claims;
  if (std::none_of(entries.begin(), entries.end(), [&](const api::PodResourceClaim& entry) {
        return NeedsClaimFromTemplate(*it->second, entry);
      })) {
    return;
  }
  api::Pod pod = *it->second;
  bool changed = false;
  for (const api::PodResourceClaim& entry : pod.spec.resource_claims) {
    if (!NeedsClaimFromTemplate(pod, entry)) continue;
    const auto found = resource_claim_templates_.find(
        absl::StrCat(pod.meta.namespace_name, "/", entry.resource_claim_template_name));
    if (found == resource_claim_templates_.end()) continue;  // made when the template appears
    api::ResourceClaim claim;
    claim.meta.namespace_name = pod.meta.namespace_name;
    claim.meta.namespace_symbol = pod.meta.namespace_symbol;
    size_t seed = absl::HashOf(pod_key, entry.name);
    do {
      claim.meta.name = absl::StrCat(pod.meta.name, "-", entry.name, "-", NameSuffix(seed++));
    } while (
        resource_claims_.contains(absl::StrCat(pod.meta.namespace_name, "/", claim.meta.name)));
    claim.meta.uid = absl::StrCat("claim-", claim.meta.namespace_name, "-", claim.meta.name);
    claim.meta.labels = found->second->meta.labels;
    claim.meta.annotations = found->second->meta.annotations;
    claim.meta.annotations["resource.kubernetes.io/pod-claim-name"] = entry.name;
    claim.meta.owner_references.push_back({"v1", "Pod", pod.meta.name, pod.meta.uid, true});
    claim.spec = found->second->spec;
    pod.status.resource_claim_statuses.push_back({entry.name, claim.meta.name});
    (void)Insert(resource_claims_, std::move(claim), "ResourceClaim");
    changed = true;
  }
  if (!changed) return;
  pod.meta.resource_version = NextResourceVersion();
  auto updated = std::make_shared<const api::Pod>(std::move(pod));
  Enqueue(nullptr, client::Event<api::Pod>{client::EventType::kModified, it->second, updated});
  ReplacePodLocked(it, std::move(updated));
}

void EmbeddedCluster::ReleaseClaimsLocked(const api::Pod& pod) {
  const auto is_pod = [&pod](const api::ResourceClaimConsumer& consumer) {
    return consumer.uid == pod.meta.uid && consumer.name == pod.meta.name;
  };
  std::vector<std::string> keys;
  for (const auto& [key, claim] : resource_claims_) {
    if (claim->meta.namespace_name != pod.meta.namespace_name) continue;
    if (std::any_of(claim->reserved_for.begin(), claim->reserved_for.end(), is_pod)) {
      keys.push_back(key);
    }
  }
  for (const std::string& key : keys) {
    api::ResourceClaim claim = *resource_claims_.at(key);
    std::erase_if(claim.reserved_for, is_pod);
    if (!claim.reserved_for.empty()) {
      Replace(resource_claims_, key, std::move(claim));
      continue;
    }
    const bool generated =
        std::any_of(claim.meta.owner_references.begin(), claim.meta.owner_references.end(),
                    [&pod](const api::OwnerReference& owner) {
                      return owner.controller && owner.kind == "Pod" &&
                             owner.name == pod.meta.name && owner.uid == pod.meta.uid;
                    });
    if (generated) {
      NextResourceVersion();
      Enqueue(nullptr, client::Event<api::ResourceClaim>{client::EventType::kDeleted, nullptr,
                                                         resource_claims_.at(key)});
      resource_claims_.erase(key);
      continue;
    }
    claim.allocation.reset();
    Replace(resource_claims_, key, std::move(claim));
  }
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> EmbeddedCluster::StoredClaim(
    const api::ResourceClaim& claim, bool same_version) const {
  const auto it = resource_claims_.find(claim.Key());
  if (it == resource_claims_.end()) {
    return absl::NotFoundError(
        absl::StrCat("resourceclaims.resource.k8s.io \"", claim.meta.name, "\" not found"));
  }
  if (same_version && it->second->meta.resource_version != claim.meta.resource_version) {
    return absl::AbortedError(absl::StrCat(
        "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"", claim.meta.name,
        "\": the object has been modified; please apply your changes to the latest "
        "version and try again"));
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> EmbeddedCluster::WriteReservation(
    const api::ResourceClaim& claim, const api::AllocationResult* allocation,
    const api::ResourceClaimConsumer& consumer) {
  absl::MutexLock lock(&mu_);
  auto stored = StoredClaim(claim, /*same_version=*/true);
  if (!stored.ok()) return stored.status();
  const std::string key = claim.Key();
  api::ResourceClaim updated = **stored;
  if (allocation != nullptr) {
    if (updated.allocation.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ResourceClaim.resource.k8s.io \"", claim.meta.name,
                       "\" is invalid: status.allocation: Invalid value: field is immutable"));
    }
    updated.allocation = *allocation;
  }
  if (!updated.allocation.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResourceClaim.resource.k8s.io \"", claim.meta.name,
                     "\" is invalid: status.reservedFor: Forbidden: may not be specified when "
                     "`allocated` is not set"));
  }
  updated.reserved_for = claim.reserved_for;
  updated.reserved_for.push_back(consumer);
  return Replace(resource_claims_, key, std::move(updated));
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> EmbeddedCluster::RemoveReservation(
    const api::ResourceClaim& claim, std::string_view consumer_uid) {
  absl::MutexLock lock(&mu_);
  // The API server's strategic merge patch: by uid, whatever the version.
  auto stored = StoredClaim(claim, /*same_version=*/false);
  if (!stored.ok()) return stored.status();
  api::ResourceClaim updated = **stored;
  std::erase_if(updated.reserved_for, [consumer_uid](const api::ResourceClaimConsumer& consumer) {
    return consumer.uid == consumer_uid;
  });
  const std::string key = updated.Key();
  return Replace(resource_claims_, key, std::move(updated));
}

absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> EmbeddedCluster::Deallocate(
    const api::ResourceClaim& claim) {
  absl::MutexLock lock(&mu_);
  auto stored = StoredClaim(claim, /*same_version=*/true);
  if (!stored.ok()) return stored.status();
  api::ResourceClaim updated = **stored;
  updated.allocation.reset();
  updated.reserved_for.clear();
  const std::string key = updated.Key();
  return Replace(resource_claims_, key, std::move(updated));
}

std::shared_ptr<const api::ResourceClaim> EmbeddedCluster::GetResourceClaim(
    const std::string& key) const {
  absl::MutexLock lock(&mu_);
  const auto it = resource_claims_.find(key);
  return it == resource_claims_.end() ? nullptr : it->second;
}

}  // namespace kubesched::cluster
