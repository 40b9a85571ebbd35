#pragma once

// A scripted HttpTransport for tests of the reflectors and API writers: each request is answered
// by a handler the test installs, and every request is recorded.

#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/client/http_transport.h"

namespace kubesched::testing {

class FakeTransport : public client::HttpTransport {
 public:
  using DoHandler = std::function<absl::StatusOr<client::HttpResponse>(const client::HttpRequest&)>;
  using LineSink = std::function<void(std::string_view)>;
  using WatchHandler = std::function<absl::StatusOr<client::HttpResponse>(
      const client::HttpRequest&, const LineSink&, std::stop_token)>;

  void OnDo(DoHandler handler) {
    absl::MutexLock lock(&mu_);
    do_handler_ = std::move(handler);
  }
  void OnWatch(WatchHandler handler) {
    absl::MutexLock lock(&mu_);
    watch_handler_ = std::move(handler);
  }

  absl::StatusOr<client::HttpResponse> Do(const client::HttpRequest& request) override {
    DoHandler handler;
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
      handler = do_handler_;
    }
    if (!handler) return absl::UnavailableError("fake transport: no Do handler");
    return handler(request);
  }

  absl::StatusOr<client::HttpResponse> Watch(const client::HttpRequest& request,
                                             const LineSink& on_line,
                                             std::stop_token stop) override {
    WatchHandler handler;
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
      handler = watch_handler_;
    }
    if (!handler) return absl::UnavailableError("fake transport: no Watch handler");
    return handler(request, on_line, std::move(stop));
  }

  std::vector<client::HttpRequest> requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  mutable absl::Mutex mu_;
  DoHandler do_handler_ ABSL_GUARDED_BY(mu_);
  WatchHandler watch_handler_ ABSL_GUARDED_BY(mu_);
  std::vector<client::HttpRequest> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::testing
