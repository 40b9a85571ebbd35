// The scheduler cache: assumed pods (confirm, forget, expiry), placeholders for unknown nodes and
// the incremental snapshot.

#include "scheduler/cache/cache.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/util/clock.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using cache::Cache;
using framework::MakePodInfo;
using framework::PodInfoPtr;
using framework::Snapshot;
using testing::Labels;
using testing::NodeBuilder;
using testing::PodBuilder;

PodInfoPtr Pod(const std::string& name, const std::string& node, const std::string& cpu = "1") {
  return MakePodInfo(PodBuilder(name).NodeName(node).Container({{"cpu", cpu}}).Ptr(), 0);
}

// A cache with nodes n1..n<count>, each with 8 cpus.
struct Fixture {
  explicit Fixture(int count = 2) {
    for (int i = 1; i <= count; ++i) {
      cache.AddNode(NodeBuilder(absl::StrCat("n", i)).Capacity({{"cpu", "8"}}).Ptr());
    }
  }
  // cpu requested on `node` in a freshly updated snapshot, -1 if the node is not there.
  int64_t RequestedCpu(const std::string& node) {
    cache.UpdateSnapshot(&snapshot);
    const framework::NodeInfo* info = snapshot.Get(node);
    return info == nullptr ? -1 : info->requested().Get(api::kCpu);
  }

  util::FakeClock clock;
  Cache cache{&clock};
  Snapshot snapshot;
};

TEST_CASE("an assumed pod counts on its node at once", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  CHECK(f.RequestedCpu("n1") == 1000);
  CHECK(f.cache.IsAssumed("default/p"));
  CHECK(f.cache.AssumedCount() == 1);
}

TEST_CASE("room reserved for pods keeps the cached ones and takes more than reserved", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("bound", "n1")).ok());
  REQUIRE(f.cache.AssumePod(Pod("assumed", "n2")).ok());
  f.cache.ReservePods(1);  // fewer than cached already: nothing is dropped
  for (int i = 0; i < 3; ++i) REQUIRE(f.cache.AssumePod(Pod(absl::StrCat("p", i), "n1")).ok());
  CHECK(f.cache.PodCount() == 5);
  CHECK(f.cache.IsAssumed("default/assumed"));
  CHECK_FALSE(f.cache.IsAssumed("default/bound"));
  CHECK(f.RequestedCpu("n1") == 4000);
  CHECK(f.RequestedCpu("n2") == 1000);
}

TEST_CASE("assuming a pod that is already cached is AlreadyExists", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  CHECK(absl::IsAlreadyExists(f.cache.AssumePod(Pod("p", "n2"))));
  CHECK(f.RequestedCpu("n2") == 0);
}

TEST_CASE("assuming a pod without a node is InvalidArgument", "[core]") {
  Fixture f;
  CHECK(absl::IsInvalidArgument(f.cache.AssumePod(MakePodInfo(PodBuilder("p").Ptr(), 0))));
}

TEST_CASE("adding an assumed pod confirms it in place", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  CHECK_FALSE(f.cache.IsAssumed("default/p"));
  CHECK(f.cache.PodCount() == 1);
  CHECK(f.RequestedCpu("n1") == 1000);
}

TEST_CASE("confirming an assumed pod on another node moves it there", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  REQUIRE(f.cache.AddPod(Pod("p", "n2")).ok());
  CHECK(f.RequestedCpu("n1") == 0);
  CHECK(f.RequestedCpu("n2") == 1000);
  CHECK(f.cache.NodeOfPod("default/p") == "n2");
}

TEST_CASE("adding a bound pod twice is AlreadyExists", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  CHECK(absl::IsAlreadyExists(f.cache.AddPod(Pod("p", "n1"))));
  CHECK(f.RequestedCpu("n1") == 1000);
}

TEST_CASE("forgetting an assumed pod frees its node", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  REQUIRE(f.cache.ForgetPod("default/p", "default-p-uid").ok());
  CHECK(f.RequestedCpu("n1") == 0);
  CHECK(f.cache.PodCount() == 0);
  CHECK(f.cache.GetPod("default/p") == nullptr);
}

TEST_CASE("forgetting a deleted pod leaves its successor of the same name alone", "[core]") {
  Fixture f;
  // web-0 was deleted while its bind was in flight; its successor is assumed on n2.
  REQUIRE(f.cache
              .AssumePod(MakePodInfo(
                  PodBuilder("web-0").Uid("new").NodeName("n2").Container({{"cpu", "3"}}).Ptr(), 0))
              .ok());
  CHECK(absl::IsNotFound(f.cache.ForgetPod("default/web-0", "default-web-0-uid")));
  CHECK(absl::IsNotFound(f.cache.FinishBinding("default/web-0", "default-web-0-uid")));
  CHECK(f.cache.IsAssumed("default/web-0"));
  CHECK(f.RequestedCpu("n2") == 3000);
  CHECK(f.cache.BindsAwaitingConfirmation().count == 0);
  REQUIRE(f.cache.ForgetPod("default/web-0", "new").ok());
  CHECK(f.RequestedCpu("n2") == 0);
}

TEST_CASE("only assumed pods can be forgotten", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("bound", "n1")).ok());
  CHECK(absl::IsFailedPrecondition(f.cache.ForgetPod("default/bound", "default-bound-uid")));
  CHECK(absl::IsNotFound(f.cache.ForgetPod("default/missing", "default-missing-uid")));
  CHECK(f.RequestedCpu("n1") == 1000);
}

TEST_CASE("an assumed pod never expires: it keeps its room until the API says so", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  f.clock.Advance(absl::Minutes(5));
  CHECK(f.cache.BindsAwaitingConfirmation().count == 0);  // bind still in flight
  REQUIRE(f.cache.FinishBinding("default/p", "default-p-uid").ok());
  f.clock.Advance(absl::Hours(2));
  const cache::Cache::UnconfirmedBinds unconfirmed = f.cache.BindsAwaitingConfirmation();
  CHECK(unconfirmed.count == 1);
  CHECK(unconfirmed.longest_wait == absl::Hours(2));
  CHECK(f.cache.IsAssumed("default/p"));
  CHECK(f.RequestedCpu("n1") == 1000);
  // The watch shows it bound: confirmed, and nothing waits any more.
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  CHECK(!f.cache.IsAssumed("default/p"));
  CHECK(f.cache.BindsAwaitingConfirmation().count == 0);
  CHECK(f.RequestedCpu("n1") == 1000);
}

TEST_CASE("binds awaiting confirmation report the longest wait", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("a", "n1")).ok());
  REQUIRE(f.cache.AssumePod(Pod("b", "n1")).ok());
  REQUIRE(f.cache.FinishBinding("default/a", "default-a-uid").ok());
  f.clock.Advance(absl::Seconds(10));
  REQUIRE(f.cache.FinishBinding("default/b", "default-b-uid").ok());
  f.clock.Advance(absl::Seconds(5));
  cache::Cache::UnconfirmedBinds unconfirmed = f.cache.BindsAwaitingConfirmation();
  CHECK(unconfirmed.count == 2);
  CHECK(unconfirmed.longest_wait == absl::Seconds(15));
  // A deleted pod no longer waits.
  REQUIRE(f.cache.RemovePod("default/a").ok());
  unconfirmed = f.cache.BindsAwaitingConfirmation();
  CHECK(unconfirmed.count == 1);
  CHECK(unconfirmed.longest_wait == absl::Seconds(5));
}

TEST_CASE("a confirmed pod does not wait for confirmation", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  REQUIRE(
      f.cache.FinishBinding("default/p", "default-p-uid").ok());  // the watch beat the bind call
  f.clock.Advance(absl::Hours(1));
  CHECK(f.cache.BindsAwaitingConfirmation().count == 0);
  CHECK(f.cache.PodCount() == 1);
}

TEST_CASE("updating a pod replaces its requests", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1", "1")).ok());
  REQUIRE(f.cache.UpdatePod(Pod("p", "n1", "3")).ok());
  CHECK(f.RequestedCpu("n1") == 3000);
}

TEST_CASE("removing a pod frees its node and unknown pods are NotFound", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  REQUIRE(f.cache.RemovePod("default/p").ok());
  CHECK(f.RequestedCpu("n1") == 0);
  CHECK(absl::IsNotFound(f.cache.RemovePod("default/p")));
}

TEST_CASE("a pod on an unknown node makes a placeholder that the snapshot leaves out", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "later")).ok());
  CHECK(f.RequestedCpu("later") == -1);
  CHECK(f.snapshot.nodes().size() == 2);
  CHECK(f.cache.NodeCount() == 2);
  f.cache.AddNode(NodeBuilder("later").Capacity({{"cpu", "8"}}).Ptr());
  CHECK(f.RequestedCpu("later") == 1000);  // the pod was kept for it
  CHECK(f.snapshot.nodes().size() == 3);
}

TEST_CASE("a removed node disappears from the snapshot", "[core]") {
  Fixture f(3);
  f.cache.UpdateSnapshot(&f.snapshot);
  f.cache.RemoveNode("n2");
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.cache.LastSnapshotUpdate().nodes_removed == 1);
  CHECK(f.snapshot.Get("n2") == nullptr);
  CHECK(f.snapshot.nodes().size() == 2);
  CHECK(f.cache.NodeCount() == 2);
}

TEST_CASE("a removed node that still has pods leaves the snapshot but keeps its pods", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  f.cache.UpdateSnapshot(&f.snapshot);
  f.cache.RemoveNode("n1");
  CHECK(f.RequestedCpu("n1") == -1);
  CHECK(f.snapshot.nodes().size() == 1);
  CHECK(f.cache.NodeOfPod("default/p") == "n1");
  REQUIRE(f.cache.RemovePod("default/p").ok());  // the placeholder goes with its last pod
  CHECK(f.cache.PodCount() == 0);
}

TEST_CASE("a snapshot update after one assume copies exactly one node", "[core]") {
  Fixture f(50);
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.cache.LastSnapshotUpdate().nodes_copied == 50);
  REQUIRE(f.cache.AssumePod(Pod("p", "n17")).ok());
  f.cache.UpdateSnapshot(&f.snapshot);
  const auto stats = f.cache.LastSnapshotUpdate();
  CHECK(stats.nodes_copied == 1);
  CHECK(stats.nodes_removed == 0);
  CHECK_FALSE(stats.lists_rebuilt);
  CHECK(f.snapshot.Get("n17")->requested().Get(api::kCpu) == 1000);
}

TEST_CASE("a snapshot tells which nodes each update changed, until nodes come or go", "[core]") {
  Fixture f(4);
  f.cache.UpdateSnapshot(&f.snapshot);
  const int64_t start = f.snapshot.generation();
  std::vector<uint32_t> changed;
  CHECK(f.snapshot.NodesChangedSince(start, &changed));
  CHECK(changed.empty());
  REQUIRE(f.cache.AssumePod(Pod("p", "n3")).ok());
  f.cache.UpdateSnapshot(&f.snapshot);
  REQUIRE(f.cache.AddPod(Pod("q", "n1")).ok());
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.snapshot.NodesChangedSince(start, &changed));
  std::vector<std::string> names;
  for (const uint32_t position : changed) names.push_back(f.snapshot.nodes()[position]->name());
  CHECK(names == std::vector<std::string>{"n3", "n1"});
  f.cache.AddNode(NodeBuilder("n5").Capacity({{"cpu", "8"}}).Ptr());
  f.cache.UpdateSnapshot(&f.snapshot);
  changed.clear();
  CHECK_FALSE(f.snapshot.NodesChangedSince(start, &changed));
  CHECK(f.snapshot.NodesChangedSince(f.snapshot.generation(), &changed));
}

TEST_CASE("a snapshot update without changes copies nothing", "[core]") {
  Fixture f(5);
  f.cache.UpdateSnapshot(&f.snapshot);
  const int64_t generation = f.snapshot.generation();
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.cache.LastSnapshotUpdate().nodes_copied == 0);
  CHECK(f.snapshot.generation() == generation);
}

TEST_CASE("snapshot NodeInfos are updated in place", "[core]") {
  Fixture f;
  f.cache.UpdateSnapshot(&f.snapshot);
  const framework::NodeInfo* n1 = f.snapshot.Get("n1");
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  f.cache.AddNode(NodeBuilder("n3").Ptr());
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.snapshot.Get("n1") == n1);
  CHECK(n1->pods().size() == 1);
}

TEST_CASE("a second snapshot catches up from its own generation", "[core]") {
  Fixture f(3);
  f.cache.UpdateSnapshot(&f.snapshot);
  REQUIRE(f.cache.AssumePod(Pod("p", "n1")).ok());
  Snapshot fresh;
  f.cache.UpdateSnapshot(&fresh);
  CHECK(f.cache.LastSnapshotUpdate().nodes_copied == 3);
  CHECK(fresh.nodes().size() == 3);
  CHECK(fresh.Get("n1")->pods().size() == 1);
}

TEST_CASE("a first pod with affinity puts its node into the affinity lists", "[core]") {
  Fixture f;
  f.cache.UpdateSnapshot(&f.snapshot);
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{};
  term.topology_key = api::Intern("kubernetes.io/hostname");
  api::Affinity affinity;
  affinity.pod_anti_affinity.emplace().required.push_back(term);
  REQUIRE(f.cache.AssumePod(MakePodInfo(PodBuilder("p").NodeName("n2").Affinity(affinity).Ptr(), 0))
              .ok());
  f.cache.UpdateSnapshot(&f.snapshot);
  // No other node moves, so the lists change in place.
  CHECK_FALSE(f.cache.LastSnapshotUpdate().lists_rebuilt);
  REQUIRE(f.snapshot.nodes_with_required_anti_affinity_pods().size() == 1);
  CHECK(f.snapshot.nodes_with_required_anti_affinity_pods()[0]->name() == "n2");
  CHECK(f.snapshot.nodes_with_affinity_pods().size() == 1);
}

TEST_CASE("the affinity lists keep node order as nodes gain and lose pods with affinity",
          "[core]") {
  Fixture f(5);
  f.cache.UpdateSnapshot(&f.snapshot);
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{};
  term.topology_key = api::Intern("kubernetes.io/hostname");
  api::Affinity affinity;
  affinity.pod_affinity.emplace().required.push_back(term);
  const auto names = [&] {
    std::vector<std::string> out;
    for (const auto* node : f.snapshot.nodes_with_affinity_pods()) out.push_back(node->name());
    return out;
  };
  // The nodes of `members`, in the snapshot's node order.
  const auto in_node_order = [&](const std::vector<std::string>& members) {
    std::vector<std::string> out;
    for (const auto* node : f.snapshot.nodes()) {
      if (std::find(members.begin(), members.end(), node->name()) != members.end()) {
        out.push_back(node->name());
      }
    }
    return out;
  };
  for (const char* node : {"n4", "n2", "n5"}) {
    REQUIRE(
        f.cache
            .AddPod(MakePodInfo(
                PodBuilder(std::string("p-") + node).NodeName(node).Affinity(affinity).Ptr(), 0))
            .ok());
    f.cache.UpdateSnapshot(&f.snapshot);
  }
  CHECK(names() == in_node_order({"n2", "n4", "n5"}));
  REQUIRE(f.cache.RemovePod("default/p-n4").ok());
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(names() == in_node_order({"n2", "n5"}));
  CHECK(f.snapshot.nodes_with_required_anti_affinity_pods().empty());
}

TEST_CASE("namespace labels reach the snapshot and leave it when removed", "[core]") {
  Fixture f;
  const api::Symbol ns = api::Intern("team-a");
  f.cache.SetNamespace(ns, Labels({{"team", "a"}}));
  f.cache.UpdateSnapshot(&f.snapshot);
  REQUIRE(f.snapshot.NamespaceLabels(ns) != nullptr);
  CHECK(*f.snapshot.NamespaceLabels(ns) == Labels({{"team", "a"}}));
  f.cache.RemoveNamespace(ns);
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.snapshot.NamespaceLabels(ns) == nullptr);
}

TEST_CASE("an updated node keeps its pods and takes the new allocatable", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  f.cache.UpdateNode(NodeBuilder("n1").Capacity({{"cpu", "16"}}).Ptr());
  f.cache.UpdateSnapshot(&f.snapshot);
  CHECK(f.snapshot.Get("n1")->allocatable().Get(api::kCpu) == 16000);
  CHECK(f.snapshot.Get("n1")->pods().size() == 1);
  CHECK(f.cache.NodeCount() == 2);
}

// --- Cluster sums (the Watermark scoring strategy's input) ----------------------------------

// The sums recomputed from scratch over the snapshot's nodes, to compare the incremental ones to.
Cache::ClusterTotals Recomputed(Snapshot& snapshot) {
  Cache::ClusterTotals totals;
  for (const auto* info : snapshot.nodes()) {
    totals.allocatable.Add(info->allocatable());
    totals.requested.Add(info->requested());
  }
  return totals;
}

// Equal as amounts (a subtraction may leave explicit zero entries behind).
void CheckSameAmounts(const api::ResourceList& a, const api::ResourceList& b) {
  for (size_t id = 0; id < std::max(a.size(), b.size()); ++id) {
    const auto resource = static_cast<api::ResourceId>(id);
    INFO(api::ResourceName(resource));
    CHECK(a.Get(resource) == b.Get(resource));
  }
}

void CheckTotals(Fixture& f) {
  f.cache.UpdateSnapshot(&f.snapshot);
  const Cache::ClusterTotals kept = f.cache.Totals();
  const Cache::ClusterTotals scanned = Recomputed(f.snapshot);
  CheckSameAmounts(kept.allocatable, scanned.allocatable);
  CheckSameAmounts(kept.requested, scanned.requested);
  CheckSameAmounts(f.snapshot.cluster_allocatable(), kept.allocatable);
  CheckSameAmounts(f.snapshot.cluster_requested(), kept.requested);
}

TEST_CASE("cluster sums follow every pod and node change without a scan", "[core]") {
  Fixture f(3);
  CHECK(f.cache.Totals().allocatable.Get(api::kCpu) == 24000);
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 0);
  CheckTotals(f);

  REQUIRE(f.cache.AssumePod(Pod("a", "n1", "2")).ok());
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 2000);
  CheckTotals(f);
  // Only the changed node is copied; the sums come along at O(resources).
  CHECK(f.cache.LastSnapshotUpdate().nodes_copied == 1);

  // Confirmed on another node than assumed: moved, not counted twice.
  REQUIRE(f.cache.AddPod(Pod("a", "n2", "2")).ok());
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 2000);
  REQUIRE(f.cache.AddPod(Pod("b", "n3", "3")).ok());
  REQUIRE(f.cache.UpdatePod(Pod("b", "n3", "1")).ok());
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 3000);
  CheckTotals(f);

  // A node grows, then another is deleted while its pod is still bound: the placeholder counts
  // neither its allocatable nor its pods.
  f.cache.UpdateNode(NodeBuilder("n1").Capacity({{"cpu", "16"}, {"nvidia.com/gpu", "4"}}).Ptr());
  CHECK(f.cache.Totals().allocatable.Get(api::kCpu) == 32000);
  f.cache.RemoveNode("n3");
  CHECK(f.cache.Totals().allocatable.Get(api::kCpu) == 24000);
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 2000);
  CheckTotals(f);
  REQUIRE(f.cache.RemovePod("default/b").ok());
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 2000);

  // A forgotten assumed pod gives its room back; a bound one keeps it however long the watch
  // takes.
  REQUIRE(f.cache.AssumePod(Pod("c", "n1", "4")).ok());
  REQUIRE(f.cache.ForgetPod("default/c", "default-c-uid").ok());
  REQUIRE(f.cache.AssumePod(Pod("d", "n2", "1")).ok());
  REQUIRE(f.cache.FinishBinding("default/d", "default-d-uid").ok());
  f.clock.Advance(absl::Minutes(10));
  CHECK(f.cache.Totals().requested.Get(api::kCpu) == 3000);
  CheckTotals(f);
}

}  // namespace
}  // namespace kubesched

namespace kubesched {
namespace {

TEST_CASE("volume objects reach the next snapshot, and a snapshot keeps what it saw", "[core]") {
  util::FakeClock clock{absl::UnixEpoch()};
  cache::Cache cache(&clock);
  framework::Snapshot first;
  cache.UpdateSnapshot(&first);
  CHECK(first.storage().claims.size() == 0);

  auto claim = std::make_shared<api::PersistentVolumeClaim>();
  claim->meta.namespace_name = "ns";
  claim->meta.name = "data";
  cache.SetStorageObject<api::PersistentVolumeClaim>(claim);
  auto sc = std::make_shared<api::StorageClass>();
  sc->meta.name = "fast";
  cache.SetStorageObject<api::StorageClass>(sc);
  framework::Snapshot second;
  cache.UpdateSnapshot(&second);
  CHECK(second.storage().Claim("ns", "data") == claim.get());
  CHECK(second.storage().classes.Find("fast") == sc.get());
  CHECK(first.storage().claims.size() == 0);

  cache.RemoveStorageObject(*claim);
  cache.UpdateSnapshot(&first);
  CHECK(first.storage().Claim("ns", "data") == nullptr);
  CHECK(second.storage().Claim("ns", "data") == claim.get());
}

TEST_CASE("volume attachments reach the snapshot by node as well as by name", "[core]") {
  util::FakeClock clock{absl::UnixEpoch()};
  cache::Cache cache(&clock);
  auto attachment = std::make_shared<api::VolumeAttachment>();
  attachment->meta.name = "va";
  attachment->node_name = "n";
  cache.SetStorageObject<api::VolumeAttachment>(attachment);
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  CHECK(snapshot.storage().attachments.Find("va") == attachment.get());
  const framework::AttachmentList* on_node = snapshot.storage().attachments_by_node.Find("n");
  REQUIRE(on_node != nullptr);
  CHECK(on_node->size() == 1);

  cache.RemoveStorageObject(*attachment);
  cache.UpdateSnapshot(&snapshot);
  CHECK(snapshot.storage().attachments.Find("va") == nullptr);
  CHECK(snapshot.storage().attachments_by_node.Find("n") == nullptr);
}

api::NodeMetrics Sample(const std::string& node, absl::Time timestamp, int64_t milli_cpu) {
  api::NodeMetrics metrics;
  metrics.meta.name = node;
  metrics.timestamp = timestamp;
  metrics.usage.Set(api::kCpu, milli_cpu);
  return metrics;
}

// The load MostAvailable sees on `node`: the sample's time, and the cpu placed since it.
struct Load {
  absl::Time sampled;
  int64_t milli_cpu_since;
};

Load LoadOf(Fixture& f, const std::string& node) {
  f.cache.UpdateSnapshot(&f.snapshot);
  const framework::NodeInfo* info = f.snapshot.Get(node);
  REQUIRE(info != nullptr);
  REQUIRE(info->metrics().has_value());
  return {info->metrics()->timestamp, info->virtual_requested_since_sample().Get(api::kCpu)};
}

TEST_CASE("a metrics sample from a node clock ahead of ours counts as taken now", "[core]") {
  Fixture f;
  f.clock.Set(absl::FromUnixSeconds(1000));
  f.cache.SetNodeMetrics(Sample("n1", f.clock.Now() + absl::Minutes(5), 500));
  CHECK(LoadOf(f, "n1").sampled == f.clock.Now());

  // Pods placed after it arrives are load the sample has not measured.
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(f.cache.AssumePod(Pod("p1", "n1")).ok());
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(f.cache.AssumePod(Pod("p2", "n1")).ok());
  CHECK(LoadOf(f, "n1").milli_cpu_since == 2000);

  // The node's next sample, still ahead, measured them: it replaces the first, taken now.
  f.clock.Advance(absl::Seconds(1));
  f.cache.SetNodeMetrics(Sample("n1", f.clock.Now() + absl::Minutes(5), 2500));
  CHECK(LoadOf(f, "n1").sampled == f.clock.Now());
  CHECK(LoadOf(f, "n1").milli_cpu_since == 0);
}

TEST_CASE("a metrics sample from the past keeps its own time", "[core]") {
  Fixture f;
  f.clock.Set(absl::FromUnixSeconds(1000));
  REQUIRE(f.cache.AssumePod(Pod("p1", "n1")).ok());
  f.clock.Advance(absl::Seconds(30));
  f.cache.SetNodeMetrics(Sample("n1", absl::FromUnixSeconds(1010), 0));
  CHECK(LoadOf(f, "n1").sampled == absl::FromUnixSeconds(1010));
  CHECK(LoadOf(f, "n1").milli_cpu_since == 0);  // p1 was placed before the sample
}

TEST_CASE("a pod marked terminating keeps its room until it is removed", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  const absl::Time since = absl::FromUnixSeconds(100);
  REQUIRE(f.cache.SetTerminating("default/p", "default-p-uid", since).ok());
  CHECK(f.RequestedCpu("n1") == 1000);
  CHECK(f.cache.GetPod("default/p")->get().meta.deletion_timestamp == since);
  REQUIRE(f.snapshot.Get("n1")->pods().size() == 1);
  CHECK(f.snapshot.Get("n1")->pods()[0]->get().meta.deletion_timestamp == since);

  REQUIRE(f.cache.SetTerminating("default/p", "default-p-uid", std::nullopt).ok());
  CHECK_FALSE(f.cache.GetPod("default/p")->get().meta.deletion_timestamp.has_value());
  CHECK(f.RequestedCpu("n1") == 1000);
}

TEST_CASE("only a bound pod with the given uid can be marked terminating", "[core]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("p", "n1")).ok());
  REQUIRE(f.cache.AssumePod(Pod("q", "n1")).ok());
  const absl::Time since = absl::FromUnixSeconds(100);
  CHECK(absl::IsNotFound(f.cache.SetTerminating("default/p", "other-uid", since)));
  CHECK(absl::IsNotFound(f.cache.SetTerminating("default/q", "default-q-uid", since)));
  CHECK(absl::IsNotFound(f.cache.SetTerminating("default/gone", "default-gone-uid", since)));
  CHECK_FALSE(f.cache.GetPod("default/p")->get().meta.deletion_timestamp.has_value());
}

}  // namespace
}  // namespace kubesched
