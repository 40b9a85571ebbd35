#pragma once

// Polls metrics.k8s.io/v1beta1 NodeMetrics (metrics-server) for MostAvailable: every `interval`,
// LIST /apis/metrics.k8s.io/v1beta1/nodes and deliver each node's sample to the handler's
// OnNodeMetrics (ADDED/MODIFIED), and DELETED for nodes that dropped out of the list. The metrics
// API has no watch; this is its informer.
//
// Failures never stop it: a failed poll is logged and retried at the next interval. 404 (no
// metrics-server, or the API not registered) is logged once at info; MostAvailable then keeps
// scoring on requests until samples arrive.

#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "scheduler/client/event_handler.h"
#include "scheduler/client/http_transport.h"

namespace kubesched::client {

inline constexpr std::string_view kNodeMetricsPath = "/apis/metrics.k8s.io/v1beta1/nodes";

struct MetricsPollerStats {
  int64_t polls = 0;     // LIST requests made
  int64_t failures = 0;  // polls that delivered nothing (transport error, non-2xx, bad body)
  int64_t samples = 0;   // ADDED/MODIFIED deliveries
};

// Thread-safety: Start()/Stop() from one owning thread; PollOnce() from the polling thread (or a
// test, without Start); Stats() from any thread. The handler is called from the polling thread
// only; it must be thread-safe against the informers' deliveries (the Scheduler's is: it only
// writes the locked cache). `last_` and `logged_not_found_` belong to the polling thread.
class MetricsPoller {
 public:
  // `transport` and `handler` must outlive this object. `interval` > 0.
  MetricsPoller(HttpTransport* transport, ClusterEventHandler* handler, absl::Duration interval);
  ~MetricsPoller();  // Stop()

  MetricsPoller(const MetricsPoller&) = delete;
  MetricsPoller& operator=(const MetricsPoller&) = delete;

  // Starts the polling thread: a poll at once, then one every interval. Once only.
  void Start();
  // Stops and joins the thread; prompt unless a request is in flight. Idempotent.
  void Stop();

  // One poll: LIST, decode, deliver. The status says what went wrong (also logged).
  absl::Status PollOnce();

  MetricsPollerStats Stats() const;

 private:
  void Run(std::stop_token stop);
  absl::Status Deliver(const std::string& body);

  HttpTransport* const transport_;
  ClusterEventHandler* const handler_;
  const absl::Duration interval_;

  // Last delivered sample per node, to tell ADDED from MODIFIED and to notice deletions.
  absl::flat_hash_map<std::string, std::shared_ptr<const api::NodeMetrics>> last_;
  bool logged_not_found_ = false;

  mutable std::mutex stats_mu_;  // guards stats_
  MetricsPollerStats stats_;

  std::jthread thread_;
  bool started_ = false;  // owning thread only
};

}  // namespace kubesched::client
