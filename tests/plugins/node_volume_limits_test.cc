// NodeVolumeLimits: which volumes count towards a CSI driver's limit on a node (CSI PVs, unbound
// claims by class, migrated in-tree disks, ephemeral claims, attachments), deduplicated by
// driver and handle, and the claims PreFilter cannot follow.

#include "plugins/node_volume_limits/node_volume_limits.h"

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
using plugin_testing::Attachment;
using plugin_testing::Claim;
using plugin_testing::ClaimVolume;
using plugin_testing::Class;
using plugin_testing::Cluster;
using plugin_testing::CsiNode;
using plugin_testing::CsiPv;
using plugin_testing::EphemeralVolume;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Pv;
using plugin_testing::Storage;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::NodeVolumeLimits;

const std::string kExceed(NodeVolumeLimits::kReasonMaxVolumeCount);
constexpr char kEbs[] = "ebs.csi.aws.com";
constexpr char kPd[] = "pd.csi.storage.gke.io";

std::unique_ptr<NodeVolumeLimits> MakeLimits() {
  return Unwrap<NodeVolumeLimits>(plugins::NewNodeVolumeLimits(std::monostate{}, {}));
}

// Node "n" with `on_node` bound to it: PreFilter and Filter as the framework runs them (Success
// when PreFilter skips).
framework::Status Run(const Storage& storage, const std::vector<PodBuilder>& on_node,
                      const PodBuilder& pod) {
  Cluster cluster;
  cluster.Node(NodeBuilder("n")).Storage(storage.Build());
  for (const PodBuilder& existing : on_node) cluster.Pod("n", existing);
  const auto& snapshot = cluster.Build();
  auto plugin = MakeLimits();
  const auto info = Info(pod);
  CycleState state;
  const auto pre = plugin->PreFilter(state, *info, snapshot);
  if (pre.status.IsSkip()) return framework::Status::Success();
  REQUIRE(pre.status.IsSuccess());
  return plugin->Filter(state, *info, *snapshot.Get("n"));
}

// Claims c0..c<n-1> bound to CSI PVs of `driver` with handles h0..; `prefix` tells sets apart.
Storage& CsiClaims(Storage& storage, const std::string& driver, int n,
                   const std::string& prefix = "c") {
  for (int i = 0; i < n; ++i) {
    const std::string name = prefix + std::to_string(i);
    storage.Add(Claim(name).Bound("pv-" + name)).Add(CsiPv("pv-" + name, driver, "h-" + name));
  }
  return storage;
}

PodBuilder WithClaims(const std::string& name, const std::vector<std::string>& claims) {
  PodBuilder pod(name);
  for (const auto& claim : claims) pod.Volume(ClaimVolume(claim));
  return pod;
}

api::Volume InlineEbs(const std::string& id) {
  api::Volume volume;
  volume.name = id;
  volume.aws_ebs_volume_id = id;
  return volume;
}

TEST_CASE("node volume limits count CSI volumes per driver against the CSINode",
          "[plugins][nodevolumelimits]") {
  Storage base;
  CsiClaims(base, "csi.a", 4);
  CsiClaims(base, "csi.b", 2, "b");
  struct Case {
    std::string name;
    std::shared_ptr<const api::CsiNode> csi_node;
    std::vector<PodBuilder> on_node;
    PodBuilder pod;
    std::string verdict;
  };
  const auto limit2 = CsiNode("n", {{"csi.a", 2}, {"csi.b", 2}});
  const std::vector<Case> cases = {
      {"two on the node and one more exceed a limit of two",
       limit2,
       {WithClaims("e", {"c0", "c1"})},
       WithClaims("p", {"c2"}),
       kExceed},
      {"one on the node and one more fit",
       limit2,
       {WithClaims("e", {"c0"})},
       WithClaims("p", {"c2"}),
       "pass"},
      {"a volume the node already has adds nothing",
       limit2,
       {WithClaims("e", {"c0", "c1"})},
       WithClaims("p", {"c1"}),
       "pass"},
      {"a claim shared by two pods on the node counts once",
       limit2,
       {WithClaims("e1", {"c0"}), WithClaims("e2", {"c0"})},
       WithClaims("p", {"c2"}),
       "pass"},
      {"another driver's volumes do not count",
       limit2,
       {WithClaims("e", {"b0", "b1"})},
       WithClaims("p", {"c0", "c1"}),
       "pass"},
      {"the pod's own volumes alone may exceed",
       limit2,
       {},
       WithClaims("p", {"c0", "c1", "c2"}),
       kExceed},
      {"a driver with no count has no limit",
       CsiNode("n", {{"csi.a", std::nullopt}}),
       {WithClaims("e", {"c0", "c1", "c2"})},
       WithClaims("p", {"c3"}),
       "pass"},
      {"a node without a CSINode has no limit",
       nullptr,
       {WithClaims("e", {"c0", "c1", "c2"})},
       WithClaims("p", {"c3"}),
       "pass"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Storage storage = base;
      if (c.csi_node != nullptr) storage.Add(c.csi_node);
      const auto status = Run(storage, c.on_node, c.pod);
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulable);
    }
  }
}

TEST_CASE("volumes with the same driver and handle count once", "[plugins][nodevolumelimits]") {
  Storage storage;
  CsiClaims(storage, "csi.a", 1);
  storage.Add(Claim("alias").Bound("pv-alias"))
      .Add(CsiPv("pv-alias", "csi.a", "h-c0"))  // the handle of c0's PV
      .Add(Claim("new").Bound("pv-new"))
      .Add(CsiPv("pv-new", "csi.a", "h-new"))
      .Add(CsiNode("n", {{"csi.a", 2}}));
  CHECK(Run(storage, {WithClaims("e", {"c0", "alias"})}, WithClaims("p", {"new"})).IsSuccess());
}

TEST_CASE("an unbound claim counts under its class's provisioner, once per claim",
          "[plugins][nodevolumelimits]") {
  Storage storage;
  for (const std::string name : {"u0", "u1", "u2"}) {
    storage.Add(Claim(name).Class("sc"));
  }
  storage.Add(Claim("no-class"))
      .Add(Claim("lost-pv").Bound("gone").Class("sc"))
      .Add(Class("sc", "csi.a"))
      .Add(CsiNode("n", {{"csi.a", 2}}));
  CHECK(Verdict(Run(storage, {WithClaims("e", {"u0", "u1"})}, WithClaims("p", {"u2"}))) ==
        std::vector<std::string>{kExceed});
  CHECK(Verdict(Run(storage, {WithClaims("e", {"u0", "lost-pv"})}, WithClaims("p", {"u2"}))) ==
        std::vector<std::string>{kExceed});
  CHECK(Run(storage, {WithClaims("e", {"u0", "no-class"})}, WithClaims("p", {"u2"})).IsSuccess());
  CHECK(Run(storage, {WithClaims("e", {"u0", "u1"})}, WithClaims("p", {"u1"})).IsSuccess());
}

TEST_CASE("in-tree EBS volumes count as the CSI driver's only where the node migrated them",
          "[plugins][nodevolumelimits]") {
  const auto with = [](const std::string& migrated) {
    Storage storage;
    api::PersistentVolume pv = Pv("pv-ebs");
    pv.aws_ebs_volume_id = "vol-1";
    storage.Add(Claim("ebs").Bound("pv-ebs"))
        .Add(std::move(pv))
        .Add(Claim("unbound").Class("in-tree"))
        .Add(Class("in-tree", "kubernetes.io/aws-ebs"))
        .Add(CsiNode("n", {{kEbs, 1}}, migrated));
    return storage;
  };
  const Storage migrated = with("kubernetes.io/gce-pd,kubernetes.io/aws-ebs");
  const Storage not_migrated = with("kubernetes.io/gce-pd");
  const PodBuilder existing = WithClaims("e", {"ebs"});
  SECTION("a bound in-tree PV") {
    const PodBuilder pod = PodBuilder("p").Volume(InlineEbs("vol-2"));
    CHECK(Verdict(Run(migrated, {existing}, pod)) == std::vector<std::string>{kExceed});
    CHECK(Run(not_migrated, {existing}, pod).IsSuccess());
  }
  SECTION("an unbound claim of an in-tree class") {
    const PodBuilder pod = WithClaims("p", {"unbound"});
    CHECK(Verdict(Run(migrated, {existing}, pod)) == std::vector<std::string>{kExceed});
    CHECK(Run(not_migrated, {existing}, pod).IsSuccess());
  }
  SECTION("an inline volume named by URL is the PV's volume") {
    const PodBuilder pod = PodBuilder("p").Volume(InlineEbs("aws://us-east-1a/vol-1"));
    CHECK(Run(migrated, {existing}, pod).IsSuccess());
  }
}

TEST_CASE("an in-tree GCE PD is the CSI volume with the translated handle",
          "[plugins][nodevolumelimits]") {
  Storage storage;
  api::PersistentVolume zonal = Pv("pv-zonal", {{"topology.kubernetes.io/zone", "us-c1-a"}});
  zonal.gce_pd_name = "disk";
  api::PersistentVolume regional =
      Pv("pv-regional", {{"topology.kubernetes.io/zone", "us-c1-a__us-c1-b"}});
  regional.gce_pd_name = "disk";
  storage.Add(Claim("zonal").Bound("pv-zonal"))
      .Add(std::move(zonal))
      .Add(Claim("regional").Bound("pv-regional"))
      .Add(std::move(regional))
      .Add(Claim("as-csi").Bound("pv-csi"))
      .Add(CsiPv("pv-csi", kPd, "projects/UNSPECIFIED/zones/us-c1-a/disks/disk"))
      .Add(Claim("regional-csi").Bound("pv-regional-csi"))
      .Add(CsiPv("pv-regional-csi", kPd, "projects/UNSPECIFIED/regions/us-c1/disks/disk"))
      .Add(CsiNode("n", {{kPd, 1}}, "kubernetes.io/gce-pd"));
  CHECK(Run(storage, {WithClaims("e", {"as-csi"})}, WithClaims("p", {"zonal"})).IsSuccess());
  CHECK(
      Run(storage, {WithClaims("e", {"regional-csi"})}, WithClaims("p", {"regional"})).IsSuccess());
  CHECK(Verdict(Run(storage, {WithClaims("e", {"as-csi"})}, WithClaims("p", {"regional"}))) ==
        std::vector<std::string>{kExceed});
}

TEST_CASE("attachments on the node count unless a pod there explains them",
          "[plugins][nodevolumelimits]") {
  Storage storage;
  CsiClaims(storage, "csi.a", 3);
  storage.Add(CsiNode("n", {{"csi.a", 2}}))
      .Add(Attachment("va-0", "csi.a", "n", "pv-c0"))
      .Add(Attachment("va-1", "csi.a", "n", "pv-c1"))
      .Add(Attachment("va-elsewhere", "csi.a", "other", "pv-c2"));
  // Two attached volumes and one more exceed two, even when the pod's volume is attached already
  // (upstream counts attachments apart from the pod's volumes).
  CHECK(Verdict(Run(storage, {}, WithClaims("p", {"c2"}))) == std::vector<std::string>{kExceed});
  CHECK(Verdict(Run(storage, {}, WithClaims("p", {"c0"}))) == std::vector<std::string>{kExceed});
  // A pod on the node using c0 explains va-0: c0 and c1 are on the node, c2 makes three.
  CHECK(Verdict(Run(storage, {WithClaims("e", {"c0"})}, WithClaims("p", {"c2"}))) ==
        std::vector<std::string>{kExceed});
  Storage one = Storage();
  CsiClaims(one, "csi.a", 3);
  one.Add(CsiNode("n", {{"csi.a", 2}})).Add(Attachment("va-0", "csi.a", "n", "pv-c0"));
  CHECK(Run(one, {WithClaims("e", {"c0"})}, WithClaims("p", {"c2"})).IsSuccess());
}

TEST_CASE("a generic ephemeral volume counts through the claim made for its pod",
          "[plugins][nodevolumelimits]") {
  Storage storage;
  CsiClaims(storage, "csi.a", 2);
  storage.Add(Claim("e-scratch").Class("sc").Owner("default-e-uid"))
      .Add(Claim("p-scratch").Class("sc").Owner("default-p-uid"))
      .Add(Claim("q-scratch").Class("sc").Owner("someone-else"))
      .Add(Class("sc", "csi.a"))
      .Add(CsiNode("n", {{"csi.a", 2}}));
  const PodBuilder existing = PodBuilder("e").Volume(EphemeralVolume("scratch"));
  CHECK(Verdict(Run(storage, {existing}, PodBuilder("p").Volume(EphemeralVolume("scratch")))) ==
        std::vector<std::string>{"pass"});
  CHECK(Verdict(Run(storage, {existing, WithClaims("f", {"c0"})},
                    PodBuilder("p").Volume(EphemeralVolume("scratch")))) ==
        std::vector<std::string>{kExceed});
  const auto not_owned = Run(storage, {}, PodBuilder("q").Volume(EphemeralVolume("scratch")));
  CHECK(not_owned.code() == Code::kError);
}

TEST_CASE("node volume limits reject a pod whose claim is missing on every node",
          "[plugins][nodevolumelimits]") {
  Storage storage;
  storage.Add(CsiNode("n", {{"csi.a", std::nullopt}}));
  struct Case {
    std::string name;
    PodBuilder pod;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"a claim", PodBuilder("p", "test").Volume(ClaimVolume("gone")),
       "looking up PVC test/gone: persistentvolumeclaims \"gone\" not found"},
      {"an ephemeral volume's claim", PodBuilder("abc", "test").Volume(EphemeralVolume("xyz")),
       "looking up PVC test/abc-xyz: persistentvolumeclaims \"abc-xyz\" not found"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto status = Run(storage, {}, c.pod);
      CHECK(Verdict(status) == std::vector<std::string>{c.reason});
      CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

TEST_CASE("node volume limits skip pods with nothing to count", "[plugins][nodevolumelimits]") {
  api::Volume config_map;
  config_map.name = "config";
  api::Volume inline_csi;
  inline_csi.name = "inline";
  inline_csi.csi_driver = "csi.a";
  api::Volume iscsi;
  iscsi.iscsi_iqn = "iqn.x";
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("n")).Storage(Storage().Build()).Build();
  for (const auto& pod : {PodBuilder("p"), PodBuilder("p").Volume(config_map),
                          PodBuilder("p").Volume(inline_csi), PodBuilder("p").Volume(iscsi)}) {
    CycleState state;
    CHECK(MakeLimits()->PreFilter(state, *Info(pod), snapshot).status.IsSkip());
  }
}

TEST_CASE("node volume limits wait for deleted pods and volume objects",
          "[plugins][nodevolumelimits]") {
  const auto events = MakeLimits()->EventsToRegister();
  CHECK((events & framework::EventBit(framework::ClusterEvent::kPodDeleted)) != 0);
  CHECK((events & framework::EventBit(framework::ClusterEvent::kStorageChanged)) != 0);
}

}  // namespace
}  // namespace kubesched
