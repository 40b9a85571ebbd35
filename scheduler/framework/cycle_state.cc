#include "scheduler/framework/cycle_state.h"

#include <atomic>

namespace kubesched::framework {

CycleState::Key CycleState::AllocateKey(std::string_view /*name*/) {
  static std::atomic<int> next{0};
  return next.fetch_add(1);
}

void CycleState::Write(Key key, std::unique_ptr<StateData> data) {
  if (key < 0) return;
  if (static_cast<size_t>(key) >= slots_.size()) slots_.resize(key + 1);
  slots_[key] = std::move(data);
}

void CycleState::Erase(Key key) {
  if (key >= 0 && static_cast<size_t>(key) < slots_.size()) slots_[key].reset();
}

std::unique_ptr<CycleState> CycleState::Clone() const {
  auto copy = std::make_unique<CycleState>();
  copy->dry_run_ = dry_run_;
  copy->slots_.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i]) copy->slots_[i] = slots_[i]->Clone();
  }
  return copy;
}

}  // namespace kubesched::framework
