// NodeInfo bookkeeping (sums, pod lists, ports, generation) and host-port conflicts.

#include "scheduler/framework/node_info.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::HostPorts;
using framework::MakePodInfo;
using framework::NodeInfo;
using framework::PodInfoPtr;
using testing::NodeBuilder;
using testing::PodBuilder;

constexpr int64_t kMi = 1024 * 1024;

PodInfoPtr Info(const PodBuilder& builder) { return MakePodInfo(builder.Ptr(), 0); }

api::Affinity RequiredAntiAffinity() {
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{};
  term.topology_key = api::Intern("kubernetes.io/hostname");
  api::Affinity affinity;
  affinity.pod_anti_affinity.emplace().required.push_back(term);
  return affinity;
}

api::Affinity PreferredAffinity() {
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{};
  term.topology_key = api::Intern("zone");
  api::Affinity affinity;
  affinity.pod_affinity.emplace().preferred.push_back({1, term});
  return affinity;
}

TEST_CASE("SetNode takes the name and allocatable from the node", "[core]") {
  NodeInfo info;
  info.SetNode(NodeBuilder("n1").Capacity({{"cpu", "4"}, {"pods", "110"}}).Ptr(), 3);
  CHECK(info.name() == "n1");
  CHECK(info.allocatable().Get(api::kCpu) == 4000);
  CHECK(info.allocatable().Get(api::kPods) == 110);
  CHECK(info.generation() == 3);
}

TEST_CASE("a node known only from its pods takes its name from the first pod", "[core]") {
  NodeInfo info;
  info.AddPod(Info(PodBuilder("p").NodeName("n9")), 1);
  CHECK(info.name() == "n9");
  CHECK(info.node() == nullptr);
}

TEST_CASE("adding pods sums their requests and non-zero requests", "[core]") {
  NodeInfo info;
  info.AddPod(Info(PodBuilder("a").NodeName("n").Container({{"cpu", "1"}})), 1);
  info.AddPod(Info(PodBuilder("b").NodeName("n").Container({{"memory", "1Mi"}})), 2);
  CHECK(info.pods().size() == 2);
  CHECK(info.requested().Get(api::kCpu) == 1000);
  CHECK(info.requested().Get(api::kMemory) == kMi);
  CHECK(info.requested().Get(api::kPods) == 0);  // the pod count is pods().size()
  CHECK(info.non_zero_requested().Get(api::kCpu) == 1000 + 100);
  CHECK(info.non_zero_requested().Get(api::kMemory) == 200 * kMi + kMi);
}

TEST_CASE("removing every added pod restores an empty node", "[core]") {
  NodeInfo info;
  info.SetNode(NodeBuilder("n").Capacity({{"cpu", "4"}}).Ptr(), 1);
  info.AddPod(Info(PodBuilder("a").NodeName("n").Container({{"cpu", "1"}}).HostPort(80)), 2);
  info.AddPod(Info(PodBuilder("b").NodeName("n").Affinity(RequiredAntiAffinity())), 3);
  REQUIRE(info.RemovePod("default/a", 4).ok());
  REQUIRE(info.RemovePod("default/b", 5).ok());
  CHECK(info.pods().empty());
  CHECK(info.pods_with_affinity().empty());
  CHECK(info.pods_with_required_anti_affinity().empty());
  CHECK(info.requested().IsZero());
  CHECK(info.non_zero_requested().IsZero());
  CHECK(info.used_ports().empty());
  CHECK(info.allocatable().Get(api::kCpu) == 4000);
}

TEST_CASE("the node's row holds the same amounts and flags as its lists", "[core]") {
  NodeInfo info;
  info.SetNode(NodeBuilder("n")
                   .Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "30"}})
                   .Taint("gpu", "", api::TaintEffect::kNoSchedule)
                   .Taint("spot", "", api::TaintEffect::kPreferNoSchedule)
                   .Unschedulable()
                   .Ptr(),
               1);
  info.AddPod(Info(PodBuilder("a").NodeName("n").Container({{"cpu", "1"}})), 2);
  info.AddPod(Info(PodBuilder("b").NodeName("n").Container({{"memory", "1Mi"}})), 3);
  REQUIRE(info.RemovePod("default/a", 4).ok());
  info.AddPod(Info(PodBuilder("c").NodeName("n").Container({{"cpu", "250m"}})), 5);
  const framework::NodeRow& row = info.row();
  CHECK(&row == &info.own_row());  // outside a snapshot
  CHECK(row.has_node);
  CHECK(row.unschedulable);
  CHECK(row.hard_taints);
  CHECK(row.prefer_taints);
  CHECK(row.taints == framework::TaintSets::Intern(info.node()->spec.taints));
  CHECK(row.allocatable_cpu == info.allocatable().Get(api::kCpu));
  CHECK(row.allocatable_memory == info.allocatable().Get(api::kMemory));
  CHECK(row.allocatable_pods == 30);
  CHECK(row.pod_count == 2);
  CHECK(row.requested_cpu == info.requested().Get(api::kCpu));
  CHECK(row.requested_memory == info.requested().Get(api::kMemory));
  CHECK(row.non_zero_requested_cpu == info.non_zero_requested().Get(api::kCpu));
  CHECK(row.non_zero_requested_memory == info.non_zero_requested().Get(api::kMemory));
  info.ClearNode(6);
  CHECK_FALSE(info.row().has_node);
  CHECK_FALSE(info.row().hard_taints);
  CHECK(info.row().taints == framework::kNoTaints);
  CHECK(info.row().pod_count == 2);  // the pods stay with the name
}

TEST_CASE("removing a pod that is not on the node is NotFound", "[core]") {
  NodeInfo info;
  info.AddPod(Info(PodBuilder("a").NodeName("n")), 1);
  CHECK(absl::IsNotFound(info.RemovePod("default/missing", 2)));
  CHECK(info.pods().size() == 1);
  CHECK(info.generation() == 1);
}

TEST_CASE("every change takes the given generation", "[core]") {
  NodeInfo info;
  info.SetNode(NodeBuilder("n").Ptr(), 5);
  CHECK(info.generation() == 5);
  info.AddPod(Info(PodBuilder("a").NodeName("n")), 6);
  CHECK(info.generation() == 6);
  REQUIRE(info.RemovePod("default/a", 7).ok());
  CHECK(info.generation() == 7);
  info.ClearNode(8);
  CHECK(info.generation() == 8);
  CHECK(info.node() == nullptr);
  CHECK(info.name() == "n");
}

TEST_CASE("pods with affinity terms are listed by kind", "[core]") {
  NodeInfo info;
  info.AddPod(Info(PodBuilder("plain").NodeName("n")), 1);
  info.AddPod(Info(PodBuilder("anti").NodeName("n").Affinity(RequiredAntiAffinity())), 2);
  info.AddPod(Info(PodBuilder("pref").NodeName("n").Affinity(PreferredAffinity())), 3);
  CHECK(info.pods_with_affinity().size() == 2);
  REQUIRE(info.pods_with_required_anti_affinity().size() == 1);
  CHECK(info.pods_with_required_anti_affinity()[0]->key == "default/anti");
}

TEST_CASE("host ports of containers and sidecars are marked used", "[core]") {
  api::Pod pod = PodBuilder("p").NodeName("n").HostPort(8080).Build();
  api::Container init;
  init.restart_policy = "Always";
  init.ports.push_back({53, 53, "", api::Protocol::kUDP});
  init.ports.push_back({9, 0, "", api::Protocol::kTCP});  // no host port
  pod.spec.init_containers.push_back(init);
  NodeInfo info;
  info.AddPod(MakePodInfo(std::make_shared<const api::Pod>(pod), 0), 1);
  CHECK(info.used_ports().Conflicts("", api::Protocol::kTCP, 8080));
  CHECK(info.used_ports().Conflicts("", api::Protocol::kUDP, 53));
  CHECK_FALSE(info.used_ports().Conflicts("", api::Protocol::kTCP, 9));
}

struct PortCase {
  std::string name;
  std::string used_ip;
  api::Protocol used_protocol;
  std::string wanted_ip;
  api::Protocol wanted_protocol;
  int32_t wanted_port;  // the used port is always 80
  bool conflicts;
};

TEST_CASE("host ports conflict on protocol, port and overlapping address", "[core]") {
  using api::Protocol;
  const std::vector<PortCase> cases = {
      {"same port, both on all addresses", "", Protocol::kTCP, "", Protocol::kTCP, 80, true},
      {"different port", "", Protocol::kTCP, "", Protocol::kTCP, 81, false},
      {"different protocol", "", Protocol::kTCP, "", Protocol::kUDP, 80, false},
      {"used on all addresses, wanted on one", "0.0.0.0", Protocol::kTCP, "10.0.0.1",
       Protocol::kTCP, 80, true},
      {"used on one address, wanted on all", "10.0.0.1", Protocol::kTCP, "0.0.0.0", Protocol::kTCP,
       80, true},
      {"used on one address, wanted with empty ip", "10.0.0.1", Protocol::kTCP, "", Protocol::kTCP,
       80, true},
      {"same address", "10.0.0.1", Protocol::kSCTP, "10.0.0.1", Protocol::kSCTP, 80, true},
      {"different addresses", "10.0.0.1", Protocol::kTCP, "10.0.0.2", Protocol::kTCP, 80, false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HostPorts ports;
    ports.Add(c.used_ip, c.used_protocol, 80);
    CHECK(ports.Conflicts(c.wanted_ip, c.wanted_protocol, c.wanted_port) == c.conflicts);
  }
}

TEST_CASE("removing one of two identical host ports keeps the other", "[core]") {
  HostPorts ports;
  ports.Add("", api::Protocol::kTCP, 80);
  ports.Add("0.0.0.0", api::Protocol::kTCP, 80);
  ports.Remove("", api::Protocol::kTCP, 80);
  CHECK(ports.Conflicts("", api::Protocol::kTCP, 80));
  ports.Remove("0.0.0.0", api::Protocol::kTCP, 80);
  CHECK(ports.empty());
}

TEST_CASE("host ports of sidecars count while those of ordinary init containers do not", "[core]") {
  api::Pod pod = PodBuilder("p").Container({}).Build();
  api::Container init;
  init.name = "setup";
  init.ports.push_back({80, 8080, "", api::Protocol::kTCP});
  api::Container sidecar = init;
  sidecar.name = "proxy";
  sidecar.restart_policy = "Always";
  sidecar.ports[0].host_port = 9090;
  pod.spec.init_containers = {init, sidecar};
  NodeInfo info;
  info.AddPod(MakePodInfo(std::make_shared<const api::Pod>(pod), 0), 1);
  CHECK_FALSE(info.used_ports().Conflicts("", api::Protocol::kTCP, 8080));
  CHECK(info.used_ports().Conflicts("", api::Protocol::kTCP, 9090));
}

TEST_CASE("pods with the same namespace and labels form one counted group", "[core]") {
  NodeInfo node;
  const PodInfoPtr a = Info(PodBuilder("a").Label("app", "web").NodeName("n"));
  const PodInfoPtr b = Info(PodBuilder("b").Label("app", "web").NodeName("n"));
  const PodInfoPtr other_labels = Info(PodBuilder("c").Label("app", "db").NodeName("n"));
  const PodInfoPtr other_namespace =
      Info(PodBuilder("d", "prod").Label("app", "web").NodeName("n"));
  CHECK(a->label_group == b->label_group);
  CHECK(a->label_group != other_labels->label_group);
  CHECK(a->label_group != other_namespace->label_group);
  for (const auto& pod : {a, b, other_labels, other_namespace}) node.AddPod(pod, 1);
  REQUIRE(node.label_groups().size() == 3);
  const auto group_of = [&node](const PodInfoPtr& pod) {
    for (const auto& group : node.label_groups()) {
      if (group.id == pod->label_group) return group;
    }
    FAIL("no group");
    return framework::LabelGroupCount{};
  };
  CHECK(group_of(a).count == 2);
  CHECK(group_of(a).sample == a.get());

  // The sample leaves: the other pod of the group stands in; the last one takes the group away.
  REQUIRE(node.RemovePod("default/a", 2).ok());
  CHECK(group_of(b).count == 1);
  CHECK(group_of(b).sample == b.get());
  REQUIRE(node.RemovePod("default/b", 3).ok());
  CHECK(node.label_groups().size() == 2);
}

TEST_CASE("affinity terms are grouped by content, kind and weight", "[core]") {
  NodeInfo node;
  const PodInfoPtr anti_1 = Info(PodBuilder("anti-1").Affinity(RequiredAntiAffinity()));
  const PodInfoPtr anti_2 = Info(PodBuilder("anti-2").Affinity(RequiredAntiAffinity()));
  const PodInfoPtr preferred = Info(PodBuilder("preferred").Affinity(PreferredAffinity()));
  const PodInfoPtr anti_elsewhere =
      Info(PodBuilder("anti-3", "prod").Affinity(RequiredAntiAffinity()));
  // The term's namespaces default to the owner's: same text, other namespace, other content.
  CHECK(anti_1->required_anti_affinity()[0].id == anti_2->required_anti_affinity()[0].id);
  CHECK(anti_1->required_anti_affinity()[0].id != anti_elsewhere->required_anti_affinity()[0].id);
  for (const auto& pod : {anti_1, anti_2, preferred, anti_elsewhere}) node.AddPod(pod, 1);
  REQUIRE(node.term_groups().size() == 3);
  int64_t anti_count = 0;
  for (const auto& group : node.term_groups()) {
    if (group.id != anti_1->required_anti_affinity()[0].id) continue;
    CHECK(group.kind == framework::TermKind::kRequiredAntiAffinity);
    CHECK(group.sample == &anti_1->required_anti_affinity()[0]);
    anti_count = group.count;
  }
  CHECK(anti_count == 2);
  for (const auto& group : node.term_groups()) {
    if (group.kind != framework::TermKind::kPreferredAffinity) continue;
    CHECK(group.weight == 1);
    CHECK(group.count == 1);
  }

  REQUIRE(node.RemovePod("default/anti-1", 2).ok());
  for (const auto& group : node.term_groups()) {
    if (group.id == anti_2->required_anti_affinity()[0].id) {
      CHECK(group.count == 1);
      CHECK(group.sample == &anti_2->required_anti_affinity()[0]);
    }
  }
  for (const char* key : {"default/anti-2", "default/preferred", "prod/anti-3"}) {
    REQUIRE(node.RemovePod(key, 3).ok());
  }
  CHECK(node.term_groups().empty());
  CHECK(node.label_groups().empty());
}

api::Volume Claimed(const std::string& claim) {
  api::Volume volume;
  volume.name = claim;
  volume.claim_name = claim;
  return volume;
}

api::Volume Disk(const std::string& pd) {
  api::Volume volume;
  volume.name = pd;
  volume.gce_pd_name = pd;
  return volume;
}

// The count of claim `key` on the node (0 when absent), checking that its ref names it.
int32_t ClaimCount(const NodeInfo& node, const std::string& key) {
  for (const auto& entry : node.volume_refs()) {
    if (entry.ref->kind == framework::PodVolumeRef::Kind::kClaim && entry.ref->key == key) {
      return entry.count;
    }
  }
  return 0;
}

TEST_CASE("a node counts its pods' claims once each and their inline disks per volume", "[core]") {
  NodeInfo node;
  const PodInfoPtr a =
      Info(PodBuilder("a").NodeName("n").Volume(Claimed("data")).Volume(Disk("pd")));
  const PodInfoPtr b =
      Info(PodBuilder("b").NodeName("n").Volume(Claimed("data")).Volume(Claimed("logs")));
  const PodInfoPtr c = Info(PodBuilder("c").NodeName("n").Volume(Disk("pd")));
  node.AddPod(a, 1);
  node.AddPod(b, 2);
  node.AddPod(c, 3);
  CHECK(node.volume_refs().size() == 4);  // data, logs, and pd twice
  CHECK(ClaimCount(node, "default/data") == 2);
  CHECK(ClaimCount(node, "default/logs") == 1);

  REQUIRE(node.RemovePod("default/a", 4).ok());
  CHECK(node.volume_refs().size() == 3);
  CHECK(ClaimCount(node, "default/data") == 1);
  for (const auto& entry : node.volume_refs()) {
    // Every ref now points into a pod still on the node.
    CHECK((entry.ref->pod == &b->get() || entry.ref->pod == &c->get()));
  }
  REQUIRE(node.RemovePod("default/b", 5).ok());
  REQUIRE(node.RemovePod("default/c", 6).ok());
  CHECK(node.volume_refs().empty());
}

TEST_CASE("a pod naming one claim twice counts it twice and takes both away", "[core]") {
  NodeInfo node;
  node.AddPod(Info(PodBuilder("a").NodeName("n").Volume(Claimed("data")).Volume(Claimed("data"))),
              1);
  node.AddPod(Info(PodBuilder("b").NodeName("n").Volume(Claimed("data"))), 2);
  CHECK(ClaimCount(node, "default/data") == 3);
  REQUIRE(node.RemovePod("default/a", 3).ok());
  REQUIRE(node.volume_refs().size() == 1);
  CHECK(node.volume_refs()[0].count == 1);
  CHECK(node.volume_refs()[0].ref->pod == &node.pods()[0]->get());
}

TEST_CASE("pods without claims or disks leave the node's volume refs untouched", "[core]") {
  NodeInfo node;
  api::Volume config_map;
  config_map.name = "config";
  node.AddPod(Info(PodBuilder("a").NodeName("n").Volume(config_map)), 1);
  node.AddPod(Info(PodBuilder("b").NodeName("n")), 2);
  CHECK(node.volume_refs().empty());
  CHECK(node.pods()[0]->volume_refs.empty());
}

}  // namespace
}  // namespace kubesched
