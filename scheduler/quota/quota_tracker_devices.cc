// QuotaTracker: Dynamic Resource Allocation devices, counted to the resource they count as and to
// the typed key of their model (device_usage.h): the limits a pending pod's devices count against,
// the check of the devices Reserve charges, and the devices of bound pods as their claims change.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/quota_tracker_internal.h"
#include "scheduler/quota/wait_keys.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using util::Absl;

std::string DeviceLimitMessage(const QueueNode& node, api::ResourceId limit, int64_t used,
                               int64_t held, int64_t max) {
  return absl::StrCat("queue ", node.path, ": insufficient quota for ",
                      Absl(api::ResourceName(limit)), " (",
                      internal::UsedAndMax(limit, used, held, max),
                      ", requested more by the pod's resource claims)");
}

}  // namespace

void QuotaTracker::AddDeviceLimitsLocked(const framework::PodInfo& pod, int leaf,
                                         const api::ResourceList& request, absl::Time now,
                                         Admission* admission) {
  if (device_resources_ == nullptr || pod.get().spec.resource_claims.empty()) return;
  const framework::DeviceResources& devices = *device_resources_;
  const GangHold* own = HoldOfLocked(pod.gang.key);
  for (int q = leaf; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      const api::ResourceId resource = node.budget[b].resource;
      const auto typed = tree_.AsTyped(resource);
      if (!devices.Counts(typed.has_value() ? typed->generic : resource)) continue;
      const double spent = SpentLocked(q, b, now);
      if (spent < node.budget[b].unit_seconds) continue;
      DeviceLimit limit{typed.has_value() ? typed->generic : resource};
      limit.budget = true;
      limit.queue = node.path;
      limit.message = BudgetMessageLocked(q, b, spent);
      if (typed.has_value()) {
        limit.model = typed->label_value;
        limit.label_key = typed->label_key;
        limit.model_names = tree_.shared_model_names();
      }
      admission->device_limits.push_back(std::move(limit));
    }
    for (const api::ResourceId id : node.limited) {
      if (!devices.Counts(id)) continue;
      const int64_t counted = CountedLocked(q, id, own);
      DeviceLimit limit{id};
      limit.room = node.max.Get(id) - counted - request.Get(id);
      limit.queue = node.path;
      limit.message = DeviceLimitMessage(node, id, used_[q].Get(id), counted - used_[q].Get(id),
                                         node.max.Get(id));
      admission->device_limits.push_back(std::move(limit));
    }
    for (const TypedKey& key : node.typed_limited) {
      if (!devices.Counts(key.generic)) continue;
      DeviceLimit limit{key.generic, key.label_value};
      limit.room = node.max.Get(key.typed) - used_[q].Get(key.typed);
      limit.queue = node.path;
      limit.message =
          DeviceLimitMessage(node, key.typed, used_[q].Get(key.typed), 0, node.max.Get(key.typed));
      limit.label_key = key.label_key;
      limit.model_names = tree_.shared_model_names();
      admission->device_limits.push_back(std::move(limit));
    }
  }
}

std::optional<std::string> QuotaTracker::DeviceShortfallLocked(const Admission& admission,
                                                               const DeviceTally& devices,
                                                               const framework::PodInfo& pod,
                                                               const std::string& node) const {
  if (devices.empty() || admission.device_limits.empty()) return std::nullopt;
  static const api::LabelSet kNoLabels;
  const auto labels = node_labels_.find(node);
  const api::LabelSet& node_labels = labels == node_labels_.end() ? kNoLabels : labels->second;
  for (const DeviceLimit& limit : admission.device_limits) {
    int64_t count = 0;
    for (const DeviceCount& counted : devices.counts()) {
      if (counted.resource != limit.resource) continue;
      if (limit.model == api::kEmptySymbol ||
          (counted.model != api::kEmptySymbol &&
           limit.model_names->Resolve(counted.model) == limit.model)) {
        count += counted.count;
      }
    }
    if (limit.Exceeded(count, pod.requests.Get(limit.resource), node_labels)) {
      return limit.message;
    }
  }
  return std::nullopt;
}

bool QuotaTracker::SetPodDevices(const std::string& pod_key, const PodDevices& devices) {
  const absl::Time now = clock_->Now();
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    auto it = charges_.find(pod_key);
    if (it == charges_.end()) return false;
    PodCharge& charge = it->second;
    if (devices.unresolved) {
      unresolved_devices_.insert(pod_key);
    } else {
      unresolved_devices_.erase(pod_key);
    }
    if (devices.tally == charge.devices.tally) {
      charge.devices.unresolved = devices.unresolved;
      return false;
    }
    const api::ResourceList before = charge.amounts();
    ApplyLocked(charge, -1, now);
    charge.devices = devices;
    charge.SetAmounts(ChargeAmountsLocked(charge));
    ApplyLocked(charge, +1, now);
    bool shrank = false;
    before.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
      shrank = shrank || charge.amounts().Get(id) < amount;
    });
    if (shrank) {
      for (int q = charge.queue; q >= 0; q = tree_.node(q).parent) {
        keys.push_back(QuotaKey(tree_.node(q).path));
      }
    }
  }
  Wake(keys);
  return true;
}

std::vector<std::string> QuotaTracker::PodsWithUnresolvedDevices() {
  absl::MutexLock lock(&mu_);
  return {unresolved_devices_.begin(), unresolved_devices_.end()};
}

void QuotaTracker::CountPublishedDevices(const DeviceTally& devices, int sign) {
  if (devices.empty()) return;
  absl::MutexLock lock(&mu_);
  published_devices_.Add(devices, sign);
}

}  // namespace kubesched::quota
