#include "scheduler/cluster/embedded_cluster.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::cluster {
namespace {

template <typename T>
std::string KeyOf(const T& object) {
  if (object.meta.namespace_name.empty()) return object.meta.name;
  return absl::StrCat(object.meta.namespace_name, "/", object.meta.name);
}
// Cluster-scoped kinds are keyed by name even if the input carried a namespace.
std::string KeyOf(const api::Node& node) { return node.meta.name; }
std::string KeyOf(const api::Namespace& ns) { return ns.meta.name; }
std::string KeyOf(const api::PriorityClass& pc) { return pc.meta.name; }
std::string KeyOf(const api::NodeMetrics& m) { return m.meta.name; }
std::string KeyOf(const api::PersistentVolume& v) { return v.meta.name; }
std::string KeyOf(const api::StorageClass& c) { return c.meta.name; }
std::string KeyOf(const api::CsiNode& n) { return n.meta.name; }
std::string KeyOf(const api::VolumeAttachment& a) { return a.meta.name; }
std::string KeyOf(const api::DeviceClass& c) { return c.meta.name; }
std::string KeyOf(const api::ResourceSlice& s) { return s.meta.name; }

std::string PodKey(const std::string& namespace_name, const std::string& name) {
  return absl::StrCat(namespace_name, "/", name);
}

template <typename T>
client::Event<T> Added(std::shared_ptr<const T> object) {
  return client::Event<T>{client::EventType::kAdded, nullptr, std::move(object)};
}

void Dispatch(client::ClusterEventHandler* h, const client::Event<api::Pod>& e) { h->OnPod(e); }
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::Node>& e) { h->OnNode(e); }
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::Namespace>& e) {
  h->OnNamespace(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::PriorityClass>& e) {
  h->OnPriorityClass(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::ConfigMap>& e) {
  h->OnConfigMap(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::PodDisruptionBudget>& e) {
  h->OnPodDisruptionBudget(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::NodeMetrics>& e) {
  h->OnNodeMetrics(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::PersistentVolumeClaim>& e) {
  h->OnPersistentVolumeClaim(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::PersistentVolume>& e) {
  h->OnPersistentVolume(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::StorageClass>& e) {
  h->OnStorageClass(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::CsiNode>& e) {
  h->OnCsiNode(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::VolumeAttachment>& e) {
  h->OnVolumeAttachment(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::PodGroup>& e) {
  h->OnPodGroup(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::DeviceClass>& e) {
  h->OnDeviceClass(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::ResourceSlice>& e) {
  h->OnResourceSlice(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::ResourceClaim>& e) {
  h->OnResourceClaim(e);
}
void Dispatch(client::ClusterEventHandler* h, const client::Event<api::ResourceClaimTemplate>& e) {
  h->OnResourceClaimTemplate(e);
}

}  // namespace

std::string EmbeddedCluster::NextResourceVersion() { return absl::StrCat(++resource_version_); }

void EmbeddedCluster::Enqueue(client::ClusterEventHandler* target, AnyEvent event) {
  ++sequence_;
  // A change made before any watcher registered reaches nobody (a watcher sees only the changes
  // after it, and the objects as they are then): not queued, as a cluster loaded from a file would
  // otherwise hold an event per object until the first delivery.
  if (target == nullptr && watchers_.empty()) return;
  pending_.push_back({target, sequence_, std::move(event)});
}

template <typename T>
absl::Status EmbeddedCluster::Insert(Store<T>& store, T&& object, std::string_view kind) {
  const std::string key = KeyOf(object);
  if (store.contains(key)) {
    return absl::AlreadyExistsError(absl::StrCat(util::Absl(kind), " ", key, " already exists"));
  }
  object.meta.resource_version = NextResourceVersion();
  auto stored = std::make_shared<const T>(std::move(object));
  store.emplace(key, stored);
  Enqueue(nullptr, Added(std::move(stored)));
  return absl::OkStatus();
}

absl::Status EmbeddedCluster::InsertPod(api::Pod&& pod) {
  if (pods_.contains(NameOf(pod))) {
    return absl::AlreadyExistsError(absl::StrCat("Pod ", pod.Key(), " already exists"));
  }
  pod.meta.resource_version = NextResourceVersion();
  auto stored = std::make_shared<const api::Pod>(std::move(pod));
  pods_.emplace(NameOf(*stored), stored);
  Enqueue(nullptr, Added(std::move(stored)));
  return absl::OkStatus();
}

void EmbeddedCluster::ReplacePodLocked(PodStore::iterator it, std::shared_ptr<const api::Pod> pod) {
  pods_.erase(it);
  const PodName name = NameOf(*pod);
  pods_.emplace(name, std::move(pod));
}

absl::Status EmbeddedCluster::Create(const api::Object& object) {
  return Create(api::Object(object));
}

absl::Status EmbeddedCluster::Create(api::Object&& object) {
  absl::MutexLock lock(&mu_);
  return std::visit(
      [&](auto& typed) -> absl::Status {
        using T = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<T, api::Pod>) {
          // Most pods have no claims: they cost the ResourceClaim controller nothing.
          const bool has_claims = !typed.spec.resource_claims.empty();
          const std::string key = typed.Key();
          absl::Status status = InsertPod(std::move(typed));
          if (status.ok() && has_claims) CreateTemplateClaimsLocked(key);
          return status;
        }
        if constexpr (std::is_same_v<T, api::Node>) return Insert(nodes_, std::move(typed), "Node");
        if constexpr (std::is_same_v<T, api::Namespace>) {
          return Insert(namespaces_, std::move(typed), "Namespace");
        }
        if constexpr (std::is_same_v<T, api::PriorityClass>) {
          return Insert(priority_classes_, std::move(typed), "PriorityClass");
        }
        if constexpr (std::is_same_v<T, api::ConfigMap>) {
          return Insert(config_maps_, std::move(typed), "ConfigMap");
        }
        if constexpr (std::is_same_v<T, api::PodDisruptionBudget>) {
          return Insert(pdbs_, std::move(typed), "PodDisruptionBudget");
        }
        if constexpr (std::is_same_v<T, api::NodeMetrics>) {
          return Insert(node_metrics_, std::move(typed), "NodeMetrics");
        }
        if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) {
          return Insert(claims_, std::move(typed), "PersistentVolumeClaim");
        }
        if constexpr (std::is_same_v<T, api::PersistentVolume>) {
          return Insert(volumes_, std::move(typed), "PersistentVolume");
        }
        if constexpr (std::is_same_v<T, api::StorageClass>) {
          return Insert(storage_classes_, std::move(typed), "StorageClass");
        }
        if constexpr (std::is_same_v<T, api::CsiNode>)
          return Insert(csi_nodes_, std::move(typed), "CSINode");
        if constexpr (std::is_same_v<T, api::VolumeAttachment>) {
          return Insert(attachments_, std::move(typed), "VolumeAttachment");
        }
        if constexpr (std::is_same_v<T, api::PodGroup>) {
          return Insert(pod_groups_, std::move(typed), "PodGroup");
        }
        if constexpr (std::is_same_v<T, api::DeviceClass>) {
          return Insert(device_classes_, std::move(typed), "DeviceClass");
        }
        if constexpr (std::is_same_v<T, api::ResourceSlice>) {
          return Insert(resource_slices_, std::move(typed), "ResourceSlice");
        }
        if constexpr (std::is_same_v<T, api::ResourceClaim>) {
          return Insert(resource_claims_, std::move(typed), "ResourceClaim");
        }
        if constexpr (std::is_same_v<T, api::ResourceClaimTemplate>) {
          absl::Status status =
              Insert(resource_claim_templates_, std::move(typed), "ResourceClaimTemplate");
          if (status.ok()) CreateTemplateClaimsLocked("");
          return status;
        }
        return absl::InvalidArgumentError("unsupported kind");
      },
      object);
}

absl::Status EmbeddedCluster::UpdatePod(const api::Pod& pod) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(NameOf(pod));
  if (it == pods_.end()) {
    return absl::NotFoundError(
        absl::StrCat("Pod ", PodKey(pod.meta.namespace_name, pod.meta.name), " not found"));
  }
  api::Pod copy = pod;
  copy.meta.resource_version = NextResourceVersion();
  auto updated = std::make_shared<const api::Pod>(std::move(copy));
  Enqueue(nullptr, client::Event<api::Pod>{client::EventType::kModified, it->second, updated});
  ReplacePodLocked(it, std::move(updated));
  return absl::OkStatus();
}

absl::Status EmbeddedCluster::DeletePod(const std::string& namespace_name,
                                        const std::string& name) {
  return DeletePod(namespace_name, name, "");
}

absl::Status EmbeddedCluster::DeletePod(const std::string& namespace_name, const std::string& name,
                                        const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(PodName{namespace_name, name});
  if (it == pods_.end()) {
    return absl::NotFoundError(absl::StrCat("Pod ", PodKey(namespace_name, name), " not found"));
  }
  if (!uid.empty() && it->second->meta.uid != uid) {
    return absl::FailedPreconditionError(
        absl::StrCat("Precondition failed: UID in precondition: ", uid,
                     ", UID in object meta: ", it->second->meta.uid));
  }
  NextResourceVersion();
  const std::shared_ptr<const api::Pod> deleted = it->second;
  Enqueue(nullptr, client::Event<api::Pod>{client::EventType::kDeleted, nullptr, deleted});
  pods_.erase(it);
  if (!deleted->spec.resource_claims.empty()) ReleaseClaimsLocked(*deleted);
  return absl::OkStatus();
}

absl::Status EmbeddedCluster::DeleteNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return absl::NotFoundError(absl::StrCat("Node ", name, " not found"));
  NextResourceVersion();
  Enqueue(nullptr, client::Event<api::Node>{client::EventType::kDeleted, nullptr, it->second});
  nodes_.erase(it);
  return absl::OkStatus();
}

absl::Status EmbeddedCluster::Bind(const std::string& namespace_name, const std::string& name,
                                   const std::string& uid, const std::string& node_name) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(PodName{namespace_name, name});
  if (it == pods_.end()) return absl::NotFoundError(absl::StrCat("pods \"", name, "\" not found"));
  const auto& current = *it->second;
  if (!uid.empty() && !current.meta.uid.empty() && uid != current.meta.uid) {
    return absl::FailedPreconditionError(
        absl::StrCat("Precondition failed: UID in precondition: ", uid,
                     ", UID in object meta: ", current.meta.uid));
  }
  if (!current.spec.node_name.empty()) {
    return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on pods/binding \"", name,
                                           "\": pod ", name, " is already assigned to node \"",
                                           current.spec.node_name, "\""));
  }
  if (!current.spec.scheduling_gates.empty()) {
    // As the real API server: a pod that is not ready for scheduling cannot be bound.
    return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on pods/binding \"", name,
                                           "\": pod ", name,
                                           " has non-empty .spec.schedulingGates"));
  }
  api::Pod bound = current;
  bound.spec.node_name = node_name;
  bound.status.conditions.push_back({"PodScheduled", "True", "", ""});
  bound.meta.resource_version = NextResourceVersion();
  auto updated = std::make_shared<const api::Pod>(std::move(bound));
  Enqueue(nullptr, client::Event<api::Pod>{client::EventType::kModified, it->second, updated});
  ReplacePodLocked(it, std::move(updated));
  return absl::OkStatus();
}

framework::Status EmbeddedCluster::BindPod(const api::Pod& pod, std::string_view node_name) {
  auto status = Bind(pod.meta.namespace_name, pod.meta.name, pod.meta.uid, std::string(node_name));
  if (status.ok()) return framework::Status();
  return framework::Status::Error(util::Std(status.message()));
}

template <typename T>
void EmbeddedCluster::ReplayStore(const Store<T>& store, client::ClusterEventHandler* handler) {
  for (const auto& [key, object] : store) Enqueue(handler, Added(object));
}

void EmbeddedCluster::Watch(client::ClusterEventHandler* handler) {
  absl::MutexLock lock(&mu_);
  // Replay in dependency order: what pods refer to comes first.
  ReplayStore(namespaces_, handler);
  ReplayStore(priority_classes_, handler);
  ReplayStore(config_maps_, handler);
  ReplayStore(pdbs_, handler);
  ReplayStore(nodes_, handler);
  ReplayStore(node_metrics_, handler);
  ReplayStore(storage_classes_, handler);
  ReplayStore(volumes_, handler);
  ReplayStore(claims_, handler);
  ReplayStore(csi_nodes_, handler);
  ReplayStore(attachments_, handler);
  ReplayStore(pod_groups_, handler);
  ReplayStore(device_classes_, handler);
  ReplayStore(resource_slices_, handler);
  ReplayStore(resource_claim_templates_, handler);
  ReplayStore(resource_claims_, handler);
  // Pods in creation order (resourceVersion), so queue arrival order follows the input files.
  // Each version is parsed once, not at every comparison.
  std::vector<std::pair<int64_t, std::shared_ptr<const api::Pod>>> pods;
  pods.reserve(pods_.size());
  for (const auto& [key, pod] : pods_) {
    pods.emplace_back(std::stoll(pod->meta.resource_version), pod);
  }
  std::sort(pods.begin(), pods.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [version, pod] : pods) Enqueue(handler, Added(std::move(pod)));
  watchers_.push_back({handler, sequence_});
}

size_t EmbeddedCluster::DeliverEvents() {
  std::vector<PendingEvent> batch;
  std::vector<Watcher> watchers;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(pending_);
    watchers = watchers_;
  }
  for (const auto& pending : batch) {
    std::visit(
        [&](const auto& typed) {
          if (pending.target != nullptr) {
            Dispatch(pending.target, typed);
            return;
          }
          for (const auto& watcher : watchers) {
            if (watcher.registered_at < pending.sequence) Dispatch(watcher.handler, typed);
          }
        },
        pending.event);
  }
  return batch.size();
}

bool EmbeddedCluster::HasPendingEvents() const {
  absl::MutexLock lock(&mu_);
  return !pending_.empty();
}

std::shared_ptr<const api::Pod> EmbeddedCluster::GetPod(const std::string& key) const {
  // "namespace/name": a namespace holds no '/', and "" (as some conformance vectors have it)
  // makes "/name".
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return nullptr;
  const absl::string_view view(key);
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(PodName{view.substr(0, slash), view.substr(slash + 1)});
  return it == pods_.end() ? nullptr : it->second;
}

size_t EmbeddedCluster::PodCount() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

int64_t EmbeddedCluster::resource_version() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

}  // namespace kubesched::cluster
