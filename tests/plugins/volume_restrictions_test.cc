// VolumeRestrictions: in-tree disk conflicts with the node's pods, ReadWriteOncePod claims in use
// anywhere in the cluster, and the PreFilter extensions that keep the latter true for preemption.

#include "plugins/volume_restrictions/volume_restrictions.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"
#include "tests/plugins/volume_builders.h"

namespace kubesched {
namespace {

using api::AccessMode;
using framework::Code;
using framework::CycleState;
using plugin_testing::Claim;
using plugin_testing::ClaimVolume;
using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Storage;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::VolumeRestrictions;

const std::string kDisk(VolumeRestrictions::kReasonDiskConflict);
const std::string kRwop(VolumeRestrictions::kReasonReadWriteOncePodConflict);

std::unique_ptr<VolumeRestrictions> MakeRestrictions() {
  return Unwrap<VolumeRestrictions>(plugins::NewVolumeRestrictions(std::monostate{}, {}));
}

api::Volume Gce(const std::string& pd, bool read_only = false) {
  api::Volume volume;
  volume.gce_pd_name = pd;
  volume.read_only = read_only;
  return volume;
}
api::Volume Ebs(const std::string& id, bool read_only = false) {
  api::Volume volume;
  volume.aws_ebs_volume_id = id;
  volume.read_only = read_only;
  return volume;
}
api::Volume Rbd(std::vector<std::string> monitors, const std::string& image,
                bool read_only = false) {
  api::Volume volume;
  volume.rbd_monitors = std::move(monitors);
  volume.rbd_pool = "rbd";
  volume.rbd_image = image;
  volume.read_only = read_only;
  return volume;
}
api::Volume Iscsi(const std::string& iqn, bool read_only = false) {
  api::Volume volume;
  volume.iscsi_iqn = iqn;
  volume.read_only = read_only;
  return volume;
}

// Filter's verdict on node "n" holding one pod with `existing`, as the framework runs it
// (Success when PreFilter skips).
std::vector<std::string> DiskVerdict(const api::Volume& existing, const api::Volume& wanted) {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("n"))
                             .Pod("n", PodBuilder("holder").Volume(existing))
                             .Storage(Storage().Build())
                             .Build();
  auto plugin = MakeRestrictions();
  const auto pod = Info(PodBuilder("p").Volume(wanted));
  CycleState state;
  const auto pre = plugin->PreFilter(state, *pod, snapshot);
  REQUIRE(pre.status.IsSuccess());
  const auto status = plugin->Filter(state, *pod, *snapshot.Get("n"));
  if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulable);
  return Verdict(status);
}

TEST_CASE("volume restrictions reject in-tree disks the node's pods hold",
          "[plugins][volumerestrictions]") {
  struct Case {
    std::string name;
    api::Volume existing;
    api::Volume wanted;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"the same GCE PD read-write conflicts", Gce("pd"), Gce("pd"), kDisk},
      {"the same GCE PD read-only by both passes", Gce("pd", true), Gce("pd", true), "pass"},
      {"the same GCE PD read-only by one conflicts", Gce("pd", true), Gce("pd"), kDisk},
      {"another GCE PD passes", Gce("pd"), Gce("other"), "pass"},
      {"the same EBS volume conflicts even read-only", Ebs("vol", true), Ebs("vol", true), kDisk},
      {"another EBS volume passes", Ebs("vol"), Ebs("other"), "pass"},
      {"the same RBD image on a shared monitor conflicts", Rbd({"a", "b"}, "img"),
       Rbd({"b", "c"}, "img"), kDisk},
      {"the same RBD image on other monitors passes", Rbd({"a"}, "img"), Rbd({"c"}, "img"), "pass"},
      {"the same RBD image read-only by both passes", Rbd({"a"}, "img", true),
       Rbd({"a"}, "img", true), "pass"},
      {"the same iSCSI IQN conflicts", Iscsi("iqn.x"), Iscsi("iqn.x"), kDisk},
      {"the same iSCSI IQN read-only by both passes", Iscsi("iqn.x", true), Iscsi("iqn.x", true),
       "pass"},
      {"disks of different kinds never conflict", Gce("x"), Ebs("x"), "pass"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      CHECK(DiskVerdict(c.existing, c.wanted) == std::vector<std::string>{c.verdict});
    }
  }
}

TEST_CASE("volume restrictions skip pods with no disk and no claimed ReadWriteOncePod volume",
          "[plugins][volumerestrictions]") {
  Storage storage;
  storage.Add(Claim("rwo").Modes({AccessMode::kReadWriteOnce}))
      .Add(Claim("rwop").Modes({AccessMode::kReadWriteOncePod}));
  api::Volume config_map;
  config_map.name = "config";
  struct Case {
    std::string name;
    PodBuilder pod;
  };
  const std::vector<Case> cases = {
      {"no volumes", PodBuilder("p")},
      {"a volume without restrictions", PodBuilder("p").Volume(config_map)},
      {"a ReadWriteOnce claim in use", PodBuilder("p").Volume(ClaimVolume("rwo"))},
      {"a ReadWriteOncePod claim nobody uses", PodBuilder("p").Volume(ClaimVolume("rwop"))},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Cluster cluster;
      const auto& snapshot = cluster.Node(NodeBuilder("n"))
                                 .Pod("n", PodBuilder("user").Volume(ClaimVolume("rwo")))
                                 .Storage(storage.Build())
                                 .Build();
      CycleState state;
      CHECK(MakeRestrictions()->PreFilter(state, *Info(c.pod), snapshot).status.IsSkip());
    }
  }
}

TEST_CASE("volume restrictions reject a pod whose claim is missing",
          "[plugins][volumerestrictions]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("n")).Storage(Storage().Build()).Build();
  CycleState state;
  const auto pre = MakeRestrictions()->PreFilter(
      state, *Info(PodBuilder("p").Volume(ClaimVolume("gone"))), snapshot);
  CHECK(Verdict(pre.status) ==
        std::vector<std::string>{"persistentvolumeclaim \"gone\" not found"});
  CHECK(pre.status.code() == Code::kUnschedulableAndUnresolvable);
}

// Nodes "a" and "b"; on "b" the pod `user` uses claim "data" of its namespace, which is
// ReadWriteOncePod in every namespace.
const framework::Snapshot& RwopCluster(Cluster& cluster, const PodBuilder& user) {
  Storage storage;
  for (const std::string ns : {"default", "other"}) {
    storage.Add(Claim("data", ns).Modes({AccessMode::kReadWriteOncePod}));
  }
  return cluster.Node(NodeBuilder("a"))
      .Node(NodeBuilder("b"))
      .Pod("b", user)
      .Storage(storage.Build())
      .Build();
}

TEST_CASE("a ReadWriteOncePod claim another pod uses rejects every node",
          "[plugins][volumerestrictions]") {
  Cluster cluster;
  const auto& snapshot = RwopCluster(cluster, PodBuilder("user").Volume(ClaimVolume("data")));
  auto plugin = MakeRestrictions();
  const auto pod = Info(PodBuilder("p").Volume(ClaimVolume("data")));
  CycleState state;
  REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
  for (const auto* node : snapshot.nodes()) {
    INFO(node->name());
    const auto status = plugin->Filter(state, *pod, *node);
    CHECK(Verdict(status) == std::vector<std::string>{kRwop});
    CHECK(status.code() == Code::kUnschedulable);
  }
}

TEST_CASE("a claim of the same name in another namespace is no conflict",
          "[plugins][volumerestrictions]") {
  Cluster cluster;
  const auto& snapshot =
      RwopCluster(cluster, PodBuilder("user", "other").Volume(ClaimVolume("data")));
  CycleState state;
  const auto pod = Info(PodBuilder("p").Volume(ClaimVolume("data")));
  CHECK(MakeRestrictions()->PreFilter(state, *pod, snapshot).status.IsSkip());
}

TEST_CASE("preemption's what-if follows the ReadWriteOncePod claim's user",
          "[plugins][volumerestrictions]") {
  Cluster cluster;
  const PodBuilder user = PodBuilder("user").Volume(ClaimVolume("data"));
  const auto& snapshot = RwopCluster(cluster, user);
  auto plugin = MakeRestrictions();
  const auto pod = Info(PodBuilder("p").Volume(ClaimVolume("data")));
  CycleState state;
  REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
  REQUIRE(plugin->pre_filter_extensions() != nullptr);
  const framework::NodeInfo& b = *snapshot.Get("b");
  framework::NodeInfo what_if = b;
  const auto user_info = b.pods().front();
  REQUIRE(what_if.RemovePod(*user_info, 1).ok());
  auto copy = state.Clone();
  REQUIRE(plugin->pre_filter_extensions()->RemovePod(*copy, *pod, *user_info, what_if).IsSuccess());
  CHECK(plugin->Filter(*copy, *pod, what_if).IsSuccess());
  what_if.AddPod(user_info, 2);
  REQUIRE(plugin->pre_filter_extensions()->AddPod(*copy, *pod, *user_info, what_if).IsSuccess());
  CHECK(Verdict(plugin->Filter(*copy, *pod, what_if)) == std::vector<std::string>{kRwop});
  // The cycle's own state never moved.
  CHECK(Verdict(plugin->Filter(state, *pod, b)) == std::vector<std::string>{kRwop});
}

TEST_CASE("a removed pod's disk no longer conflicts on the what-if node",
          "[plugins][volumerestrictions]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("n"))
                             .Pod("n", PodBuilder("holder").Volume(Ebs("vol")))
                             .Storage(Storage().Build())
                             .Build();
  auto plugin = MakeRestrictions();
  const auto pod = Info(PodBuilder("p").Volume(Ebs("vol")));
  CycleState state;
  REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
  framework::NodeInfo what_if = *snapshot.Get("n");
  REQUIRE(what_if.RemovePod(*what_if.pods().front(), 1).ok());
  CHECK(plugin->Filter(state, *pod, what_if).IsSuccess());
}

TEST_CASE("volume restrictions wait for deleted pods, nodes and volume objects",
          "[plugins][volumerestrictions]") {
  const auto events = MakeRestrictions()->EventsToRegister();
  for (const auto event :
       {framework::ClusterEvent::kPodDeleted, framework::ClusterEvent::kNodeAdded,
        framework::ClusterEvent::kNodeUpdated, framework::ClusterEvent::kStorageChanged}) {
    CHECK((events & framework::EventBit(event)) != 0);
  }
}

}  // namespace
}  // namespace kubesched
