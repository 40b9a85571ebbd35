// The scheduler's side of DRA devices in queue quota: a bound pod is charged the devices its
// claims hold (quota::CountPodDevices, read from the cache), again whenever a claim it is the
// first consumer of changes, and once the slice of a device it could not find yet appears.
// Nothing runs unless the queue configuration counts devices (`devices`), and nothing for pods
// without claims.

#include <string>
#include <vector>

#include "scheduler/core/scheduler.h"

namespace kubesched::scheduler {

quota::PodDevices Scheduler::DevicesOf(const api::Pod& pod) const {
  quota::PodDevices devices;
  const auto& resources = quota_->device_resources();
  if (resources == nullptr || pod.spec.resource_claims.empty()) return devices;
  cache_->ReadDra([&](const framework::DraState& dra) {
    devices = quota::CountPodDevices(*resources, pod, dra);
  });
  return devices;
}

void Scheduler::RechargeDevicesOf(const std::string& pod_key) {
  if (pod_key.empty()) return;
  const framework::PodInfoPtr pod = cache_->GetPod(pod_key);
  // An assumed pod keeps what its Reserve charged until the watch shows it bound (ChargeBound).
  if (pod == nullptr || cache_->IsAssumed(pod_key)) return;
  quota_->SetPodDevices(pod_key, DevicesOf(pod->get()));
}

void Scheduler::ChargeClaimChange(const api::ResourceClaim* before,
                                  const api::ResourceClaim* after) {
  if (quota_->device_resources() == nullptr) return;
  const std::string was = before == nullptr ? std::string() : quota::FirstConsumerKey(*before);
  const std::string is = after == nullptr ? std::string() : quota::FirstConsumerKey(*after);
  RechargeDevicesOf(was);
  if (is != was) RechargeDevicesOf(is);
}

void Scheduler::ChargeSliceChange(const api::ResourceSlice* before,
                                  const api::ResourceSlice* after) {
  const auto& resources = quota_->device_resources();
  if (resources == nullptr) return;
  if (before != nullptr) {
    quota_->CountPublishedDevices(quota::CountSliceDevices(*resources, *before), -1);
  }
  if (after == nullptr) return;
  quota_->CountPublishedDevices(quota::CountSliceDevices(*resources, *after), +1);
  // Claims may come before the slices of their devices (the informers list in parallel).
  for (const std::string& key : quota_->PodsWithUnresolvedDevices()) RechargeDevicesOf(key);
}

}  // namespace kubesched::scheduler
