#pragma once

// Where the bearer token for API requests comes from. RestClient asks for a token before every
// request and calls Invalidate() when the server answers 401, so sources that can refresh
// (a rotating service-account token file, an exec credential plugin) get the chance to.

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/util/clock.h"

namespace kubesched::client {

// Implementations are thread-safe: RestClient calls them from every request thread.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to send now (without the "Bearer " prefix).
  virtual absl::StatusOr<std::string> Token() = 0;
  // The server rejected the last token: the next Token() should fetch a fresh one.
  virtual void Invalidate() {}
};

// A fixed token (kubeconfig users[].user.token). Immutable, so trivially thread-safe.
class StaticToken : public TokenSource {
 public:
  explicit StaticToken(std::string token) : token_(std::move(token)) {}
  absl::StatusOr<std::string> Token() override { return token_; }

 private:
  const std::string token_;
};

// A token read from a file (kubeconfig tokenFile, or the in-cluster service-account token, which
// the kubelet rotates: bound tokens expire after about an hour). The file is stat()ed at most
// every `recheck_interval` and re-read when its mtime or size changed; Invalidate() forces a
// re-read on the next Token(). Thread-safe: one mutex guards the cache.
class FileToken : public TokenSource {
 public:
  // `clock` (null = real clock) must outlive this object.
  explicit FileToken(std::string path, absl::Duration recheck_interval = absl::Seconds(10),
                     const util::Clock* clock = nullptr);
  absl::StatusOr<std::string> Token() override;
  void Invalidate() override;

 private:
  const std::string path_;
  const absl::Duration recheck_interval_;
  const util::Clock* const clock_;

  absl::Mutex mu_;
  std::optional<std::string> token_ ABSL_GUARDED_BY(mu_);
  absl::Time last_check_ ABSL_GUARDED_BY(mu_);
  int64_t mtime_ns_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t size_ ABSL_GUARDED_BY(mu_) = -1;
};

// A kubeconfig `users[].user.exec` credential plugin (client.authentication.k8s.io v1/v1beta1).
struct ExecConfig {
  std::string api_version{};  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command{};      // absolute, PATH-relative, or already resolved against the kubeconfig
  std::vector<std::string> args{};
  std::vector<std::pair<std::string, std::string>> env{};  // added to this process's environment
  std::string install_hint{};                              // shown when the command can't run
};

// Runs the plugin and caches its ExecCredential token until its expirationTimestamp minus
// `refresh_margin` (forever when it has none); Invalidate() forces the next Token() to run the
// plugin again. Thread-safe: one mutex guards the cache and serialises plugin runs, so a burst of
// requests runs the plugin once.
class ExecToken : public TokenSource {
 public:
  // `clock` (null = real clock) must outlive this object.
  explicit ExecToken(ExecConfig config, const util::Clock* clock = nullptr,
                     absl::Duration refresh_margin = absl::Seconds(30));
  absl::StatusOr<std::string> Token() override;
  void Invalidate() override;

  // How many times the plugin has run (for tests).
  int runs() const;

 private:
  const ExecConfig config_;
  const util::Clock* const clock_;
  const absl::Duration refresh_margin_;

  mutable absl::Mutex mu_;
  std::optional<std::string> token_ ABSL_GUARDED_BY(mu_);
  absl::Time expires_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  int runs_ ABSL_GUARDED_BY(mu_) = 0;
};

// Parses an ExecCredential JSON document (exposed for tests): the token and its expiry
// (InfiniteFuture when absent).
struct ExecCredential {
  std::string token;
  absl::Time expiration = absl::InfiniteFuture();
};
absl::StatusOr<ExecCredential> ParseExecCredential(const std::string& json,
                                                   const std::string& expected_api_version);

}  // namespace kubesched::client
