#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/event_handler.h"
#include "scheduler/client/pod_deleter.h"
#include "scheduler/client/pod_group_status_writer.h"
#include "scheduler/framework/claim_binding.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/volume_binding.h"

namespace kubesched::cluster {

// An in-memory API server for `simulate` and `explain`: an object store with increasing
// resourceVersions, watch fan-out of ADDED/MODIFIED/DELETED events, and pod binding with the API
// server's semantics (binding a pod that is already bound is a conflict).
//
// Events are queued on write and delivered by DeliverEvents() on the caller's thread, in write
// order, so a simulation is deterministic and a writer never calls into a watcher while holding
// the store's lock.
//
// It also plays the PV controller and the provisioners for VolumeBinding's writes
// (embedded_volumes.cc): a PV given a claimRef is bound to that claim at once, and a claim given a
// selected node gets a new PV there (the node's hostname and zone in its node affinity) when its
// class has a provisioner; the writes return the bound objects, so the binding never waits.
//
// And it plays the ResourceClaim controller (embedded_dra.cc): a pending pod whose
// spec.resourceClaims names a template gets a claim made from it (named
// "<pod>-<claim>-<5 characters>", controlled by the pod) and the claim's name in its
// status.resourceClaimStatuses, as soon as both the pod and the template exist; a deleted pod
// leaves the reservedFor of its claims, and a claim reserved for no pod any more is deallocated,
// or deleted when it was generated for that pod. DynamicResources' claim status writes are stored
// as the API server stores them.
//
// Threads: every method is thread-safe; one mutex guards the store and the event queue.
// Watchers are called without the lock held.
class EmbeddedCluster : public framework::PodBinder,
                        public client::PodDeleter,
                        public framework::VolumeBinder,
                        public framework::ClaimStatusWriter,
                        public client::PodGroupStatusWriter {
 public:
  EmbeddedCluster() = default;

  // Creates an object. AlreadyExists if an object of that kind and name exists.
  absl::Status Create(const api::Object& object);
  // The same, moving the object into the store; a refused object is left as it was.
  absl::Status Create(api::Object&& object);
  // Replaces a pod. NotFound if absent.
  absl::Status UpdatePod(const api::Pod& pod);
  absl::Status DeletePod(const std::string& namespace_name, const std::string& name);
  // With a UID precondition: FailedPrecondition if the pod now has another UID.
  absl::Status DeletePod(const std::string& namespace_name, const std::string& name,
                         const std::string& uid) override;
  absl::Status DeleteNode(const std::string& name);

  // POST pods/{name}/binding: NotFound if the pod is gone, FailedPrecondition if the UID does not
  // match, Aborted (HTTP 409 Conflict) if the pod already has a node.
  absl::Status Bind(const std::string& namespace_name, const std::string& name,
                    const std::string& uid, const std::string& node_name);
  framework::Status BindPod(const api::Pod& pod, std::string_view node_name) override;

  // framework::VolumeBinder: Aborted when the PV's resourceVersion is not the stored one,
  // NotFound when it or the claim is gone.
  absl::StatusOr<framework::VolumeWriteResult> BindVolume(
      const api::PersistentVolume& volume) override;
  absl::StatusOr<framework::VolumeWriteResult> SelectNode(
      const api::PersistentVolumeClaim& claim) override;
  bool BindsAtOnce() const override { return true; }

  // framework::ClaimStatusWriter (embedded_dra.cc): NotFound when the claim is gone, Aborted
  // when its resourceVersion is not the stored one (RemoveReservation, the API's patch by uid,
  // needs none), InvalidArgument when an allocation is given for a claim that has one (the API
  // server's "field is immutable").
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> WriteReservation(
      const api::ResourceClaim& claim, const api::AllocationResult* allocation,
      const api::ResourceClaimConsumer& consumer) override;
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> RemoveReservation(
      const api::ResourceClaim& claim, std::string_view consumer_uid) override;
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> Deallocate(
      const api::ResourceClaim& claim) override;
  // By "namespace/name"; null when absent.
  std::shared_ptr<const api::ResourceClaim> GetResourceClaim(const std::string& key) const;

  // client::PodGroupStatusWriter (embedded_pod_groups.cc): replaces the stored group's status at
  // once (a new resourceVersion, MODIFIED to the watchers); a group that is gone is logged.
  void WriteStatus(const std::string& namespace_name, const std::string& name,
                   const api::PodGroupStatus& status) override;

  // Registers a watcher. It first receives every stored object as ADDED (like an informer's
  // initial list), on the next DeliverEvents().
  void Watch(client::ClusterEventHandler* handler);
  // Delivers queued events to every watcher; returns how many events were delivered.
  size_t DeliverEvents();
  bool HasPendingEvents() const;

  std::shared_ptr<const api::Pod> GetPod(const std::string& key) const;
  size_t PodCount() const;
  // By "namespace/name"; null when absent.
  std::shared_ptr<const api::PodGroup> GetPodGroup(const std::string& key) const;

  int64_t resource_version() const;

 private:
  using AnyEvent =
      std::variant<client::Event<api::Pod>, client::Event<api::Node>, client::Event<api::Namespace>,
                   client::Event<api::PriorityClass>, client::Event<api::ConfigMap>,
                   client::Event<api::PodDisruptionBudget>, client::Event<api::NodeMetrics>,
                   client::Event<api::PersistentVolumeClaim>, client::Event<api::PersistentVolume>,
                   client::Event<api::StorageClass>, client::Event<api::CsiNode>,
                   client::Event<api::VolumeAttachment>, client::Event<api::PodGroup>,
                   client::Event<api::DeviceClass>, client::Event<api::ResourceSlice>,
                   client::Event<api::ResourceClaim>, client::Event<api::ResourceClaimTemplate>>;
  template <typename T>
  using Store = absl::btree_map<std::string, std::shared_ptr<const T>>;
  // Pods, the most numerous kind, by namespace and name as views of the stored pod's own fields,
  // so that an entry costs no key string: the entry holds the pod the views point into, and
  // giving an entry another pod gives it that pod's views (ReplacePodLocked).
  struct PodName {
    absl::string_view namespace_name;
    absl::string_view name;
    friend bool operator<(const PodName& a, const PodName& b) {
      return a.namespace_name != b.namespace_name ? a.namespace_name < b.namespace_name
                                                  : a.name < b.name;
    }
  };
  using PodStore = absl::btree_map<PodName, std::shared_ptr<const api::Pod>>;
  static PodName NameOf(const api::Pod& pod) { return {pod.meta.namespace_name, pod.meta.name}; }
  absl::Status InsertPod(api::Pod&& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReplacePodLocked(PodStore::iterator it, std::shared_ptr<const api::Pod> pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Moves `object` into the store unless one of its kind and name is there already.
  template <typename T>
  absl::Status Insert(Store<T>& store, T&& object, std::string_view kind)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename T>
  void ReplayStore(const Store<T>& store, client::ClusterEventHandler* handler)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NextResourceVersion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replaces a stored object with `object` (a new resourceVersion) and queues MODIFIED.
  template <typename T>
  std::shared_ptr<const T> Replace(Store<T>& store, const std::string& key, T object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stored version of `claim`: NotFound when it is gone, Aborted when `same_version` and its
  // resourceVersion is not `claim`'s (the API server's refusals).
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> StoredClaim(
      const api::ResourceClaim& claim, bool same_version) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The PV controller's binding of a claim to a PV that names it: both get phase Bound, the
  // claim the PV's name and the bind-completed annotation.
  framework::VolumeWriteResult BindClaimLocked(const std::string& volume_key,
                                               const std::string& claim_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The ResourceClaim controller's turn (embedded_dra.cc): claims from templates for the pending
  // pod at `pod_key`, or for every pending pod when `pod_key` is empty (a template appeared).
  void CreateTemplateClaimsLocked(const std::string& pod_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CreateTemplateClaimsForLocked(const std::string& pod_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The ResourceClaim controller's turn after `pod` was deleted: its claims are released.
  void ReleaseClaimsLocked(const api::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A provisioner's new PV for the claim on `node` (nullopt when the class cannot provision).
  std::optional<api::PersistentVolume> ProvisionLocked(const api::PersistentVolumeClaim& claim,
                                                       const std::string& node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  int64_t resource_version_ ABSL_GUARDED_BY(mu_) = 0;
  PodStore pods_ ABSL_GUARDED_BY(mu_);
  Store<api::Node> nodes_ ABSL_GUARDED_BY(mu_);
  Store<api::Namespace> namespaces_ ABSL_GUARDED_BY(mu_);
  Store<api::PriorityClass> priority_classes_ ABSL_GUARDED_BY(mu_);
  Store<api::ConfigMap> config_maps_ ABSL_GUARDED_BY(mu_);
  Store<api::PodDisruptionBudget> pdbs_ ABSL_GUARDED_BY(mu_);
  Store<api::NodeMetrics> node_metrics_ ABSL_GUARDED_BY(mu_);
  Store<api::PersistentVolumeClaim> claims_ ABSL_GUARDED_BY(mu_);
  Store<api::PersistentVolume> volumes_ ABSL_GUARDED_BY(mu_);
  Store<api::StorageClass> storage_classes_ ABSL_GUARDED_BY(mu_);
  Store<api::CsiNode> csi_nodes_ ABSL_GUARDED_BY(mu_);
  Store<api::VolumeAttachment> attachments_ ABSL_GUARDED_BY(mu_);
  Store<api::PodGroup> pod_groups_ ABSL_GUARDED_BY(mu_);
  Store<api::DeviceClass> device_classes_ ABSL_GUARDED_BY(mu_);
  Store<api::ResourceSlice> resource_slices_ ABSL_GUARDED_BY(mu_);
  Store<api::ResourceClaim> resource_claims_ ABSL_GUARDED_BY(mu_);
  Store<api::ResourceClaimTemplate> resource_claim_templates_ ABSL_GUARDED_BY(mu_);
  // An event not yet delivered: addressed to one new watcher (its initial replay), or to every
  // watcher registered before the event was written (target == nullptr).
  struct PendingEvent {
    client::ClusterEventHandler* target;
    uint64_t sequence;
    AnyEvent event;
  };
  struct Watcher {
    client::ClusterEventHandler* handler;
    uint64_t registered_at;  // sees broadcast events with a larger sequence
  };
  void Enqueue(client::ClusterEventHandler* target, AnyEvent event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<PendingEvent> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<Watcher> watchers_ ABSL_GUARDED_BY(mu_);
};

// Defined here because the volume and PodGroup writers (embedded_volumes.cc,
// embedded_pod_groups.cc) both replace objects.
template <typename T>
std::shared_ptr<const T> EmbeddedCluster::Replace(Store<T>& store, const std::string& key,
                                                  T object) {
  object.meta.resource_version = NextResourceVersion();
  auto updated = std::make_shared<const T>(std::move(object));
  std::shared_ptr<const T>& slot = store[key];
  Enqueue(nullptr, client::Event<T>{client::EventType::kModified, slot, updated});
  slot = updated;
  return updated;
}

}  // namespace kubesched::cluster
