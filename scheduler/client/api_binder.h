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
  // Attempts in total, counting the first. Each attempt already includes the transport's own
  // retries, so a few are enough to ride out a short API server hiccup.
  int attempts = 3;
  // Wait before the second attempt; doubled each time up to `max_backoff`. Each wait is jittered
  // down to as little as half, so that bind workers that failed together do not retry together.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(1);
  // How to wait between attempts; absl::SleepFor when empty. Tests inject a recorder.
  std::function<void(absl::Duration)> sleep;
};

// Binds pods through the API server: POST .../pods/{name}/binding with a v1 Binding.
//
// Results:
//   - Success on 200/201.
//   - Error at once on 404 (the pod is gone), 409 (already bound, or a new pod with the same name:
//     the UID in the Binding no longer matches) and any other status a retry would get again
//     (400/403/422); Error after `attempts` tries on transport failures, 429 and 5xx. Either way
//     the scheduler unreserves and forgets the assumed pod and requeues it with backoff: it is
//     never dropped on the binder's word, and the watch removes it from the queue once it shows
//     the pod deleted or bound.
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
  void SleepBeforeAttempt(int attempt) const;

  HttpTransport* transport_;
  ApiBinderOptions options_;
};

}  // namespace kubesched::client
