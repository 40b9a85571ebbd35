#include "plugins/default_preemption/verdict_cache.h"

#include <algorithm>

namespace kubesched::plugins::preemption {

void VerdictCache::Begin(const framework::PodInfo& pod, const framework::VerdictScope& scope,
                         size_t num_nodes) {
  if (slots_.size() < num_nodes) slots_.resize(num_nodes);
  exemplar_.Follow(pod, scope);
}

VerdictCache::Slot* VerdictCache::SlotOf(const framework::NodeInfo& node) {
  const uint32_t position = node.snapshot_position();
  return position < slots_.size() ? &slots_[position] : nullptr;
}

const KeptVerdict* VerdictCache::Find(const framework::NodeInfo& node, uint64_t nominations) const {
  const uint32_t position = node.snapshot_position();
  if (position >= slots_.size()) return nullptr;
  const Slot& slot = slots_[position];
  const bool valid = slot.era == exemplar_.era() && slot.node == &node &&
                     slot.generation == node.generation() && slot.nominations == nominations;
  return valid ? &slot.verdict : nullptr;
}

void VerdictCache::Keep(const framework::NodeInfo& node, uint64_t nominations, bool screened_out,
                        const std::vector<const framework::PodInfo*>& victims,
                        const VictimSummary& summary) {
  Slot* slot = SlotOf(node);
  if (slot == nullptr) return;
  slot->era = 0;  // void until the verdict is whole
  KeptVerdict& verdict = slot->verdict;
  verdict.screened_out = screened_out;
  verdict.summary = summary;
  verdict.victims.clear();
  const auto& pods = node.pods();
  for (const framework::PodInfo* victim : victims) {
    const auto it =
        std::find_if(pods.begin(), pods.end(),
                     [victim](const framework::PodInfoPtr& p) { return p.get() == victim; });
    if (it == pods.end()) return;
    verdict.victims.push_back(static_cast<uint32_t>(it - pods.begin()));
  }
  slot->node = &node;
  slot->generation = node.generation();
  slot->nominations = nominations;
  slot->era = exemplar_.era();
}

}  // namespace kubesched::plugins::preemption
