#include "scheduler/api/shared_list.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/objects.h"

namespace kubesched::api {
namespace {

// Equal items hash equally: a hash over some fields is enough, operator== decides.
size_t HashOf(const Container& c) {
  return absl::HashOf(c.name, c.image, c.requests_cpu, c.requests_memory, c.ports.size(),
                      c.restart_policy);
}
size_t HashOf(const Toleration& t) {
  return absl::HashOf(t.key, t.op, t.value, t.effect, t.toleration_seconds);
}

template <typename T>
size_t HashOfList(const std::vector<T>& items) {
  size_t hash = items.size();
  for (const T& item : items) hash = absl::HashOf(hash, HashOf(item));
  return hash;
}

// The lists of T that objects hold, by content. A list is held weakly: it lives as long as some
// object holds it, and the table forgets it at the next sweep after that.
template <typename T>
class ListTable {
 public:
  SharedList<T> Intern(std::vector<T> items) {
    if (items.empty()) return {};
    const size_t hash = HashOfList(items);
    absl::MutexLock lock(&mu_);
    std::vector<std::weak_ptr<const std::vector<T>>>& bucket = lists_[hash];
    for (const auto& weak : bucket) {
      std::shared_ptr<const std::vector<T>> held = weak.lock();
      if (held != nullptr && *held == items) return SharedList<T>(std::move(held));
    }
    std::shared_ptr<const std::vector<T>> added =
        std::make_shared<const std::vector<T>>(std::move(items));
    bucket.push_back(added);
    if (++added_since_sweep_ >= sweep_after_) SweepLocked();
    return SharedList<T>(std::move(added));
  }

 private:
  static constexpr size_t kMinSweepAfter = 1024;

  // Drops the lists nobody holds. It runs after as many additions as lists were left by the last
  // sweep, so that its cost per list added is constant.
  void SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t live = 0;
    for (auto it = lists_.begin(); it != lists_.end();) {
      auto& bucket = it->second;
      std::erase_if(bucket, [](const auto& weak) { return weak.expired(); });
      live += bucket.size();
      if (bucket.empty()) {
        lists_.erase(it++);
      } else {
        ++it;
      }
    }
    added_since_sweep_ = 0;
    sweep_after_ = std::max(live, kMinSweepAfter);
  }

  absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<std::weak_ptr<const std::vector<T>>>> lists_
      ABSL_GUARDED_BY(mu_);
  size_t added_since_sweep_ ABSL_GUARDED_BY(mu_) = 0;
  size_t sweep_after_ ABSL_GUARDED_BY(mu_) = kMinSweepAfter;
};

template <typename T>
ListTable<T>& Table() {
  static ListTable<T>* table = new ListTable<T>();  // never destroyed: used until exit
  return *table;
}

}  // namespace

template <typename T>
SharedList<T> InternList(std::vector<T> items) {
  return Table<T>().Intern(std::move(items));
}

template SharedList<Container> InternList(std::vector<Container> items);
template SharedList<Toleration> InternList(std::vector<Toleration> items);

}  // namespace kubesched::api
