// The nominator: pods that preemption nominated to a node, at most one node per pod, with a
// bounded change log so that a reader (the scheduling cycle's copy of the nominations) catches up
// in proportion to what changed.

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/queue/scheduling_queue_internal.h"

namespace kubesched::queue {

using framework::PodInfoPtr;

void SchedulingQueue::Impl::Nominate(PodInfoPtr pod, const std::string& node) {
  Unnominate(pod->key);
  nominated_node[pod->key] = node;
  nominated_pods[node].push_back(std::move(pod));
  LogNomination(node);
}

void SchedulingQueue::Impl::Unnominate(const std::string& key) {
  auto it = nominated_node.find(key);
  if (it == nominated_node.end()) return;
  auto pods_it = nominated_pods.find(it->second);
  if (pods_it != nominated_pods.end()) {
    auto& pods = pods_it->second;
    pods.erase(std::remove_if(pods.begin(), pods.end(),
                              [&key](const PodInfoPtr& p) { return p->key == key; }),
               pods.end());
    if (pods.empty()) nominated_pods.erase(pods_it);
  }
  LogNomination(it->second);
  nominated_node.erase(it);
}

// A pod's object changed: its nomination follows the new status.nominatedNodeName, but an update
// that does not carry one keeps the node reserved in memory (it may predate our own patch) —
// unless the pod is another one of the same name (a relist shows a re-created pod as an update):
// the predecessor's nomination is not the successor's.
void SchedulingQueue::Impl::UpdateNomination(const PodInfoPtr& pod) {
  std::string node = pod->get().status.nominated_node_name;
  if (node.empty()) {
    auto it = nominated_node.find(pod->key);
    if (it == nominated_node.end()) return;
    node = it->second;
    if (NominatedUid(pod->key, node) != pod->get().meta.uid) {
      Unnominate(pod->key);
      return;
    }
  }
  Nominate(pod, node);
}

std::string_view SchedulingQueue::Impl::NominatedUid(const std::string& key,
                                                     const std::string& node) const {
  auto pods = nominated_pods.find(node);
  if (pods == nominated_pods.end()) return {};
  for (const PodInfoPtr& nominated : pods->second) {
    if (nominated->key == key) return nominated->get().meta.uid;
  }
  return {};
}

void SchedulingQueue::AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name) {
  absl::MutexLock lock(&impl_->mu);
  const std::string node = node_name.empty() ? pod->get().status.nominated_node_name : node_name;
  if (node.empty()) return;
  impl_->Nominate(std::move(pod), node);
}

void SchedulingQueue::DeleteNominatedPod(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  impl_->Unnominate(pod_key);
}

std::vector<framework::PodInfoPtr> SchedulingQueue::NominatedPodsForNode(
    const std::string& node_name) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->nominated_pods.find(node_name);
  if (it == impl_->nominated_pods.end()) return {};
  return it->second;
}

std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>>
SchedulingQueue::AllNominatedPods() const {
  absl::MutexLock lock(&impl_->mu);
  return {impl_->nominated_pods.begin(), impl_->nominated_pods.end()};
}

std::string SchedulingQueue::NominatedNodeOf(const std::string& pod_key) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->nominated_node.find(pod_key);
  return it == impl_->nominated_node.end() ? std::string() : it->second;
}

NominationDelta SchedulingQueue::NominationsSince(uint64_t version) const {
  absl::MutexLock lock(&impl_->mu);
  NominationDelta delta;
  delta.version = impl_->nomination_version;
  if (version == impl_->nomination_version) return delta;
  const auto& log = impl_->nomination_log;
  const auto pods_of = [this](const std::string& node) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    auto it = impl_->nominated_pods.find(node);
    return it == impl_->nominated_pods.end() ? std::vector<PodInfoPtr>() : it->second;
  };
  if (version == 0 || version > impl_->nomination_version || log.empty() ||
      log.front().first > version + 1) {
    delta.complete = true;
    delta.nodes.assign(impl_->nominated_pods.begin(), impl_->nominated_pods.end());
    return delta;
  }
  absl::flat_hash_set<std::string_view> seen;
  // The log is in version order: walk back to the first change after `version`.
  for (auto it = log.rbegin(); it != log.rend() && it->first > version; ++it) {
    if (seen.insert(it->second).second) delta.nodes.emplace_back(it->second, pods_of(it->second));
  }
  return delta;
}

}  // namespace kubesched::queue
