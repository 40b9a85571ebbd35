#include "scheduler/instrumentation/metrics_observer.h"

#include <catch2/catch.hpp>
#include <memory>

#include "scheduler/api/objects.h"
#include "scheduler/framework/pod_info.h"

namespace kubesched::metrics {
namespace {

TEST_CASE("metrics: the profile label is the pod's schedulerName, or its policy", "[metrics]") {
  api::Pod pod;
  pod.meta.name = "p";
  pod.meta.namespace_name = "default";
  pod.spec.scheduler_name = "gpu-scheduler";
  const auto info = framework::MakePodInfo(std::make_shared<const api::Pod>(pod), 0);
  CHECK(ProfileLabel(*info) == "gpu-scheduler");
  pod.meta.annotations["kubesched.io/policy"] = "stack";
  const auto with_policy = framework::MakePodInfo(std::make_shared<const api::Pod>(pod), 0);
  CHECK(ProfileLabel(*with_policy) == "stack");
}

}  // namespace
}  // namespace kubesched::metrics
