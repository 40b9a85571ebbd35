#pragma once

// The scheduler's informer set: one Reflector per watched kind, all delivering to one
// ClusterEventHandler.
//
// Kinds: Node, Namespace, PriorityClass, PodDisruptionBudget, the volume kinds (StorageClass,
// PersistentVolume, PersistentVolumeClaim, CSINode, VolumeAttachment), PodGroup (scheduler-plugins'
// CRD; a cluster without it counts as having none, see ResourceKind::optional), the Dynamic
// Resource Allocation kinds (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate;
// optional too), Pod (non-terminal phases only), and ConfigMap in the scheduler's own namespace
// when one is given.
//
// The DRA kinds are watched whatever the profiles hold, as upstream watches them whenever its
// DynamicResources feature is on: the claims a pod names are then known before a profile that
// allocates them is configured, and `explain --kubeconfig` sees what `run` sees. On a cluster
// without DRA objects the four watches are idle; an API server without resource.k8s.io/v1
// (before Kubernetes 1.34) answers 404, which is logged once per kind and treated as no objects,
// and so is a 403 from RBAC rules that do not grant them.
//
// Start order: the Pod reflector lists only after Node, Namespace and PriorityClass have delivered
// their first list (or `pod_list_prerequisite_timeout` passed, so that e.g. a missing RBAC rule
// for one of them degrades instead of blocking pods forever). The cache copes with pods on unknown
// nodes, so this is not needed for correctness; it makes the first scheduling decisions see the
// whole cluster and is nearly free.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/client/event_handler.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/client/reflector.h"

namespace kubesched::client {

struct InformerOptions {
  // Namespace whose ConfigMaps are watched; empty means no ConfigMap reflector.
  std::string scheduler_namespace;
  // Page size, watch timeouts, backoff and clock, shared by every reflector.
  ReflectorOptions reflector;
  // How long the Pod reflector waits for Node, Namespace and PriorityClass to sync first.
  absl::Duration pod_list_prerequisite_timeout = absl::Seconds(30);
};

// The kinds Informers watches, in start order (prerequisites first, Pod last); ConfigMaps only
// when `scheduler_namespace` is not empty. A one-time read of the cluster lists the same.
std::vector<ResourceKind> WatchedKinds(const std::string& scheduler_namespace);

// Thread-safety: Start() and Stop() are called from one owning thread; HasSynced(),
// WaitForSync() and Stats() from any thread. Handler calls are serialized across all reflectors
// (one delivery mutex): the handler never sees two events at once, and sees each kind's events in
// watch order. The handler must not call back into Informers::Stop().
class Informers {
 public:
  // `transport` and `handler` must outlive this object.
  Informers(HttpTransport* transport, ClusterEventHandler* handler, InformerOptions options);
  ~Informers();  // Stop()

  Informers(const Informers&) = delete;
  Informers& operator=(const Informers&) = delete;

  // Starts one thread per reflector. Once only: later calls, and calls after Stop(), do nothing.
  void Start();
  // Requests every reflector to stop and joins them. Prompt while watching or backing off; waits
  // for an in-flight LIST request (bounded by the transport's timeout). Idempotent.
  void Stop();

  // True once every reflector has delivered its first full list.
  bool HasSynced() const;
  // Waits until HasSynced(), `timeout` passes, or Stop(); returns HasSynced().
  bool WaitForSync(absl::Duration timeout);

  // One entry per reflector, in start order.
  std::vector<ReflectorStats> Stats() const;

 private:
  void DeliverToHandler(const ObjectEvent& event);
  void NotifySynced();
  bool PrerequisitesSynced() const;
  void RunPodReflector(std::stop_token stop);

  ClusterEventHandler* const handler_;
  const InformerOptions options_;
  // Prerequisites (Node, Namespace, PriorityClass) first, then the others, Pod last.
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<std::jthread> threads_;

  std::mutex delivery_mu_;  // held for each handler call

  mutable std::mutex sync_mu_;
  std::condition_variable_any sync_cv_;  // reflector synced, or Stop()
  bool started_ = false;                 // guarded by sync_mu_
  bool stopped_ = false;                 // guarded by sync_mu_
};

}  // namespace kubesched::client
