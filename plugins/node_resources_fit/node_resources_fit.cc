#include "plugins/node_resources_fit/node_resources_fit.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "plugins/helper/args.h"
#include "plugins/helper/integer_division.h"
#include "plugins/helper/resource_weights.h"
#include "plugins/names.h"
#include "plugins/node_resources_fit/requested_scores.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::Status;

// ---------------------------------------------------------------------------------------------
// Per-cycle state

struct FitRequest {
  api::ResourceId id;
  int64_t amount;
  std::string_view reason;  // "Insufficient <name>", stable for the process
};

struct FitState final : framework::StateData {
  absl::InlinedVector<FitRequest, 4> requests;
  // Set when the node's row answers the whole check: the pod requests nothing beyond cpu and
  // memory. cpu/memory are the requested amounts (0: not requested, so not checked).
  bool row_answers = true;
  int64_t cpu = 0;
  int64_t memory = 0;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<FitState>(*this);
  }
};

struct ScoreEntry {
  api::ResourceId id;
  int64_t weight;
  int64_t pod_request;
};
using ScoreEntries = absl::InlinedVector<ScoreEntry, 8>;

struct CpuAndMemory {
  ScoreEntry cpu;
  ScoreEntry memory;
  NodeResourcesFit::WeightSums weight_sums;
};

struct ScoreState final : framework::StateData {
  ScoreEntries entries;
  // Set when the entries are cpu and memory alone (in either order): ScoreRows' fast loop.
  std::optional<CpuAndMemory> cpu_and_memory;
  // Never kWatermark: PreScore resolves it to the cycle's mode.
  config::ScoringStrategyType strategy = config::ScoringStrategyType::kLeastAllocated;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<ScoreState>(*this);
  }
};

CycleState::Key FitKey() {
  static const CycleState::Key key = CycleState::AllocateKey(names::kNodeResourcesFit);
  return key;
}

CycleState::Key ScoreKey() {
  static const CycleState::Key key = CycleState::AllocateKey("NodeResourcesFit/score");
  return key;
}

// "Insufficient <name>", built once per resource for the life of the process, so that no
// scheduling cycle formats it. Called from PreFilter only.
std::string_view InsufficientReason(api::ResourceId id) {
  switch (id) {
    case api::kCpu:
      return "Insufficient cpu";
    case api::kMemory:
      return "Insufficient memory";
    case api::kEphemeralStorage:
      return "Insufficient ephemeral-storage";
    default:
      break;
  }
  static absl::Mutex mu;
  static auto* cache = new std::vector<std::string_view>();  // by ResourceId; never destroyed
  absl::MutexLock lock(&mu);
  if (id >= cache->size()) cache->resize(id + 1);
  std::string_view& reason = (*cache)[id];
  if (reason.empty()) {
    reason = api::StableText(absl::StrCat("Insufficient ", util::Absl(api::ResourceName(id))));
  }
  return reason;
}

std::optional<NodeResourcesFit::WeightSums> WeightSumsOf(
    const std::vector<NodeResourcesFit::ResourceWeight>& resources) {
  int64_t cpu = 0;
  int64_t memory = 0;
  for (const auto& r : resources) {
    if (r.id == api::kCpu) cpu = r.weight;
    if (r.id == api::kMemory) memory = r.weight;
  }
  if (std::min(cpu, memory) < 1 || std::max(cpu, memory) > 100) return std::nullopt;  // validated
  const auto divisor = [](int64_t d) { return helper::ConstantDivisor(static_cast<uint32_t>(d)); };
  return NodeResourcesFit::WeightSums{divisor(cpu + memory), divisor(cpu), divisor(memory)};
}

config::ScoringStrategyType StrategyOf(NodeResourcesFit::WatermarkMode mode) {
  return mode == NodeResourcesFit::WatermarkMode::kStack
             ? config::ScoringStrategyType::kMostAllocated
             : config::ScoringStrategyType::kLeastAllocated;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Plugin

NodeResourcesFit::NodeResourcesFit(const config::NodeResourcesFitArgs& args)
    : ignored_resources_(args.ignored_resources.begin(), args.ignored_resources.end()),
      ignored_groups_(args.ignored_resource_groups.begin(), args.ignored_resource_groups.end()),
      strategy_(args.scoring_strategy.type),
      watermark_(args.scoring_strategy.watermark) {
  auto resources = args.scoring_strategy.resources;
  if (resources.empty()) resources = helper::DefaultResourceWeights();
  for (const config::ResourceWeight& r : resources) {
    resources_.push_back({api::InternResource(r.name), r.weight});
  }
  weight_sums_ = WeightSumsOf(resources_);
  // The shape's scores are 0..10 in the config, 0..100 (MaxNodeScore) when applied.
  for (const config::UtilizationShapePoint& p : args.scoring_strategy.shape) {
    shape_.push_back({p.utilization, int64_t{p.score} * (framework::kMaxNodeScore / 10)});
  }
  if (strategy_ == config::ScoringStrategyType::kWatermark) {
    std::vector<Watermark::Weight> weights;
    for (const ResourceWeight& r : resources_) weights.push_back({r.id, r.weight});
    watermark_pools_ = std::make_unique<Watermark>(watermark_, weights);
  }
}

std::string_view NodeResourcesFit::Name() const { return names::kNodeResourcesFit; }

bool NodeResourcesFit::IsIgnored(api::ResourceId id) const {
  const std::string_view name = api::ResourceName(id);
  if (!api::IsExtendedResourceName(name)) return false;
  if (ignored_resources_.contains(util::Absl(name))) return true;
  if (ignored_groups_.empty()) return false;
  return ignored_groups_.contains(util::Absl(name.substr(0, name.find('/'))));
}

framework::PreFilterOutcome NodeResourcesFit::PreFilter(CycleState& state,
                                                        const framework::PodInfo& pod,
                                                        const framework::Snapshot& /*snapshot*/) {
  auto data = std::make_unique<FitState>();
  // The fixed resources first, then scalars in ascending ResourceId order. Resource ids are
  // interned in first-seen order, so among scalars this is the order the process first saw their
  // names; upstream iterates a Go map (no defined order), and the conformance vectors list
  // cpu, memory, ephemeral-storage, then scalars.
  for (const api::ResourceId id : {api::kCpu, api::kMemory, api::kEphemeralStorage}) {
    const int64_t amount = pod.requests.Get(id);
    if (amount > 0) data->requests.push_back({id, amount, InsufficientReason(id)});
  }
  pod.requests.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
    if (!api::IsScalarResource(id) || amount <= 0 || IsIgnored(id)) return;
    data->requests.push_back({id, amount, InsufficientReason(id)});
  });
  for (const FitRequest& r : data->requests) {
    if (r.id == api::kCpu) {
      data->cpu = r.amount;
    } else if (r.id == api::kMemory) {
      data->memory = r.amount;
    } else {
      data->row_answers = false;
    }
  }
  state.Write(FitKey(), std::move(data));
  return {};
}

namespace {

// The verdict of the fit check, given the node's allowed and present pod counts and
// amounts(id) = {allocatable, requested} of each requested resource.
template <typename Amounts>
Status FitVerdict(const FitState& data, int64_t allowed_pods, int64_t num_pods, Amounts&& amounts) {
  absl::InlinedVector<std::string_view, 4> reasons;
  bool unresolvable = false;
  if (num_pods + 1 > allowed_pods) {
    reasons.push_back(NodeResourcesFit::kTooManyPods);
    unresolvable = allowed_pods < 1;
  }
  for (const FitRequest& r : data.requests) {
    const auto [allocatable, requested] = amounts(r.id);
    if (r.amount <= allocatable - requested) continue;
    reasons.push_back(r.reason);
    if (r.amount > allocatable) unresolvable = true;
  }
  if (reasons.empty()) return Status::Success();
  // One prvalue: a named Status returned beside other returns would be copied (this runs for
  // every node a pod does not fit, which for a preemptor is every node).
  return Status(unresolvable ? framework::Code::kUnschedulableAndUnresolvable
                             : framework::Code::kUnschedulable,
                absl::MakeConstSpan(reasons));
}

Status MissingPreFilterState() {
  return Status(framework::Code::kError, "NodeResourcesFit: PreFilter state missing");
}

}  // namespace

// The node's row (one cache line) answers for pods, cpu and memory.
Status NodeResourcesFit::Filter(const CycleState& state, const framework::PodInfo& pod,
                                const framework::NodeInfo& node) const {
  return FilterWithRow(state, pod, node, node.row());
}

Status NodeResourcesFit::FilterWithRow(const CycleState& state, const framework::PodInfo& /*pod*/,
                                       const framework::NodeInfo& node,
                                       const framework::NodeRow& row) const {
  const auto* data = state.Read<FitState>(FitKey());
  if (data == nullptr) return MissingPreFilterState();
  return FitVerdict(*data, row.allocatable_pods, row.pod_count, [&node, &row](api::ResourceId id) {
    return std::pair{node.allocatable_amount(id, row), node.requested_amount(id, row)};
  });
}

void NodeResourcesFit::ClearFailingRows(const CycleState& state, const framework::PodInfo& /*pod*/,
                                        absl::Span<const framework::NodeRow> rows,
                                        uint8_t* passes) const {
  const auto* data = state.Read<FitState>(FitKey());
  if (data == nullptr || !data->row_answers) {
    std::fill(passes, passes + rows.size(), uint8_t{0});
    return;
  }
  const int64_t cpu = data->cpu;
  const int64_t memory = data->memory;
  // FitVerdict's test on the row; a resource the pod does not request is not checked.
  for (size_t i = 0; i < rows.size(); ++i) {
    const framework::NodeRow& row = rows[i];
    const bool fits = row.pod_count < row.allocatable_pods &&
                      (cpu == 0 || cpu <= row.allocatable_cpu - row.requested_cpu) &&
                      (memory == 0 || memory <= row.allocatable_memory - row.requested_memory);
    passes[i] &= static_cast<uint8_t>(fits);
  }
}

bool NodeResourcesFit::FilterReadsOnlyRow(const CycleState& state,
                                          const framework::PodInfo& /*pod*/) const {
  const auto* data = state.Read<FitState>(FitKey());
  return data != nullptr && data->row_answers;
}

Status NodeResourcesFit::FilterRequests(const CycleState& state, const framework::PodInfo& /*pod*/,
                                        const framework::NodeInfo& node,
                                        const api::ResourceList& requested,
                                        int64_t num_pods) const {
  const auto* data = state.Read<FitState>(FitKey());
  if (data == nullptr) return MissingPreFilterState();
  const api::ResourceList& allocatable = node.allocatable();
  return FitVerdict(*data, allocatable.Get(api::kPods), num_pods, [&](api::ResourceId id) {
    return std::pair{allocatable.Get(id), requested.Get(id)};
  });
}

namespace {

// The per-pod scoring list: configured resources minus `pods` and minus scalars the pod does not
// request. Requests are the non-zero ones for cpu/memory, as upstream's scoring.
void BuildScoreEntries(const std::vector<NodeResourcesFit::ResourceWeight>& resources,
                       const framework::PodInfo& pod, ScoreEntries* out) {
  for (const auto& r : resources) {
    if (r.id == api::kPods) continue;  // upstream has no allocatable/requested pair for pods
    const int64_t request = pod.NonZeroRequest(r.id);
    if (request == 0 && api::IsScalarResource(r.id)) continue;
    out->push_back({r.id, r.weight, request});
  }
}

// The default case, cpu and memory alone, read straight from the rows: ScoreRows' loop with the
// entries and the strategy fixed (the same sums and divisions, so the same scores).
template <bool kMostAllocated>
void CpuAndMemoryScores(const CpuAndMemory& fast, const framework::NodeRow* const* rows,
                        size_t count, int64_t* scores) {
  const ScoreEntry& cpu = fast.cpu;
  const ScoreEntry& memory = fast.memory;
  const auto share = [](int64_t requested, int64_t capacity) {
    return kMostAllocated ? MostRequestedScore(requested, capacity)
                          : LeastRequestedScore(requested, capacity);
  };
  for (size_t i = 0; i < count; ++i) {
    const framework::NodeRow& row = *rows[i];
    const bool has_cpu = row.allocatable_cpu != 0;
    const bool has_memory = row.allocatable_memory != 0;
    int64_t node_score = 0;
    if (has_cpu) {
      node_score +=
          share(row.non_zero_requested_cpu + cpu.pod_request, row.allocatable_cpu) * cpu.weight;
    }
    if (has_memory) {
      node_score +=
          share(row.non_zero_requested_memory + memory.pod_request, row.allocatable_memory) *
          memory.weight;
    }
    // A node with neither has a score of 0, which any divisor keeps.
    const NodeResourcesFit::WeightSums& sums = fast.weight_sums;
    scores[i] =
        (has_cpu ? (has_memory ? sums.both : sums.cpu_only) : sums.memory_only).Divide(node_score);
  }
}

// The cpu and memory entries, with the weight sums, when they are the only ones (in either order).
std::optional<CpuAndMemory> CpuAndMemoryOnly(
    const ScoreEntries& entries, const std::optional<NodeResourcesFit::WeightSums>& weight_sums) {
  if (entries.size() != 2 || !weight_sums.has_value()) return std::nullopt;
  CpuAndMemory found{entries[0], entries[1], *weight_sums};
  if (found.cpu.id == api::kMemory) std::swap(found.cpu, found.memory);
  if (found.cpu.id != api::kCpu || found.memory.id != api::kMemory) return std::nullopt;
  return found;
}

// The pod's scoring list, whether ScoreRows' cpu-and-memory loop applies to it, and `strategy`.
void BuildScoreState(const std::vector<NodeResourcesFit::ResourceWeight>& resources,
                     const std::optional<NodeResourcesFit::WeightSums>& weight_sums,
                     const framework::PodInfo& pod, config::ScoringStrategyType strategy,
                     ScoreState* out) {
  BuildScoreEntries(resources, pod, &out->entries);
  out->cpu_and_memory = CpuAndMemoryOnly(out->entries, weight_sums);
  out->strategy = strategy;
}

}  // namespace

Status NodeResourcesFit::PreScore(CycleState& state, const framework::PodInfo& pod,
                                  const framework::Snapshot& snapshot,
                                  absl::Span<const framework::NodeInfo* const> /*feasible*/) {
  auto data = std::make_unique<ScoreState>();
  BuildScoreState(resources_, weight_sums_, pod, strategy_, data.get());
  if (const auto watermark = ObserveWatermark(snapshot, pod.get().spec.tolerations);
      watermark.has_value()) {
    data->strategy = StrategyOf(watermark->mode);
  }
  state.Write(ScoreKey(), std::move(data));
  return Status::Success();
}

int64_t NodeResourcesFit::Score(const CycleState& state, const framework::PodInfo& pod,
                                const framework::NodeInfo& node) const {
  return ScoreWithRow(state, pod, node, node.row());
}

int64_t NodeResourcesFit::ScoreWithRow(const CycleState& state, const framework::PodInfo& pod,
                                       const framework::NodeInfo& node,
                                       const framework::NodeRow& row) const {
  const framework::NodeInfo* const nodes[] = {&node};
  const framework::NodeRow* const rows[] = {&row};
  int64_t score = 0;
  ScoreRows(state, pod, nodes, rows, &score);
  return score;
}

void NodeResourcesFit::ScoreRows(const CycleState& state, const framework::PodInfo& pod,
                                 absl::Span<const framework::NodeInfo* const> nodes,
                                 const framework::NodeRow* const* rows, int64_t* scores) const {
  std::optional<ScoreState> local;  // built only for a Score without PreScore
  const ScoreState* data = state.Read<ScoreState>(ScoreKey());
  if (data == nullptr) {
    BuildScoreState(resources_, weight_sums_, pod, KeptStrategy(), &local.emplace());
    data = &*local;
  }
  const config::ScoringStrategyType strategy = data->strategy;
  if (const auto& fast = data->cpu_and_memory; fast.has_value()) {
    if (strategy == config::ScoringStrategyType::kMostAllocated) {
      CpuAndMemoryScores<true>(*fast, rows, nodes.size(), scores);
      return;
    }
    if (strategy == config::ScoringStrategyType::kLeastAllocated) {
      CpuAndMemoryScores<false>(*fast, rows, nodes.size(), scores);
      return;
    }
  }
  // RequestedToCapacityRatio counts only resources with a positive score in the weighted mean.
  const bool ratio = strategy == config::ScoringStrategyType::kRequestedToCapacityRatio;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const framework::NodeInfo& node = *nodes[i];
    const framework::NodeRow& row = *rows[i];
    int64_t node_score = 0;
    int64_t weight_sum = 0;
    for (const ScoreEntry& e : data->entries) {
      const int64_t capacity = node.allocatable_amount(e.id, row);
      if (capacity == 0) continue;
      const int64_t requested = node.scoring_requested_amount(e.id, row) + e.pod_request;
      const int64_t resource_score = ResourceScore(strategy, requested, capacity);
      if (ratio && resource_score <= 0) continue;
      node_score += resource_score * e.weight;
      weight_sum += e.weight;
    }
    if (weight_sum == 0) {
      scores[i] = 0;
    } else if (ratio) {
      // Rounded half away from zero, as Go's math.Round.
      scores[i] = std::llround(static_cast<double>(node_score) / static_cast<double>(weight_sum));
    } else {
      scores[i] = helper::Divide(node_score, weight_sum);
    }
  }
}

int64_t NodeResourcesFit::ResourceScore(config::ScoringStrategyType strategy, int64_t requested,
                                        int64_t capacity) const {
  switch (strategy) {
    case config::ScoringStrategyType::kLeastAllocated:
    case config::ScoringStrategyType::kWatermark:  // resolved before; spread is its default
      return LeastRequestedScore(requested, capacity);
    case config::ScoringStrategyType::kMostAllocated:
      return MostRequestedScore(requested, capacity);
    case config::ScoringStrategyType::kRequestedToCapacityRatio:
      return RatioResourceScore(shape_, requested, capacity);
  }
  return 0;
}

config::ScoringStrategyType NodeResourcesFit::KeptStrategy() const {
  if (strategy_ != config::ScoringStrategyType::kWatermark) return strategy_;
  return StrategyOf(watermark_pools_->LastMode());
}

// ---------------------------------------------------------------------------------------------
// Watermark

std::string_view NodeResourcesFit::ModeName(WatermarkMode mode) {
  return mode == WatermarkMode::kStack ? "stack" : "spread";
}

NodeResourcesFit::WatermarkMode NodeResourcesFit::NextMode(
    WatermarkMode previous, double ratio, const config::WatermarkThresholds& thresholds) {
  return Watermark::NextMode(previous, ratio, thresholds.high, thresholds.low);
}

// O(|resources|): the snapshot carries the cluster sums (see the class comment for the formula).
double NodeResourcesFit::AllocatedRatio(const framework::Snapshot& snapshot) const {
  double weighted = 0;
  int64_t weight_sum = 0;
  for (const ResourceWeight& r : resources_) {
    if (r.id == api::kPods) continue;  // the scorer leaves pods out too
    const int64_t allocatable = snapshot.cluster_allocatable().Get(r.id);
    if (allocatable <= 0) continue;  // the cluster has none: no meaningful fill level
    const int64_t requested = snapshot.cluster_requested().Get(r.id);
    weighted += static_cast<double>(r.weight) * static_cast<double>(requested) /
                static_cast<double>(allocatable);
    weight_sum += r.weight;
  }
  return weight_sum == 0 ? 0 : weighted / static_cast<double>(weight_sum);
}

std::optional<NodeResourcesFit::WatermarkStatus> NodeResourcesFit::ObserveWatermark(
    const framework::Snapshot& snapshot, const std::vector<api::Toleration>& tolerations) {
  if (watermark_pools_ == nullptr) return std::nullopt;
  return watermark_pools_->Observe(snapshot, tolerations);
}

std::vector<NodeResourcesFit::WatermarkStatus> NodeResourcesFit::LastWatermarks() const {
  if (watermark_pools_ == nullptr) return {};
  return watermark_pools_->Last();
}

std::optional<std::vector<std::string>> NodeResourcesFit::NodeGroupLabelKeys() const {
  if (watermark_pools_ == nullptr) return std::nullopt;
  return watermark_pools_->LabelKeys();
}

std::optional<framework::WatermarkState> NodeResourcesFit::ObserveWatermarkState(
    const framework::Snapshot& snapshot, const framework::PodInfo* pod) {
  static const std::vector<api::Toleration> kNone;
  const auto status =
      ObserveWatermark(snapshot, pod != nullptr ? pod->get().spec.tolerations.get() : kNone);
  if (!status.has_value()) return std::nullopt;
  return framework::WatermarkState{ModeName(status->mode), status->allocated_ratio,
                                   std::string(status->pool)};
}

std::vector<framework::WatermarkState> NodeResourcesFit::LastWatermarkStates() const {
  std::vector<framework::WatermarkState> states;
  for (const WatermarkStatus& status : LastWatermarks()) {
    states.push_back({ModeName(status.mode), status.allocated_ratio, std::string(status.pool)});
  }
  return states;
}

// ---------------------------------------------------------------------------------------------
// Factory

namespace {

constexpr std::string_view kPlugin = names::kNodeResourcesFit;

absl::Status ValidateIgnored(const config::NodeResourcesFitArgs& args) {
  for (size_t i = 0; i < args.ignored_resources.size(); ++i) {
    if (!api::IsValidLabelKey(args.ignored_resources[i])) {
      return helper::ArgsError(kPlugin, absl::StrCat("ignoredResources[", i, "]"),
                               "must be a qualified resource name");
    }
  }
  for (size_t i = 0; i < args.ignored_resource_groups.size(); ++i) {
    const std::string& group = args.ignored_resource_groups[i];
    const std::string field = absl::StrCat("ignoredResourceGroups[", i, "]");
    if (group.find('/') != std::string::npos) {
      return helper::ArgsError(kPlugin, field, "must not contain '/'");
    }
    if (!api::IsValidLabelKey(group)) {
      return helper::ArgsError(kPlugin, field, "must be a qualified name");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateShape(const std::vector<config::UtilizationShapePoint>& shape) {
  constexpr std::string_view kShape = "scoringStrategy.requestedToCapacityRatio.shape";
  if (shape.empty()) return helper::ArgsError(kPlugin, kShape, "must have at least one point");
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string at = absl::StrCat(util::Absl(kShape), "[", i, "]");
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      return helper::ArgsError(kPlugin, absl::StrCat(at, ".utilization"), "must be in 0..100");
    }
    if (shape[i].score < 0 || shape[i].score > 10) {
      return helper::ArgsError(kPlugin, absl::StrCat(at, ".score"), "must be in 0..10");
    }
    if (i > 0 && shape[i].utilization <= shape[i - 1].utilization) {
      return helper::ArgsError(kPlugin, absl::StrCat(at, ".utilization"),
                               "must be greater than the previous point's");
    }
  }
  return absl::OkStatus();
}

// Written so that NaN fails too.
absl::Status ValidateWatermark(const config::WatermarkThresholds& watermark) {
  if (!(watermark.high > 0 && watermark.high <= 1)) {
    return helper::ArgsError(kPlugin, "scoringStrategy.watermark.high", "must be in (0, 1]");
  }
  if (!(watermark.low > 0 && watermark.low <= watermark.high)) {
    return helper::ArgsError(kPlugin, "scoringStrategy.watermark.low", "must be in (0, high]");
  }
  absl::flat_hash_set<std::string_view> names;
  for (size_t i = 0; i < watermark.pools.size(); ++i) {
    const config::WatermarkPool& pool = watermark.pools[i];
    const std::string at = absl::StrCat("scoringStrategy.watermark.pools[", i, "]");
    if (pool.name.empty() || pool.name == config::kDefaultWatermarkPool ||
        !names.insert(pool.name).second) {
      return helper::ArgsError(kPlugin, absl::StrCat(at, ".name"),
                               "must be set, unique and not \"default\"");
    }
    if (pool.node_selector.empty()) {
      return helper::ArgsError(kPlugin, absl::StrCat(at, ".nodeSelector"), "must not be empty");
    }
    if (!(pool.high > 0 && pool.high <= 1 && pool.low > 0 && pool.low <= pool.high)) {
      return helper::ArgsError(kPlugin, at, "needs 0 < low <= high <= 1");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateFitArgs(const config::NodeResourcesFitArgs& args) {
  if (auto status = ValidateIgnored(args); !status.ok()) return status;
  const config::ScoringStrategy& strategy = args.scoring_strategy;
  if (auto status =
          helper::ValidateResourceWeights(kPlugin, "scoringStrategy.resources", strategy.resources);
      !status.ok()) {
    return status;
  }
  if (strategy.type == config::ScoringStrategyType::kRequestedToCapacityRatio) {
    return ValidateShape(strategy.shape);
  }
  if (strategy.type == config::ScoringStrategyType::kWatermark) {
    return ValidateWatermark(strategy.watermark);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeResourcesFit(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  auto typed = helper::ArgsAs<config::NodeResourcesFitArgs>(args, kPlugin);
  if (!typed.ok()) return typed.status();
  if (auto status = ValidateFitArgs(*typed); !status.ok()) return status;
  return std::make_unique<NodeResourcesFit>(*typed);
}

}  // namespace kubesched::plugins
