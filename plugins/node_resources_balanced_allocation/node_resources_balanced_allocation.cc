#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "plugins/helper/args.h"
#include "plugins/helper/resource_weights.h"
#include "plugins/names.h"
#include "scheduler/framework/device_resources.h"
#include "scheduler/framework/picked_devices.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::Status;

struct Entry {
  api::ResourceId id;
  int64_t weight;
  int64_t pod_request;
  // DRA devices count as this resource: a node's counted devices join its amounts.
  bool devices = false;
};
using Entries = absl::InlinedVector<Entry, 8>;

struct BalancedState final : framework::StateData {
  Entries entries;
  // The entries are cpu then memory, of equal weight and without devices (the default): the
  // score reads both amounts from the node's row (CpuAndMemoryScore).
  bool cpu_and_memory = false;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<BalancedState>(*this);
  }
};

CycleState::Key StateKey() {
  static const CycleState::Key key =
      CycleState::AllocateKey(names::kNodeResourcesBalancedAllocation);
  return key;
}

// Appends the pod's scoring entries; returns whether any configured request is non-zero. With
// `devices` (DRA devices counting as resources), a resource they count as takes the devices the
// pod's claims get (`device_request`) besides its requests.
bool BuildEntries(const std::vector<NodeResourcesBalancedAllocation::ResourceWeight>& resources,
                  const framework::PodInfo& pod, const framework::DeviceResources* devices,
                  const api::ResourceList& device_request, Entries* out) {
  bool any_request = false;
  for (const auto& r : resources) {
    if (r.id == api::kPods) continue;  // upstream has no allocatable/requested pair for pods
    const bool counted = devices != nullptr && devices->Counts(r.id);
    const int64_t request = pod.requests.Get(r.id) + (counted ? device_request.Get(r.id) : 0);
    any_request = any_request || request != 0;
    if (request == 0 && api::IsScalarResource(r.id)) continue;
    out->push_back({r.id, r.weight, request, counted});
  }
  return any_request;
}

// The devices the pod's claims would get, by the resource they count as, on the first node that
// passed Filter: which devices a pod gets depends little on the node, and one search per pod
// keeps the score's cost per node what it was.
api::ResourceList DeviceRequest(const framework::CycleState& state,
                                const framework::DeviceResources& devices,
                                absl::Span<const framework::NodeInfo* const> feasible) {
  api::ResourceList request;
  const auto* picks = state.Read<framework::PickedDevices>(framework::PickedDevicesKey());
  if (picks == nullptr || feasible.empty()) return request;
  picks->ForEachDevice(*feasible.front(),
                       [&](const api::ResourceSlice& slice, const api::Device& device) {
                         const auto* kind = devices.KindOf(slice.driver, device);
                         if (kind != nullptr) request.Add(kind->resource, 1);
                       });
  return request;
}

// f = min(1, requested / allocatable); false when the node has none of the resource.
// The row answers for cpu and memory, `node`'s lists for the others.
bool Fraction(const Entry& e, const framework::NodeInfo& node, const framework::NodeRow& row,
              double* fraction) {
  int64_t allocatable = node.allocatable_amount(e.id, row);
  int64_t requested = node.requested_amount(e.id, row) + e.pod_request;
  if (e.devices) {
    allocatable += node.device_allocatable().Get(e.id);
    requested += node.device_requested().Get(e.id);
  }
  if (allocatable == 0) return false;
  *fraction = std::min(1.0, static_cast<double>(requested) / static_cast<double>(allocatable));
  return true;
}

// Upstream's unweighted standard deviation, with its own operation order so that the truncated
// score matches exactly: |f0 - f1| / 2 for two fractions, the population formula for more.
double EqualWeightStdDev(const Entries& entries, const framework::NodeInfo& node,
                         const framework::NodeRow& row, int count, double total, double first,
                         double second) {
  if (count == 2) return std::abs((first - second) / 2);
  const double mean = total / count;
  double sum = 0;
  for (const Entry& e : entries) {
    double f;
    if (Fraction(e, node, row, &f)) sum += (f - mean) * (f - mean);
  }
  return std::sqrt(sum / count);
}

double WeightedStdDev(const Entries& entries, const framework::NodeInfo& node,
                      const framework::NodeRow& row, double weighted_total, int64_t weight_sum) {
  const double mean = weighted_total / static_cast<double>(weight_sum);
  double sum = 0;
  for (const Entry& e : entries) {
    double f;
    if (Fraction(e, node, row, &f)) sum += static_cast<double>(e.weight) * (f - mean) * (f - mean);
  }
  return std::sqrt(sum / static_cast<double>(weight_sum));
}

int64_t BalancedScore(const Entries& entries, const framework::NodeInfo& node,
                      const framework::NodeRow& row) {
  int count = 0;
  double total = 0, weighted_total = 0, first = 0, second = 0;
  int64_t weight_sum = 0, first_weight = 0;
  bool equal_weights = true;
  for (const Entry& e : entries) {
    double f;
    if (!Fraction(e, node, row, &f)) continue;
    if (count == 0) {
      first = f;
      first_weight = e.weight;
    }
    if (count == 1) second = f;
    if (e.weight != first_weight) equal_weights = false;
    total += f;
    weighted_total += static_cast<double>(e.weight) * f;
    weight_sum += e.weight;
    ++count;
  }
  double std_dev = 0;
  if (count >= 2) {
    std_dev = equal_weights ? EqualWeightStdDev(entries, node, row, count, total, first, second)
                            : WeightedStdDev(entries, node, row, weighted_total, weight_sum);
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(framework::kMaxNodeScore));
}

bool CpuAndMemoryOnly(const Entries& entries) {
  return entries.size() == 2 && entries[0].id == api::kCpu && entries[1].id == api::kMemory &&
         entries[0].weight == entries[1].weight && !entries[0].devices && !entries[1].devices;
}

// BalancedScore for CpuAndMemoryOnly entries on a node with both resources: the same operations
// in the same order (two fractions, EqualWeightStdDev's |f0 - f1| / 2), without the general
// loop, which the Score phase runs for every feasible node.
int64_t CpuAndMemoryScore(const Entries& entries, const framework::NodeRow& row) {
  const double cpu = std::min(1.0, static_cast<double>(row.requested_cpu + entries[0].pod_request) /
                                       static_cast<double>(row.allocatable_cpu));
  const double memory =
      std::min(1.0, static_cast<double>(row.requested_memory + entries[1].pod_request) /
                        static_cast<double>(row.allocatable_memory));
  const double std_dev = std::abs((cpu - memory) / 2);
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(framework::kMaxNodeScore));
}

}  // namespace

NodeResourcesBalancedAllocation::NodeResourcesBalancedAllocation(
    const config::BalancedAllocationArgs& args) {
  auto resources = args.resources;
  if (resources.empty()) resources = helper::DefaultResourceWeights();
  for (const config::ResourceWeight& r : resources) {
    resources_.push_back({api::InternResource(r.name), r.weight});
  }
}

std::string_view NodeResourcesBalancedAllocation::Name() const {
  return names::kNodeResourcesBalancedAllocation;
}

Status NodeResourcesBalancedAllocation::PreScore(
    CycleState& state, const framework::PodInfo& pod, const framework::Snapshot& snapshot,
    absl::Span<const framework::NodeInfo* const> feasible) {
  auto data = std::make_unique<BalancedState>();
  const framework::DeviceResources* devices = snapshot.dra().device_resources.get();
  const api::ResourceList device_request =
      devices == nullptr || pod.get().spec.resource_claims.empty()
          ? api::ResourceList()
          : DeviceRequest(state, *devices, feasible);
  // A best-effort pod would otherwise pile onto one node (upstream issue 129138).
  if (!BuildEntries(resources_, pod, devices, device_request, &data->entries)) {
    return Status::Skip();
  }
  data->cpu_and_memory = CpuAndMemoryOnly(data->entries);
  state.Write(StateKey(), std::move(data));
  return Status::Success();
}

int64_t NodeResourcesBalancedAllocation::Score(const CycleState& state,
                                               const framework::PodInfo& pod,
                                               const framework::NodeInfo& node) const {
  return ScoreWithRow(state, pod, node, node.row());
}

int64_t NodeResourcesBalancedAllocation::ScoreWithRow(const CycleState& state,
                                                      const framework::PodInfo& pod,
                                                      const framework::NodeInfo& node,
                                                      const framework::NodeRow& row) const {
  const framework::NodeInfo* const nodes[] = {&node};
  const framework::NodeRow* const rows[] = {&row};
  int64_t score = 0;
  ScoreRows(state, pod, nodes, rows, &score);
  return score;
}

void NodeResourcesBalancedAllocation::ScoreRows(const CycleState& state,
                                                const framework::PodInfo& pod,
                                                absl::Span<const framework::NodeInfo* const> nodes,
                                                const framework::NodeRow* const* rows,
                                                int64_t* scores) const {
  const auto* data = state.Read<BalancedState>(StateKey());
  Entries local;
  if (data == nullptr) BuildEntries(resources_, pod, nullptr, api::ResourceList(), &local);
  const Entries& entries = data != nullptr ? data->entries : local;
  const bool cpu_and_memory = data != nullptr && data->cpu_and_memory;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const framework::NodeRow& row = *rows[i];
    // A node without cpu or memory scores on the other alone: BalancedScore skips it.
    scores[i] = cpu_and_memory && row.allocatable_cpu != 0 && row.allocatable_memory != 0
                    ? CpuAndMemoryScore(entries, row)
                    : BalancedScore(entries, *nodes[i], row);
  }
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeResourcesBalancedAllocation(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  constexpr std::string_view kPlugin = names::kNodeResourcesBalancedAllocation;
  auto typed = helper::ArgsAs<config::BalancedAllocationArgs>(args, kPlugin);
  if (!typed.ok()) return typed.status();
  if (auto status = helper::ValidateResourceWeights(kPlugin, "resources", typed->resources);
      !status.ok()) {
    return status;
  }
  return std::make_unique<NodeResourcesBalancedAllocation>(*typed);
}

}  // namespace kubesched::plugins
