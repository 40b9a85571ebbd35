#include "scheduler/nominated_pods.h"

namespace kubesched::scheduler {

void NominatedPods::Reset(
    std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> by_node,
    const framework::Snapshot& snapshot) {
  by_name_.clear();
  by_node_.clear();
  for (auto& [name, pods] : by_node) by_name_[name] = std::move(pods);
  for (const auto& [name, pods] : by_name_) {
    if (const framework::NodeInfo* node = snapshot.Get(name); node != nullptr) {
      by_node_[node] = &pods;
    }
  }
}

const std::vector<framework::PodInfoPtr>* NominatedPods::For(
    const framework::NodeInfo* node) const {
  if (by_node_.empty()) return nullptr;
  auto it = by_node_.find(node);
  return it == by_node_.end() ? nullptr : it->second;
}

const std::vector<framework::PodInfoPtr>* NominatedPods::ForName(
    const std::string& node_name) const {
  auto it = by_name_.find(node_name);
  return it == by_name_.end() ? nullptr : &it->second;
}

framework::Status RunFiltersWithNominated(const runtime::Framework& fw,
                                          const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          const std::vector<bool>& skip,
                                          const std::vector<framework::PodInfoPtr>* nominated) {
  if (nominated != nullptr) {
    std::optional<framework::NodeInfo> with_nominated;
    for (const auto& other : *nominated) {
      if (other->priority < pod.priority || other->key == pod.key) continue;
      if (!with_nominated.has_value()) with_nominated.emplace(node);
      with_nominated->AddPod(other, node.generation());
    }
    if (with_nominated.has_value()) {
      framework::Status status = fw.RunFilter(state, pod, *with_nominated, skip);
      if (!status.IsSuccess()) return status;
    }
  }
  return fw.RunFilter(state, pod, node, skip);
}

framework::Status CycleFilterHost::RunFilters(const framework::CycleState& state,
                                              const framework::PodInfo& pod,
                                              const framework::NodeInfo& node) const {
  return RunFiltersWithNominated(fw_, state, pod, node, skip_,
                                 nominated_.empty() ? nullptr : nominated_.ForName(node.name()));
}

}  // namespace kubesched::scheduler
