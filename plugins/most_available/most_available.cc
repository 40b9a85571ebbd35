#include "plugins/most_available/most_available.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/helper/resource_weights.h"
#include "plugins/names.h"
#include "scheduler/framework/virtual_request.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::Status;

// Bound on remembered warned pods; past it the set is cleared (a pod may be warned again).
constexpr size_t kMaxWarnedPods = 10000;

struct Entry {
  api::ResourceId id;
  int64_t weight;
  int64_t virtual_request;  // the incoming pod's
};

struct MostAvailableState final : framework::StateData {
  absl::InlinedVector<Entry, 8> entries;
  // Samples taken before this instant are stale.
  absl::Time fresh_after = absl::InfinitePast();
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<MostAvailableState>(*this);
  }
};

CycleState::Key StateKey() {
  static const CycleState::Key key = CycleState::AllocateKey(names::kMostAvailable);
  return key;
}

// VirtualAvailable_r of `node`: from the sample when it is fresh, else allocatable − requested.
int64_t VirtualAvailable(const framework::NodeInfo& node, api::ResourceId id, bool fresh) {
  const int64_t allocatable = node.allocatable().Get(id);
  if (!fresh) return allocatable - node.requested().Get(id);
  return allocatable - node.metrics()->usage.Get(id) -
         node.virtual_requested_since_sample().Get(id);
}

int64_t ScoreNode(const MostAvailableState& data, const framework::NodeInfo& node) {
  const bool fresh = node.metrics().has_value() && node.metrics()->timestamp >= data.fresh_after;
  double weighted = 0;
  int64_t weight_sum = 0;
  for (const Entry& e : data.entries) {
    const int64_t allocatable = node.allocatable().Get(e.id);
    if (allocatable <= 0) continue;  // the node has none: left out, as NodeResourcesFit does
    const int64_t left =
        std::max<int64_t>(0, VirtualAvailable(node, e.id, fresh) - e.virtual_request);
    const double fraction =
        std::min(1.0, static_cast<double>(left) / static_cast<double>(allocatable));
    weighted += static_cast<double>(e.weight) * fraction;
    weight_sum += e.weight;
  }
  if (weight_sum == 0) return 0;
  // Rounded, not truncated: 0.6 must not score 59 through binary fractions.
  return std::lround(static_cast<double>(framework::kMaxNodeScore) * weighted /
                     static_cast<double>(weight_sum));
}

}  // namespace

MostAvailable::MostAvailable(const config::MostAvailableArgs& args)
    : poll_interval_(args.metrics_poll_interval), staleness_limit_(args.metrics_staleness_limit) {
  auto resources = args.resources;
  if (resources.empty()) resources = helper::DefaultResourceWeights();
  for (const config::ResourceWeight& r : resources) {
    resources_.push_back({api::InternResource(r.name), r.weight});
  }
}

std::string_view MostAvailable::Name() const { return names::kMostAvailable; }

void MostAvailable::WarnOnce(const framework::PodInfo& pod, const absl::Status& error) {
  const std::string& id = pod.get().meta.uid.empty() ? pod.key : pod.get().meta.uid;
  {
    absl::MutexLock lock(&warned_mu_);
    if (warned_.size() >= kMaxWarnedPods) warned_.clear();
    if (!warned_.insert(id).second) return;
  }
  util::LogWarning(absl::StrCat("MostAvailable: pod ", pod.key, ": annotation ",
                                util::Absl(framework::kVirtualRequestAnnotation),
                                " ignored, scoring by the pod's requests: ", error.message()),
                   {util::KObjFromKey("pod", pod.key)});
}

Status MostAvailable::PreScore(CycleState& state, const framework::PodInfo& pod,
                               const framework::Snapshot& snapshot,
                               absl::Span<const framework::NodeInfo* const> /*feasible*/) {
  const framework::VirtualRequest request = framework::VirtualRequestOf(pod);
  if (!request.annotation_error.ok()) WarnOnce(pod, request.annotation_error);
  auto data = std::make_unique<MostAvailableState>();
  for (const ResourceWeight& r : resources_) {
    data->entries.push_back({r.id, r.weight, request.amounts.Get(r.id)});
  }
  data->fresh_after = snapshot.time() - staleness_limit_;
  state.Write(StateKey(), std::move(data));
  return Status::Success();
}

int64_t MostAvailable::Score(const CycleState& state, const framework::PodInfo& /*pod*/,
                             const framework::NodeInfo& node) const {
  const auto* data = state.Read<MostAvailableState>(StateKey());
  return data == nullptr ? 0 : ScoreNode(*data, node);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewMostAvailable(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  constexpr std::string_view kPlugin = names::kMostAvailable;
  auto typed = helper::ArgsAs<config::MostAvailableArgs>(args, kPlugin);
  if (!typed.ok()) return typed.status();
  if (auto status = helper::ValidateResourceWeights(kPlugin, "resources", typed->resources);
      !status.ok()) {
    return status;
  }
  if (typed->metrics_poll_interval <= absl::ZeroDuration()) {
    return helper::ArgsError(kPlugin, "metricsPollInterval", "must be greater than zero");
  }
  if (typed->metrics_staleness_limit <= absl::ZeroDuration()) {
    return helper::ArgsError(kPlugin, "metricsStalenessLimit", "must be greater than zero");
  }
  return std::make_unique<MostAvailable>(*typed);
}

}  // namespace kubesched::plugins
