#include "scheduler/core/nominated_pods.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <string_view>

namespace kubesched::scheduler {

namespace {

// The node copy of the calling thread for RunFiltersWithNominated: assigned over and over, so its
// buffers are reused rather than allocated for every node.
framework::NodeInfo& ThreadNodeBuffer() {
  thread_local framework::NodeInfo buffer;
  return buffer;
}

// Whether the Filter phase counts `other`, nominated to the node, for `pod`: priority >= its own,
// and not the pod itself.
bool Counts(const framework::PodInfo& other, const framework::PodInfo& pod) {
  return other.priority >= pod.priority && (other.key_hash != pod.key_hash || other.key != pod.key);
}

// Which of the pods nominated to a node count for `pod`.
enum class Counted { kNone, kAll, kSome };

Counted CountedFor(const framework::PodInfo& pod, const NominatedPods::Entry& nominated) {
  if (nominated.max_priority < pod.priority) return Counted::kNone;
  if (nominated.min_priority >= pod.priority &&
      std::find(nominated.key_hashes.begin(), nominated.key_hashes.end(), pod.key_hash) ==
          nominated.key_hashes.end()) {
    return Counted::kAll;  // every one ranks high enough, and none has the pod's key
  }
  size_t counted = 0;
  for (const auto& other : nominated.pods) counted += Counts(*other, pod) ? 1 : 0;
  if (counted == 0) return Counted::kNone;
  return counted == nominated.pods.size() ? Counted::kAll : Counted::kSome;
}

}  // namespace

void NominatedPods::Assign(Entry& entry, std::vector<framework::PodInfoPtr> pods,
                           const framework::NodeInfo* node) {
  static std::atomic<uint64_t> last_stamp{0};
  CountKeys(entry, -1);
  entry.stamp = last_stamp.fetch_add(1, std::memory_order_relaxed) + 1;
  entry.pods = std::move(pods);
  entry.node = node;
  entry.min_priority = std::numeric_limits<int32_t>::max();
  entry.max_priority = std::numeric_limits<int32_t>::min();
  entry.key_hashes.clear();
  entry.requests.Clear();
  for (const auto& other : entry.pods) {
    entry.requests.Add(other->requests);
    entry.min_priority = std::min(entry.min_priority, other->priority);
    entry.max_priority = std::max(entry.max_priority, other->priority);
    entry.key_hashes.push_back(other->key_hash);
  }
  CountKeys(entry, +1);
  RebuildWithAll(entry);
}

void NominatedPods::RebuildWithAll(Entry& entry) {
  entry.with_all.reset();
  entry.with_all_generation = -1;
  if (entry.node == nullptr) return;
  auto with_all = std::make_unique<framework::NodeInfo>(*entry.node);
  for (const auto& other : entry.pods) with_all->AddPod(other, entry.node->generation());
  entry.requested_with_all = with_all->requested();
  entry.pods_with_all = static_cast<int64_t>(with_all->pods().size());
  entry.with_all_generation = entry.node->generation();
  entry.with_all = std::move(with_all);
}

void NominatedPods::Index(const framework::NodeInfo* node, Entry* entry) {
  const uint32_t position = node->snapshot_position();
  if (position == framework::SnapshotPosition::kNone) return;
  if (position >= by_position_.size()) {
    by_position_.resize(position + 1, nullptr);
    stamp_by_position_.resize(position + 1, 0);
  }
  by_position_[position] = entry;
  stamp_by_position_[position] = entry->stamp;
}

void NominatedPods::Unindex(const framework::NodeInfo* node) {
  const uint32_t position = node->snapshot_position();
  if (position < by_position_.size() && by_position_[position] != nullptr &&
      by_position_[position]->node == node) {
    by_position_[position] = nullptr;
    stamp_by_position_[position] = 0;
  }
}

void NominatedPods::UnindexAll(size_t num_nodes) {
  by_position_.assign(num_nodes, nullptr);
  stamp_by_position_.assign(num_nodes, 0);
}

void NominatedPods::CountKeys(const Entry& entry, int sign) {
  for (const size_t hash : entry.key_hashes) {
    int& count = key_counts_[hash];
    count += sign;
    if (count == 0) key_counts_.erase(hash);
  }
}

void NominatedPods::Reset(
    std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> by_node,
    const framework::Snapshot& snapshot) {
  ++epoch_;
  UnindexAll(snapshot.nodes().size());
  for (auto& [name, pods] : by_node) {
    auto [it, inserted] = by_name_.try_emplace(name);
    Entry& entry = it->second;
    const framework::NodeInfo* node = snapshot.Get(name);
    const bool unchanged = !inserted && entry.node == node && entry.pods == pods &&
                           entry.with_all != nullptr && node != nullptr &&
                           entry.with_all_generation == node->generation();
    entry.epoch = epoch_;
    if (!unchanged) Assign(entry, std::move(pods), node);
    if (node != nullptr) Index(node, &entry);
  }
  // Names in `by_node` are distinct: when there are as many entries as names, none is stale.
  if (by_name_.size() != by_node.size()) {
    absl::erase_if(by_name_, [this](const auto& item) {
      if (item.second.epoch == epoch_) return false;
      CountKeys(item.second, -1);
      return true;
    });
  }
}

void NominatedPods::Sync(queue::NominationDelta delta, const framework::Snapshot& snapshot,
                         absl::Span<const framework::NodeInfo* const> refreshed,
                         bool node_set_changed) {
  version_ = delta.version;
  if (delta.complete) {
    Reset(std::move(delta.nodes), snapshot);
    return;
  }
  if (node_set_changed) {
    // Nodes may have gone (their addresses with them) or come, and positions moved: look every
    // entry's node up again.
    UnindexAll(snapshot.nodes().size());
    for (auto& [name, entry] : by_name_) {
      const framework::NodeInfo* node = snapshot.Get(name);
      if (node != entry.node) Assign(entry, std::move(entry.pods), node);
      if (node != nullptr) Index(node, &entry);
    }
  }
  for (auto& [name, pods] : delta.nodes) {
    if (pods.empty()) {
      auto it = by_name_.find(name);
      if (it == by_name_.end()) continue;
      if (it->second.node != nullptr) Unindex(it->second.node);
      CountKeys(it->second, -1);
      by_name_.erase(it);
      continue;
    }
    Entry& entry = by_name_[name];
    const framework::NodeInfo* node = snapshot.Get(name);
    if (entry.node != nullptr && entry.node != node) Unindex(entry.node);
    Assign(entry, std::move(pods), node);
    if (node != nullptr) Index(node, &entry);
  }
  for (const framework::NodeInfo* node : refreshed) {
    Entry* found = Find(node);
    if (found == nullptr) continue;
    Entry& entry = *found;
    if (entry.with_all == nullptr || entry.with_all_generation != node->generation()) {
      RebuildWithAll(entry);
    }
  }
}

const NominatedPods::Entry* NominatedPods::ForName(const std::string& node_name) const {
  auto it = by_name_.find(node_name);
  return it == by_name_.end() ? nullptr : &it->second;
}

framework::Status RunFiltersWithNominated(const runtime::Framework& fw,
                                          const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          const runtime::FilterSkips& skip,
                                          const NominatedPods::Entry* nominated) {
  framework::Status status;
  RunFiltersWithNominatedInto(fw, state, pod, node, skip, nominated, status);
  return status;
}

bool NominatedFiltersJudgeByRequests(const runtime::Framework& fw,
                                     const runtime::FilterSkips& skip) {
  return !fw.HasActiveExtensions(skip) && fw.FiltersJudgeByRequests(skip);
}

void RunFiltersWithNominatedInto(const runtime::Framework& fw, const framework::CycleState& state,
                                 const framework::PodInfo& pod, const framework::NodeInfo& node,
                                 const runtime::FilterSkips& skip,
                                 const NominatedPods::Entry* nominated, framework::Status& out,
                                 bool by_requests) {
  const Counted counted = nominated == nullptr ? Counted::kNone : CountedFor(pod, *nominated);
  if (counted != Counted::kNone) {
    const framework::NodeInfo* with_nominated = nullptr;
    const bool with_all_serves = counted == Counted::kAll && &node == nominated->node &&
                                 nominated->with_all_generation == node.generation();
    if (with_all_serves && by_requests) {
      out = fw.RunFilterOnRequests(state, pod, node, skip, nominated->requested_with_all,
                                   nominated->pods_with_all);
      if (!out.IsSuccess()) return;
      fw.RunFilterInto(state, pod, node, skip, out);
      return;
    }
    if (with_all_serves) {
      with_nominated = nominated->with_all.get();
    } else {
      framework::NodeInfo& buffer = ThreadNodeBuffer();
      buffer = node;
      for (const auto& other : nominated->pods) {
        if (Counts(*other, pod)) buffer.AddPod(other, node.generation());
      }
      with_nominated = &buffer;
    }
    std::unique_ptr<framework::CycleState> state_with_nominated;
    if (fw.HasActiveExtensions(skip)) {
      state_with_nominated = state.Clone();
      for (const auto& other : nominated->pods) {
        if (!Counts(*other, pod)) continue;
        out = fw.RunPreFilterExtensionAddPod(*state_with_nominated, pod, *other, *with_nominated,
                                             skip);
        if (!out.IsSuccess()) return;
      }
    }
    fw.RunFilterInto(state_with_nominated != nullptr ? *state_with_nominated : state, pod,
                     *with_nominated, skip, out);
    if (!out.IsSuccess()) return;
  }
  fw.RunFilterInto(state, pod, node, skip, out);
}

CycleFilterHost::CycleFilterHost(const runtime::Framework& fw, const runtime::FilterSkips& skip,
                                 const NominatedPods& nominated, util::WorkerPool* pool)
    : fw_(fw), skip_(skip), nominated_(nominated), pool_(pool) {
  resource_fit_runs_ = fw.ScreensBasicResources(skip);
  state_follows_pods_ = fw.HasActiveExtensions(skip);
  judges_by_requests_ = !state_follows_pods_ && fw.FiltersJudgeByRequests(skip);
}

std::optional<framework::VerdictScope> CycleFilterHost::VerdictScopeFor(
    const framework::CycleState& state, const framework::PodInfo& pod) const {
  if (!judges_by_requests_ || !fw_.FiltersJudgePodAndNodeAlone(state, pod, skip_)) {
    return std::nullopt;
  }
  return framework::VerdictScope{&fw_, skip_.running_mask()};
}

uint64_t CycleFilterHost::NominationStamp(const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          uint32_t position) const {
  // Read without the node's entry: at 5,000 nodes that each hold a nominated pod, waiting for
  // the entries was most of a dry run whose verdicts are kept.
  if (nominated_.MayHold(pod)) {
    return NominatedPods::StampFor(nominated_.ForPosition(position, &node), pod)
        .value_or(framework::kNoNominationStamp);
  }
  return nominated_.StampAt(position);
}

framework::Status CycleFilterHost::RunFilters(const framework::CycleState& state,
                                              const framework::PodInfo& pod,
                                              const framework::NodeInfo& what_if,
                                              const framework::NodeInfo& node) const {
  // Looked up by the snapshot node: `what_if` is a copy (its `with_all` does not apply to it).
  return RunFiltersWithNominated(fw_, state, pod, what_if, skip_, nominated_.For(&node));
}

namespace {

// What the pods nominated to a node that count for `pod` take of it: their requests and number.
struct NominatedTake {
  const api::ResourceList* requests = nullptr;  // null: none count
  api::ResourceList some;  // the sum when only some count (`requests` points here)
  int64_t pods = 0;
};

void TakeOf(const framework::PodInfo& pod, const NominatedPods::Entry* nominated,
            NominatedTake& take) {
  take.requests = nullptr;
  take.pods = 0;
  if (nominated == nullptr) return;
  switch (CountedFor(pod, *nominated)) {
    case Counted::kNone:
      return;
    case Counted::kAll:
      take.requests = &nominated->requests;
      take.pods = static_cast<int64_t>(nominated->pods.size());
      return;
    case Counted::kSome:
      take.some.Clear();
      for (const auto& other : nominated->pods) {
        if (!Counts(*other, pod)) continue;
        take.some.Add(other->requests);
        ++take.pods;
      }
      take.requests = &take.some;
      return;
  }
}

// Buffers of the calling thread for RunFiltersWithout: per-node sums without allocating.
struct RequestsBuffers {
  NominatedTake take;
  api::ResourceList requested;
};

RequestsBuffers& ThreadRequestsBuffers() {
  thread_local RequestsBuffers buffers;
  return buffers;
}

}  // namespace

bool CycleFilterHost::CannotFitWithout(const framework::CycleState& /*state*/,
                                       const framework::PodInfo& pod,
                                       const framework::NodeInfo& node,
                                       const api::ResourceList& freed, size_t freed_pods) const {
  if (!resource_fit_runs_) return false;
  NominatedTake& take = ThreadRequestsBuffers().take;
  TakeOf(pod, nominated_.For(&node), take);
  const api::ResourceList& allocatable = node.allocatable();
  const auto pods = static_cast<int64_t>(node.pods().size() - freed_pods);
  if (pods + take.pods + 1 > allocatable.Get(api::kPods)) return true;
  for (const api::ResourceId id : {api::kCpu, api::kMemory, api::kEphemeralStorage}) {
    const int64_t amount = pod.requests.Get(id);
    if (amount <= 0) continue;
    const int64_t nominated = take.requests == nullptr ? 0 : take.requests->Get(id);
    const int64_t free = allocatable.Get(id) - node.requested().Get(id) + freed.Get(id) - nominated;
    if (amount > free) return true;
  }
  return false;
}

framework::Status CycleFilterHost::RunFiltersWithout(const framework::CycleState& state,
                                                     const framework::PodInfo& pod,
                                                     const framework::NodeInfo& node,
                                                     const api::ResourceList& freed,
                                                     size_t freed_pods) const {
  if (!judges_by_requests_) return PostFilterHost::RunFiltersWithout(state, pod, node, freed, 0);
  RequestsBuffers& buffers = ThreadRequestsBuffers();
  TakeOf(pod, nominated_.For(&node), buffers.take);
  api::ResourceList& requested = buffers.requested;
  requested = node.requested();
  requested.Subtract(freed);
  const auto pods = static_cast<int64_t>(node.pods().size() - freed_pods);
  // As RunFiltersWithNominated: first with the counted nominated pods, then without them.
  if (buffers.take.requests != nullptr) {
    requested.Add(*buffers.take.requests);
    framework::Status status =
        fw_.RunFilterOnRequests(state, pod, node, skip_, requested, pods + buffers.take.pods);
    if (!status.IsSuccess()) return status;
    requested.Subtract(*buffers.take.requests);
  }
  return fw_.RunFilterOnRequests(state, pod, node, skip_, requested, pods);
}

void CycleFilterHost::ParallelFor(size_t n,
                                  const std::function<void(size_t begin, size_t end)>& fn) const {
  if (n == 0) return;
  if (pool_ == nullptr || pool_->threads() <= 1) {
    fn(0, n);
    return;
  }
  // Small chunks, handed out one at a time: per-index work (a dry run on a node) varies a lot, and
  // a chunk costs one atomic increment.
  const size_t chunk = std::clamp<size_t>(n / (4 * static_cast<size_t>(pool_->threads())), 1, 8);
  pool_->ParallelFor(n, chunk, fn);
}

}  // namespace kubesched::scheduler
