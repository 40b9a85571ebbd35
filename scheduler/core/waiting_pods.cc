#include "scheduler/core/waiting_pods.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace kubesched::scheduler {
namespace {

bool Settled(const WaitingPod& pod) { return pod.rejection.has_value() || pod.waiting_on.empty(); }

}  // namespace

void WaitingPodRegistry::Add(WaitingPod pod) {
  absl::MutexLock lock(&mu_);
  std::string key = pod.assumed->key;
  pods_.insert_or_assign(std::move(key), std::move(pod));
}

bool WaitingPodRegistry::Allow(std::string_view pod_key, std::string_view plugin) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_key);
  if (it == pods_.end() || Settled(it->second)) return false;
  auto waiting = it->second.waiting_on.find(plugin);
  if (waiting == it->second.waiting_on.end()) return false;
  it->second.waiting_on.erase(waiting);
  if (Settled(it->second)) ++settled_;
  return true;
}

bool WaitingPodRegistry::Reject(std::string_view pod_key, std::string_view plugin,
                                std::string_view message) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_key);
  if (it == pods_.end() || Settled(it->second)) return false;
  it->second.rejection.emplace(std::string(plugin), std::string(message));
  ++settled_;
  return true;
}

void WaitingPodRegistry::ForEach(
    const std::function<void(const framework::PodInfo& pod, std::string_view node)>& fn) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [key, pod] : pods_) {
    if (!Settled(pod)) fn(*pod.assumed, pod.node);
  }
}

std::vector<WaitingPod> WaitingPodRegistry::TakeSettled(absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (auto& [key, pod] : pods_) {
    if (Settled(pod) || pod.deadline > now) continue;
    // Upstream's message, naming the first plugin still waiting.
    const std::string& plugin = *pod.waiting_on.begin();
    pod.rejection.emplace(plugin,
                          absl::StrCat("rejected due to timeout after waiting ",
                                       absl::FormatDuration(pod.timeout), " at plugin ", plugin));
    ++settled_;
  }
  std::vector<WaitingPod> settled;
  if (settled_ == 0) return settled;
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (Settled(it->second)) {
      settled.push_back(std::move(it->second));
      it = pods_.erase(it);
    } else {
      ++it;
    }
  }
  settled_ = 0;
  return settled;
}

std::optional<absl::Time> WaitingPodRegistry::NextDeadline() const {
  absl::MutexLock lock(&mu_);
  std::optional<absl::Time> next;
  for (const auto& [key, pod] : pods_) {
    if (Settled(pod)) continue;
    if (!next.has_value() || pod.deadline < *next) next = pod.deadline;
  }
  return next;
}

bool WaitingPodRegistry::IsWaiting(std::string_view pod_key) const {
  absl::MutexLock lock(&mu_);
  return pods_.contains(pod_key);
}

bool WaitingPodRegistry::HasGangMember(std::string_view gang_key) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [key, pod] : pods_) {
    if (pod.assumed->gang.key == gang_key) return true;
  }
  return false;
}

size_t WaitingPodRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

}  // namespace kubesched::scheduler
