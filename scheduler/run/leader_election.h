#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, with client-go's leaderelection semantics,
// so that kubesched replicas and kube-scheduler-style tooling read the lease the same way.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/util/clock.h"

namespace kubesched::scheduler {

struct LeaderElectionConfig {
  std::string namespace_name = "kube-system";
  std::string name = "kubesched";
  // Unique per replica; DefaultLeaderIdentity() when empty.
  std::string identity;
  // How long a holder's lease stays valid without renewal, measured by each candidate's own clock
  // from when it last saw the lease change.
  absl::Duration lease_duration = absl::Seconds(15);
  // How long the leader keeps trying to renew before it gives up leadership.
  absl::Duration renew_deadline = absl::Seconds(10);
  // Between attempts, both when acquiring and when renewing.
  absl::Duration retry_period = absl::Seconds(2);
  // On stop while leading, hand the lease over at once (holder "", 1-second duration) instead of
  // making the next leader wait out lease_duration.
  bool release_on_cancel = true;
};

// Checks the client-go invariants: lease_duration > renew_deadline > retry_period * 1.2 > 0 and
// a lease name and namespace. InvalidArgument naming the field otherwise.
absl::Status ValidateLeaderElectionConfig(const LeaderElectionConfig& config);

// "<hostname>_<random UUID>", like kube-scheduler's default identity.
std::string DefaultLeaderIdentity();

struct LeaderCallbacks {
  // We became the leader. Called on Run's thread: start the work elsewhere and return promptly,
  // because renewals wait for it.
  std::function<void()> on_started_leading;
  // Leadership ended: renewal failed for renew_deadline, or stop was requested while leading
  // (after the lease was released). Called once, and only if on_started_leading was. Whichever
  // the cause, stop scheduling now: another replica may already lead. As upstream, a caller whose
  // stop was not requested should exit non-zero.
  std::function<void()> on_stopped_leading;
  // The observed holder changed (including to us). Called on Run's thread.
  std::function<void(const std::string& identity)> on_new_leader;
  // Whether this replica leads, for client-go's leader_election_master_status: false when Run
  // begins campaigning, true once it holds the lease, false again when leadership ends. Called on
  // Run's thread.
  std::function<void(bool leading)> on_leading_status;
};

// Runs leader election for one identity.
//
// Each attempt GETs the lease: absent, it is created; held by another identity whose lease has not
// expired, we wait; otherwise we PUT it back with us as holder, with the resourceVersion we read,
// so that of two candidates only one wins (409 for the other, which retries). Expiry follows
// client-go: the holder's leaseDurationSeconds counted from when OUR clock last saw the lease
// record change, never from the server's renewTime, so clock skew between machines does not
// matter.
//
// Unlike client-go, a leader that reads the lease held by another identity, unexpired, gives up at
// once rather than retrying until its renew deadline: the other replica may already be binding.
//
// Thread-safety: Run on one thread at a time; IsLeader, RenewedWithin and LeaderIdentity from any
// thread.
class LeaderElector {
 public:
  // Waits `duration` or until `stop` is requested; returns false if stopped.
  using WaitFn = std::function<bool(absl::Duration duration, const std::stop_token& stop)>;

  // `transport` and `clock` must outlive the elector. A null clock means real time; an empty
  // `wait` waits in real time, woken early by the stop token.
  LeaderElector(client::HttpTransport* transport, LeaderElectionConfig config,
                const util::Clock* clock = nullptr, WaitFn wait = {});

  // Campaigns until elected, then renews until renewal fails or `stop` is requested. Returns when
  // leadership ended, or when stopped before it began. Call ValidateLeaderElectionConfig first.
  void Run(std::stop_token stop, const LeaderCallbacks& callbacks);

  // Gives the lease up (holder "", leaseDurationSeconds 1) if we hold it. Run does this itself on
  // stop when release_on_cancel; call it only when Run is not running.
  absl::Status Release();

  bool IsLeader() const { return leading_.load(std::memory_order_acquire); }
  // Whether we lead and our last successful renewal (or acquisition) began less than `window`
  // ago, by the elector's clock. Bind workers ask it with the renew deadline before every bind: a
  // leader whose renewals stall (a partition, or a process paused and resumed) stops binding before
  // any other replica may consider the lease expired, even before it notices it lost the lease.
  bool RenewedWithin(absl::Duration window) const;
  // The holder we last observed ("" when none, or unknown yet).
  std::string LeaderIdentity() const;
  const std::string& identity() const { return config_.identity; }

 private:
  // The lease spec as client-go's LeaderElectionRecord. Times are kept as the strings read, since
  // expiry is judged by local observation and acquireTime is only carried over.
  struct Record {
    std::string holder;
    int64_t lease_duration_seconds = 0;
    std::string acquire_time;
    std::string renew_time;
    int64_t lease_transitions = 0;
    bool operator==(const Record&) const = default;
  };

  enum class Attempt {
    kHeld,         // we hold the lease now
    kFailed,       // no answer, or a conflict: try again
    kHeldByOther,  // another identity holds an unexpired lease
  };
  // One attempt of acquiring or renewing.
  Attempt TryAcquireOrRenew(absl::Duration timeout);
  bool Acquire(const std::stop_token& stop, const LeaderCallbacks& callbacks);
  // Returns when renewal failed for renew_deadline or stop was requested.
  void RenewUntilLost(const std::stop_token& stop, const LeaderCallbacks& callbacks);
  void ReportLeaderChange(const LeaderCallbacks& callbacks);

  // GET: the lease, or NotFound, or another error. Caches the raw object for the next update.
  // Each request gets `timeout` and no transport retries: the election loop is the retry.
  absl::StatusOr<Record> GetLease(absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CreateLease(const Record& record, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // PUT of the cached object with `record` as its spec, checked against its resourceVersion.
  absl::Status UpdateLease(const Record& record, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<client::HttpResponse> Send(std::string method, std::string target,
                                            std::string body, absl::Duration timeout) const;
  // Remembers the object the server returned, for the next update's resourceVersion.
  absl::Status CacheLeaseObject(const std::string& body) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Observe(const Record& record, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ObservedHolderIsUs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::string LeasesPath() const;
  std::string LeasePath() const;
  bool Wait(absl::Duration duration, const std::stop_token& stop) const;
  absl::Duration JitteredRetryPeriod() const;

  client::HttpTransport* transport_;
  LeaderElectionConfig config_;
  util::RealClock real_clock_;
  const util::Clock* clock_;
  WaitFn wait_;

  // Serializes attempts and Release; held across their requests.
  mutable absl::Mutex mu_;
  // The lease object as last read or written (JSON), the base of the next PUT.
  std::string cached_lease_ ABSL_GUARDED_BY(mu_);
  std::optional<Record> observed_ ABSL_GUARDED_BY(mu_);
  absl::Time observed_time_ ABSL_GUARDED_BY(mu_);
  mutable absl::Mutex holder_mu_;  // never held across a request
  std::string observed_holder_ ABSL_GUARDED_BY(holder_mu_);
  std::string reported_leader_;  // Run's thread only
  std::atomic<bool> leading_{false};
  // When the last successful acquisition or renewal began (clock_, Unix nanoseconds).
  std::atomic<int64_t> last_renewal_unix_nanos_{0};
};

}  // namespace kubesched::scheduler
