#include "scheduler/framework/node_info.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/framework/dra_state.h"
#include "scheduler/util/strings.h"

namespace kubesched::framework {
namespace {

constexpr std::string_view kAnyAddress = "0.0.0.0";

// "" and 0.0.0.0 both mean "every address"; store one spelling so that Remove finds what Add
// stored whichever spelling the pod used.
std::string_view NormalizeIp(std::string_view ip) { return ip.empty() ? kAnyAddress : ip; }

// Removes the entry equal to `pod` (by identity) from `pods`, order not kept (upstream swaps
// with the last element too). Returns whether it was there.
bool RemoveByIdentity(std::vector<PodInfoPtr>& pods, const PodInfo* pod) {
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].get() != pod) continue;
    pods[i] = std::move(pods.back());
    pods.pop_back();
    return true;
  }
  return false;
}

// Calls fn(const AffinityTerm&, TermKind, weight) for each pod (anti-)affinity term of `pod`.
template <typename Fn>
void ForEachTerm(const PodInfo& pod, Fn&& fn) {
  for (const AffinityTerm& term : pod.required_affinity()) fn(term, TermKind::kRequiredAffinity, 0);
  for (const AffinityTerm& term : pod.required_anti_affinity()) {
    fn(term, TermKind::kRequiredAntiAffinity, 0);
  }
  for (const auto& t : pod.preferred_affinity()) fn(t.term, TermKind::kPreferredAffinity, t.weight);
  for (const auto& t : pod.preferred_anti_affinity()) {
    fn(t.term, TermKind::kPreferredAntiAffinity, t.weight);
  }
}

bool SameGroup(const TermGroupCount& group, const AffinityTerm& term, TermKind kind,
               int32_t weight) {
  return group.id == term.id && group.kind == kind && group.weight == weight;
}

// A term of `pod` in `group`, or null.
const AffinityTerm* TermOfGroup(const PodInfo& pod, const TermGroupCount& group) {
  const AffinityTerm* found = nullptr;
  ForEachTerm(pod, [&](const AffinityTerm& term, TermKind kind, int32_t weight) {
    if (found == nullptr && SameGroup(group, term, kind, weight)) found = &term;
  });
  return found;
}

template <typename T>
void SwapRemove(std::vector<T>& items, size_t i) {
  items[i] = std::move(items.back());
  items.pop_back();
}

// The ref of a pod in `pods` that names the same claim as `ref`, or null.
const PodVolumeRef* FindClaimRef(const std::vector<PodInfoPtr>& pods, const PodVolumeRef& ref) {
  for (const PodInfoPtr& pod : pods) {
    for (const PodVolumeRef& other : pod->volume_refs) {
      if (other.SameClaim(ref)) return &other;
    }
  }
  return nullptr;
}

}  // namespace

void HostPorts::Add(std::string_view ip, api::Protocol protocol, int32_t port) {
  entries_.push_back({std::string(NormalizeIp(ip)), protocol, port});
}

void HostPorts::Remove(std::string_view ip, api::Protocol protocol, int32_t port) {
  const std::string_view normalized = NormalizeIp(ip);
  // Only one entry goes: two pods may hold the same port (bound by hand), each counts once.
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.port == port && e.protocol == protocol && e.ip == normalized) {
      entries_[i] = std::move(entries_.back());
      entries_.pop_back();
      return;
    }
  }
}

bool HostPorts::Conflicts(std::string_view ip, api::Protocol protocol, int32_t port) const {
  const std::string_view normalized = NormalizeIp(ip);
  const bool any = normalized == kAnyAddress;
  for (const Entry& e : entries_) {
    if (e.port != port || e.protocol != protocol) continue;
    if (any || e.ip == kAnyAddress || e.ip == normalized) return true;
  }
  return false;
}

namespace {

// status.images by name, sorted by symbol for lookups without allocation; null when there are
// none, so that nodes without images cost no allocation.
std::shared_ptr<const std::vector<NodeImage>> ImagesOf(const api::Node& node) {
  if (node.status.images.empty()) return nullptr;
  auto images = std::make_shared<std::vector<NodeImage>>();
  for (const api::ContainerImage& image : node.status.images) {
    for (const std::string& name : image.names) {
      images->push_back({api::Intern(name), image.size_bytes});
    }
  }
  std::sort(images->begin(), images->end(),
            [](const NodeImage& a, const NodeImage& b) { return a.name < b.name; });
  return images;
}

}  // namespace

void NodeInfo::SetNode(std::shared_ptr<const api::Node> node, int64_t generation) {
  name_ = node->meta.name;
  allocatable_ = node->status.allocatable;
  table_row_.set(nullptr);
  own_row_.has_node = true;
  own_row_.allocatable_cpu = allocatable_.Get(api::kCpu);
  own_row_.allocatable_memory = allocatable_.Get(api::kMemory);
  // Saturated: no node holds 2^31 pods, so the fit verdicts are those of the full amount.
  own_row_.allocatable_pods = static_cast<int32_t>(
      std::clamp<int64_t>(allocatable_.Get(api::kPods), std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max()));
  own_row_.unschedulable = node->spec.unschedulable;
  own_row_.taints = TaintSets::Intern(node->spec.taints);
  own_row_.hard_taints = false;
  own_row_.prefer_taints = false;
  for (const api::Taint& taint : node->spec.taints) {
    if (taint.effect == api::TaintEffect::kNoSchedule ||
        taint.effect == api::TaintEffect::kNoExecute) {
      own_row_.hard_taints = true;
    } else if (taint.effect == api::TaintEffect::kPreferNoSchedule) {
      own_row_.prefer_taints = true;
    }
  }
  images_ = ImagesOf(*node);
  node_ = std::move(node);
  generation_ = generation;
}

const std::vector<NodeImage>& NodeInfo::images() const {
  static const std::vector<NodeImage>* const kNone = new std::vector<NodeImage>();
  return images_ == nullptr ? *kNone : *images_;
}

void NodeInfo::ClearNode(int64_t generation) {
  // The name stays: the pods still on this node keep naming it.
  node_.reset();
  images_.reset();
  table_row_.set(nullptr);
  own_row_.has_node = false;
  own_row_.allocatable_cpu = 0;
  own_row_.allocatable_memory = 0;
  own_row_.allocatable_pods = 0;
  own_row_.unschedulable = false;
  own_row_.taints = kNoTaints;
  own_row_.hard_taints = false;
  own_row_.prefer_taints = false;
  // Copy-assigned from a named empty list: move-assigning a temporary InlinedVector trips a
  // false -Wuninitialized in GCC 12.
  static const api::ResourceList kNone;
  allocatable_ = kNone;
  generation_ = generation;
}

void NodeInfo::AddPod(PodInfoPtr pod, int64_t generation) {
  const api::Pod& object = pod->get();
  if (name_.empty()) name_ = object.spec.node_name;
  requested_.Add(pod->requests);
  table_row_.set(nullptr);
  CountInRow(*pod, +1);
  if (pod->uses_host_ports) {
    ForEachHostPort(object, [this](const api::ContainerPort& port) {
      used_ports_.Add(port.host_ip, port.protocol, port.host_port);
    });
  }
  if (pod->HasAffinity()) pods_with_affinity_.push_back(pod);
  if (pod->HasRequiredAntiAffinity()) pods_with_required_anti_affinity_.push_back(pod);
  AddToGroups(*pod);
  if (!pod->volume_refs.empty()) AddVolumeRefs(*pod);
  pods_.push_back(std::move(pod));
  generation_ = generation;
}

void NodeInfo::CountInRow(const PodInfo& pod, int sign) {
  own_row_.requested_cpu += sign * pod.requests.Get(api::kCpu);
  own_row_.requested_memory += sign * pod.requests.Get(api::kMemory);
  own_row_.non_zero_requested_cpu += sign * pod.non_zero_cpu;
  own_row_.non_zero_requested_memory += sign * pod.non_zero_memory;
  own_row_.pod_count += sign;
}

void NodeInfo::AddToGroups(const PodInfo& pod) {
  auto label_group = std::find_if(label_groups_.begin(), label_groups_.end(),
                                  [&pod](const auto& g) { return g.id == pod.label_group; });
  if (label_group == label_groups_.end()) {
    label_groups_.push_back({.id = pod.label_group, .count = 1, .sample = &pod});
  } else {
    ++label_group->count;
  }
  ForEachTerm(pod, [this](const AffinityTerm& term, TermKind kind, int32_t weight) {
    auto group = std::find_if(term_groups_.begin(), term_groups_.end(),
                              [&](const auto& g) { return SameGroup(g, term, kind, weight); });
    if (group == term_groups_.end()) {
      term_groups_.push_back(
          {.id = term.id, .kind = kind, .weight = weight, .count = 1, .sample = &term});
    } else {
      ++group->count;
    }
  });
}

// `pod` has left pods_ already; samples that pointed into it move to another pod of the group.
void NodeInfo::RemoveFromGroups(const PodInfo& pod) {
  for (size_t i = 0; i < label_groups_.size(); ++i) {
    LabelGroupCount& group = label_groups_[i];
    if (group.id != pod.label_group) continue;
    if (--group.count == 0) {
      SwapRemove(label_groups_, i);
    } else if (group.sample == &pod) {
      auto other = std::find_if(pods_.begin(), pods_.end(), [&group](const PodInfoPtr& p) {
        return p->label_group == group.id;
      });
      group.sample = other->get();  // count > 0: another pod of the group is on the node
    }
    break;
  }
  ForEachTerm(pod, [&](const AffinityTerm& term, TermKind kind, int32_t weight) {
    for (size_t i = 0; i < term_groups_.size(); ++i) {
      TermGroupCount& group = term_groups_[i];
      if (!SameGroup(group, term, kind, weight)) continue;
      if (--group.count == 0) {
        SwapRemove(term_groups_, i);
      } else if (group.sample == &term) {
        for (const PodInfoPtr& other : pods_with_affinity_) {
          if (const AffinityTerm* found = TermOfGroup(*other, group)) {
            group.sample = found;
            break;
          }
        }
      }
      return;
    }
  });
}

void NodeInfo::AddVolumeRefs(const PodInfo& pod) {
  for (const PodVolumeRef& ref : pod.volume_refs) {
    auto claim = volume_refs_.end();
    if (ref.kind == PodVolumeRef::Kind::kClaim) {
      claim = std::find_if(volume_refs_.begin(), volume_refs_.end(),
                           [&ref](const VolumeRefCount& c) { return c.ref->SameClaim(ref); });
    }
    if (claim == volume_refs_.end()) {
      volume_refs_.push_back({.ref = &ref, .count = 1});
    } else {
      ++claim->count;
    }
  }
}

// `pod` has left pods_ already. Counts go down first and samples move after, because a pod may
// name one claim twice: its second volume still counts while the first is taken out.
void NodeInfo::RemoveVolumeRefs(const PodInfo& pod) {
  for (const PodVolumeRef& ref : pod.volume_refs) {
    auto it = std::find_if(volume_refs_.begin(), volume_refs_.end(), [&ref](const auto& c) {
      return c.ref == &ref || c.ref->SameClaim(ref);
    });
    if (it == volume_refs_.end()) continue;  // AddPod counted every ref; kept safe regardless
    if (--it->count == 0) SwapRemove(volume_refs_, static_cast<size_t>(it - volume_refs_.begin()));
  }
  for (VolumeRefCount& entry : volume_refs_) {
    // Only a claim that another pod still names can point into `pod` here (count > 0).
    const bool into_pod = std::any_of(pod.volume_refs.begin(), pod.volume_refs.end(),
                                      [&entry](const PodVolumeRef& r) { return entry.ref == &r; });
    if (into_pod) entry.ref = FindClaimRef(pods_, *entry.ref);
  }
}

absl::Status NodeInfo::RemovePod(std::string_view pod_key, int64_t generation) {
  auto it = std::find_if(pods_.begin(), pods_.end(),
                         [pod_key](const PodInfoPtr& p) { return p->key == pod_key; });
  if (it == pods_.end()) {
    return absl::NotFoundError(
        absl::StrCat("pod ", util::Absl(pod_key), " is not on node ", name_));
  }
  RemoveAt(it, generation);
  return absl::OkStatus();
}

absl::Status NodeInfo::RemovePod(const PodInfo& pod, int64_t generation) {
  auto it = std::find_if(pods_.begin(), pods_.end(),
                         [&pod](const PodInfoPtr& p) { return p.get() == &pod; });
  if (it == pods_.end()) {
    return absl::NotFoundError(absl::StrCat("pod ", pod.key, " is not on node ", name_));
  }
  RemoveAt(it, generation);
  return absl::OkStatus();
}

void NodeInfo::RemoveAt(std::vector<PodInfoPtr>::iterator it, int64_t generation) {
  const PodInfoPtr pod = *it;  // keeps the pod alive while the lists drop it
  *it = std::move(pods_.back());
  pods_.pop_back();
  RemoveByIdentity(pods_with_affinity_, pod.get());
  RemoveByIdentity(pods_with_required_anti_affinity_, pod.get());
  RemoveFromGroups(*pod);
  if (!pod->volume_refs.empty()) RemoveVolumeRefs(*pod);
  requested_.Subtract(pod->requests);
  table_row_.set(nullptr);
  CountInRow(*pod, -1);
  if (pod->uses_host_ports) {
    ForEachHostPort(pod->get(), [this](const api::ContainerPort& port) {
      used_ports_.Remove(port.host_ip, port.protocol, port.host_port);
    });
  }
  generation_ = generation;
}

api::ResourceList NodeInfo::non_zero_requested() const {
  api::ResourceList sums = requested_;
  sums.Set(api::kCpu, own_row_.non_zero_requested_cpu);
  sums.Set(api::kMemory, own_row_.non_zero_requested_memory);
  return sums;
}

const std::optional<MetricsSample>& NodeInfo::metrics() const {
  static const std::optional<MetricsSample>* const kNone = new std::optional<MetricsSample>();
  return load_.has_value() ? load_->metrics : *kNone;
}

const api::ResourceList& NodeInfo::virtual_requested_since_sample() const {
  static const api::ResourceList* const kNone = new api::ResourceList();
  return load_.has_value() ? load_->virtual_requested_since_sample : *kNone;
}

void NodeInfo::SetMetrics(std::optional<MetricsSample> sample,
                          const api::ResourceList& virtual_since, int64_t generation) {
  if (!sample.has_value() && virtual_since.IsZero()) {
    load_.reset();
  } else {
    load_ = NodeLoad{std::move(sample), virtual_since};
  }
  generation_ = generation;
}

void NodeInfo::SetDeviceAmounts(api::ResourceList allocatable, api::ResourceList requested,
                                int64_t generation) {
  device_allocatable_ = std::move(allocatable);
  device_requested_ = std::move(requested);
  generation_ = generation;
}

void NodeInfo::SetOwnDevices(OwnDevices devices, int64_t generation) {
  device_summary_ = std::move(devices.summary);
  device_profile_ = device_summary_ != nullptr ? device_summary_->profile : nullptr;
  held_devices_ = devices.held;
  generation_ = generation;
}

void NodeInfo::AddVirtualSinceSample(const api::ResourceList& amounts) {
  if (!load_.has_value()) load_.emplace();
  load_->virtual_requested_since_sample.Add(amounts);
}

void NodeInfo::SubtractVirtualSinceSample(const api::ResourceList& amounts) {
  if (!load_.has_value()) load_.emplace();
  load_->virtual_requested_since_sample.Subtract(amounts);
}

}  // namespace kubesched::framework
