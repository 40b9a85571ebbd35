#include "plugins/image_locality/image_locality.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {
namespace {

// One container image of the pod, resolved once per pod.
struct PodImage {
  api::Symbol name = api::kNoSuchSymbol;  // kNoSuchSymbol: no node has ever reported it
  double spread = 0;                      // nodes holding it / all nodes
};

struct ImageLocalityState : framework::StateData {
  std::vector<PodImage> images;  // only images some node holds
  int64_t containers = 0;        // init and regular containers

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<ImageLocalityState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey("PreScore/ImageLocality");
  return key;
}

int64_t Priority(int64_t sum, int64_t containers) {
  const int64_t max_threshold = ImageLocality::kMaxContainerThreshold * containers;
  sum = sum < ImageLocality::kMinThreshold ? ImageLocality::kMinThreshold
                                           : std::min(sum, max_threshold);
  return framework::kMaxNodeScore * (sum - ImageLocality::kMinThreshold) /
         (max_threshold - ImageLocality::kMinThreshold);
}

const framework::NodeImage* FindImage(const std::vector<framework::NodeImage>& images,
                                      api::Symbol name) {
  const auto it = std::lower_bound(
      images.begin(), images.end(), name,
      [](const framework::NodeImage& image, api::Symbol symbol) { return image.name < symbol; });
  return it != images.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

std::string_view ImageLocality::Name() const { return names::kImageLocality; }

std::string ImageLocality::NormalizedImageName(std::string_view image) {
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  const bool has_tag =
      colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  std::string normalized(image);
  if (!has_tag) normalized += ":latest";
  return normalized;
}

framework::Status ImageLocality::PreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot,
    absl::Span<const framework::NodeInfo* const> /*feasible*/) {
  const auto& counts = snapshot.image_node_counts();
  if (counts.empty()) return framework::Status::Skip();
  auto data = std::make_unique<ImageLocalityState>();
  const api::PodSpec& spec = pod.get().spec;
  const double total_nodes = static_cast<double>(snapshot.nodes().size());
  for (const auto* containers : {&spec.init_containers, &spec.containers}) {
    for (const api::Container& container : *containers) {
      ++data->containers;
      const api::Symbol name = api::FindSymbol(NormalizedImageName(container.image));
      const auto count = counts.find(name);
      if (count == counts.end() || total_nodes == 0) continue;
      data->images.push_back({name, static_cast<double>(count->second) / total_nodes});
    }
  }
  state.Write(StateKey(), std::move(data));
  return framework::Status::Success();
}

int64_t ImageLocality::Score(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                             const framework::NodeInfo& node) const {
  const auto* data = state.Read<ImageLocalityState>(StateKey());
  if (data == nullptr) return 0;
  int64_t sum = 0;
  for (const PodImage& image : data->images) {
    const framework::NodeImage* held = FindImage(node.images(), image.name);
    if (held != nullptr) {
      sum += static_cast<int64_t>(static_cast<double>(held->size_bytes) * image.spread);
    }
  }
  return Priority(sum, data->containers);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewImageLocality(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kImageLocality); !status.ok()) return status;
  return std::make_unique<ImageLocality>();
}

}  // namespace kubesched::plugins
