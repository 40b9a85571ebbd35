#include "plugins/default_preemption/verdict_cache.h"

#include <algorithm>

#include "scheduler/framework/kept_by_position.h"

namespace kubesched::plugins::preemption {

void VerdictCache::Begin(const framework::PodInfo& pod, const framework::VerdictScope& scope,
                         const framework::Snapshot& snapshot) {
  framework::CatchUpByPosition(snapshot, mark_, changed_, keys_, verdicts_);
  exemplar_.Follow(pod, scope);
}

void VerdictCache::Keep(uint32_t position, const framework::NodeInfo& node, uint64_t nominations,
                        bool screened_out, const std::vector<const framework::PodInfo*>& victims,
                        const VictimSummary& summary) {
  if (position >= keys_.size()) return;
  Key& key = keys_[position];
  key.era = 0;  // void until the verdict is whole
  if (!screened_out) {
    KeptVerdict& verdict = verdicts_[position];
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
  }
  key.node = &node;
  key.nominations = nominations;
  key.screened_out = screened_out;
  key.era = exemplar_.era();
}

}  // namespace kubesched::plugins::preemption
