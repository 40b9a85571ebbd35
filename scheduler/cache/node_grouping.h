#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/node_groups.h"
#include "scheduler/framework/node_info.h"

namespace kubesched::cache {

// The writer side of the snapshots' NodeGroups (see framework::NodeGroup): which group each node
// belongs to and the groups' sums. Off until enabled (no profile uses the Watermark strategy: no
// cost at all). A node's group is worked out only when its Node object changes; a pod change
// moves its node's group sums by O(resources), as the cluster sums. Not thread-safe: the cache's
// mutex guards it.
class NodeGrouping {
 public:
  static constexpr int32_t kNoGroup = -1;

  bool enabled() const { return enabled_; }
  // Starts keeping groups, told apart by taints and by the values of `label_keys`. Nodes already
  // known must be joined again by the caller (Join + Add).
  void Enable(std::vector<api::Symbol> label_keys);

  // The group for `node` (interned: alike nodes share one); kNoGroup when disabled or null.
  int32_t GroupOf(const api::Node* node);
  // Adds (sign +1) or takes out (-1) a node's contribution to group `slot` (no-op for kNoGroup).
  void Count(int32_t slot, const framework::NodeInfo& info, int sign);

  // The non-empty groups ordered by id, for the snapshots: rebuilt only when the sums moved since
  // the last call (O(groups)), else the same immutable copy.
  std::shared_ptr<const framework::NodeGroups> Published();

 private:
  // The key of the group: taints and pool labels in a canonical text form.
  std::string KeyOf(const std::vector<api::Taint>& taints, const api::LabelSet& labels) const;

  bool enabled_ = false;
  bool changed_ = false;
  std::vector<api::Symbol> label_keys_;
  absl::flat_hash_map<std::string, int32_t> slot_by_key_;
  std::vector<framework::NodeGroup> groups_;  // by slot; a slot's id is its index
  std::shared_ptr<const framework::NodeGroups> published_ =
      std::make_shared<const framework::NodeGroups>();
};

}  // namespace kubesched::cache
