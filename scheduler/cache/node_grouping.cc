#include "scheduler/cache/node_grouping.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "scheduler/api/cordon.h"

namespace kubesched::cache {
namespace {

// The taints that keep a pod off a node unless tolerated, with the one a cordon implies.
std::vector<api::Taint> HardTaints(const api::Node& node) {
  std::vector<api::Taint> taints;
  for (const api::Taint& taint : node.spec.taints) {
    if (taint.effect == api::TaintEffect::kNoSchedule ||
        taint.effect == api::TaintEffect::kNoExecute) {
      taints.push_back(taint);
    }
  }
  if (node.spec.unschedulable) {
    taints.push_back(
        api::Taint{std::string(api::kUnschedulableTaintKey), "", api::TaintEffect::kNoSchedule});
  }
  std::sort(taints.begin(), taints.end(), [](const api::Taint& a, const api::Taint& b) {
    return std::tie(a.key, a.value, a.effect) < std::tie(b.key, b.value, b.effect);
  });
  taints.erase(std::unique(taints.begin(), taints.end(),
                           [](const api::Taint& a, const api::Taint& b) {
                             return a.key == b.key && a.value == b.value && a.effect == b.effect;
                           }),
               taints.end());
  return taints;
}

}  // namespace

void NodeGrouping::Enable(std::vector<api::Symbol> label_keys) {
  std::sort(label_keys.begin(), label_keys.end());
  label_keys.erase(std::unique(label_keys.begin(), label_keys.end()), label_keys.end());
  enabled_ = true;
  changed_ = true;
  label_keys_ = std::move(label_keys);
  slot_by_key_.clear();
  groups_.clear();
}

std::string NodeGrouping::KeyOf(const std::vector<api::Taint>& taints,
                                const api::LabelSet& labels) const {
  // '\0' cannot occur in taint keys or values, so the form is unambiguous.
  std::string key;
  for (const api::Taint& taint : taints) {
    key += taint.key;
    key.push_back('\0');
    key += taint.value;
    key.push_back('\0');
    key += std::to_string(static_cast<int>(taint.effect));
    key.push_back('\0');
  }
  key.push_back('\1');
  for (const auto& [label, value] : labels.pairs()) {
    key += std::to_string(label);
    key.push_back('=');
    key += std::to_string(value);
    key.push_back(',');
  }
  return key;
}

int32_t NodeGrouping::GroupOf(const api::Node* node) {
  if (!enabled_ || node == nullptr) return kNoGroup;
  std::vector<api::Taint> taints = HardTaints(*node);
  std::vector<std::pair<api::Symbol, api::Symbol>> pairs;
  for (const api::Symbol key : label_keys_) {
    if (const auto value = node->meta.labels.Get(key); value.has_value()) {
      pairs.emplace_back(key, *value);
    }
  }
  api::LabelSet labels = api::LabelSet::FromPairs(std::move(pairs));
  auto [it, inserted] =
      slot_by_key_.try_emplace(KeyOf(taints, labels), static_cast<int32_t>(groups_.size()));
  if (inserted) {
    framework::NodeGroup group;
    group.id = it->second;
    group.taints = std::move(taints);
    group.pool_labels = std::move(labels);
    groups_.push_back(std::move(group));
  }
  return it->second;
}

void NodeGrouping::Count(int32_t slot, const framework::NodeInfo& info, int sign) {
  if (slot == kNoGroup || info.node() == nullptr) return;
  framework::NodeGroup& group = groups_[static_cast<size_t>(slot)];
  group.nodes += sign;
  if (sign > 0) {
    group.allocatable.Add(info.allocatable());
    group.requested.Add(info.requested());
  } else {
    group.allocatable.Subtract(info.allocatable());
    group.requested.Subtract(info.requested());
  }
  // DRA devices that count as a resource (empty unless the cache counts them) count as it.
  if (info.device_allocatable().size() != 0) {
    if (sign > 0) {
      group.allocatable.Add(info.device_allocatable());
      group.requested.Add(info.device_requested());
    } else {
      group.allocatable.Subtract(info.device_allocatable());
      group.requested.Subtract(info.device_requested());
    }
  }
  changed_ = true;
}

std::shared_ptr<const framework::NodeGroups> NodeGrouping::Published() {
  if (!changed_) return published_;
  auto published = std::make_shared<framework::NodeGroups>();
  for (const framework::NodeGroup& group : groups_) {
    if (group.nodes > 0) published->push_back(group);
  }
  changed_ = false;
  published_ = std::move(published);
  return published_;
}

}  // namespace kubesched::cache
