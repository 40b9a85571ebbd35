#include "plugins/volume_binding/binding.h"

#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::volume_binding {
namespace {

using framework::Status;
using util::Absl;

template <typename T>
using Ptr = std::shared_ptr<const T>;

Status Failed(std::string_view why) {
  return Status::Error(absl::StrCat("binding volumes: ", Absl(why)));
}

// The later of two versions of one object by resourceVersion (an integer in the API servers
// kubesched meets, compared as upstream's etcd versioner does; one that is not counts as 0); the
// informers' version when they are equal.
template <typename T>
Ptr<T> Newest(Ptr<T> written, Ptr<T> observed) {
  if (written == nullptr) return observed;
  if (observed == nullptr) return written;
  uint64_t w = 0;
  uint64_t o = 0;
  if (!absl::SimpleAtoi(written->meta.resource_version, &w)) w = 0;
  if (!absl::SimpleAtoi(observed->meta.resource_version, &o)) o = 0;
  return w > o ? written : observed;
}

bool NamesClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  return volume.claim_ref.has_value() && volume.claim_ref->name == claim.meta.name &&
         volume.claim_ref->namespace_name == claim.meta.namespace_name;
}

// What the writes returned, by claim key and PV name: newer than the informers until they catch
// up.
struct Written {
  absl::flat_hash_map<std::string, Ptr<api::PersistentVolume>> volumes;
  absl::flat_hash_map<std::string, Ptr<api::PersistentVolumeClaim>> claims;

  void Add(const framework::VolumeWriteResult& result) {
    if (result.volume != nullptr) volumes[result.volume->meta.name] = result.volume;
    if (result.claim != nullptr) {
      claims[framework::StorageState::ClaimKey(result.claim->meta.namespace_name,
                                               result.claim->meta.name)] = result.claim;
    }
  }
  template <typename T>
  static Ptr<T> Find(const absl::flat_hash_map<std::string, Ptr<T>>& map, const std::string& key) {
    auto it = map.find(key);
    return it == map.end() ? nullptr : it->second;
  }
};

// The latest known version of a claim or PV: the write's answer or the informers', whichever is
// newer.
struct Latest {
  const Written& written;
  framework::VolumeAssumeCache* cache;

  Ptr<api::PersistentVolumeClaim> Claim(const api::PersistentVolumeClaim& claim) const {
    const std::string key =
        framework::StorageState::ClaimKey(claim.meta.namespace_name, claim.meta.name);
    return Newest(Written::Find(written.claims, key),
                  cache != nullptr ? cache->ObservedClaim(key) : nullptr);
  }
  Ptr<api::PersistentVolume> Volume(const std::string& name) const {
    return Newest(Written::Find(written.volumes, name),
                  cache != nullptr ? cache->ObservedVolume(name) : nullptr);
  }
};

enum class Progress { kDone, kWaiting, kFailed };

// Upstream's checkBindings: whether every claim is bound, or something undid the binding.
Progress CheckBindings(const BindPlan& plan, const Latest& latest, std::string* why) {
  Progress progress = Progress::kDone;
  for (const BindPlan::StaticBinding& binding : plan.bindings) {
    const Ptr<api::PersistentVolume> volume = latest.Volume(binding.volume->meta.name);
    const Ptr<api::PersistentVolumeClaim> claim = latest.Claim(*binding.claim);
    if (volume == nullptr || claim == nullptr) {
      *why = absl::StrCat("failed to check binding: persistentvolume \"", binding.volume->meta.name,
                          "\" or its claim is gone");
      return Progress::kFailed;
    }
    if (!VolumeFitsLabels(*volume, plan.node_labels)) {
      *why = absl::StrCat("pv \"", volume->meta.name, "\" node affinity doesn't match node \"",
                          plan.node_name, "\"");
      return Progress::kFailed;
    }
    if (!NamesClaim(*volume, *claim)) {
      *why = absl::StrCat("ClaimRef got reset for pv \"", volume->meta.name, "\"");
      return Progress::kFailed;
    }
    if (!IsFullyBound(*claim)) progress = Progress::kWaiting;
  }
  for (const Ptr<api::PersistentVolumeClaim>& provision : plan.provisions) {
    const Ptr<api::PersistentVolumeClaim> claim = latest.Claim(*provision);
    if (claim == nullptr) {
      *why = absl::StrCat("failed to check provisioning pvc: persistentvolumeclaim \"",
                          provision->meta.name, "\" not found");
      return Progress::kFailed;
    }
    const auto selected = claim->meta.annotations.find(api::kSelectedNodeAnnotation);
    if (selected == claim->meta.annotations.end() || selected->second != plan.node_name) {
      // The provisioner removes the annotation to say that it failed.
      *why = absl::StrCat("provisioning failed for PVC \"", claim->meta.name, "\"");
      return Progress::kFailed;
    }
    if (!claim->volume_name.empty()) {
      const Ptr<api::PersistentVolume> volume = latest.Volume(claim->volume_name);
      if (volume == nullptr) {
        progress = Progress::kWaiting;  // the new PV may not have reached the informers yet
        continue;
      }
      if (!VolumeFitsLabels(*volume, plan.node_labels)) {
        *why = absl::StrCat("pv \"", volume->meta.name, "\" node affinity doesn't match node \"",
                            plan.node_name, "\"");
        return Progress::kFailed;
      }
    }
    if (!IsFullyBound(*claim)) progress = Progress::kWaiting;
  }
  return progress;
}

// Upstream's bindAPIUpdate: PVs first, then the claims to provision. A failed write leaves the
// rest unwritten; the binding cycle's Unreserve forgets what was assumed.
absl::Status WriteBindings(const BindPlan& plan, framework::VolumeBinder& binder,
                           Written* written) {
  for (const BindPlan::StaticBinding& binding : plan.bindings) {
    if (!binding.write) continue;
    absl::StatusOr<framework::VolumeWriteResult> result = binder.BindVolume(*binding.volume);
    if (!result.ok()) return result.status();
    written->Add(*result);
  }
  for (const Ptr<api::PersistentVolumeClaim>& claim : plan.provisions) {
    absl::StatusOr<framework::VolumeWriteResult> result = binder.SelectNode(*claim);
    if (!result.ok()) return result.status();
    written->Add(*result);
  }
  return absl::OkStatus();
}

}  // namespace

BindPlan MakeBindPlan(const NodeDecision& decision, const api::Node& node) {
  BindPlan plan;
  plan.node_name = node.meta.name;
  plan.node_labels = node.meta.labels;
  for (const auto& [c, chosen] : decision.bindings) {
    auto claim = std::make_shared<const api::PersistentVolumeClaim>(*c->claim);
    auto volume = std::make_shared<api::PersistentVolume>(*chosen);
    bool write = false;
    if (!VolumeBoundToClaim(*chosen, *claim)) {
      // The scheduler acts as the PV controller here, and says so as it does.
      write = volume->meta.annotations.emplace(api::kBoundByControllerAnnotation, "yes").second;
    }
    const auto& ref = volume->claim_ref;
    if (!ref.has_value() || ref->name != claim->meta.name ||
        ref->namespace_name != claim->meta.namespace_name || ref->uid != claim->meta.uid) {
      volume->claim_ref = api::ObjectReference{"PersistentVolumeClaim", claim->meta.namespace_name,
                                               claim->meta.name, claim->meta.uid};
      write = true;
    }
    if (write) plan.assumption.volumes.push_back(volume);
    plan.bindings.push_back({std::move(volume), std::move(claim), write});
  }
  for (const ClaimToBind* c : decision.provisions) {
    auto claim = std::make_shared<api::PersistentVolumeClaim>(*c->claim);
    // A claim that names this node already (another pod of it got here first) changes nothing;
    // its annotation is written again all the same, which is harmless.
    if (claim->meta.annotations[api::kSelectedNodeAnnotation] != node.meta.name) {
      claim->meta.annotations[api::kSelectedNodeAnnotation] = node.meta.name;
      plan.assumption.claims.push_back(claim);
    }
    plan.provisions.push_back(std::move(claim));
  }
  return plan;
}

Status BindPodVolumes(const BindPlan& plan, framework::VolumeBinder& binder,
                      framework::VolumeAssumeCache* cache, absl::Duration timeout) {
  Written written;
  if (absl::Status status = WriteBindings(plan, binder, &written); !status.ok()) {
    return Failed(util::Std(status.message()));
  }
  const absl::Time deadline = absl::Now() + timeout;
  const Latest latest{written, cache};
  for (;;) {
    // Read the version first: a change after the check below wakes the wait at once.
    const int64_t seen = cache != nullptr ? cache->StorageVersion() : 0;
    std::string why;
    switch (CheckBindings(plan, latest, &why)) {
      case Progress::kDone:
        return Status::Success();
      case Progress::kFailed:
        return Failed(why);
      case Progress::kWaiting:
        break;
    }
    if (binder.BindsAtOnce() || cache == nullptr) {
      return Failed("the claims are not bound after the writes");
    }
    if (!cache->AwaitStorageChange(seen, deadline)) {
      return Failed(absl::Now() >= deadline ? "timed out waiting for the condition"
                                            : "the scheduler is shutting down");
    }
  }
}

}  // namespace kubesched::plugins::volume_binding
