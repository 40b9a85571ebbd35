// The PostFilter phase (preemption) as the scheduler runs it: a dry run of the profile's PostFilter
// plugins, then the nomination and the victims' eviction off the scheduling thread.

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/util/log.h"

namespace kubesched::scheduler {

framework::PostFilterOutcome Scheduler::DryRunPostFilter(const runtime::Framework& fw,
                                                         framework::CycleState& state,
                                                         const framework::PodInfo& pod,
                                                         const FitError& fit_error) {
  // A PreFilter rejection is every node's verdict.
  // Kept from cycle to cycle: a fresh list for every node would be mapped and faulted in again for
  // every pod a PreFilter rejects.
  std::vector<framework::NodeStatus>& all_rejected = pre_filter_rejections_;
  all_rejected.clear();
  runtime::FilterSkips skip = algorithm_->last_skip_filter();
  const framework::Status& pre = fit_error.pre_filter_status;
  if (pre.code() == framework::Code::kUnschedulable && fw.PreemptionMayLift(pre.plugin())) {
    // Quota-aware preemption needs what the other plugins say: their PreFilter did not run. A
    // later one may hold the pod back for quota too (a group's need after the pod's own): the
    // last such rejection is what the victims must lift.
    std::vector<std::string_view> lifted{pre.plugin()};
    framework::Status blocking = pre;
    auto others = fw.RunPreFilter(state, pod, snapshot_, lifted);
    while (others.status.code() == framework::Code::kUnschedulable &&
           fw.PreemptionMayLift(others.status.plugin()) &&
           std::find(lifted.begin(), lifted.end(), others.status.plugin()) == lifted.end()) {
      blocking = others.status;
      lifted.push_back(blocking.plugin());
      others = fw.RunPreFilter(state, pod, snapshot_, lifted);
    }
    if (!others.status.IsSuccess()) {
      // Removing pods of the queue would not be enough.
      framework::PostFilterOutcome none;
      none.status = framework::Status::Unschedulable("");
      return none;
    }
    skip = std::move(others.skip_filter);
    const framework::Status excluded =
        others.node_names.has_value() ? runtime::ExcludedByPreFilter(others) : framework::Status();
    for (const auto* node : snapshot_.nodes()) {
      const bool allowed =
          !others.node_names.has_value() || others.node_names->contains(node->name());
      all_rejected.push_back({node, allowed ? blocking : excluded});
    }
  } else if (!pre.IsSuccess()) {
    // Removing pods cannot lift it (the plugin did not say it may): no node is worth a dry run.
    framework::Status stands(framework::Code::kUnschedulableAndUnresolvable, pre.reasons());
    stands.set_plugin(pre.plugin());
    for (const auto* node : snapshot_.nodes()) all_rejected.push_back({node, stands});
  }
  const CycleFilterHost host(fw, skip, nominated_, pool_.get());
  return fw.RunPostFilter(state, pod, snapshot_,
                          all_rejected.empty() ? absl::MakeConstSpan(fit_error.node_statuses)
                                               : absl::MakeConstSpan(all_rejected),
                          host);
}

void Scheduler::RunPostFilter(const runtime::Framework& fw, framework::CycleState& state,
                              const framework::PodInfoPtr& pod, FitError* fit_error) {
  if (fw.post_filter_plugins().empty()) return;
  auto outcome = DryRunPostFilter(fw, state, *AsNominated(pod), *fit_error);
  // The plugins' own API writes (a claim's deallocation) go over the network in run mode.
  for (auto& write : outcome.writes) deps_.bind_executor->Submit(std::move(write));
  if (outcome.status.IsSkip()) return;  // no PostFilter plugin had anything to do for this pod
  if (!outcome.status.IsSuccess()) {
    fit_error->post_filter_message = outcome.status.Message();
    if (outcome.clear_nomination && !queue_->NominatedNodeOf(pod->key).empty()) {
      queue_->DeleteNominatedPod(pod->key);
      if (deps_.observer != nullptr) deps_.observer->OnNominationCleared(*pod);
    }
    return;
  }
  if (deps_.deleter == nullptr) {
    fit_error->post_filter_message = "preemption: no pod deleter configured";
    return;
  }
  std::vector<framework::PodInfoPtr> victims;
  std::vector<std::string> waiting_victims;
  std::vector<std::string> evicted;
  for (const auto& key : outcome.victims) {
    framework::PodInfoPtr victim = cache_->GetPod(key);
    if (victim == nullptr) {
      fit_error->post_filter_message = absl::StrCat("preemption: victim ", key, " is not cached");
      return;
    }
    // Already being deleted (an earlier preemptor's victim, counted there): its room is on its
    // way, and evicting it again would count it twice.
    if (victim->get().meta.deletion_timestamp.has_value()) continue;
    evicted.push_back(key);
    // A pod waiting at Permit is not bound: it is sent back to the queue, not deleted (upstream).
    if (waiting_->IsWaiting(key)) {
      waiting_victims.push_back(key);
    } else {
      victims.push_back(std::move(victim));
    }
  }
  const std::string preempted = absl::StrCat("preempted by ", pod->key);
  for (const auto& key : waiting_victims) {
    waiting_->Reject(key, outcome.status.plugin(), preempted);
  }
  for (const auto& victim : victims) MarkEvicting(*victim);
  queue_->AddNominatedPod(pod, outcome.nominated_node);
  // Pods of lower priority nominated to the same node lose the nomination (upstream): the room
  // they were waiting for now goes to this pod.
  for (const auto& other : queue_->NominatedPodsForNode(outcome.nominated_node)) {
    if (other->priority >= pod->priority || other->key == pod->key) continue;
    queue_->DeleteNominatedPod(other->key);
    if (deps_.observer != nullptr) deps_.observer->OnNominationCleared(*other);
  }
  if (deps_.observer != nullptr) {
    deps_.observer->OnPreempted(*pod, outcome.nominated_node, evicted);
  }
  // Deleting goes over the network in run mode: off the scheduling thread. The pod waits in the
  // queue; the victims' deletion events move it back.
  deps_.bind_executor->Submit(
      [this, victims = std::move(victims), preemptor = pod, node = outcome.nominated_node] {
        for (const auto& victim : victims) Evict(*victim, *preemptor, node);
      });
}

void Scheduler::Evict(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                      const std::string& node) {
  if (deps_.observer != nullptr) deps_.observer->OnEvicting(victim, preemptor, node);
  const api::Pod& pod = victim.get();
  const absl::Status status =
      deps_.deleter->DeletePod(pod.meta.namespace_name, pod.meta.name, pod.meta.uid);
  if (status.ok() || absl::IsNotFound(status)) {
    if (deps_.observer != nullptr && status.ok()) {
      deps_.observer->OnEvicted(victim, preemptor, node);
    }
    return;
  }
  util::LogWarning(absl::StrCat("preemption: deleting victim ", victim.key, " for ", preemptor.key,
                                " failed: ", status.message()),
                   {util::KObjFromKey("pod", preemptor.key),
                    util::KObjFromKey("victim", victim.key), util::KV("node", node)});
  // The preemptor waits for deletions that will not come: let it try again.
  UnmarkEvicting(victim);
  queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
}

framework::PodInfoPtr Scheduler::AsNominated(const framework::PodInfoPtr& pod) const {
  std::string nominated = queue_->NominatedNodeOf(pod->key);
  if (nominated == pod->get().status.nominated_node_name) return pod;
  auto copy = std::make_shared<api::Pod>(pod->get());
  copy->status.nominated_node_name = std::move(nominated);
  auto info = std::make_shared<framework::PodInfo>(*pod);
  info->pod = std::move(copy);
  return info;
}

void Scheduler::MarkEvicting(const framework::PodInfo& victim) {
  const api::Pod& pod = victim.get();
  if (pod.meta.deletion_timestamp.has_value()) return;  // the API shows it terminating already
  absl::MutexLock lock(&evicting_mu_);
  const absl::Time now = deps_.clock->Now();
  evicting_[victim.key] = Eviction{pod.meta.uid, now};
  // Gone already: the watch's deletion came first and there is nothing to mark.
  if (!cache_->SetTerminating(victim.key, pod.meta.uid, now).ok()) evicting_.erase(victim.key);
}

void Scheduler::UnmarkEvicting(const framework::PodInfo& victim) {
  absl::MutexLock lock(&evicting_mu_);
  auto it = evicting_.find(victim.key);
  if (it == evicting_.end() || it->second.uid != victim.get().meta.uid) return;
  evicting_.erase(it);
  (void)cache_->SetTerminating(victim.key, victim.get().meta.uid, std::nullopt);
}

void Scheduler::ForgetEvicting(const std::string& pod_key) {
  absl::MutexLock lock(&evicting_mu_);
  evicting_.erase(pod_key);
}

void Scheduler::UpdateBoundPod(std::shared_ptr<const api::Pod> pod) {
  absl::MutexLock lock(&evicting_mu_);
  auto it = evicting_.find(pod->Key());
  if (it != evicting_.end() && it->second.uid == pod->meta.uid &&
      !pod->meta.deletion_timestamp.has_value()) {
    auto marked = std::make_shared<api::Pod>(*pod);
    marked->meta.deletion_timestamp = it->second.since;
    pod = std::move(marked);
  }
  (void)cache_->UpdatePod(MakeInfo(std::move(pod)));
}

}  // namespace kubesched::scheduler
