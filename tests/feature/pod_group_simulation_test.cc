// A PodGroup in the cluster dump reaches the scheduler like every other object: decoded, created
// in the embedded cluster, delivered through OnPodGroup into the cache, and visible to plugins in
// the cycle's snapshot (Snapshot::gangs()) under the key its pods name (PodInfo::gang).

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "plugins/registry/registry.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/symbol.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

constexpr char kCluster[] = R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: ml}}
- apiVersion: v1
  kind: Node
  metadata: {name: node-1}
  status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {name: train, namespace: ml}
  spec: {minMember: 3, minResources: {cpu: '6'}, scheduleTimeoutSeconds: 120}
  status: {phase: Pending}
- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {name: broken, namespace: ml}
  spec: {minMember: 0}
)";

// Rejects every pod with what the snapshot shows of its group, so that explain's message reports
// the snapshot as a plugin saw it.
class GangProbe : public framework::PreFilterPlugin {
 public:
  static constexpr std::string_view kName = "GangProbe";
  std::string_view Name() const override { return kName; }
  framework::PreFilterOutcome PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override {
    const api::PodGroup* group = snapshot.gangs().Find(pod.gang.key);
    const std::string seen =
        group == nullptr ? absl::StrCat("no PodGroup ", pod.gang.key)
                         : absl::StrCat("PodGroup ", group->Key(), " minMember=", group->min_member,
                                        " phase=", group->status.phase, " error=", group->error,
                                        " groups=", snapshot.gangs().size());
    return {framework::Status::Unresolvable(api::StableText(seen)), {}};
  }
};

plugins::RegistryMap RegistryWithProbe() {
  plugins::RegistryMap registry = plugins::Registry();
  registry[GangProbe::kName] =
      [](const config::PluginArgs&,
         const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
    return std::make_unique<GangProbe>();
  };
  return registry;
}

config::Configuration ConfigWithProbe() {
  config::Configuration configuration = config::DefaultConfiguration();
  configuration.profiles[0].plugins.pre_filter.enabled.push_back(
      {std::string(GangProbe::kName), 0});
  // The probe reports what the snapshot holds; the gang plugin would answer first.
  std::erase_if(configuration.profiles[0].plugins.multi_point.enabled,
                [](const config::PluginRef& ref) { return ref.name == "Coscheduling"; });
  return configuration;
}

api::Pod MemberOf(const std::string& group) {
  return testing::PodBuilder("worker-0", "ml")
      .Container({{"cpu", "1"}})
      .Label("scheduling.x-k8s.io/pod-group", group)
      .Build();
}

std::string ExplainMessage(const std::string& group) {
  auto decoded = api::DecodeObjects(kCluster, "cluster.yaml");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.empty());
  const plugins::RegistryMap registry = RegistryWithProbe();
  auto report = ExplainObjects(decoded->objects, MemberOf(group), ConfigWithProbe(), 1, &registry);
  REQUIRE(report.ok());
  REQUIRE(report->message.has_value());
  return *report->message;
}

TEST_CASE("a PodGroup in the cluster dump is in the snapshot under its members' key",
          "[simulation]") {
  CHECK_THAT(ExplainMessage("train"),
             Catch::Contains("PodGroup ml/train minMember=3 phase=Pending error= groups=2"));
}

TEST_CASE("a PodGroup with a bad spec reaches the snapshot with its error", "[simulation]") {
  CHECK_THAT(ExplainMessage("broken"),
             Catch::Contains("error=spec.minMember must be at least 1 (is 0)"));
}

TEST_CASE("a pod naming a PodGroup the dump lacks finds none in the snapshot", "[simulation]") {
  CHECK_THAT(ExplainMessage("missing"), Catch::Contains("no PodGroup ml/missing"));
}

}  // namespace
}  // namespace kubesched::scheduler
