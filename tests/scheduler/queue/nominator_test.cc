// The nominator of the scheduling queue: pods nominated to nodes by preemption, how updates of the
// pods move their nominations, and why the updates of a pod being scheduled or bound do not.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

#include "scheduler/queue/scheduling_queue.h"
#include "tests/scheduler/queue/queue_fixture.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::MakePodInfo;
using framework::PodInfoPtr;
using testing::PodBuilder;
using testing::QueuedPod;

// The pod as the watch shows it once the patch of its nominatedNodeName has landed.
PodInfoPtr ShownNominatedTo(const std::string& name, const std::string& node) {
  api::Pod pod = PodBuilder(name).Build();
  pod.status.nominated_node_name = node;
  return MakePodInfo(std::make_shared<const api::Pod>(std::move(pod)), 0);
}

struct Fixture : testing::QueueFixture {
  // Adds the pod `name`, nominates it to `node` and pops it: its preemption is behind it, and
  // its next attempt is under way.
  queue::QueuedPodInfo PopNominated(const std::string& name, const std::string& node) {
    queue.Add(QueuedPod(name));
    queue.AddNominatedPod(QueuedPod(name), node);
    auto popped = queue.Pop();
    REQUIRE(popped.has_value());
    return *std::move(popped);
  }
};

TEST_CASE("Delete drops the pod's nomination", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  f.queue.AddNominatedPod(QueuedPod("p"), "n1");
  f.queue.Delete("default/p");
  CHECK(f.queue.NominatedPodsForNode("n1").empty());
}

TEST_CASE("nominated pods are listed per node and follow renomination", "[core]") {
  Fixture f;
  f.queue.AddNominatedPod(QueuedPod("a"), "n1");
  f.queue.AddNominatedPod(QueuedPod("b"), "n1");
  f.queue.AddNominatedPod(QueuedPod("a"), "n2");
  REQUIRE(f.queue.NominatedPodsForNode("n1").size() == 1);
  CHECK(f.queue.NominatedPodsForNode("n1")[0]->key == "default/b");
  CHECK(f.queue.NominatedPodsForNode("n2").size() == 1);
  f.queue.DeleteNominatedPod("default/b");
  CHECK(f.queue.NominatedPodsForNode("n1").empty());
}

TEST_CASE("a pod added with status.nominatedNodeName is nominated there", "[core]") {
  Fixture f;
  api::Pod pod = PodBuilder("p").Build();
  pod.status.nominated_node_name = "n3";
  f.queue.Add(MakePodInfo(std::make_shared<const api::Pod>(pod), 0));
  CHECK(f.queue.NominatedPodsForNode("n3").size() == 1);
}

TEST_CASE("an update without a nominated node keeps the nomination in memory", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  f.queue.AddNominatedPod(QueuedPod("p"), "n1");
  f.queue.Update(QueuedPod("p", 5));
  REQUIRE(f.queue.NominatedPodsForNode("n1").size() == 1);
  CHECK(f.queue.NominatedPodsForNode("n1")[0]->priority == 5);
}

TEST_CASE("a pod re-created under the name of a nominated one does not inherit its nomination",
          "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  f.queue.AddNominatedPod(QueuedPod("p"), "n1");
  // A relist shows the successor as an update of the same key.
  f.queue.Update(MakePodInfo(PodBuilder("p").Uid("successor").Ptr(), 0));
  CHECK(f.queue.NominatedPodsForNode("n1").empty());
  CHECK(f.queue.NominatedNodeOf("default/p").empty());
}

TEST_CASE("an update seen while the pod is being scheduled leaves its nomination to the cycle",
          "[core]") {
  Fixture f;
  f.PopNominated("p", "n1");
  // The cycle assumes the pod on n1: it holds its room in the cache and gives up the nomination.
  f.queue.DeleteNominatedPod("default/p");
  // Only now does the watch show the nominatedNodeName patched after its earlier preemption.
  f.queue.Update(ShownNominatedTo("p", "n1"));
  CHECK(f.queue.NominatedNodeOf("default/p").empty());
  CHECK(f.queue.NominatedPodsForNode("n1").empty());
}

TEST_CASE("a bound pod's late updates neither queue nor nominate it until the watch shows it bound",
          "[core]") {
  Fixture f;
  const queue::QueuedPodInfo popped = f.PopNominated("p", "n1");
  f.queue.Bound("default/p", popped.pod_info->get().meta.uid);
  CHECK(f.queue.NominatedNodeOf("default/p").empty());
  // Updates already on their way when the bind succeeded still show the pod pending.
  f.queue.Update(ShownNominatedTo("p", "n1"));
  f.queue.Add(ShownNominatedTo("p", "n1"));
  CHECK(f.queue.PendingPods().empty());
  CHECK(f.queue.NominatedNodeOf("default/p").empty());
  // The watch shows the bind; a pod re-created under the name later is a new pending pod.
  f.queue.Delete("default/p");
  f.queue.Add(MakePodInfo(PodBuilder("p").Uid("successor").Ptr(), 0));
  CHECK(f.queue.ActiveCount() == 1);
}

TEST_CASE("a pod re-created under the name of a bound one the watch never showed is queued",
          "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto popped = f.queue.Pop();
  REQUIRE(popped.has_value());
  f.queue.Bound("default/p", popped->pod_info->get().meta.uid);
  // A relist shows the successor as an update of the same key.
  f.queue.Update(MakePodInfo(PodBuilder("p").Uid("successor").Ptr(), 0));
  const auto pending = f.queue.PendingPods();
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].pod_info->get().meta.uid == "successor");
}

}  // namespace
}  // namespace kubesched
