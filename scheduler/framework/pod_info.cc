#include "scheduler/framework/pod_info.h"

#include <functional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/framework/virtual_request.h"

namespace kubesched::framework {
namespace {

// Requests of one container as the scheduler counts them. With `non_zero`, a container that does
// not list cpu or memory counts upstream's defaults for it; an explicit "0" stays 0.
api::ResourceList ContainerRequests(const api::Container& container, bool non_zero) {
  api::ResourceList requests = container.requests;
  if (non_zero) {
    if (!container.requests_cpu) requests.Set(api::kCpu, kDefaultMilliCpuRequest);
    if (!container.requests_memory) requests.Set(api::kMemory, kDefaultMemoryRequest);
  }
  return requests;
}

AffinityTerm CompileTerm(const api::PodAffinityTerm& term, api::Symbol own_namespace) {
  AffinityTerm compiled;
  compiled.selector = term.label_selector;
  compiled.namespace_selector = term.namespace_selector;
  compiled.topology_key = term.topology_key;
  compiled.namespaces.insert(term.namespaces.begin(), term.namespaces.end());
  // An empty list means "my namespace" only when no namespaceSelector widens it (upstream).
  if (term.namespaces.empty() && !term.namespace_selector.has_value()) {
    compiled.namespaces.insert(own_namespace);
  }
  compiled.id = InternTerm(compiled);
  return compiled;
}

void CompileAffinity(const api::PodAffinity& affinity, api::Symbol own_namespace,
                     std::vector<AffinityTerm>* required,
                     std::vector<WeightedAffinityTerm>* preferred) {
  required->reserve(affinity.required.size());
  for (const auto& term : affinity.required) required->push_back(CompileTerm(term, own_namespace));
  preferred->reserve(affinity.preferred.size());
  for (const auto& weighted : affinity.preferred) {
    preferred->push_back({CompileTerm(weighted.term, own_namespace), weighted.weight});
  }
}

// The refs of `pod`'s volumes; the pod must be the one the PodInfo keeps (the refs point into it).
std::vector<PodVolumeRef> VolumeRefs(const api::Pod& pod) {
  std::vector<PodVolumeRef> refs;
  for (const api::Volume& volume : pod.spec.volumes) {
    PodVolumeRef ref;
    ref.volume = &volume;
    ref.pod = &pod;
    if (!volume.claim_name.empty() || volume.ephemeral) {
      ref.ephemeral = volume.ephemeral;
      ref.key = absl::StrCat(pod.meta.namespace_name, "/", volume.ClaimName(pod.meta.name));
      ref.key_hash = std::hash<std::string_view>()(ref.key);
    } else if (volume.IsInlineDisk()) {
      ref.kind = PodVolumeRef::Kind::kInlineDisk;
    } else {
      continue;
    }
    refs.push_back(std::move(ref));
  }
  return refs;
}

}  // namespace

// Regular containers and sidecars run together; each ordinary init container runs alone next to
// the sidecars declared before it.
api::ResourceList PodRequests(const api::PodSpec& spec, bool non_zero) {
  api::ResourceList total;
  for (const auto& container : spec.containers) total.Add(ContainerRequests(container, non_zero));

  api::ResourceList sidecars;      // sidecars started so far
  api::ResourceList init_maximum;  // the largest moment of the init phase
  for (const auto& container : spec.init_containers) {
    api::ResourceList requests = ContainerRequests(container, non_zero);
    if (container.restart_policy == "Always") {
      total.Add(requests);
      sidecars.Add(requests);
      init_maximum.SetMax(sidecars);
    } else {
      requests.Add(sidecars);
      init_maximum.SetMax(requests);
    }
  }
  total.SetMax(init_maximum);
  total.Add(spec.overhead);
  return total;
}

bool AffinityTerm::Matches(const api::Pod& pod, const api::LabelSet* namespace_labels) const {
  if (!selector.has_value()) return false;
  bool namespace_matches = namespaces.contains(pod.meta.namespace_symbol);
  if (!namespace_matches && namespace_selector.has_value()) {
    // An empty selector selects every namespace, even one whose labels are unknown.
    namespace_matches =
        namespace_selector->empty() ||
        (namespace_labels != nullptr && namespace_selector->Matches(*namespace_labels));
  }
  return namespace_matches && selector->Matches(pod.meta.labels);
}

PodInfoPtr MakePodInfo(std::shared_ptr<const api::Pod> pod, int32_t priority,
                       PriorityClassTraits traits) {
  auto info = std::make_shared<PodInfo>();
  info->key = pod->Key();
  info->key_hash = std::hash<std::string_view>()(info->key);
  info->priority = priority;
  info->start_time = pod->status.start_time.value_or(absl::InfiniteFuture());
  auto policy = pod->meta.annotations.find(kPreemptionPolicyAnnotation);
  info->non_preemptible = traits.non_preemptible || (policy != pod->meta.annotations.end() &&
                                                     policy->second == kNonPreemptible);
  const auto& preemption_policy = pod->spec.preemption_policy;
  info->preempt_never = preemption_policy.has_value()
                            ? *preemption_policy == api::PreemptionPolicy::kNever
                            : traits.preempt_never;
  info->label_group = InternLabelGroup(pod->meta.namespace_symbol, pod->meta.labels,
                                       pod->meta.deletion_timestamp.has_value());
  ForEachHostPort(*pod, [&info](const api::ContainerPort&) { info->uses_host_ports = true; });
  info->requests = PodRequests(pod->spec, /*non_zero=*/false);
  const api::ResourceList non_zero = PodRequests(pod->spec, /*non_zero=*/true);
  info->non_zero_cpu = non_zero.Get(api::kCpu);
  info->non_zero_memory = non_zero.Get(api::kMemory);
  api::ResourceList virtual_request =
      ComputeVirtualRequest(*pod, info->requests, &info->virtual_request_error);
  if (!(virtual_request == info->requests)) {
    info->virtual_request_override = std::move(virtual_request);
  }
  if (pod->spec.affinity.has_value()) {
    const api::Affinity& affinity = *pod->spec.affinity;
    const api::Symbol own_namespace = pod->meta.namespace_symbol;
    auto terms = std::make_shared<PodAffinityTerms>();
    if (affinity.pod_affinity.has_value()) {
      CompileAffinity(*affinity.pod_affinity, own_namespace, &terms->required_affinity,
                      &terms->preferred_affinity);
    }
    if (affinity.pod_anti_affinity.has_value()) {
      CompileAffinity(*affinity.pod_anti_affinity, own_namespace, &terms->required_anti_affinity,
                      &terms->preferred_anti_affinity);
    }
    if (!terms->empty()) info->affinity_terms = std::move(terms);
  }
  if (!pod->spec.volumes.empty()) info->volume_refs = VolumeRefs(*pod);
  info->gang = GangMembershipOf(*pod);
  info->pod = std::move(pod);
  return info;
}

}  // namespace kubesched::framework
