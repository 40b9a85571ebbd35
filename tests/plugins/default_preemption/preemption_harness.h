#pragma once

// DefaultPreemption's test harness: pods as the tests describe them, a cluster with the default
// profile and the Filter phase that precedes PostFilter, and a host that counts the nodes the
// filters were run on.

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "config/config.h"
#include "plugins/default_preemption/default_preemption.h"
#include "scheduler/core/algorithm.h"
#include "scheduler/core/nominated_pods.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/parallel.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched::plugins::preemption_testing {

using plugin_testing::Unwrap;
using testing::NodeBuilder;
using testing::PodBuilder;

inline constexpr int32_t kSystemNodeCritical = 2000001000;
inline const absl::Time kEpoch = absl::FromUnixSeconds(1'700'000'000);

// A pod as the tests describe it.
struct P {
  std::string name;
  std::string cpu;
  int32_t priority = 0;
  std::optional<int64_t> started{};  // seconds after kEpoch; unset: not started
  std::vector<std::pair<std::string, std::string>> labels{};
  bool non_preemptible = false;        // through the pod's annotation
  bool class_non_preemptible = false;  // through its PriorityClass
  std::function<void(api::Pod&)> edit{};
};

inline framework::PodInfoPtr MakePod(const P& p, const std::string& node = "") {
  PodBuilder builder(p.name);
  builder.Container({{"cpu", p.cpu}}).Priority(p.priority);
  for (const auto& [key, value] : p.labels) builder.Label(key, value);
  if (p.non_preemptible) {
    builder.Annotation(framework::kPreemptionPolicyAnnotation, framework::kNonPreemptible);
  }
  if (!node.empty()) builder.NodeName(node);
  api::Pod pod = builder.Build();
  if (p.started.has_value()) pod.status.start_time = kEpoch + absl::Seconds(*p.started);
  if (p.edit) p.edit(pod);
  return framework::MakePodInfo(std::make_shared<const api::Pod>(std::move(pod)), p.priority,
                                framework::PriorityClassTraits{p.class_non_preemptible, false});
}

inline std::shared_ptr<const api::PodDisruptionBudget> Pdb(
    const std::string& ns, const std::string& app, int32_t allowed,
    std::vector<std::string> disrupted = {}) {
  auto pdb = std::make_shared<api::PodDisruptionBudget>();
  pdb->meta.name = "pdb-" + app;
  pdb->meta.namespace_name = ns;
  pdb->meta.namespace_symbol = api::Intern(ns);
  api::Requirement requirement;
  requirement.key = api::Intern("app");
  requirement.op = api::SelectorOperator::kIn;
  requirement.values = {api::Intern(app)};
  pdb->selector = api::LabelSelector{{requirement}};
  pdb->disruptions_allowed = allowed;
  pdb->disrupted_pods = std::move(disrupted);
  return pdb;
}

// What a PostFilter call gave.
struct Result {
  std::string node;  // nominated; "" on failure
  std::vector<std::string> victims;
  std::string message;  // the status message on failure
  framework::Code code = framework::Code::kSuccess;
};

// Counts the nodes the filters were run on, to see how far a dry run went. `by_requests` false
// hides the inner host's arithmetic (JudgesByRequests), so that victims are found on copies.
class CountingHost final : public framework::PostFilterHost {
 public:
  // `keep_verdicts` false hides the inner host's VerdictScopeFor: no dry-run verdict is kept.
  explicit CountingHost(const framework::PostFilterHost& inner, bool by_requests = true,
                        bool keep_verdicts = true)
      : inner_(inner), by_requests_(by_requests), keep_verdicts_(keep_verdicts) {}
  framework::Status RunFilters(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& what_if,
                               const framework::NodeInfo& node) const override {
    Record(node);
    return inner_.RunFilters(state, pod, what_if, node);
  }
  bool JudgesByRequests() const override { return by_requests_ && inner_.JudgesByRequests(); }
  std::optional<framework::VerdictScope> VerdictScopeFor(
      const framework::CycleState& state, const framework::PodInfo& pod) const override {
    if (!keep_verdicts_) return std::nullopt;
    return inner_.VerdictScopeFor(state, pod);
  }
  uint64_t NominationStamp(const framework::PodInfo& pod, const framework::NodeInfo& node,
                           uint32_t position) const override {
    return inner_.NominationStamp(pod, node, position);
  }
  framework::Status RunFiltersWithout(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node,
                                      const api::ResourceList& freed,
                                      size_t freed_pods) const override {
    Record(node);
    return inner_.RunFiltersWithout(state, pod, node, freed, freed_pods);
  }
  bool CannotFitWithout(const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::NodeInfo& node, const api::ResourceList& freed,
                        size_t freed_pods) const override {
    {
      absl::MutexLock lock(&mu_);
      ++calls_;
    }
    return inner_.CannotFitWithout(state, pod, node, freed, freed_pods);
  }
  bool StateFollowsPods() const override { return inner_.StateFollowsPods(); }
  framework::Status PodRemoved(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::PodInfo& removed,
                               const framework::NodeInfo& what_if) const override {
    return inner_.PodRemoved(state, pod, removed, what_if);
  }
  framework::Status PodAdded(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::PodInfo& added,
                             const framework::NodeInfo& what_if) const override {
    return inner_.PodAdded(state, pod, added, what_if);
  }
  void ParallelFor(size_t n, const std::function<void(size_t, size_t)>& fn) const override {
    inner_.ParallelFor(n, fn);
  }
  std::set<std::string> nodes() const {
    absl::MutexLock lock(&mu_);
    return nodes_;
  }
  // How many times the dry run asked the host about a node (filters or the resource screen).
  size_t calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  void Record(const framework::NodeInfo& node) const {
    absl::MutexLock lock(&mu_);
    ++calls_;
    nodes_.insert(node.name());
  }

  const framework::PostFilterHost& inner_;
  const bool by_requests_;
  const bool keep_verdicts_;
  mutable absl::Mutex mu_;
  mutable std::set<std::string> nodes_ ABSL_GUARDED_BY(mu_);
  mutable size_t calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// A cluster, the default profile and the Filter phase that precedes PostFilter.
class Harness {
 public:
  // `threads`: of the worker pool that the Filter phase and the PostFilter host run on.
  explicit Harness(int threads = 1) : pool_(threads) {
    auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
    REQUIRE(fw.ok());
    fw_ = std::move(*fw);
  }

  Harness& Node(const std::string& name, const std::string& cpu,
                const std::function<void(NodeBuilder&)>& edit = {}) {
    NodeBuilder node(name);
    node.Capacity({{"cpu", cpu}, {"memory", "64Gi"}, {"pods", "110"}});
    if (edit) edit(node);
    Changed(builder_.Upsert(name))->SetNode(node.Ptr(), ++generation_);
    return *this;
  }
  Harness& Pod(const std::string& node, const P& pod) {
    Changed(builder_.Upsert(node))->AddPod(MakePod(pod, node), ++generation_);
    return *this;
  }
  Harness& Pdbs(std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs) {
    builder_.SetPdbs(std::move(pdbs));
    return *this;
  }
  Harness& Nominate(const std::string& node, const P& pod) {
    nominations_.push_back({node, {MakePod(pod)}});
    return *this;
  }
  Harness& RemovePod(const std::string& node, const std::string& pod) {
    REQUIRE(Changed(builder_.Upsert(node))->RemovePod("default/" + pod, ++generation_).ok());
    return *this;
  }
  Harness& ClearNominations() {
    nominations_.clear();
    return *this;
  }
  // The dry run keeps no verdict from one preemptor to the next.
  Harness& KeepingNoVerdicts() {
    keep_verdicts_ = false;
    return *this;
  }
  // How many times the dry runs so far asked the host about a node.
  size_t host_calls() const { return host_calls_; }

  // Schedules `preemptor` (expecting it to fit nowhere) and runs `plugin` (the profile's own
  // DefaultPreemption when null) on the rejected nodes.
  Result Preempt(const P& preemptor, framework::PostFilterPlugin* plugin = nullptr,
                 std::set<std::string>* tried = nullptr) {
    Commit();
    nominated_.Reset(nominations_, snapshot_);
    const framework::PodInfoPtr pod = MakePod(preemptor);
    framework::CycleState state;
    auto outcome = algorithm_.Schedule(*fw_, state, *pod, snapshot_, &nominated_);
    auto* fit_error = std::get_if<scheduler::FitError>(&outcome);
    REQUIRE(fit_error != nullptr);
    std::vector<framework::NodeStatus> rejected = fit_error->node_statuses;
    if (!fit_error->pre_filter_status.IsSuccess()) {
      rejected.clear();
      for (const auto* node : snapshot_.nodes()) {
        rejected.push_back({node, fit_error->pre_filter_status});
      }
    }
    if (plugin == nullptr) {
      for (auto* candidate : fw_->post_filter_plugins()) {
        if (candidate->Name() == "DefaultPreemption") plugin = candidate;
      }
      REQUIRE(plugin != nullptr);
    }
    const scheduler::CycleFilterHost cycle_host(*fw_, algorithm_.last_skip_filter(), nominated_,
                                                &pool_);
    const CountingHost host(cycle_host, by_requests_, keep_verdicts_);
    const framework::PostFilterOutcome post =
        plugin->PostFilter(state, *pod, snapshot_, rejected, host);
    if (tried != nullptr) *tried = host.nodes();
    host_calls_ += host.calls();
    return {post.nominated_node, post.victims, post.status.Message(), post.status.code()};
  }

  const framework::Snapshot& snapshot() {
    Commit();
    return snapshot_;
  }
  // Whether `pod` fits some node as the cluster is (then there is nothing to preempt for).
  bool FitsSomewhere(const P& pod) {
    Commit();
    nominated_.Reset(nominations_, snapshot_);
    framework::CycleState state;
    return std::holds_alternative<scheduler::ScheduleSuccess>(
        algorithm_.Schedule(*fw_, state, *MakePod(pod), snapshot_, &nominated_));
  }
  // Victims are found on copies of the nodes even where the host could judge by requests.
  Harness& Copying() {
    by_requests_ = false;
    return *this;
  }

 private:
  framework::NodeInfo* Changed(framework::NodeInfo* node) {
    changed_.push_back(node);
    return node;
  }
  // Brings the snapshot up to date as the cache does: lists, totals, and the nodes changed in
  // place since the last commit, which kept verdicts rely on.
  void Commit() {
    builder_.RebuildLists();
    builder_.RecomputeClusterTotals();
    builder_.set_generation(generation_);
    builder_.RecordChanges(generation_, changed_);
    changed_.clear();
  }

  bool by_requests_ = true;
  bool keep_verdicts_ = true;
  size_t host_calls_ = 0;
  std::unique_ptr<runtime::Framework> fw_;
  framework::Snapshot snapshot_;
  framework::SnapshotBuilder builder_{&snapshot_};
  int64_t generation_ = 0;
  std::vector<framework::NodeInfo*> changed_;  // in place, since the last Commit
  util::WorkerPool pool_;
  scheduler::ScheduleAlgorithm algorithm_{&pool_, 100, 1};
  scheduler::NominatedPods nominated_;
  std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> nominations_;
};

inline std::unique_ptr<DefaultPreemption> WithArgs(const config::DefaultPreemptionArgs& args) {
  return Unwrap<DefaultPreemption>(NewDefaultPreemption(args, {}));
}

}  // namespace kubesched::plugins::preemption_testing
