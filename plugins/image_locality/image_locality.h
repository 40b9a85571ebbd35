#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's ImageLocality: favours nodes that already hold the pod's container images, weighted
// by how widely each image is spread (an image on every node says little about any one of them):
//
//   sum   = Σ over init and regular containers whose image the node holds:
//             int64(size_bytes × nodes_with_image / total_nodes)
//   sum   = clamp(sum, 23 MiB, 1000 MiB × number of containers)
//   score = 100 × (sum − 23 MiB) / (1000 MiB × containers − 23 MiB)
//
// An image name without a tag gets ":latest" (node image names are taken as reported). PreScore
// resolves the pod's images and their spread once per pod; it says Skip when no node reports any
// image, so clusters without image data pay nothing per node. Score looks names up in the node's
// sorted image list, without allocating. Score is safe to call concurrently.
class ImageLocality final : public framework::PreScorePlugin, public framework::ScorePlugin {
 public:
  static constexpr int64_t kMiB = 1024 * 1024;
  static constexpr int64_t kMinThreshold = 23 * kMiB;
  static constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

  std::string_view Name() const override;
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // 0 without PreScore state.
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;

  // "nginx" -> "nginx:latest"; a name with a tag (a ':' after the last '/') is kept.
  static std::string NormalizedImageName(std::string_view image);
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewImageLocality(const config::PluginArgs& args,
                                                                    const PluginHandle& handle);

}  // namespace kubesched::plugins
