#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "config/plugin_args.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::plugins {

// The Watermark strategy's allocated ratios and modes, per pool of nodes.
//
// A pod's ratio is taken over the nodes it could use: the node groups (framework::NodeGroup)
// whose NoSchedule/NoExecute taints it tolerates (a cordon counts as such a taint). With
// `watermark.pools`, the pod's pool is the first configured pool holding such a group, and its
// ratio is over that pool's groups it tolerates; a pod that can use no configured pool is in the
// "default" pool: the groups in no pool that it tolerates. Each configured pool keeps one mode
// (its own hysteresis); the default pool keeps one per set of groups its pods tolerate (pods
// without tolerations share one; GPU pods tolerating the GPU taint another), so a class of pods
// never flips the mode of another. A pass over a handful of groups per pod, never over nodes.
//
// When the snapshot has no groups (one built without the cache, in tests), the ratio is the
// cluster's, as before pools existed.
class Watermark {
 public:
  enum class Mode { kSpread, kStack };
  struct Status {
    std::string_view pool = config::kDefaultWatermarkPool;  // lives as long as the Watermark
    Mode mode = Mode::kSpread;
    double allocated_ratio = 0;
  };
  struct Weight {
    api::ResourceId id;
    int64_t weight;
  };

  // `resources`: the strategy's resources (pods is left out here).
  Watermark(const config::WatermarkThresholds& config, const std::vector<Weight>& resources);

  // The hysteresis: stack at ratio >= high, spread at ratio < low, else `previous`.
  static Mode NextMode(Mode previous, double ratio, double high, double low);

  // The label keys the pools select on (the cache groups nodes by their values).
  std::vector<std::string> LabelKeys() const;
  // Σ_r w_r · requested_r / allocatable_r / Σ_r w_r over the resources the sums have any of.
  double Ratio(const api::ResourceList& allocatable, const api::ResourceList& requested) const;

  // The pool of a pod with `tolerations` on `snapshot`, its ratio, and its mode moved by it.
  Status Observe(const framework::Snapshot& snapshot,
                 const std::vector<api::Toleration>& tolerations);
  // The state of every pool observed so far ("default" first, then the pools in configuration
  // order); the default pool's is that of its class observed last.
  std::vector<Status> Last() const;
  // The mode last observed, whichever pool (for a Score call without PreScore).
  Mode LastMode() const { return last_mode_.load(std::memory_order_relaxed); }

 private:
  struct Pool {
    std::string name;
    std::vector<std::pair<api::Symbol, api::Symbol>> selector;
    double high;
    double low;
  };
  struct Kept {
    Mode mode = Mode::kSpread;
    double ratio = 0;
    bool observed = false;
  };
  // The configured pool a group's nodes are in (the first whose selector matches); -1 for none.
  int PoolOf(const framework::NodeGroup& group) const;
  Status Move(Kept& kept, std::string_view pool, double ratio, double high, double low)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  config::WatermarkThresholds thresholds_;
  std::vector<Weight> resources_;
  std::vector<Pool> pools_;
  mutable absl::Mutex mu_;
  std::vector<Kept> pool_states_ ABSL_GUARDED_BY(mu_);  // by pool index
  // The default pool's classes, keyed by the ids of the groups they tolerate.
  absl::flat_hash_map<uint64_t, Kept> default_states_ ABSL_GUARDED_BY(mu_);
  Kept last_default_ ABSL_GUARDED_BY(mu_);
  std::atomic<Mode> last_mode_{Mode::kSpread};
};

}  // namespace kubesched::plugins
