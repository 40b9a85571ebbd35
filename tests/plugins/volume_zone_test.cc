// VolumeZone: the zone and region labels of a pod's bound PVs against the node's, and the claims
// PreFilter cannot follow.

#include "plugins/volume_zone/volume_zone.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"
#include "tests/plugins/volume_builders.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using plugin_testing::Claim;
using plugin_testing::ClaimVolume;
using plugin_testing::Class;
using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Pv;
using plugin_testing::Storage;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::VolumeZone;

constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kBetaRegion[] = "failure-domain.beta.kubernetes.io/region";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";
const std::string kConflict(VolumeZone::kReasonConflict);

std::unique_ptr<VolumeZone> MakeZone() {
  return Unwrap<VolumeZone>(plugins::NewVolumeZone(std::monostate{}, {}));
}

// Claim "data" bound to PV "pv" with these labels.
Storage BoundTo(const std::vector<std::pair<std::string, std::string>>& pv_labels) {
  Storage storage;
  storage.Add(Claim("data").Bound("pv")).Add(Pv("pv", pv_labels));
  return storage;
}

PodBuilder PodWithClaim(const std::string& claim = "data") {
  return PodBuilder("p").Volume(ClaimVolume(claim));
}

// PreFilter, then Filter on the node as the framework runs them: Filter's verdict, PreFilter's
// rejection, or Success when PreFilter skips.
framework::Status Run(const Storage& storage, const NodeBuilder& node, const PodBuilder& pod) {
  Cluster cluster;
  const auto& snapshot = cluster.Node(node).Storage(storage.Build()).Build();
  auto plugin = MakeZone();
  const auto info = Info(pod);
  CycleState state;
  const auto pre = plugin->PreFilter(state, *info, snapshot);
  if (pre.status.IsSkip()) return framework::Status::Success();  // Filter is not called
  if (!pre.status.IsSuccess()) return pre.status;
  return plugin->Filter(state, *info, *snapshot.Get(node.Build().meta.name));
}

TEST_CASE("volume zone compares the PV's topology labels with the node's",
          "[plugins][volumezone]") {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> pv_labels;
    NodeBuilder node;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"a node without topology labels passes", {{kZone, "a"}}, NodeBuilder("n"), "pass"},
      {"the same zone passes", {{kZone, "a"}}, NodeBuilder("n").Label(kZone, "a"), "pass"},
      {"another zone fails", {{kZone, "a"}}, NodeBuilder("n").Label(kZone, "b"), kConflict},
      {"one of several zones passes",
       {{kZone, "b__a"}},
       NodeBuilder("n").Label(kZone, "a"),
       "pass"},
      {"a beta PV label matches the node's GA label",
       {{kBetaZone, "a"}},
       NodeBuilder("n").Label(kZone, "a"),
       "pass"},
      {"a GA PV label does not match a beta node label",
       {{kZone, "a"}},
       NodeBuilder("n").Label(kBetaZone, "a"),
       kConflict},
      {"a node lacking the region the PV names fails",
       {{kZone, "a"}, {kRegion, "r"}},
       NodeBuilder("n").Label(kZone, "a"),
       kConflict},
      {"the beta region matches",
       {{kBetaRegion, "r"}},
       NodeBuilder("n").Label(kBetaRegion, "r"),
       "pass"},
      {"a label with an empty zone is ignored",
       {{kZone, "a__"}},
       NodeBuilder("n").Label(kZone, "b"),
       "pass"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto status = Run(BoundTo(c.pv_labels), c.node, PodWithClaim());
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

TEST_CASE("volume zone skips pods with no zoned volume", "[plugins][volumezone]") {
  const NodeBuilder node = NodeBuilder("n").Label(kZone, "a");
  Storage storage = BoundTo({{"uselessLabel", "none"}});
  storage.Add(Claim("wait").Class("late"))
      .Add(Class("late", "csi.example.com", api::VolumeBindingMode::kWaitForFirstConsumer));
  struct Case {
    std::string name;
    PodBuilder pod;
  };
  const std::vector<Case> cases = {
      {"no volumes", PodBuilder("p")},
      {"a PV without topology labels", PodWithClaim()},
      {"an unbound claim of a WaitForFirstConsumer class", PodWithClaim("wait")},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Cluster cluster;
      const auto& snapshot = cluster.Node(node).Storage(storage.Build()).Build();
      CycleState state;
      CHECK(MakeZone()->PreFilter(state, *Info(c.pod), snapshot).status.IsSkip());
    }
  }
}

TEST_CASE("volume zone stops a pod whose claim it cannot follow", "[plugins][volumezone]") {
  Storage storage;
  storage.Add(Claim("no-class"))
      .Add(Claim("missing-class").Class("gone"))
      .Add(Claim("unset-mode").Class("unset"))
      .Add(Class("unset", "csi.example.com", std::nullopt))
      .Add(Claim("immediate").Class("now"))
      .Add(Class("now", "csi.example.com", api::VolumeBindingMode::kImmediate))
      .Add(Claim("lost-pv").Bound("gone-pv"));
  struct Case {
    std::string claim;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"absent", "persistentvolumeclaims \"absent\" not found"},
      {"no-class", "PersistentVolumeClaim had no pv name and storageClass name"},
      {"missing-class", "storageclasses.storage.k8s.io \"gone\" not found"},
      {"unset-mode", "VolumeBindingMode not set for StorageClass \"unset\""},
      {"immediate", "PersistentVolume had no name"},
      {"lost-pv", "persistentvolumes \"gone-pv\" not found"},
  };
  for (const auto& c : cases) {
    SECTION(c.claim) {
      const auto status = Run(storage, NodeBuilder("n"), PodWithClaim(c.claim));
      CHECK(Verdict(status) == std::vector<std::string>{c.reason});
      CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

TEST_CASE("volume zone reads the claim's class from the beta annotation first",
          "[plugins][volumezone]") {
  auto claim =
      std::make_shared<api::PersistentVolumeClaim>(*Claim("data").Class("spec-class").Ptr());
  claim->meta.annotations["volume.beta.kubernetes.io/storage-class"] = "beta-class";
  Storage storage;
  storage.Add(std::shared_ptr<const api::PersistentVolumeClaim>(claim));
  const auto status = Run(storage, NodeBuilder("n"), PodWithClaim());
  CHECK(Verdict(status) ==
        std::vector<std::string>{"storageclasses.storage.k8s.io \"beta-class\" not found"});
}

TEST_CASE("volume zone reads node labels only and waits for nodes or volume objects",
          "[plugins][volumezone]") {
  const auto plugin = MakeZone();
  CHECK_FALSE(plugin->FilterReadsPods());
  const auto events = plugin->EventsToRegister();
  CHECK((events & framework::EventBit(framework::ClusterEvent::kStorageChanged)) != 0);
  CHECK((events & framework::EventBit(framework::ClusterEvent::kNodeAdded)) != 0);
  CHECK((events & framework::EventBit(framework::ClusterEvent::kNodeUpdated)) != 0);
  CHECK((events & framework::EventBit(framework::ClusterEvent::kPodDeleted)) == 0);
}

}  // namespace
}  // namespace kubesched
