#include "scheduler/client/informers.h"

#include <chrono>
#include <type_traits>
#include <utility>
#include <variant>

namespace kubesched::client {
namespace {

constexpr size_t kPrerequisiteCount = 3;  // Node, Namespace, PriorityClass: see the header

// A typed view of the variant the reflector stores, sharing its ownership.
template <typename T>
std::shared_ptr<const T> Typed(const std::shared_ptr<const api::Object>& object) {
  if (object == nullptr) return nullptr;
  const T* typed = std::get_if<T>(object.get());
  if (typed == nullptr) return nullptr;
  return std::shared_ptr<const T>(object, typed);
}

template <typename T>
Event<T> TypedEvent(const ObjectEvent& event) {
  return Event<T>{event.type, Typed<T>(event.old_object), Typed<T>(event.object)};
}

}  // namespace

std::vector<ResourceKind> WatchedKinds(const std::string& scheduler_namespace) {
  std::vector<ResourceKind> kinds = {NodeResourceKind(),
                                     NamespaceResourceKind(),
                                     PriorityClassResourceKind(),
                                     PodDisruptionBudgetResourceKind(),
                                     StorageClassResourceKind(),
                                     PersistentVolumeResourceKind(),
                                     PersistentVolumeClaimResourceKind(),
                                     CsiNodeResourceKind(),
                                     VolumeAttachmentResourceKind(),
                                     PodGroupResourceKind(),
                                     DeviceClassResourceKind(),
                                     ResourceSliceResourceKind(),
                                     ResourceClaimResourceKind(),
                                     ResourceClaimTemplateResourceKind()};
  if (!scheduler_namespace.empty()) kinds.push_back(ConfigMapResourceKind(scheduler_namespace));
  kinds.push_back(PodResourceKind());
  return kinds;
}

Informers::Informers(HttpTransport* transport, ClusterEventHandler* handler,
                     InformerOptions options)
    : handler_(handler), options_(std::move(options)) {
  for (ResourceKind& kind : WatchedKinds(options_.scheduler_namespace)) {
    reflectors_.push_back(std::make_unique<Reflector>(
        std::move(kind), transport, [this](const ObjectEvent& event) { DeliverToHandler(event); },
        options_.reflector, [this] { NotifySynced(); }));
  }
}

Informers::~Informers() { Stop(); }

void Informers::Start() {
  {
    std::lock_guard<std::mutex> lock(sync_mu_);
    if (started_ || stopped_) return;
    started_ = true;
  }
  for (size_t i = 0; i + 1 < reflectors_.size(); ++i) {
    Reflector* reflector = reflectors_[i].get();
    threads_.emplace_back([reflector](std::stop_token stop) { reflector->Run(stop); });
  }
  threads_.emplace_back([this](std::stop_token stop) { RunPodReflector(stop); });
}

void Informers::Stop() {
  for (std::jthread& thread : threads_) thread.request_stop();
  {
    std::lock_guard<std::mutex> lock(sync_mu_);
    stopped_ = true;
  }
  sync_cv_.notify_all();
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

bool Informers::HasSynced() const {
  for (const auto& reflector : reflectors_) {
    if (!reflector->HasSynced()) return false;
  }
  return true;
}

bool Informers::WaitForSync(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(sync_mu_);
  sync_cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                    [this] { return stopped_ || HasSynced(); });
  return HasSynced();
}

std::vector<ReflectorStats> Informers::Stats() const {
  std::vector<ReflectorStats> stats;
  stats.reserve(reflectors_.size());
  for (const auto& reflector : reflectors_) stats.push_back(reflector->Stats());
  return stats;
}

bool Informers::PrerequisitesSynced() const {
  for (size_t i = 0; i < kPrerequisiteCount; ++i) {
    if (!reflectors_[i]->HasSynced()) return false;
  }
  return true;
}

void Informers::RunPodReflector(std::stop_token stop) {
  {
    std::unique_lock<std::mutex> lock(sync_mu_);
    sync_cv_.wait_for(lock, stop, absl::ToChronoNanoseconds(options_.pod_list_prerequisite_timeout),
                      [this] { return PrerequisitesSynced(); });
  }
  if (stop.stop_requested()) return;
  reflectors_.back()->Run(stop);
}

void Informers::NotifySynced() {
  // Taking the lock orders this notification after a waiter's predicate check.
  { std::lock_guard<std::mutex> lock(sync_mu_); }
  sync_cv_.notify_all();
}

void Informers::DeliverToHandler(const ObjectEvent& event) {
  std::lock_guard<std::mutex> lock(delivery_mu_);
  std::visit(
      [&](const auto& object) {
        using T = std::decay_t<decltype(object)>;
        const Event<T> typed = TypedEvent<T>(event);
        if constexpr (std::is_same_v<T, api::Pod>) {
          handler_->OnPod(typed);
        } else if constexpr (std::is_same_v<T, api::Node>) {
          handler_->OnNode(typed);
        } else if constexpr (std::is_same_v<T, api::Namespace>) {
          handler_->OnNamespace(typed);
        } else if constexpr (std::is_same_v<T, api::PriorityClass>) {
          handler_->OnPriorityClass(typed);
        } else if constexpr (std::is_same_v<T, api::ConfigMap>) {
          handler_->OnConfigMap(typed);
        } else if constexpr (std::is_same_v<T, api::PodDisruptionBudget>) {
          handler_->OnPodDisruptionBudget(typed);
        } else if constexpr (std::is_same_v<T, api::NodeMetrics>) {
          handler_->OnNodeMetrics(typed);
        } else if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) {
          handler_->OnPersistentVolumeClaim(typed);
        } else if constexpr (std::is_same_v<T, api::PersistentVolume>) {
          handler_->OnPersistentVolume(typed);
        } else if constexpr (std::is_same_v<T, api::StorageClass>) {
          handler_->OnStorageClass(typed);
        } else if constexpr (std::is_same_v<T, api::CsiNode>) {
          handler_->OnCsiNode(typed);
        } else if constexpr (std::is_same_v<T, api::VolumeAttachment>) {
          handler_->OnVolumeAttachment(typed);
        } else if constexpr (std::is_same_v<T, api::PodGroup>) {
          handler_->OnPodGroup(typed);
        } else if constexpr (std::is_same_v<T, api::DeviceClass>) {
          handler_->OnDeviceClass(typed);
        } else if constexpr (std::is_same_v<T, api::ResourceSlice>) {
          handler_->OnResourceSlice(typed);
        } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
          handler_->OnResourceClaim(typed);
        } else if constexpr (std::is_same_v<T, api::ResourceClaimTemplate>) {
          handler_->OnResourceClaimTemplate(typed);
        }
      },
      *event.object);
}

}  // namespace kubesched::client
