// VolumeBinding's scheduling cycle: PreFilter's rejections and node narrowing, Filter's reasons
// and PV matching rules (class, capacity, access modes, selector, phase, claimRef, node affinity,
// smallest fit, provisioning).

#include "plugins/volume_binding/volume_binding.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/plugins/plugin_fixture.h"
#include "tests/plugins/volume_fixture.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using plugin_testing::Claim;
using plugin_testing::Classes;
using plugin_testing::Node;
using plugin_testing::Pod;
using plugin_testing::PodFromYaml;
using plugin_testing::Verdict;
using plugin_testing::Volume;
using plugin_testing::VolumeWorld;
using plugins::VolumeBinding;

constexpr char kNodeConflict[] = "node(s) had volume node affinity conflict";
constexpr char kBindConflict[] = "node(s) didn't find available persistent volumes to bind";
constexpr char kPvNotExist[] =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

// A claim bound to `volume` (volumeName and bind-completed).
std::string BoundClaim(const std::string& name, const std::string& volume) {
  return Claim(name, "wait", "1Gi", absl::StrCat("volumeName: ", volume),
               "annotations: {pv.kubernetes.io/bind-completed: 'yes'}");
}

VolumeBinding Plugin() { return VolumeBinding(absl::Seconds(600), nullptr, nullptr); }

// PreFilter, then Filter on every node when PreFilter passed: "prefilter" -> the PreFilter
// verdict, node name -> that node's verdict.
std::map<std::string, std::vector<std::string>> Verdicts(VolumeWorld& world,
                                                         const framework::PodInfo& pod) {
  VolumeBinding plugin = Plugin();
  CycleState state;
  const framework::Snapshot& snapshot = world.Snapshot();
  auto outcome = plugin.PreFilter(state, pod, snapshot);
  std::map<std::string, std::vector<std::string>> out;
  if (outcome.status.IsSkip()) return {{"prefilter", {"skip"}}};
  out["prefilter"] = Verdict(outcome.status);
  if (!outcome.status.IsSuccess()) return out;
  for (const auto* node : snapshot.nodes()) {
    const framework::Status status = plugin.Filter(state, pod, *node);
    if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    out[node->name()] = Verdict(status);
  }
  return out;
}

using V = std::vector<std::string>;

TEST_CASE("a pod without claim volumes is skipped", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes());
  CHECK(Verdicts(world, *Pod("p", {})) == std::map<std::string, V>{{"prefilter", {"skip"}}});
}

TEST_CASE("the first missing claim in volume order rejects the pod", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Claim("present", "wait"));
  const auto verdicts = Verdicts(world, *Pod("p", {"present", "gone-1", "gone-2"}));
  CHECK(verdicts.at("prefilter") == V{"persistentvolumeclaim \"gone-1\" not found"});
}

TEST_CASE("a generic ephemeral volume waits for its claim", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes());
  auto pod = PodFromYaml(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
      "  containers: [{name: c, image: x}]\n"
      "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}]\n");
  CHECK(Verdicts(world, *pod).at("prefilter") ==
        V{"waiting for ephemeral volume controller to create the persistentvolumeclaim "
          "\"p-scratch\""});
}

TEST_CASE("an unbound claim of an Immediate class is the PV controller's to bind",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Claim("c", "immediate"));
  VolumeBinding plugin = Plugin();
  CycleState state;
  auto outcome = plugin.PreFilter(state, *Pod("p", {"c"}), world.Snapshot());
  CHECK(outcome.status.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(Verdict(outcome.status) == V{"pod has unbound immediate PersistentVolumeClaims"});
}

TEST_CASE("a lost claim names the PV that does not exist", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Claim("c", "wait", "1Gi", "volumeName: pv-x", "") +
                    "status: {phase: Lost}\n");
  CHECK(Verdicts(world, *Pod("p", {"c"})).at("prefilter") ==
        V{"persistentvolumeclaim \"c\" bound to non-existent persistentvolume \"pv-x\""});
}

TEST_CASE("a class that leaves volumeBindingMode out is an error", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Claim("c", "nomode"));
  VolumeBinding plugin = Plugin();
  CycleState state;
  auto outcome = plugin.PreFilter(state, *Pod("p", {"c"}), world.Snapshot());
  CHECK(outcome.status.code() == Code::kError);
  CHECK(outcome.status.Message() == "VolumeBindingMode not set for StorageClass \"nomode\"");
}

TEST_CASE("bound local PVs narrow the nodes to the hostnames they share",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Node("b") + Node("c") + Classes() +
                    Volume("pv-1", "wait", "1Gi", "a, b", "", "Bound") +
                    Volume("pv-2", "wait", "1Gi", "b, c", "", "Bound") +
                    Volume("pv-3", "wait", "1Gi", "", "", "Bound") + BoundClaim("c1", "pv-1") +
                    BoundClaim("c2", "pv-2") + BoundClaim("c3", "pv-3"));
  VolumeBinding plugin = Plugin();
  CycleState state;
  auto outcome = plugin.PreFilter(state, *Pod("p", {"c1", "c2", "c3"}), world.Snapshot());
  REQUIRE(outcome.status.IsSuccess());
  REQUIRE(outcome.result.node_names.has_value());
  CHECK(*outcome.result.node_names == absl::flat_hash_set<std::string>{"b"});
}

TEST_CASE("bound PVs without hostname affinity leave every node open",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Volume("pv-1", "wait", "1Gi", "", "", "Bound") +
                    BoundClaim("c1", "pv-1"));
  VolumeBinding plugin = Plugin();
  CycleState state;
  auto outcome = plugin.PreFilter(state, *Pod("p", {"c1"}), world.Snapshot());
  REQUIRE(outcome.status.IsSuccess());
  CHECK_FALSE(outcome.result.node_names.has_value());
}

TEST_CASE("a bound PV that does not fit the node is a volume node affinity conflict",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Node("b") + Classes() +
                    Volume("pv-1", "wait", "1Gi", "a", "", "Bound") + BoundClaim("c1", "pv-1"));
  const auto verdicts = Verdicts(world, *Pod("p", {"c1"}));
  CHECK(verdicts.at("a") == V{"pass"});
  CHECK(verdicts.at("b") == V{kNodeConflict});
}

TEST_CASE("a bound claim whose PV is gone leaves no node available", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + BoundClaim("c1", "pv-gone"));
  CHECK(Verdicts(world, *Pod("p", {"c1"})).at("a") == V{kPvNotExist});
}

TEST_CASE("a claim to bind fits only the nodes where a PV of its class fits",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Node("b") + Classes() + Volume("pv-a", "wait", "10Gi", "a") +
                    Claim("c", "wait", "5Gi"));
  const auto verdicts = Verdicts(world, *Pod("p", {"c"}));
  CHECK(verdicts.at("a") == V{"pass"});
  CHECK(verdicts.at("b") == V{kBindConflict});
}

TEST_CASE("a PV that breaks one matching rule is not taken", "[plugins][volume_binding]") {
  struct Case {
    std::string rule;
    std::string volume;
    std::string claim;
  };
  const std::vector<Case> cases = {
      {"too small", Volume("pv", "wait", "1Gi", "a"), Claim("c", "wait", "2Gi")},
      {"another class", Volume("pv", "other", "5Gi", "a"), Claim("c", "wait", "2Gi")},
      {"missing access mode", Volume("pv", "wait", "5Gi", "a"),
       Claim("c", "wait", "2Gi", "", "", "[ReadWriteOnce, ReadOnlyMany]")},
      {"selector not matched", Volume("pv", "wait", "5Gi", "a", "", "Available", "{disk: hdd}"),
       Claim("c", "wait", "2Gi", "selector: {matchLabels: {disk: ssd}}")},
      {"not Available", Volume("pv", "wait", "5Gi", "a", "", "Released"),
       Claim("c", "wait", "2Gi")},
      {"claimed by another claim",
       Volume("pv", "wait", "5Gi", "a", "claimRef: {namespace: default, name: other}"),
       Claim("c", "wait", "2Gi")},
  };
  for (const Case& c : cases) {
    INFO(c.rule);
    VolumeWorld world(Node("a") + Classes() + c.volume + c.claim);
    CHECK(Verdicts(world, *Pod("p", {"c"})).at("a") == V{kBindConflict});
  }
}

TEST_CASE("a PV whose labels match the claim's selector is taken", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() +
                    Volume("pv", "wait", "5Gi", "a", "", "Available", "{disk: ssd}") +
                    Claim("c", "wait", "2Gi", "selector: {matchLabels: {disk: ssd}}"));
  CHECK(Verdicts(world, *Pod("p", {"c"})).at("a") == V{"pass"});
}

TEST_CASE("a claim pre-bound to a PV may take only that PV", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Node("b") + Classes() + Volume("pv-a", "wait", "5Gi", "a") +
                    Volume("pv-b", "wait", "5Gi", "b", "claimRef: {namespace: default, name: c}") +
                    Claim("c", "wait", "2Gi"));
  const auto verdicts = Verdicts(world, *Pod("p", {"c"}));
  CHECK(verdicts.at("a") == V{kBindConflict});
  CHECK(verdicts.at("b") == V{"pass"});
}

TEST_CASE("a claim without a PV may be provisioned where the class's topology allows",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a", "z1") + Node("b", "z2") + Classes() + Claim("c", "dynamic"));
  const auto verdicts = Verdicts(world, *Pod("p", {"c"}));
  CHECK(verdicts.at("a") == V{kBindConflict});
  CHECK(verdicts.at("b") == V{"pass"});
}

TEST_CASE("a claim with a selected node fits that node only", "[plugins][volume_binding]") {
  VolumeWorld world(
      Node("a", "z2") + Node("b", "z2") + Classes() +
      Claim("c", "dynamic", "1Gi", "", "annotations: {volume.kubernetes.io/selected-node: b}"));
  const auto verdicts = Verdicts(world, *Pod("p", {"c"}));
  CHECK(verdicts.at("a") == V{kBindConflict});
  CHECK(verdicts.at("b") == V{"pass"});
}

TEST_CASE("a node failing for several reasons gets them in upstream's order",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Node("b") + Classes() +
                    Volume("pv-1", "wait", "1Gi", "a", "", "Bound") + BoundClaim("c1", "pv-1") +
                    Volume("pv-2", "wait", "5Gi", "a") + Claim("c2", "wait", "2Gi"));
  const auto verdicts = Verdicts(world, *Pod("p", {"c2", "c1"}));
  CHECK(verdicts.at("a") == V{"pass"});
  CHECK(verdicts.at("b") == V{kNodeConflict, kBindConflict});
}

TEST_CASE("two claims of one pod never take the same PV", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Volume("pv-1", "wait", "5Gi", "a") +
                    Claim("c1", "wait", "1Gi") + Claim("c2", "wait", "1Gi"));
  CHECK(Verdicts(world, *Pod("p", {"c1", "c2"})).at("a") == V{kBindConflict});
  world.Add(Volume("pv-2", "wait", "5Gi", "a"));
  CHECK(Verdicts(world, *Pod("p", {"c1", "c2"})).at("a") == V{"pass"});
}

TEST_CASE("VolumeBinding asks to be retried when volume objects change",
          "[plugins][volume_binding]") {
  const framework::ClusterEventSet events = Plugin().EventsToRegister();
  CHECK((events & framework::EventBit(framework::ClusterEvent::kStorageChanged)) != 0);
  CHECK((events & framework::kDefaultEvents) == framework::kDefaultEvents);
}

TEST_CASE("a negative bindTimeoutSeconds is refused", "[plugins][volume_binding]") {
  config::VolumeBindingArgs args;
  args.bind_timeout_seconds = -1;
  auto made = plugins::NewVolumeBinding(args, {});
  REQUIRE_FALSE(made.ok());
  CHECK(made.status().message() == "VolumeBinding: bindTimeoutSeconds: must not be negative");
}

}  // namespace
}  // namespace kubesched
