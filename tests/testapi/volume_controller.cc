#include "tests/testapi/volume_controller.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/testapi/resources.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

constexpr char kBindCompleted[] = "pv.kubernetes.io/bind-completed";
constexpr char kBoundByController[] = "pv.kubernetes.io/bound-by-controller";
constexpr char kSelectedNode[] = "volume.kubernetes.io/selected-node";
constexpr char kProvisionedBy[] = "pv.kubernetes.io/provisioned-by";
constexpr char kBetaStorageClass[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kNoProvisioner[] = "kubernetes.io/no-provisioner";
constexpr char kHostnameLabel[] = "kubernetes.io/hostname";
constexpr char kZoneLabel[] = "topology.kubernetes.io/zone";

const ResourceType& VolumesType() { return *FindResourceType("", "v1", "persistentvolumes"); }
const ResourceType& ClaimsType() { return *FindResourceType("", "v1", "persistentvolumeclaims"); }

std::string Annotation(const rapidjson::Value& object, const char* key) {
  const auto metadata = object.FindMember("metadata");
  if (metadata == object.MemberEnd() || !metadata->value.IsObject()) return "";
  const auto annotations = metadata->value.FindMember("annotations");
  if (annotations == metadata->value.MemberEnd() || !annotations->value.IsObject()) return "";
  const auto value = annotations->value.FindMember(key);
  return value != annotations->value.MemberEnd() && value->value.IsString()
             ? value->value.GetString()
             : "";
}

void SetAnnotation(rapidjson::Value& object, const char* key, const std::string& value,
                   Allocator& allocator) {
  rapidjson::Value& annotations =
      ObjectMember(ObjectMember(object, "metadata", allocator), "annotations", allocator);
  SetString(annotations, key, value, allocator);
}

std::string ClaimClass(const rapidjson::Value& claim) {
  std::string annotated = Annotation(claim, kBetaStorageClass);
  return annotated.empty() ? StringAt(claim, "spec.storageClassName") : annotated;
}

// A copy of `source`'s member `name` into `target` (nothing when absent).
void CopyMember(const rapidjson::Value& source, const char* name, rapidjson::Value& target,
                const char* as, Allocator& allocator) {
  const auto it = source.FindMember(name);
  if (it == source.MemberEnd()) return;
  SetMember(target, as, rapidjson::Value(it->value, allocator), allocator);
}

// Binds `claim_object`'s claim to the PV: volumeName, bind-completed, phase Bound, and the PV's
// access modes and capacity in its status. Returns whether it wrote.
bool BindClaim(Store& store, const StoredObject& claim, const rapidjson::Value& volume) {
  const std::string pv_name = StringAt(volume, "metadata.name");
  rapidjson::Document current = claim.Parse();
  if (StringAt(current, "spec.volumeName") == pv_name &&
      !Annotation(current, kBindCompleted).empty() &&
      StringAt(current, "status.phase") == "Bound") {
    return false;
  }
  auto updated = store.Update(
      ClaimsType(), claim.namespace_name, claim.name, [&](rapidjson::Document& object) {
        auto& allocator = object.GetAllocator();
        SetString(ObjectMember(object, "spec", allocator), "volumeName", pv_name, allocator);
        SetAnnotation(object, kBindCompleted, "yes", allocator);
        rapidjson::Value& status = ObjectMember(object, "status", allocator);
        SetString(status, "phase", "Bound", allocator);
        const rapidjson::Value& spec = volume["spec"];
        CopyMember(spec, "accessModes", status, "accessModes", allocator);
        CopyMember(spec, "capacity", status, "capacity", allocator);
        return absl::OkStatus();
      });
  return updated.ok();
}

// The PV side of a binding: phase Bound and the claim's UID in its claimRef.
bool MarkVolumeBound(Store& store, const StoredObject& volume, const std::string& claim_uid) {
  rapidjson::Document current = volume.Parse();
  if (StringAt(current, "status.phase") == "Bound" &&
      StringAt(current, "spec.claimRef.uid") == claim_uid) {
    return false;
  }
  auto updated = store.Update(VolumesType(), "", volume.name, [&](rapidjson::Document& object) {
    auto& allocator = object.GetAllocator();
    rapidjson::Value& ref =
        ObjectMember(ObjectMember(object, "spec", allocator), "claimRef", allocator);
    SetString(ref, "uid", claim_uid, allocator);
    SetString(ObjectMember(object, "status", allocator), "phase", "Bound", allocator);
    return absl::OkStatus();
  });
  return updated.ok();
}

// The PV controller's part for one PV: Available when free, bound to the claim it names.
int ReconcileVolume(Store& store, const StoredObject& volume) {
  rapidjson::Document object = volume.Parse();
  const std::string claim_name = StringAt(object, "spec.claimRef.name");
  if (claim_name.empty()) {
    const std::string phase = StringAt(object, "status.phase");
    if (!phase.empty() && phase != "Pending") return 0;
    auto updated = store.Update(VolumesType(), "", volume.name, [](rapidjson::Document& pv) {
      auto& allocator = pv.GetAllocator();
      SetString(ObjectMember(pv, "status", allocator), "phase", "Available", allocator);
      return absl::OkStatus();
    });
    return updated.ok() ? 1 : 0;
  }
  auto claim = store.Get(ClaimsType(), StringAt(object, "spec.claimRef.namespace"), claim_name);
  if (!claim.ok()) return 0;
  const std::string bound_to = StringAt((*claim)->Parse(), "spec.volumeName");
  if (!bound_to.empty() && bound_to != volume.name) return 0;  // the claim took another PV
  const std::string ref_uid = StringAt(object, "spec.claimRef.uid");
  if (!ref_uid.empty() && ref_uid != (*claim)->uid) return 0;  // names an older claim
  int written = MarkVolumeBound(store, volume, (*claim)->uid) ? 1 : 0;
  return written + (BindClaim(store, **claim, object) ? 1 : 0);
}

// A node label ("" when absent). Label keys have dots, so no dotted path reaches them.
std::string Label(const rapidjson::Value& node, const char* key) {
  const auto metadata = node.FindMember("metadata");
  if (metadata == node.MemberEnd() || !metadata->value.IsObject()) return "";
  const auto labels = metadata->value.FindMember("labels");
  if (labels == metadata->value.MemberEnd() || !labels->value.IsObject()) return "";
  const auto value = labels->value.FindMember(key);
  return value != labels->value.MemberEnd() && value->value.IsString() ? value->value.GetString()
                                                                       : "";
}

// nodeAffinity.required for a PV provisioned on `node`: its hostname label (else its name), and
// its zone when it has one.
rapidjson::Value NodeAffinityFor(const rapidjson::Value& node, const std::string& node_name,
                                 Allocator& allocator) {
  auto requirement = [&](const char* key, const std::string& value) {
    rapidjson::Value r(rapidjson::kObjectType);
    r.AddMember("key", rapidjson::Value(key, allocator), allocator);
    r.AddMember("operator", "In", allocator);
    rapidjson::Value values(rapidjson::kArrayType);
    values.PushBack(rapidjson::Value(value.c_str(), allocator), allocator);
    r.AddMember("values", values, allocator);
    return r;
  };
  const std::string hostname = Label(node, kHostnameLabel);
  rapidjson::Value expressions(rapidjson::kArrayType);
  expressions.PushBack(requirement(kHostnameLabel, hostname.empty() ? node_name : hostname),
                       allocator);
  if (const std::string zone = Label(node, kZoneLabel); !zone.empty()) {
    expressions.PushBack(requirement(kZoneLabel, zone), allocator);
  }
  rapidjson::Value term(rapidjson::kObjectType);
  term.AddMember("matchExpressions", expressions, allocator);
  rapidjson::Value terms(rapidjson::kArrayType);
  terms.PushBack(term, allocator);
  rapidjson::Value required(rapidjson::kObjectType);
  required.AddMember("nodeSelectorTerms", terms, allocator);
  rapidjson::Value affinity(rapidjson::kObjectType);
  affinity.AddMember("required", required, allocator);
  return affinity;
}

// A new PV for `claim` on `node`, bound to it from the start (what a provisioner creates).
rapidjson::Document ProvisionedVolume(const StoredObject& claim, const rapidjson::Value& spec,
                                      const rapidjson::Value& node, const std::string& node_name,
                                      const std::string& class_name,
                                      const std::string& provisioner) {
  rapidjson::Document pv(rapidjson::kObjectType);
  auto& allocator = pv.GetAllocator();
  rapidjson::Value& metadata = ObjectMember(pv, "metadata", allocator);
  SetString(metadata, "name", absl::StrCat("pvc-", claim.uid), allocator);
  SetAnnotation(pv, kProvisionedBy, provisioner, allocator);
  SetAnnotation(pv, kBoundByController, "yes", allocator);
  rapidjson::Value& pv_spec = ObjectMember(pv, "spec", allocator);
  rapidjson::Value& capacity = ObjectMember(pv_spec, "capacity", allocator);
  SetString(capacity, "storage", StringAt(spec, "resources.requests.storage"), allocator);
  CopyMember(spec, "accessModes", pv_spec, "accessModes", allocator);
  SetString(pv_spec, "storageClassName", class_name, allocator);
  SetString(pv_spec, "persistentVolumeReclaimPolicy", "Delete", allocator);
  rapidjson::Value& ref = ObjectMember(pv_spec, "claimRef", allocator);
  SetString(ref, "kind", "PersistentVolumeClaim", allocator);
  SetString(ref, "apiVersion", "v1", allocator);
  SetString(ref, "namespace", claim.namespace_name, allocator);
  SetString(ref, "name", claim.name, allocator);
  SetString(ref, "uid", claim.uid, allocator);
  SetMember(pv_spec, "nodeAffinity", NodeAffinityFor(node, node_name, allocator), allocator);
  SetString(ObjectMember(pv, "status", allocator), "phase", "Bound", allocator);
  return pv;
}

// The provisioner's part for one claim: a PV on its selected node, when its class provisions.
int ReconcileClaim(Store& store, const StoredObject& claim) {
  rapidjson::Document object = claim.Parse();
  const std::string node_name = Annotation(object, kSelectedNode);
  if (node_name.empty() || !StringAt(object, "spec.volumeName").empty()) return 0;
  const std::string class_name = ClaimClass(object);
  auto storage_class =
      store.Get(*FindResourceType("storage.k8s.io", "v1", "storageclasses"), "", class_name);
  if (class_name.empty() || !storage_class.ok()) return 0;
  const std::string provisioner = StringAt((*storage_class)->Parse(), "provisioner");
  if (provisioner.empty() || provisioner == kNoProvisioner) return 0;
  auto node = store.Get(*FindResourceType("", "v1", "nodes"), "", node_name);
  if (!node.ok()) return 0;
  const rapidjson::Document node_object = (*node)->Parse();
  auto created = store.Create(VolumesType(), ProvisionedVolume(claim, object["spec"], node_object,
                                                               node_name, class_name, provisioner));
  if (!created.ok()) return 0;  // already provisioned: the PV binds it on the next pass
  return 1 + (BindClaim(store, claim, (*created)->Parse()) ? 1 : 0);
}

}  // namespace

VolumeController::~VolumeController() { SetEnabled(false); }

void VolumeController::SetEnabled(bool enabled) {
  absl::MutexLock control(&control_mu_);
  if (enabled == (thread_ != nullptr)) return;
  if (enabled) {
    {
      absl::MutexLock lock(&mu_);
      stop_ = false;
      running_ = true;
      changed_ = true;  // reconcile what is there already
    }
    thread_ = std::make_unique<std::thread>([this] { Run(); });
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    wake_.Signal();
  }
  thread_->join();
  thread_.reset();
  absl::MutexLock lock(&mu_);
  running_ = false;
}

bool VolumeController::enabled() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

int VolumeController::Reconcile() {
  absl::MutexLock pass(&pass_mu_);
  int written = 0;
  auto volumes = store_->List(VolumesType(), {});
  if (volumes.ok()) {
    for (const ObjectPtr& volume : volumes->items) written += ReconcileVolume(*store_, *volume);
  }
  auto claims = store_->List(ClaimsType(), {});
  if (claims.ok()) {
    for (const ObjectPtr& claim : claims->items) written += ReconcileClaim(*store_, *claim);
  }
  return written;
}

void VolumeController::Run() {
  auto wake = [this] {
    absl::MutexLock lock(&mu_);
    changed_ = true;
    wake_.Signal();
  };
  const uint64_t now = store_->current_resource_version();
  std::vector<std::shared_ptr<Watcher>> watchers;
  for (const ResourceType* type : {&VolumesType(), &ClaimsType()}) {
    auto watcher = store_->Watch(*type, "", now, wake);
    if (watcher.ok()) watchers.push_back(*std::move(watcher));
  }
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      while (!changed_ && !stop_) wake_.Wait(&mu_);
      if (stop_) break;
      changed_ = false;
    }
    for (const auto& watcher : watchers) watcher->Take();  // what changed does not matter
    Reconcile();
  }
  for (const auto& watcher : watchers) store_->StopWatch(watcher);
}

}  // namespace kubesched::testapi
