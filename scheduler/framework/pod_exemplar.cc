#include "scheduler/framework/pod_exemplar.h"

namespace kubesched::framework {

bool PodExemplar::Alike(const PodInfo& pod, const VerdictScope& scope) const {
  if (!fields_.has_value()) return false;
  const api::Pod& object = pod.get();
  return fields_->scope == scope && fields_->priority == pod.priority &&
         fields_->non_preemptible == pod.non_preemptible &&
         fields_->namespace_name == object.meta.namespace_name &&
         fields_->labels == object.meta.labels && fields_->annotations == object.meta.annotations &&
         fields_->spec == object.spec;
}

bool PodExemplar::Follow(const PodInfo& pod, const VerdictScope& scope) {
  if (Alike(pod, scope)) return true;
  const api::Pod& object = pod.get();
  fields_ = Fields{object.meta.namespace_name,
                   object.meta.labels,
                   object.meta.annotations,
                   object.spec,
                   pod.priority,
                   pod.non_preemptible,
                   scope};
  ++era_;
  return false;
}

}  // namespace kubesched::framework
