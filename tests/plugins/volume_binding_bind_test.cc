// VolumeBinding's binding cycle on a real cache: Reserve assumes the chosen PVs and provisioning
// decisions (so a second pod never gets the same PV), Unreserve forgets them, and PreBind writes
// through the VolumeBinder and waits on the cache's informer view until the claims are bound.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "plugins/volume_binding/volume_binding.h"
#include "tests/plugins/plugin_fixture.h"
#include "tests/plugins/volume_fixture.h"
#include "tests/testing/wait.h"

namespace kubesched {
namespace {

using framework::CycleState;
using plugin_testing::Claim;
using plugin_testing::Classes;
using plugin_testing::DecodeYaml;
using plugin_testing::Node;
using plugin_testing::Pod;
using plugin_testing::Volume;
using plugin_testing::VolumeWorld;
using plugins::VolumeBinding;

// Records the writes; answers with the object written (one resourceVersion later), and, when it
// `binds_at_once`, with the claim bound too.
class FakeVolumeBinder : public framework::VolumeBinder {
 public:
  explicit FakeVolumeBinder(bool binds_at_once = false) : binds_at_once_(binds_at_once) {}

  absl::StatusOr<framework::VolumeWriteResult> BindVolume(
      const api::PersistentVolume& volume) override {
    absl::MutexLock lock(&mu_);
    if (!fail_with_.ok()) return fail_with_;
    writes_.push_back("pv " + volume.meta.name + " -> " + volume.claim_ref->name);
    auto stored = std::make_shared<api::PersistentVolume>(volume);
    stored->meta.resource_version = Later(volume.meta.resource_version);
    framework::VolumeWriteResult result{stored, nullptr};
    if (binds_at_once_) result.claim = BoundClaim(volume.claim_ref->name, volume.meta.name);
    return result;
  }
  absl::StatusOr<framework::VolumeWriteResult> SelectNode(
      const api::PersistentVolumeClaim& claim) override {
    absl::MutexLock lock(&mu_);
    writes_.push_back("claim " + claim.meta.name + " -> " +
                      claim.meta.annotations.at(api::kSelectedNodeAnnotation));
    auto stored = std::make_shared<api::PersistentVolumeClaim>(claim);
    stored->meta.resource_version = Later(claim.meta.resource_version);
    return framework::VolumeWriteResult{nullptr, stored};
  }
  bool BindsAtOnce() const override { return binds_at_once_; }

  std::vector<std::string> writes() const {
    absl::MutexLock lock(&mu_);
    return writes_;
  }
  void FailWith(absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_with_ = std::move(status);
  }

 private:
  static std::string Later(const std::string& version) {
    return std::to_string(version.empty() ? 1 : std::stoll(version) + 1);
  }
  static std::shared_ptr<const api::PersistentVolumeClaim> BoundClaim(const std::string& name,
                                                                      const std::string& volume) {
    auto claim = std::make_shared<api::PersistentVolumeClaim>();
    claim->meta.name = name;
    claim->meta.namespace_name = "default";
    claim->meta.resource_version = "1000";
    claim->meta.annotations[api::kBindCompletedAnnotation] = "yes";
    claim->volume_name = volume;
    return claim;
  }

  const bool binds_at_once_;
  mutable absl::Mutex mu_;
  std::vector<std::string> writes_ ABSL_GUARDED_BY(mu_);
  absl::Status fail_with_ ABSL_GUARDED_BY(mu_);
};

// A cluster with one node and one local PV that fits both claims c1 and c2.
std::string OnePvTwoClaims() {
  return Node("a") + Classes() + Volume("pv-1", "wait", "5Gi", "a") + Claim("c1", "wait") +
         Claim("c2", "wait");
}

struct Cycle {
  std::unique_ptr<CycleState> state = std::make_unique<CycleState>();
  framework::PodInfoPtr pod;
};

// PreFilter, Filter on `node` and, when both pass, Reserve there; returns the Filter verdict.
std::vector<std::string> ScheduleOn(VolumeBinding& plugin, VolumeWorld& world, Cycle& cycle,
                                    const std::string& node) {
  const framework::Snapshot& snapshot = world.Snapshot();
  auto outcome = plugin.PreFilter(*cycle.state, *cycle.pod, snapshot);
  REQUIRE(outcome.status.IsSuccess());
  const framework::Status filtered = plugin.Filter(*cycle.state, *cycle.pod, *snapshot.Get(node));
  if (filtered.IsSuccess()) REQUIRE(plugin.Reserve(*cycle.state, *cycle.pod, node).IsSuccess());
  return plugin_testing::Verdict(filtered);
}

const api::PersistentVolume* SnapshotVolume(VolumeWorld& world, const std::string& name) {
  return world.Snapshot().storage().volumes.Find(name);
}

TEST_CASE("a PV reserved for one pod is not available to the next", "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), nullptr);
  Cycle first{.pod = Pod("p1", {"c1"})};
  Cycle second{.pod = Pod("p2", {"c2"})};
  CHECK(ScheduleOn(plugin, world, first, "a") == std::vector<std::string>{"pass"});
  REQUIRE(SnapshotVolume(world, "pv-1")->claim_ref.has_value());
  CHECK(SnapshotVolume(world, "pv-1")->claim_ref->name == "c1");
  CHECK(ScheduleOn(plugin, world, second, "a") ==
        std::vector<std::string>{"node(s) didn't find available persistent volumes to bind"});
}

TEST_CASE("Unreserve gives a reserved PV back", "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), nullptr);
  Cycle first{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, first, "a");
  plugin.Unreserve(*first.state, *first.pod, "a");
  plugin.Unreserve(*first.state, *first.pod, "a");  // idempotent
  CHECK_FALSE(SnapshotVolume(world, "pv-1")->claim_ref.has_value());
  Cycle second{.pod = Pod("p2", {"c2"})};
  CHECK(ScheduleOn(plugin, world, second, "a") == std::vector<std::string>{"pass"});
}

TEST_CASE("Reserve assumes the selected node of a claim to provision",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a", "z1") + Node("b", "z2") + Classes() + Claim("c", "dynamic"));
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), nullptr);
  Cycle cycle{.pod = Pod("p", {"c"})};
  ScheduleOn(plugin, world, cycle, "b");
  const auto selected = [&] {
    const auto* claim = world.Snapshot().storage().Claim("default", "c");
    auto it = claim->meta.annotations.find(api::kSelectedNodeAnnotation);
    return it == claim->meta.annotations.end() ? std::string("none") : it->second;
  };
  CHECK(selected() == "b");
  plugin.Unreserve(*cycle.state, *cycle.pod, "b");
  CHECK(selected() == "none");
}

TEST_CASE("Reserve takes the smallest PV that fits", "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Volume("big", "wait", "100Gi", "a") +
                    Volume("small", "wait", "10Gi", "a") + Volume("any-size", "wait", "20Gi") +
                    Claim("c", "wait", "5Gi"));
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), nullptr);
  Cycle cycle{.pod = Pod("p", {"c"})};
  ScheduleOn(plugin, world, cycle, "a");
  CHECK(SnapshotVolume(world, "small")->claim_ref.has_value());
  CHECK_FALSE(SnapshotVolume(world, "big")->claim_ref.has_value());
  CHECK_FALSE(SnapshotVolume(world, "any-size")->claim_ref.has_value());
}

TEST_CASE("PreBind writes the claimRef and returns once the informers show the claim bound",
          "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  FakeVolumeBinder binder;
  VolumeBinding plugin(absl::Seconds(30), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, cycle, "a");
  // What the PV controller writes, decoded here: Catch's checks belong to this thread.
  auto bound = DecodeYaml(Volume("pv-1", "wait", "5Gi", "a",
                                 "claimRef: {namespace: default, name: c1, uid: c1-uid}", "Bound") +
                          Claim("c1", "wait", "1Gi", "volumeName: pv-1",
                                "annotations: {pv.kubernetes.io/bind-completed: 'yes'}"));
  std::thread controller([&] {
    testing::WaitUntil([&] { return !binder.writes().empty(); });
    world.Deliver(std::move(bound.objects));
  });
  const framework::Status status = plugin.PreBind(*cycle.state, *cycle.pod, "a");
  controller.join();
  INFO(status.Message());
  CHECK(status.IsSuccess());
  CHECK(binder.writes() == std::vector<std::string>{"pv pv-1 -> c1"});
}

TEST_CASE("PreBind gives up after the bind timeout", "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  FakeVolumeBinder binder;
  VolumeBinding plugin(absl::Milliseconds(50), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, cycle, "a");
  const framework::Status status = plugin.PreBind(*cycle.state, *cycle.pod, "a");
  CHECK(status.code() == framework::Code::kError);
  CHECK(status.Message() == "binding volumes: timed out waiting for the condition");
}

TEST_CASE("PreBind fails when the provisioner drops the selected node",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a", "z2") + Classes() + Claim("c", "dynamic"));
  FakeVolumeBinder binder;
  VolumeBinding plugin(absl::Seconds(30), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p", {"c"})};
  ScheduleOn(plugin, world, cycle, "a");
  // The provisioner's answer: the annotation gone (a newer resourceVersion than the write's).
  auto given_up = DecodeYaml(Claim("c", "dynamic", "1Gi", "", "resourceVersion: '900'"));
  std::thread provisioner([&] {
    testing::WaitUntil([&] { return !binder.writes().empty(); });
    world.Deliver(std::move(given_up.objects));
  });
  const framework::Status status = plugin.PreBind(*cycle.state, *cycle.pod, "a");
  provisioner.join();
  CHECK(binder.writes() == std::vector<std::string>{"claim c -> a"});
  CHECK(status.Message() == "binding volumes: provisioning failed for PVC \"c\"");
}

TEST_CASE("PreBind does not wait when the writes bind at once", "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  FakeVolumeBinder binder(/*binds_at_once=*/true);
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, cycle, "a");
  CHECK(plugin.PreBind(*cycle.state, *cycle.pod, "a").IsSuccess());
}

TEST_CASE("a refused write fails PreBind with the server's reason", "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  FakeVolumeBinder binder;
  binder.FailWith(absl::AbortedError("the object has been modified"));
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, cycle, "a");
  CHECK(plugin.PreBind(*cycle.state, *cycle.pod, "a").Message() ==
        "binding volumes: the object has been modified");
}

TEST_CASE("a shutdown ends PreBind's wait", "[plugins][volume_binding]") {
  VolumeWorld world(OnePvTwoClaims());
  FakeVolumeBinder binder;
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, cycle, "a");
  std::thread shutdown([&] {
    testing::WaitUntil([&] { return !binder.writes().empty(); });
    world.cache().StopStorageWaits();
  });
  const framework::Status status = plugin.PreBind(*cycle.state, *cycle.pod, "a");
  shutdown.join();
  CHECK(status.Message() == "binding volumes: the scheduler is shutting down");
}

TEST_CASE("a pod whose claims are all bound has nothing to reserve or bind",
          "[plugins][volume_binding]") {
  VolumeWorld world(Node("a") + Classes() + Volume("pv-1", "wait", "5Gi", "a", "", "Bound") +
                    Claim("c1", "wait", "1Gi", "volumeName: pv-1",
                          "annotations: {pv.kubernetes.io/bind-completed: 'yes'}"));
  FakeVolumeBinder binder;
  VolumeBinding plugin(absl::Seconds(600), &world.cache(), &binder);
  Cycle cycle{.pod = Pod("p1", {"c1"})};
  ScheduleOn(plugin, world, cycle, "a");
  CHECK(plugin.PreBind(*cycle.state, *cycle.pod, "a").IsSuccess());
  CHECK(binder.writes().empty());
  CHECK(world.cache().AssumedVolumeCount() == 0);
}

}  // namespace
}  // namespace kubesched
