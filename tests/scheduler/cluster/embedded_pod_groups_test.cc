// The embedded cluster keeps PodGroups like the API server: replayed to a new watcher, and a status
// write replaces the stored group and reaches every watcher as MODIFIED.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/util/log.h"

namespace kubesched::cluster {
namespace {

class PodGroupWatcher : public client::ClusterEventHandler {
 public:
  void OnPod(const client::Event<api::Pod>&) override {}
  void OnNode(const client::Event<api::Node>&) override {}
  void OnNamespace(const client::Event<api::Namespace>&) override {}
  void OnPriorityClass(const client::Event<api::PriorityClass>&) override {}
  void OnPodGroup(const client::Event<api::PodGroup>& e) override {
    const char* type = e.type == client::EventType::kAdded ? "ADDED" : "MODIFIED";
    events.push_back(absl::StrCat(type, " ", e.object->Key(), " phase=", e.object->status.phase));
  }
  std::vector<std::string> events;
};

EmbeddedCluster& WithTrain(EmbeddedCluster& cluster) {
  auto decoded = api::DecodeObjects(R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1",
      "kind": "PodGroup", "metadata": {"name": "train", "namespace": "ml"},
      "spec": {"minMember": 2}})",
                                    "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->objects.size() == 1);
  REQUIRE(cluster.Create(decoded->objects[0]).ok());
  return cluster;
}

TEST_CASE("a PodGroup is replayed to a new watcher and refused twice", "[cluster]") {
  EmbeddedCluster cluster;
  WithTrain(cluster);
  PodGroupWatcher watcher;
  cluster.Watch(&watcher);
  cluster.DeliverEvents();
  CHECK(watcher.events == std::vector<std::string>{"ADDED ml/train phase="});
  auto again = api::DecodeObjects(
      R"({"kind": "PodGroup", "metadata": {"name": "train", "namespace": "ml"}})", "test");
  REQUIRE(again.ok());
  CHECK(absl::IsAlreadyExists(cluster.Create(again->objects[0])));
}

TEST_CASE("a PodGroup status write replaces the status and is delivered as MODIFIED", "[cluster]") {
  EmbeddedCluster cluster;
  WithTrain(cluster);
  PodGroupWatcher watcher;
  cluster.Watch(&watcher);
  cluster.DeliverEvents();
  const std::string before = cluster.GetPodGroup("ml/train")->meta.resource_version;

  api::PodGroupStatus status;
  status.phase = "Scheduled";
  status.scheduled = 2;
  client::PodGroupStatusWriter& writer = cluster;
  writer.WriteStatus("ml", "train", status);
  writer.WriteStatus("ml", "train", status);  // unchanged: no second event
  cluster.DeliverEvents();

  const auto stored = cluster.GetPodGroup("ml/train");
  CHECK(stored->status == status);
  CHECK(stored->min_member == 2);
  CHECK(stored->meta.resource_version != before);
  CHECK(watcher.events ==
        std::vector<std::string>{"ADDED ml/train phase=", "MODIFIED ml/train phase=Scheduled"});
}

TEST_CASE("a status write for a PodGroup that is gone is logged, not fatal", "[cluster]") {
  std::vector<std::string> warnings;
  util::SetLogSinkForTesting([&](std::string_view level, std::string_view message) {
    if (level == "W") warnings.emplace_back(message);
  });
  EmbeddedCluster cluster;
  api::PodGroupStatus running;
  running.phase = "Running";
  cluster.WriteStatus("ml", "gone", running);
  util::SetLogSinkForTesting(nullptr);
  CHECK(warnings == std::vector<std::string>{"writing the status of PodGroup ml/gone: not found"});
  CHECK(cluster.GetPodGroup("ml/gone") == nullptr);
  CHECK_FALSE(cluster.HasPendingEvents());
}

}  // namespace
}  // namespace kubesched::cluster
