#include "plugins/dynamic_resources/too_few_devices.h"

#include "plugins/dynamic_resources/count_fit.h"

namespace kubesched::plugins::dynamic_resources {

std::shared_ptr<const framework::NodePositions> TooFewDevices::Find(
    const CountRequest& request, const framework::Snapshot& snapshot) {
  if (!snapshot.dra().shared_slices->empty()) return nullptr;
  CatchUp(snapshot);
  if (profiles_.size() > kMaxProfiles) return nullptr;
  too_few_.resize(profiles_.size());
  bool any = false;
  for (size_t id = 0; id < profiles_.size(); ++id) {
    too_few_[id] = TooFewOnProfile(request, profiles_[id]) ? 1 : 0;
    any = any || too_few_[id] != 0;
  }
  if (!any) return nullptr;
  if (nodes_ == nullptr || nodes_.use_count() > 1) {
    nodes_ = std::make_shared<framework::NodePositions>();
  }
  nodes_->Reset(profile_by_position_.size());
  for (size_t position = 0; position < profile_by_position_.size(); ++position) {
    if (too_few_[profile_by_position_[position]] != 0) nodes_->Add(position);
  }
  return nodes_;
}

// Profiles by position, re-read only for the nodes that changed since the last pod (usually the
// last pod's node); afresh when positions moved.
void TooFewDevices::CatchUp(const framework::Snapshot& snapshot) {
  const std::vector<const framework::NodeInfo*>& nodes = snapshot.nodes();
  if (mark_.CatchUp(snapshot, &changed_) && profile_by_position_.size() == nodes.size()) {
    for (const uint32_t position : changed_) {
      profile_by_position_[position] = IdOf(nodes[position]->device_profile());
    }
    return;
  }
  profiles_.clear();
  ids_.clear();
  profile_by_position_.resize(nodes.size());
  for (size_t position = 0; position < nodes.size(); ++position) {
    profile_by_position_[position] = IdOf(nodes[position]->device_profile());
  }
}

uint32_t TooFewDevices::IdOf(const framework::DeviceProfile* profile) {
  const auto [it, added] = ids_.try_emplace(profile, static_cast<uint32_t>(profiles_.size()));
  if (added) profiles_.push_back(profile);
  return it->second;
}

}  // namespace kubesched::plugins::dynamic_resources
