// The scheduler's side of the informers: cluster events into the cache, the queue and the quota.

#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/util/log.h"

namespace kubesched::scheduler {
namespace {

using client::EventType;

bool IsAssigned(const api::Pod& pod) { return !pod.spec.node_name.empty(); }

}  // namespace

const runtime::Framework* Scheduler::PendingFrameworkFor(const api::Pod& pod) const {
  if (IsAssigned(pod) || pod.IsTerminal() || pod.meta.deletion_timestamp.has_value()) {
    return nullptr;
  }
  return FrameworkFor(pod);
}

void Scheduler::OnPod(const client::Event<api::Pod>& event) {
  switch (event.type) {
    case EventType::kAdded:
      OnPodAdded(event.object);
      break;
    case EventType::kModified:
      OnPodUpdated(event.old_object, event.object);
      break;
    case EventType::kDeleted:
      OnPodDeleted(event.object);
      break;
  }
}

void Scheduler::TrackGangMember(const api::Pod& pod) {
  const framework::GangMembership gang = framework::GangMembershipOf(pod);
  if (!gang.InGroup()) return;
  const bool member = !pod.IsTerminal() && (IsAssigned(pod) || PendingFrameworkFor(pod) != nullptr);
  if (member) {
    cache_->SetGangMember(gang, {pod.meta.creation_timestamp.value_or(absl::InfinitePast()),
                                 pod.Key(), framework::PodRequests(pod.spec, false)});
  } else if (auto emptied = cache_->RemoveGangMember(pod.Key())) {
    ReportGangReleased(*emptied);
  }
}

void Scheduler::OnPodAdded(const std::shared_ptr<const api::Pod>& pod) {
  TrackGangMember(*pod);
  if (IsAssigned(*pod)) {
    if (pod->IsTerminal()) return;  // finished pods take no resources
    auto info = MakeInfo(pod);
    (void)cache_->AddPod(info);
    quota_->ChargeBound(*info, DevicesOf(*pod));
    queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kAssignedPodAdded);
    return;
  }
  if (const runtime::Framework* fw = PendingFrameworkFor(*pod)) {
    auto info = MakeInfo(pod);
    queue_->Add(info, fw->RunPreEnqueue(*info));
    // Members of its group that waited for enough pods may go now.
    if (info->gang.InGroup()) {
      queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kGangMemberAdded);
    }
  }
}

void Scheduler::OnPodUpdated(const std::shared_ptr<const api::Pod>& old_pod,
                             const std::shared_ptr<const api::Pod>& pod) {
  const std::string key = pod->Key();
  TrackGangMember(*pod);
  const bool was_assigned = old_pod != nullptr && IsAssigned(*old_pod);
  if (IsAssigned(*pod)) {
    if (!was_assigned) {
      // Newly bound (by us or anyone): it leaves the queue (which also keeps a pod that is being
      // scheduled from being requeued) and joins the cache.
      queue_->Delete(key);
      if (!pod->IsTerminal()) {
        auto info = MakeInfo(pod);
        (void)cache_->AddPod(info);
        quota_->ChargeBound(*info, DevicesOf(*pod));
        queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kAssignedPodAdded);
      }
      return;
    }
    if (pod->IsTerminal()) {
      ForgetEvicting(key);
      (void)cache_->RemovePod(key);
      quota_->Release(key, /*assumed_only=*/false);
      queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
      return;
    }
    UpdateBoundPod(pod);
    return;
  }
  if (const runtime::Framework* fw = PendingFrameworkFor(*pod)) {
    // Assumed (binding, or bound and not yet shown by the watch): the update is the watch
    // catching up with the pod's own earlier writes, such as its nominatedNodeName. Taken as
    // news it would requeue the pod and nominate it to the node whose room it already holds, and
    // the pods nominated there would preempt again. Upstream ignores such updates too. This
    // check only saves the work below: the pod may be assumed right after it, and the queue
    // itself ignores such updates of a pod in flight or bound (SchedulingQueue::Update).
    if (cache_->IsAssumed(key)) return;
    auto info = MakeInfo(pod);
    // Run again on every update: removing a pod's last scheduling gate is an update.
    const framework::Status pre_enqueue = fw->RunPreEnqueue(*info);
    queue_->Update(info, pre_enqueue);
    queue_->Add(info, pre_enqueue);
  } else {
    queue_->Delete(key);
  }
}

void Scheduler::OnPodDeleted(const std::shared_ptr<const api::Pod>& pod) {
  const std::string key = pod->Key();
  // A pod deleted while it waits at Permit is undone on the scheduling thread (and not requeued).
  (void)waiting_->Reject(key, "", "");
  if (auto emptied = cache_->RemoveGangMember(key)) ReportGangReleased(*emptied);
  if (IsAssigned(*pod) || cache_->IsAssumed(key)) {
    ForgetEvicting(key);
    (void)cache_->RemovePod(key);
    quota_->Release(key, /*assumed_only=*/false);
    queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
  }
  queue_->Delete(key);
}

void Scheduler::OnNode(const client::Event<api::Node>& event) {
  switch (event.type) {
    case EventType::kAdded:
      quota_->SetNode(*event.object);
      cache_->AddNode(event.object);
      queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
      break;
    case EventType::kModified:
      quota_->SetNode(*event.object);
      cache_->UpdateNode(event.object);
      queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeUpdated);
      break;
    case EventType::kDeleted:
      quota_->RemoveNode(event.object->meta.name);
      cache_->RemoveNode(event.object->meta.name);
      break;
  }
}

void Scheduler::OnNamespace(const client::Event<api::Namespace>& event) {
  const api::Symbol name = api::Intern(event.object->meta.name);
  if (event.type == EventType::kDeleted) {
    cache_->RemoveNamespace(name);
    quota_->RemoveNamespace(event.object->meta.name);
  } else {
    cache_->SetNamespace(name, event.object->meta.labels);
    quota_->SetNamespace(*event.object);
  }
}

void Scheduler::OnConfigMap(const client::Event<api::ConfigMap>& event) {
  const bool deleted = event.type == EventType::kDeleted;
  if (auto reloaded = policies_->Reload(*event.object, deleted)) {
    if (deps_.metrics != nullptr) deps_.metrics->CountPolicyReload(reloaded->applied);
    // Pods waiting for a policy that now exists (or whose args may now fill a changed template).
    if (reloaded->applied) queue_->MoveQuotaWaiters(reloaded->wake_keys);
    // A binding may now give a waiting pod another policy, under which it may fit.
    if (reloaded->bindings_changed) {
      queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kUnschedulableTimeout);
    }
    if (!reloaded->applied && deps_.observer != nullptr) {
      deps_.observer->OnConfigWarning(event.object->meta, kPolicyConfigRejectedReason,
                                      reloaded->error);
    }
  }
  queue_config_->Reload(*event.object, deleted);
}

void Scheduler::OnNodeMetrics(const client::Event<api::NodeMetrics>& event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemoveNodeMetrics(event.object->meta.name);
  } else {
    cache_->SetNodeMetrics(*event.object);
  }
}

template <typename T>
void Scheduler::OnStorageObject(const client::Event<T>& event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemoveStorageObject(*event.object);
  } else {
    cache_->SetStorageObject(event.object);
  }
  queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kStorageChanged);
}

void Scheduler::OnPersistentVolumeClaim(const client::Event<api::PersistentVolumeClaim>& event) {
  OnStorageObject(event);
}
void Scheduler::OnPersistentVolume(const client::Event<api::PersistentVolume>& event) {
  OnStorageObject(event);
}
void Scheduler::OnStorageClass(const client::Event<api::StorageClass>& event) {
  OnStorageObject(event);
}
void Scheduler::OnCsiNode(const client::Event<api::CsiNode>& event) { OnStorageObject(event); }
void Scheduler::OnVolumeAttachment(const client::Event<api::VolumeAttachment>& event) {
  OnStorageObject(event);
}

template <typename T>
void Scheduler::OnDraObject(const client::Event<T>& event, framework::ClusterEvent cluster_event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemoveDraObject(*event.object);
  } else {
    cache_->SetDraObject(event.object);
  }
  queue_->MoveAllToActiveOrBackoff(cluster_event);
}

void Scheduler::OnDeviceClass(const client::Event<api::DeviceClass>& event) {
  OnDraObject(event, framework::ClusterEvent::kDeviceInventoryChanged);
}
void Scheduler::OnResourceSlice(const client::Event<api::ResourceSlice>& event) {
  OnDraObject(event, framework::ClusterEvent::kDeviceInventoryChanged);
  const bool deleted = event.type == EventType::kDeleted;
  ChargeSliceChange(deleted ? event.object.get() : event.old_object.get(),
                    deleted ? nullptr : event.object.get());
}
void Scheduler::OnResourceClaim(const client::Event<api::ResourceClaim>& event) {
  OnDraObject(event, framework::ClusterEvent::kResourceClaimChanged);
  const bool deleted = event.type == EventType::kDeleted;
  ChargeClaimChange(deleted ? event.object.get() : event.old_object.get(),
                    deleted ? nullptr : event.object.get());
}
void Scheduler::OnResourceClaimTemplate(const client::Event<api::ResourceClaimTemplate>& event) {
  OnDraObject(event, framework::ClusterEvent::kResourceClaimChanged);
}

namespace {

// Whether a PodGroup event may change a verdict: the group came or went, or what its pods are
// judged by (its spec, or why the spec is unusable) changed. A status-only update, the
// scheduler's own status writes among them, helps no waiting pod; retrying them on it would turn
// every status write into a round of attempts.
bool PodGroupSpecChanged(const client::Event<api::PodGroup>& event) {
  if (event.type != EventType::kModified || event.old_object == nullptr) return true;
  const api::PodGroup& before = *event.old_object;
  const api::PodGroup& after = *event.object;
  return before.min_member != after.min_member || !(before.min_resources == after.min_resources) ||
         before.schedule_timeout_seconds != after.schedule_timeout_seconds ||
         before.error != after.error;
}

}  // namespace

void Scheduler::OnPodGroup(const client::Event<api::PodGroup>& event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemovePodGroup(event.object->Key());
    ReportGangReleased(event.object->Key());
  } else {
    cache_->SetPodGroup(event.object);
  }
  if (PodGroupSpecChanged(event)) {
    queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodGroupChanged);
  }
}

void Scheduler::OnPodDisruptionBudget(const client::Event<api::PodDisruptionBudget>& event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemovePdb(
        absl::StrCat(event.object->meta.namespace_name, "/", event.object->meta.name));
  } else {
    cache_->SetPdb(event.object);
  }
}

void Scheduler::OnPriorityClass(const client::Event<api::PriorityClass>& event) {
  const std::string& name = event.object->meta.name;
  bool preemption_changed = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = priority_classes_.find(name);
    auto traits = [](const api::PriorityClass* pc) {
      return pc == nullptr ? std::pair(false, std::optional<api::PreemptionPolicy>())
                           : std::pair(NonPreemptible(*pc), pc->preemption_policy);
    };
    const auto before = traits(it == priority_classes_.end() ? nullptr : &it->second);
    if (event.type == EventType::kDeleted) {
      if (it != priority_classes_.end()) priority_classes_.erase(it);
      preemption_changed = before != traits(nullptr);
    } else {
      priority_classes_[name] = *event.object;
      preemption_changed = before != traits(event.object.get());
    }
  }
  if (!preemption_changed) return;
  // Annotating a class NonPreemptible protects the pods already running with it.
  for (const auto& info : cache_->Pods()) {
    if (info->get().spec.priority_class_name == name) (void)cache_->UpdatePod(MakeInfo(info->pod));
  }
}

}  // namespace kubesched::scheduler
