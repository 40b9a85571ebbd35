#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "scheduler/api/objects.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/status.h"

namespace kubesched::client {

struct ApiBinderOptions {
  // Attempts in total, counting the first, while every answer so far was a definite refusal or a
  // retryable status (429, 5xx). Once an attempt's outcome is unknown, the binder keeps trying
  // past this (see ApiBinder).
  int attempts = 3;
  // Wait before the second attempt; doubled each time up to `max_backoff`. Each wait is jittered
  // down to as little as half, so that bind workers that failed together do not retry together.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
  // How to wait between attempts; absl::SleepFor when empty. Tests inject a recorder.
  std::function<void(absl::Duration)> sleep;
  // Asked before every POST: false stops the binder without sending (run mode: this replica no
  // longer leads, its lease renewal is overdue, or it is shutting down). Empty: always true.
  std::function<bool()> may_send;
};

// Binds pods through the API server: POST .../pods/{name}/binding with a v1 Binding.
//
// A bind either succeeds, is refused, or has an unknown outcome, and each is handled so that the
// scheduler never hands the pod's room to another pod while the pod may be bound:
//   - Success on 200/201, and on a 409 when a GET of the pod shows it bound to this node with this
//     UID (an earlier attempt whose answer was lost, or a watch that lags).
//   - Refused (Error): 404 (the pod is gone); 409 when the GET shows the pod bound elsewhere,
//     deleted, re-created with another UID, or still unbound; 400/403/422; and 429/5xx after
//     `attempts` tries when no attempt's outcome is unknown. The scheduler then unreserves,
//     forgets the assumed pod and requeues it with backoff; the watch removes it from the queue
//     if it is bound or deleted.
//   - Unknown: the connection failed or timed out after the request may have reached the server.
//     The binder then keeps sending the same Binding (with backoff up to `max_backoff`) until a
//     definite answer: success, or a 409 resolved by a GET, or a refusal. Sending it again is safe:
//     the server binds a pod once, and answers a second Binding with 409. Meanwhile the pod stays
//     assumed, its room held. Only `may_send` turning false ends it early (an Error): the replica
//     stops scheduling then, so the room it gives back is handed to no one.
// Messages name the pod, the node and the server's reason.
//
// Thread-safe: stateless apart from the transport, which must itself be thread-safe; bind workers
// call BindPod concurrently. BindPod sleeps between attempts, so it must never run on the
// scheduling thread.
class ApiBinder : public framework::PodBinder {
 public:
  explicit ApiBinder(HttpTransport* transport, ApiBinderOptions options = {});

  framework::Status BindPod(const api::Pod& pod, std::string_view node_name) override;

  // The Binding object sent for `pod` and `node_name` (exposed for tests).
  static std::string BindingBody(const api::Pod& pod, std::string_view node_name);

 private:
  enum class ConflictOutcome {
    kBoundHere,             // bound to our node, same UID: an earlier Binding landed
    kBoundElsewhereOrGone,  // another node, deleted, or re-created with another UID
    kUnbound,               // the 409 was about something else (a conflict, scheduling gates)
    kNoAnswer,              // the GET failed: still unknown
  };
  // After a 409: where the pod is now, by a GET.
  ConflictOutcome ResolveConflict(const api::Pod& pod, std::string_view node_name) const;
  void SleepBeforeAttempt(int attempt) const;

  HttpTransport* transport_;
  ApiBinderOptions options_;
};

}  // namespace kubesched::client
