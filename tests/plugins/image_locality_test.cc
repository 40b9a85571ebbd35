#include "plugins/image_locality/image_locality.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/framework/snapshot.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched::plugins {
namespace {

using plugin_testing::Unwrap;
using testing::NodeBuilder;
using testing::PodBuilder;

constexpr int64_t kMiB = ImageLocality::kMiB;

// A snapshot of nodes holding the given images (name -> size), with the image counts the cache
// would keep.
struct ImageCluster {
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder{&snapshot};
  absl::flat_hash_map<api::Symbol, int32_t> counts;
  int64_t generation = 0;

  void Node(const std::string& name, const std::vector<std::pair<std::string, int64_t>>& images) {
    auto node = NodeBuilder(name).Build();
    for (const auto& [image, size] : images) {
      node.status.images.push_back({{image}, size});
      ++counts[api::Intern(image)];
    }
    builder.Upsert(name)->SetNode(std::make_shared<const api::Node>(node), ++generation);
  }
  const framework::Snapshot& Build() {
    builder.RebuildLists();
    builder.SetImageNodeCounts(
        std::make_shared<const absl::flat_hash_map<api::Symbol, int32_t>>(counts));
    return snapshot;
  }
};

api::Pod WithImages(const std::vector<std::string>& images) {
  api::Pod pod = PodBuilder("p").Build();
  pod.spec.containers.clear();
  for (const std::string& image : images)
    pod.spec.containers.push_back({.name = "c", .image = image});
  return pod;
}

std::map<std::string, int64_t> Scores(const framework::Snapshot& snapshot, const api::Pod& pod) {
  auto plugin = Unwrap<ImageLocality>(NewImageLocality({}, {}));
  auto info = framework::MakePodInfo(std::make_shared<const api::Pod>(pod), 0);
  auto scores = plugin_testing::ScoreAll(*plugin, snapshot, *info);
  REQUIRE(scores.has_value());
  return *scores;
}

TEST_CASE("an image name without a tag is the latest", "[plugins][image_locality]") {
  CHECK(ImageLocality::NormalizedImageName("nginx") == "nginx:latest");
  CHECK(ImageLocality::NormalizedImageName("nginx:1.25") == "nginx:1.25");
  CHECK(ImageLocality::NormalizedImageName("registry:5000/nginx") == "registry:5000/nginx:latest");
  CHECK(ImageLocality::NormalizedImageName("registry:5000/nginx:1") == "registry:5000/nginx:1");
}

TEST_CASE("a node with the pod's image scores by its size and spread",
          "[plugins][image_locality]") {
  ImageCluster cluster;
  cluster.Node("has", {{"app:1", 500 * kMiB}});
  cluster.Node("lacks", {{"other:1", 500 * kMiB}});
  const auto scores = Scores(cluster.Build(), WithImages({"app:1"}));
  // 500 MiB held by one node of two: 250 MiB, scaled between 23 MiB and 1000 MiB.
  CHECK(scores.at("has") == 100 * (250 * kMiB - 23 * kMiB) / (1000 * kMiB - 23 * kMiB));
  CHECK(scores.at("lacks") == 0);
}

TEST_CASE("an image on every node scores by its whole size, capped per container",
          "[plugins][image_locality]") {
  ImageCluster cluster;
  cluster.Node("a", {{"huge:latest", 3000 * kMiB}});
  cluster.Node("b", {{"huge:latest", 3000 * kMiB}});
  const auto scores = Scores(cluster.Build(), WithImages({"huge"}));
  CHECK(scores.at("a") == 100);
  CHECK(scores.at("b") == 100);
}

TEST_CASE("without image data anywhere the plugin skips", "[plugins][image_locality]") {
  ImageCluster cluster;
  cluster.Node("a", {});
  auto plugin = Unwrap<ImageLocality>(NewImageLocality({}, {}));
  auto info = framework::MakePodInfo(std::make_shared<const api::Pod>(WithImages({"x"})), 0);
  CHECK_FALSE(plugin_testing::ScoreAll(*plugin, cluster.Build(), *info).has_value());
}

}  // namespace
}  // namespace kubesched::plugins
