#pragma once

// Queue quota usage and budgets: which queue each pod belongs to, what every queue's subtree uses,
// and how much of each budget has been spent. Fed by the scheduler (bound pods from the
// informers, namespaces, nodes, configuration) and by the QueueQuota plugin (Reserve charges an
// assumed pod, Unreserve refunds it); read by the plugin once per pod in PreFilter.
//
// Pod groups (gangs) are admitted all at once: before a group's first member is placed, the gang
// plugin asks AdmitGang whether the group's whole need fits every queue on its path and then
// holds that room with HoldGang, so that no other pod or group takes it while the members are
// placed one by one. A hold counts as used for everyone but the group's own members; each member
// charged shrinks it by what the member is charged. Typed per-model limits (nvidia.com/gpu.A100)
// are never held: which model a member charges depends on the node it lands on, so they stay
// checked per member per node (Admit's blocked_models, Reserve).
//
// Threads: one mutex guards all state; every public call takes it briefly. Never called from the
// per-node loop.
//
// Implemented by concern: quota_tracker.cc (inputs and rebuilds), quota_tracker_placement.cc,
// quota_tracker_admission.cc, quota_tracker_usage.cc (charges and reports),
// quota_tracker_budgets.cc (budgets and the ledger), quota_tracker_gangs.cc (group holds),
// quota_tracker_devices.cc (DRA devices: device_usage.h), quota_preemption.cc.
//
// DRA devices (the configuration's `devices`): a pod's charge counts the devices its claims hold
// (CountPodDevices for a bound pod, the devices picked on the node for an assumed one) to their
// resource and to the typed key of their model, so that limits, usage and budgets count them as
// they count a device plugin's GPUs. Which devices a pending pod gets depends on the node:
// Admit lists the limits they count against (Admission::device_limits) for QueueQuota's Filter,
// and Reserve checks the chosen node's devices.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "config/queues.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/device_resources.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/quota/device_usage.h"
#include "scheduler/quota/queue_tree.h"
#include "scheduler/quota/wait_keys.h"
#include "scheduler/util/clock.h"

namespace kubesched::quota {

inline constexpr char kQueueLabel[] = "kubesched.io/queue";
inline constexpr char kQueueAnnotation[] = "kubesched.io/queue";
inline constexpr char kParentQueueAnnotation[] = "kubesched.io/parent-queue";
inline constexpr char kNamespaceQuotaAnnotation[] = "kubesched.io/namespace-quota";

// Nodes whose model label has this value do not fit the pod's queue (a typed max or budget).
struct BlockedModel {
  api::Symbol label_key = api::kEmptySymbol;
  api::Symbol label_value = api::kEmptySymbol;  // the model (ModelNames)
  std::string message;
  std::string queue;    // the queue whose limit it is
  bool budget = false;  // a spent budget rather than a max
  // Which label values are that model; never null.
  std::shared_ptr<const ModelNames> model_names;
};

// A limit on the path of a pod with resource claims that the devices its claims would get count
// against: a max or a spent budget on a resource DRA devices count as (`nvidia.com/gpu`), or on a
// typed key of it (`nvidia.com/gpu.A100`). Which devices a pod gets depends on the node, so
// QueueQuota's Filter counts them node by node (framework::PickedDevices) against `room`.
struct DeviceLimit {
  api::ResourceId resource = 0;           // nvidia.com/gpu, also for a typed limit
  api::Symbol model = api::kEmptySymbol;  // a typed limit's model (ModelNames); empty: untyped
  // What devices may still take: max − used (− other groups' holds and the pod's own request of
  // the resource, for an untyped limit). A typed limit's room is shared with the pod's request
  // when the node's model label names the model (the device plugin's GPUs there).
  int64_t room = 0;
  bool budget = false;  // a spent budget: no such device may be added at all
  std::string queue;    // the queue whose limit it is
  std::string message;  // the FailedScheduling reason
  // A typed limit's node label, and which label values (and device models) are its model.
  api::Symbol label_key = api::kEmptySymbol;
  std::shared_ptr<const ModelNames> model_names;

  // Whether the devices `devices` (and the pod's `request` of the device plugin's kind, on a node
  // labelled `labels`) go over this limit.
  bool Exceeded(int64_t devices, int64_t request, const api::LabelSet& labels) const {
    if (devices <= 0) return false;
    if (budget) return true;
    const bool request_here =
        model != api::kEmptySymbol && model_names->Names(labels.Get(label_key), model);
    return devices + (request_here ? request : 0) > room;
  }
};

enum class Verdict {
  kFits,        // fits every untyped limit and budget (typed ones: see blocked_models)
  kOverQuota,   // used + request > max somewhere on the path: waits for usage to drop
  kOverBudget,  // a budget on the path is spent: waits for the period to reset
  kNoQueue,     // the pod names no usable leaf queue: waits for the configuration to change
};

struct Admission {
  Verdict verdict = Verdict::kFits;
  std::string queue;           // the pod's leaf queue; "" for kNoQueue
  std::string message;         // why not, for anything but kFits
  std::string blocking_queue;  // the deepest queue whose limit or budget blocks
  std::vector<BlockedModel> blocked_models;
  // For a pod with resource claims, when DRA devices count as a resource its path limits.
  std::vector<DeviceLimit> device_limits;
};

// The wait keys of a pod or group held back with `admission` ("quota:<queue>", "budget:<queue>",
// "placement"); empty when it fits and no model is blocked.
std::vector<std::string> AdmissionWaitKeys(const Admission& admission);

struct BudgetUsage {
  api::ResourceId resource = 0;
  std::string limit;  // as configured ("1000h")
  double limit_hours = 0;
  double used_hours = 0;
  std::optional<absl::Time> period_start;
  std::optional<absl::Duration> period;
  config::PeriodAlignment align_to = config::PeriodAlignment::kNone;
  std::optional<absl::Time> next_reset;  // when the current period ends; none: never
};

struct QueueUsage {
  std::string path;
  bool leaf = true;
  bool auto_created = false;
  api::ResourceList max;
  std::vector<api::ResourceId> limited;  // every resource with a max, typed ones included
  api::ResourceList used;                // typed keys included
  // Held for pod groups whose members are not all placed yet (untyped keys only): not part of
  // `used`, but the room left to other pods is max - used - held.
  api::ResourceList held;
  std::vector<BudgetUsage> budgets;
};

// A max or budget on a typed key (`nvidia.com/gpu.A100`) whose model no known node has: it
// limits nothing until such a node joins, which is most often a typo or a missing `models` entry.
struct UnmatchedTypedLimit {
  std::string queue;     // root.research
  std::string resource;  // nvidia.com/gpu.A100
  std::string model;     // A100
  bool budget = false;   // a budget rather than a max
  bool devices = false;  // DRA devices of the resource would count too (none of the model)
  // The warning users see (log, Event, explain, simulate).
  std::string Message() const;
};

// The budget ledger as persisted: spent amounts per queue and resource, in the resource's
// canonical units times seconds.
struct LedgerEntry {
  std::string queue;
  std::string resource;
  double used_unit_seconds = 0;
  absl::Time period_start;
};
struct Ledger {
  absl::Time written_at;
  std::vector<LedgerEntry> entries;
};

// Quota-aware preemption for a pod held back by queue quota: which running pods it may preempt
// (lower priority is the plugin's business; here: counted in the subtree of the queue that
// blocks it) and whether removing a set of them makes room in every queue on its path. A copy of
// the tracker's numbers at one moment, read without the tracker's lock.
class QuotaPreemption {
 public:
  const std::string& blocking_queue() const { return blocking_queue_; }
  // Whether the pod counts in the blocking queue's subtree (only those may be preempted).
  bool MayPreempt(const std::string& pod_key) const { return charges_.contains(pod_key); }
  // Whether the pod fits its queue's limits (untyped ones) once `victims` are gone.
  bool FitsWithout(const std::vector<std::string>& victims) const;
  // No pod of the blocking queue's subtree is below the preemptor's priority: nothing to preempt.
  bool Empty() const { return charges_.empty(); }

 private:
  friend class QuotaTracker;
  struct Level {
    std::string path;
    std::vector<api::ResourceId> limited;
    api::ResourceList max;
    api::ResourceList used;
  };
  struct Charge {
    std::string queue;  // where it counts
    api::ResourceList amounts;
  };
  std::string blocking_queue_;
  api::ResourceList request_;
  std::vector<Level> path_;  // the pod's leaf first
  absl::flat_hash_map<std::string, Charge> charges_;
};

class QuotaTracker {
 public:
  // Called, outside the tracker's lock, with the wait keys a change may help.
  using WakeHandler = std::function<void(const std::vector<std::string>& keys)>;

  QuotaTracker(const util::Clock* clock, config::QueuesConfig config);
  // Set once, before events flow.
  void SetWakeHandler(WakeHandler handler) { wake_ = std::move(handler); }

  // A new validated configuration (from the file or the ConfigMap): the tree is rebuilt and the
  // usage of every pod already counted is recomputed under it. Budgets keep what was spent by
  // queue path. Wakes every waiting pod; so do namespace changes that move queues.
  void SetConfig(config::QueuesConfig config);
  // Returns true when the namespace's queue annotations changed (waiting pods may now fit).
  bool SetNamespace(const api::Namespace& ns);
  bool RemoveNamespace(const std::string& name);
  void SetNode(const api::Node& node);
  void RemoveNode(const std::string& name);
  // Makes room for charging `pods` pods when the cluster's size is known up front (as
  // cache::Cache::ReservePods).
  void ReservePods(size_t pods);

  // PreFilter's question: does the pod fit its queue's limits and budgets (on some node)?
  Admission Admit(const framework::PodInfo& pod);
  // After a failed attempt: the keys whose release may let the pod fit ("quota:<queue>",
  // "budget:<queue>", "placement"); empty when it fits now.
  std::vector<std::string> WaitKeys(const framework::PodInfo& pod);

  // Reserve: checks the pod against its queue once more, with `node`'s model and the DRA devices
  // its claims get there (`devices`), and charges it as assumed. On failure, the FailedScheduling
  // message.
  absl::Status Reserve(const framework::PodInfo& pod, std::string_view node,
                       const DeviceTally& devices = {});
  // A pod the informers show bound and running (confirms an assumed charge), with the devices its
  // claims hold (CountPodDevices). An assumed charge keeps the devices Reserve gave it unless
  // `devices` names some and they differ.
  void ChargeBound(const framework::PodInfo& pod, const PodDevices& devices = {});
  // The devices of a charged pod's claims changed (a claim allocated, released, or resolved once
  // its slice is seen): the pod is charged them instead. Returns whether the charge changed; a
  // charge that shrank wakes the quota keys of its queues.
  bool SetPodDevices(const std::string& pod_key, const PodDevices& devices);
  // The charged pods some of whose devices no slice published when they were counted.
  std::vector<std::string> PodsWithUnresolvedDevices();
  // The devices a ResourceSlice publishes appearing (+1) or going (-1): their models are models
  // that exist, for UnmatchedTypedLimits.
  void CountPublishedDevices(const DeviceTally& devices, int sign);
  // The configuration's `devices`, compiled; null when it lists none. Fixed for the tracker's life.
  const std::shared_ptr<const framework::DeviceResources>& device_resources() const {
    return device_resources_;
  }
  // Refunds the pod's charge (deleted, terminated, expired, unreserved). `assumed_only`: only if
  // it has not been confirmed bound (a failed bind must not refund a pod that did bind). Wakes
  // (and returns) the wait keys this may help.
  std::vector<std::string> Release(const std::string& pod_key, bool assumed_only);
  // Rolls budget periods over; wakes (and returns) the wait keys of budgets that reset.
  std::vector<std::string> Tick();

  // Group quota, for the gang plugin. `member` is any member of the group (PodInfo::gang.key
  // names it); its queue is the group's. `gang_need` is the group's whole need: the requests of
  // min_member pods summed, `pods` included (min_member of them; AdmitGang raises a lower `pods`
  // to min_member, HoldGang takes the need as given, so pass both the same). Typed keys in it are
  // ignored.
  //
  // AdmitGang: before the first member is placed, whether the part of the need not yet covered
  // (gang_need minus what the group's assumed and bound members are charged, floored at 0 per
  // resource) fits the untyped max of the member's queue and of every ancestor, counting other
  // groups' holds as used but not the group's own; a spent untyped budget on the path that the
  // need draws on gives kOverBudget. Typed limits and budgets are left to each member (no
  // blocked_models). A group held back waits on AdmissionWaitKeys(admission), the keys a pod
  // blocked by the same queue waits on.
  Admission AdmitGang(const framework::PodInfo& member, const api::ResourceList& gang_need,
                      int32_t min_member);
  // Checks as AdmitGang and, when it fits, holds the uncovered need in the member's queue and
  // every ancestor. Idempotent: a group already held keeps its hold unchanged and gets OK.
  // Errors: InvalidArgument (the member is in no group), FailedPrecondition (no usable queue),
  // ResourceExhausted (over a max or a budget; the message is AdmitGang's). Holds never spend
  // budgets. A member refunded (Release) gives its amounts back to the hold, up to the need.
  absl::Status HoldGang(const framework::PodInfo& member, const api::ResourceList& gang_need);
  // Drops the group's hold (timed out, rejected, or every member bound) and wakes the quota keys
  // of the queues on its path. Unknown keys are ignored.
  void ReleaseGang(const std::string& gang_key);

  // For a pod that Admit holds back with kOverQuota: the view preemption needs; nullopt otherwise.
  std::optional<QuotaPreemption> PreemptionView(const framework::PodInfo& pod);
  // The same for a group member that AdmitGang holds back with kOverQuota (same arguments): the
  // victims must free the part of the group's need not yet covered.
  std::optional<QuotaPreemption> GangPreemptionView(const framework::PodInfo& member,
                                                    const api::ResourceList& gang_need,
                                                    int32_t min_member);

  std::vector<QueueUsage> Usage();
  // The pod's queue and every ancestor's usage, leaf first (explain's headroom).
  std::vector<QueueUsage> PathUsage(const framework::PodInfo& pod);
  // The same for the group of `member` as AdmitGang judges it (explain): `used` leaves out what
  // the group's members are charged and `held` the group's own hold, so that max - used - held
  // is the room for the group's whole need. Empty when the member names no usable leaf queue.
  std::vector<QueueUsage> GangPathUsage(const framework::PodInfo& member);

  // The typed limits of the tree in force that match no node's model, by queue and resource. Nodes
  // joining or leaving (SetNode, RemoveNode) and reloads change the answer.
  std::vector<UnmatchedTypedLimit> UnmatchedTypedLimits();
  // How many of `pending` each queue holds (its leaf, or where it is counted when it names no
  // usable leaf), by queue path; queues with none are left out.
  absl::flat_hash_map<std::string, int64_t> PendingByQueue(
      const std::vector<const framework::PodInfo*>& pending);

  Ledger ExportLedger();
  // Adopts spent amounts for queues and resources that have a budget now; pods found running
  // later are charged from `written_at` (or their start) so downtime is not free.
  void ImportLedger(const Ledger& ledger);

 private:
  // The typed resource (`nvidia.com/gpu.A100`) a node whose `model` label is `label_value` charges.
  api::ResourceId TypedResource(const ModelResource& model, api::Symbol label_value) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  struct NamespaceInfo {
    std::string queue;
    std::string parent;
    std::string quota_text;
    api::ResourceList max;
    std::vector<api::ResourceId> limited;
    std::string quota_error;

    bool SameQueueSettings(const NamespaceInfo& other) const {
      return queue == other.queue && parent == other.parent && quota_text == other.quota_text;
    }
  };

  // One per charged pod, so the names are interned (api::Symbol) rather than a string each.
  struct PodCharge {
    api::Symbol namespace_name = api::kEmptySymbol;
    api::Symbol label_queue = api::kEmptySymbol;  // the pod's kubesched.io/queue label
    api::Symbol node = api::kEmptySymbol;
    int queue = 0;       // where it is counted: its leaf, or the deepest existing queue
    PodDevices devices;  // the DRA devices its claims hold
    bool assumed = true;
    int32_t priority = 0;    // only pods below a preemptor's priority matter to its view
    api::ResourceList base;  // requests + one pod
    // base + the node's typed keys + the devices' (ChargeAmountsLocked); absent where those add
    // nothing, so that most charges hold one list.
    api::SharedOptional<api::ResourceList> typed;
    api::Symbol gang = api::kEmptySymbol;  // the pod's group key, interned; kEmptySymbol: none

    const api::ResourceList& amounts() const { return typed.has_value() ? *typed : base; }
    void SetAmounts(api::ResourceList amounts) {
      if (amounts == base) {
        typed.reset();
      } else {
        typed = std::move(amounts);
      }
    }
  };

  // Room held for a pod group. Invariant: amounts == max(0, need - gang_charged_[gang]) per
  // resource, and amounts is counted in held_ of `queue` and every ancestor.
  struct GangHold {
    std::string namespace_name;  // to place the group again after a reload
    std::string label_queue;
    int queue = 0;  // the member's leaf queue
    api::ResourceList need;
    api::ResourceList amounts;
  };

  // What a group's assumed and bound members are charged (their base amounts).
  struct GangCharged {
    api::ResourceList amounts;
    int members = 0;
  };

  // Where a request does not fit: the first limited untyped resource, leaf first.
  struct Shortfall {
    int queue = -1;
    api::ResourceId resource = 0;
    int64_t used = 0;  // charged pods in the subtree
    int64_t held = 0;  // other groups' holds in the subtree
    int64_t wanted = 0;
  };

  struct BudgetState {
    double spent = 0;  // canonical units x seconds in the current period
    double rate = 0;   // canonical units of running pods in the subtree
    absl::Time last;
    absl::Time period_start;
    // The period start Tick last announced: resets happen lazily on any read, Tick tells waiters.
    absl::Time announced_start;
  };

  struct Resolution {
    int queue = -1;   // the leaf the pod goes to; -1 when it names no usable leaf
    int account = 0;  // where its usage counts when it runs anyway
    std::string error;
  };

  void RebuildLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Resolution ResolveLocked(std::string_view ns, std::string_view label_queue)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The queue of `pod`: by its namespace and its queue label.
  Resolution ResolvePodLocked(const framework::PodInfo& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Admission CheckLocked(const framework::PodInfo& pod, const Resolution& where, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The first queue from `leaf` up where a limited untyped resource of `wanted` does not fit,
  // counting every hold but `own`'s (the group the asker belongs to, may be null).
  std::optional<Shortfall> FindShortfallLocked(int leaf, const api::ResourceList& wanted,
                                               const GangHold* own) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Budgets from `leaf` up that `wanted` draws on: a spent untyped one sets kOverBudget (and
  // returns true); spent typed ones go to blocked_models when `typed_too`.
  bool CheckBudgetsLocked(int leaf, const api::ResourceList& wanted, absl::Time now, bool typed_too,
                          Admission* admission) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What queue `q` counts as used of `id` for a pod of group `own` (may be null): its pods'
  // charges plus every other group's hold.
  int64_t CountedLocked(int q, api::ResourceId id, const GangHold* own) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const GangHold* HoldOfLocked(const std::string& gang_key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Admission CheckGangLocked(const framework::PodInfo& member, const Resolution& where,
                            const api::ResourceList& gang_need, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The need the group's members placed so far do not cover (untyped keys only).
  api::ResourceList UncoveredGangNeedLocked(const framework::PodInfo& member,
                                            const api::ResourceList& gang_need) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The preemption view for `pod` held back by `blocking_queue`, wanting `request` at `leaf`. Of
  // the subtree's charges it copies only those of pods below `pod`'s priority.
  QuotaPreemption PreemptionViewLocked(const framework::PodInfo& pod, int leaf,
                                       std::string blocking_queue, api::ResourceList request) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Recomputes the group's hold from its need and its members' charges (see GangHold).
  void RefreshHoldLocked(const std::string& gang_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Around a rebuild: forget the holds' counted amounts and place them in the new tree (dropping
  // those whose queue is gone) before the charges are applied again; recompute them after.
  void ResetHoldsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshAllHoldsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  api::ResourceList TypedAmounts(const api::ResourceList& base, std::string_view node) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the charge counts: its base, the typed keys of its node's model, and its devices by
  // resource and by typed key of their model.
  api::ResourceList ChargeAmountsLocked(const PodCharge& charge) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The typed key `<resource>.<model>` a device of `model` (DeviceCount::model) charges; 0 when
  // the resource has no typed keys or the device no model.
  api::ResourceId DeviceTypedKeyLocked(api::ResourceId resource, api::Symbol model) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Admission::device_limits for `pod` at `leaf` (quota_tracker_devices.cc).
  void AddDeviceLimitsLocked(const framework::PodInfo& pod, int leaf,
                             const api::ResourceList& request, absl::Time now, Admission* admission)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The message of the first limit `devices` go over on `node`; nullopt when none.
  std::optional<std::string> DeviceShortfallLocked(const Admission& admission,
                                                   const DeviceTally& devices,
                                                   const framework::PodInfo& pod,
                                                   const std::string& node) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // "queue <path>: budget for <resource> used up (...)": the message of a spent budget.
  std::string BudgetMessageLocked(int queue, size_t budget, double spent) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyLocked(const PodCharge& charge, int sign, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FoldBudgetsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double SpentLocked(int queue, size_t budget, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EnsureBudgetStatesLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  QueueUsage UsageOfLocked(int queue, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void Wake(const std::vector<std::string>& keys) const {
    if (wake_ && !keys.empty()) wake_(keys);
  }

  const util::Clock* const clock_;
  const std::shared_ptr<const framework::DeviceResources> device_resources_;
  WakeHandler wake_;
  mutable absl::Mutex mu_;
  config::QueuesConfig config_ ABSL_GUARDED_BY(mu_);
  QueueTree tree_ ABSL_GUARDED_BY(mu_);
  std::vector<api::ResourceList> used_ ABSL_GUARDED_BY(mu_);  // by queue index
  // By queue index, parallel to QueueNode::budget.
  std::vector<std::vector<BudgetState>> budgets_ ABSL_GUARDED_BY(mu_);
  // A node per charge: with one charge per pod of the cluster, a slot of the table is a pointer
  // instead of a whole charge, which matters most while the table grows (old and new at once).
  absl::node_hash_map<std::string, PodCharge> charges_ ABSL_GUARDED_BY(mu_);
  // The priorities of the charged pods: a preemptor at or below the lowest has nobody to preempt,
  // which a preemption view then knows without reading every charge. Kept by the two below.
  absl::btree_multiset<int32_t> charged_priorities_ ABSL_GUARDED_BY(mu_);
  void AddChargeLocked(const std::string& pod_key, PodCharge charge)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseChargeLocked(absl::node_hash_map<std::string, PodCharge>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pod groups' holds by group key, what each group's members are charged (kept by ApplyLocked),
  // and by queue index the holds counted in each subtree. Guarded by the same mutex: a hold and
  // the charges that shrink it change together.
  absl::flat_hash_map<std::string, GangHold> holds_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, GangCharged> gang_charged_ ABSL_GUARDED_BY(mu_);
  std::vector<api::ResourceList> held_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, NamespaceInfo> namespaces_ ABSL_GUARDED_BY(mu_);
  // Node name -> the typed keys a placement there charges ({generic, typed} per model); nodes
  // without a model have no entry.
  absl::flat_hash_map<std::string, std::vector<std::pair<api::ResourceId, api::ResourceId>>>
      node_models_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, api::LabelSet> node_labels_ ABSL_GUARDED_BY(mu_);
  // The devices published slices hold, by resource and model (CountPublishedDevices).
  DeviceTally published_devices_ ABSL_GUARDED_BY(mu_);
  // Charged pods with devices no slice published when they were counted.
  absl::flat_hash_set<std::string> unresolved_devices_ ABSL_GUARDED_BY(mu_);
  // From ImportLedger: pods first seen running are charged from here at the earliest.
  std::optional<absl::Time> ledger_written_at_ ABSL_GUARDED_BY(mu_);
};

// "root.prod" for "prod" or "root.prod": queue names may be written without the root.
std::string NormalizeQueuePath(std::string_view name);

// A group's need as group quota judges it (AdmitGang, GangPreemptionView, explain): `pods`
// raised to minMember, since a group of n pods takes n pod slots whatever its spec.minResources.
api::ResourceList WithMemberPods(api::ResourceList need, int32_t min_member);

}  // namespace kubesched::quota
