// The extension points before and in the scheduling cycle: PreEnqueue (whether a pod may be
// queued), PreFilter and its AddPod/RemovePod extensions, Filter (on a node, on a node's request
// sums, timed when sampled), PostFilter, PreScore, Score and NormalizeScore. Filter and Score run
// once per node, so their untimed paths read no clock and copy no Status.

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/api/symbol.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/runtime/phases_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::runtime {

using framework::Code;
using framework::Status;
using internal::NanosecondsSince;
using internal::ObservePoint;
using internal::SecondsSince;
using internal::Stamp;
using internal::SteadyClock;
using internal::TimePlugin;
using metrics::ExtensionPoint;

namespace {

// A second plugin's set makes a new union: the first plugin's set is its own, read-only.
void AddSureRejections(std::shared_ptr<const framework::NodePositions> nodes,
                       PreFilterSummary& summary) {
  if (summary.sure_rejections == nullptr) {
    summary.sure_rejections = std::move(nodes);
    return;
  }
  auto both = std::make_shared<framework::NodePositions>(*summary.sure_rejections);
  both->AddAll(*nodes);
  summary.sure_rejections = std::move(both);
}

}  // namespace

ScorePhaseTimer::ScorePhaseTimer(metrics::ProfileMetrics* metrics)
    : metrics_(metrics),
      start_(metrics != nullptr ? SteadyClock::now() : SteadyClock::time_point()) {}

ScorePhaseTimer::~ScorePhaseTimer() {
  if (metrics_ != nullptr) {
    metrics_->ObserveExtensionPoint(ExtensionPoint::kScore, Code::kSuccess, SecondsSince(start_));
  }
}

Status Framework::RunPreEnqueue(const framework::PodInfo& pod) const {
  for (const framework::PreEnqueuePlugin* plugin : pre_enqueue_) {
    Status status = plugin->PreEnqueue(pod);
    if (!status.IsSuccess()) return Stamp(std::move(status), plugin->Name());
  }
  return Status::Success();
}

framework::Status ExcludedByPreFilter(const PreFilterSummary& summary) {
  const std::string reason =
      absl::StrCat("node(s) didn't satisfy plugin(s) [",
                   util::Absl(util::Join(summary.restricting_plugins, " ")), "]");
  Status status = Status::Unresolvable(api::StableText(reason));
  if (!summary.restricting_plugins.empty()) status.set_plugin(summary.restricting_plugins.front());
  return status;
}

PreFilterSummary Framework::RunPreFilter(framework::CycleState& state,
                                         const framework::PodInfo& pod,
                                         const framework::Snapshot& snapshot,
                                         absl::Span<const std::string_view> except) const {
  if (!except.empty()) return RunPreFilterPlugins(state, pod, snapshot, except);
  // A new cycle: upstream samples whether its plugin calls are timed here (schedulePod).
  state.set_record_plugin_metrics(timings_ != nullptr && metrics::PluginTimings::SampleCycle());
  return ObservePoint(metrics_, ExtensionPoint::kPreFilter, pre_filter_.size(),
                      [&] { return RunPreFilterPlugins(state, pod, snapshot, except); });
}

PreFilterSummary Framework::RunPreFilterPlugins(framework::CycleState& state,
                                                const framework::PodInfo& pod,
                                                const framework::Snapshot& snapshot,
                                                absl::Span<const std::string_view> except) const {
  PreFilterSummary summary;
  if (!pod.get().spec.resource_claims.empty() && !allocates_claims_) {
    summary.status = framework::Status::Unresolvable(kClaimsWithoutAllocator);
    summary.status.set_plugin(kDynamicResources);
    return summary;
  }
  std::vector<bool> skipped_pre_filter(pre_filter_.size(), false);
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    if (std::find(except.begin(), except.end(), pre_filter_[i]->Name()) != except.end()) {
      skipped_pre_filter[i] = true;
      continue;
    }
    auto outcome = TimePlugin(timings_, Slot(ExtensionPoint::kPreFilter, i), state,
                              [&] { return pre_filter_[i]->PreFilter(state, pod, snapshot); });
    if (outcome.status.IsSkip()) {
      skipped_pre_filter[i] = true;
      continue;
    }
    if (!outcome.status.IsSuccess()) {
      summary.status = Stamp(std::move(outcome.status), pre_filter_[i]->Name());
      return summary;
    }
    if (outcome.result.node_names.has_value()) {
      summary.restricting_plugins.push_back(pre_filter_[i]->Name());
      if (!summary.node_names.has_value()) {
        summary.node_names = std::move(outcome.result.node_names);
      } else {
        absl::erase_if(*summary.node_names, [&](const std::string& name) {
          return !outcome.result.node_names->contains(name);
        });
      }
    }
    if (outcome.result.sure_rejections != nullptr) {
      AddSureRejections(std::move(outcome.result.sure_rejections), summary);
    }
  }
  summary.skip_filter = FilterSkips(filter_.size());
  for (size_t i = 0; i < filter_.size(); ++i) {
    const int pre = filter_pre_filter_index_[i];
    summary.skip_filter.Set(
        i, (pre >= 0 && skipped_pre_filter[pre]) ||
               std::find(except.begin(), except.end(), filter_[i]->Name()) != except.end());
  }
  return summary;
}

bool Framework::HasActiveExtensions(const FilterSkips& skip) const {
  for (const Extension& extension : extensions_) {
    if (extension.filter_index >= skip.size() || !skip[extension.filter_index]) return true;
  }
  return false;
}

Status Framework::RunPreFilterExtensionAddPod(framework::CycleState& state,
                                              const framework::PodInfo& pod,
                                              const framework::PodInfo& added,
                                              const framework::NodeInfo& node,
                                              const FilterSkips& skip) const {
  for (const Extension& extension : extensions_) {
    if (extension.filter_index < skip.size() && skip[extension.filter_index]) continue;
    Status status = extension.extensions->AddPod(state, pod, added, node);
    if (!status.IsSuccess()) return Stamp(std::move(status), extension.name);
  }
  return Status::Success();
}

Status Framework::RunPreFilterExtensionRemovePod(framework::CycleState& state,
                                                 const framework::PodInfo& pod,
                                                 const framework::PodInfo& removed,
                                                 const framework::NodeInfo& node,
                                                 const FilterSkips& skip) const {
  for (const Extension& extension : extensions_) {
    if (extension.filter_index < skip.size() && skip[extension.filter_index]) continue;
    Status status = extension.extensions->RemovePod(state, pod, removed, node);
    if (!status.IsSuccess()) return Stamp(std::move(status), extension.name);
  }
  return Status::Success();
}

Status Framework::RunFilter(const framework::CycleState& state, const framework::PodInfo& pod,
                            const framework::NodeInfo& node, const FilterSkips& skip,
                            std::vector<Status>* all_statuses) const {
  Status first;
  if (all_statuses == nullptr) {
    RunFilterInto(state, pod, node, skip, first);
    return first;
  }
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) {
      all_statuses->push_back(Stamp(Status::Skip(), filter_names_[i]));
      continue;
    }
    Status status = filter_[i]->Filter(state, pod, node);
    all_statuses->push_back(Stamp(status, filter_names_[i]));
    if (!status.IsSuccess() && first.IsSuccess()) {
      status.set_plugin(filter_names_[i]);
      first = std::move(status);
    }
  }
  return first;
}

void Framework::RunFilterInto(const framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::NodeInfo& node, const framework::NodeRow& row,
                              const FilterSkips& skip, Status& out) const {
  if (state.record_plugin_metrics() && timings_ != nullptr &&
      metrics::PluginTimings::SampleCall()) {
    out = RunFilterTimed(state, pod, node, skip);
    return;
  }
  if (skip.NoneRuns()) {
    out = Status();
    return;
  }
  skip.ForEachRunning([&](size_t i) {
    // Constructed in `out` from the plugin's prvalue (no move): copying a Status just built
    // stalls on its fresh stores, and this runs for every node.
    out.~Status();
    if (const framework::RowFilterPlugin* by_row = row_filter_[i]; by_row != nullptr) {
      ::new (static_cast<void*>(&out)) Status(by_row->FilterWithRow(state, pod, node, row));
    } else {
      ::new (static_cast<void*>(&out)) Status(filter_[i]->Filter(state, pod, node));
    }
    if (out.IsSuccess()) return true;
    out.set_plugin(filter_names_[i]);
    return false;
  });
}

bool Framework::FiltersReadOnlyRows(const framework::CycleState& state,
                                    const framework::PodInfo& pod, const FilterSkips& skip) const {
  return skip.ForEachRunning([&](size_t i) {
    const framework::RowFilterPlugin* by_row = row_filter_[i];
    return by_row != nullptr && by_row->FilterReadsOnlyRow(state, pod);
  });
}

void Framework::ClearFailingRows(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const FilterSkips& skip, absl::Span<const framework::NodeRow> rows,
                                 uint8_t* passes) const {
  std::fill(passes, passes + rows.size(), uint8_t{1});
  skip.ForEachRunning([&](size_t i) {
    row_filter_[i]->ClearFailingRows(state, pod, rows, passes);
    return true;
  });
}

bool Framework::FiltersJudgeByRequests(const FilterSkips& skip) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) continue;
    if (filter_reads_pods_[i] && requests_filter_[i] == nullptr) return false;
  }
  return true;
}

bool Framework::FiltersJudgePodAndNodeAlone(const framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const FilterSkips& skip) const {
  return skip.ForEachRunning(
      [&](size_t i) { return filter_[i]->FilterJudgesPodAndNodeAlone(state, pod); });
}

Status Framework::RunFilterOnRequests(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node, const FilterSkips& skip,
                                      const api::ResourceList& requested, int64_t num_pods) const {
  Status first;
  skip.ForEachRunning([&](size_t i) {
    Status status = requests_filter_[i] != nullptr
                        ? requests_filter_[i]->FilterRequests(state, pod, node, requested, num_pods)
                        : filter_[i]->Filter(state, pod, node);
    if (status.IsSuccess()) return true;
    status.set_plugin(filter_names_[i]);
    first = std::move(status);
    return false;
  });
  return first;
}

// Filter on a sampled node of a sampled cycle: one clock read per plugin boundary (the end of one
// call is the start of the next), so a timed node costs (plugins + 1) reads and no lock or
// allocation.
Status Framework::RunFilterTimed(const framework::CycleState& state, const framework::PodInfo& pod,
                                 const framework::NodeInfo& node, const FilterSkips& skip) const {
  auto start = SteadyClock::now();
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (skip[i]) continue;
    Status status = filter_[i]->Filter(state, pod, node);
    const auto end = SteadyClock::now();
    timings_->Observe(Slot(ExtensionPoint::kFilter, i), status.code(),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
    start = end;
    if (!status.IsSuccess()) return Stamp(std::move(status), filter_[i]->Name());
  }
  return Status();
}

framework::PostFilterOutcome Framework::RunPostFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot, absl::Span<const framework::NodeStatus> filtered,
    const framework::PostFilterHost& host) const {
  bool ran = false;
  framework::PostFilterOutcome outcome =
      ObservePoint(metrics_, ExtensionPoint::kPostFilter, post_filter_.size(), [&] {
        // Upstream's: the first success, unresolvable or error ends it; otherwise the reasons
        // of every plugin that rejected the pod, named after the first.
        framework::PostFilterOutcome rejected;
        rejected.status = Status::Skip();  // stays so while every plugin skips the pod
        // The writes asked for so far go with whichever outcome ends the phase.
        std::vector<std::function<void()>> writes;
        for (size_t i = 0; i < post_filter_.size(); ++i) {
          auto outcome = TimePlugin(timings_, Slot(ExtensionPoint::kPostFilter, i), state, [&] {
            return post_filter_[i]->PostFilter(state, pod, snapshot, filtered, host);
          });
          std::move(outcome.writes.begin(), outcome.writes.end(), std::back_inserter(writes));
          outcome.writes.clear();
          if (outcome.status.IsSkip()) continue;
          ran = true;
          outcome.status.set_plugin(post_filter_[i]->Name());
          if (outcome.status.code() != Code::kUnschedulable) {
            outcome.writes = std::move(writes);
            return outcome;
          }
          if (rejected.status.IsSkip()) {
            rejected = std::move(outcome);
            continue;
          }
          for (const std::string_view reason : outcome.status.reasons()) {
            rejected.status.AddReason(reason);
          }
          rejected.clear_nomination = rejected.clear_nomination || outcome.clear_nomination;
        }
        rejected.writes = std::move(writes);
        return rejected;
      });
  // Upstream's DefaultPreemption counts every PostFilter run as a preemption attempt; a run where
  // every plugin skipped the pod is none.
  if (ran && scheduler_metrics_ != nullptr) scheduler_metrics_->CountPreemptionAttempt();
  return outcome;
}

PreScoreSummary Framework::RunPreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot,
    absl::Span<const framework::NodeInfo* const> feasible) const {
  return ObservePoint(metrics_, ExtensionPoint::kPreScore, pre_score_.size(), [&] {
    PreScoreSummary summary;
    std::vector<bool> skipped(pre_score_.size(), false);
    for (size_t i = 0; i < pre_score_.size(); ++i) {
      Status status = TimePlugin(timings_, Slot(ExtensionPoint::kPreScore, i), state, [&] {
        return pre_score_[i]->PreScore(state, pod, snapshot, feasible);
      });
      if (status.IsSkip()) {
        skipped[i] = true;
      } else if (!status.IsSuccess()) {
        summary.status = Stamp(std::move(status), pre_score_[i]->Name());
        return summary;
      }
    }
    summary.skip_score.resize(score_.size(), false);
    for (size_t i = 0; i < score_.size(); ++i) {
      const int pre = score_pre_score_index_[i];
      summary.skip_score[i] = pre >= 0 && skipped[pre];
    }
    return summary;
  });
}

int64_t Framework::RunScoreTimed(size_t k, const framework::CycleState& state,
                                 const framework::PodInfo& pod,
                                 const framework::NodeInfo& node) const {
  if (timings_ == nullptr || !metrics::PluginTimings::SampleCall()) {
    return score_[k].plugin->Score(state, pod, node);
  }
  const auto start = SteadyClock::now();
  const int64_t score = score_[k].plugin->Score(state, pod, node);
  timings_->Observe(Slot(ExtensionPoint::kScore, k), Code::kSuccess, NanosecondsSince(start));
  return score;
}

void Framework::RunScoreChunk(size_t k, const framework::CycleState& state,
                              const framework::PodInfo& pod,
                              absl::Span<const framework::NodeInfo* const> nodes,
                              const framework::NodeRow* const* rows, int64_t* scores) const {
  const framework::RowScorePlugin* by_row = row_score_[k];
  if (by_row != nullptr && !state.record_plugin_metrics()) {
    by_row->ScoreRows(state, pod, nodes, rows, scores);
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    scores[i] = RunScore(k, state, pod, *nodes[i], *rows[i]);
}

void Framework::RunNormalizeScore(size_t k, const framework::CycleState& state,
                                  const framework::PodInfo& pod, absl::Span<int64_t> scores) const {
  const framework::ScoreNormalizer* normalizer = score_[k].plugin->normalizer();
  if (normalizer == nullptr) return;
  TimePlugin(timings_, Slot(ExtensionPoint::kScoreExtensionNormalize, k), state,
             [&] { normalizer->NormalizeScore(state, pod, scores); });
}

}  // namespace kubesched::runtime
