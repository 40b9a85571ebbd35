#include "scheduler/client/token_source.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/util/file.h"

extern char** environ;

namespace kubesched::client {
namespace {

const util::Clock* RealClockInstance() {
  static const util::RealClock* const clock = new util::RealClock();
  return clock;
}

// Tokens are a few KiB; the cap keeps a wrong path such as /dev/zero from exhausting memory.
constexpr size_t kMaxTokenFileBytes = size_t{1} << 20;

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> contents = util::ReadFileAtMost(path, kMaxTokenFileBytes);
  if (!contents.ok()) {
    return absl::UnavailableError(
        absl::StrCat("token file ", path, ": cannot read: ", contents.status().message()));
  }
  std::string token(absl::StripAsciiWhitespace(*contents));
  if (token.empty()) return absl::UnavailableError(absl::StrCat("token file ", path, ": empty"));
  return token;
}

// ---- running the exec plugin ----

// Closes a file descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

// This process's environment with `overrides` replacing or adding entries.
std::vector<std::string> PluginEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    bool overridden = false;
    for (const auto& [key, value] : overrides) overridden = overridden || key == name;
    if (!overridden) out.emplace_back(text);
  }
  for (const auto& [key, value] : overrides) out.push_back(key + "=" + value);
  return out;
}

// Runs the command with stdin from /dev/null, stdout captured, stderr inherited (plugins print
// their diagnostics there, as under kubectl).
absl::StatusOr<std::string> RunPlugin(const ExecConfig& config) {
  const std::string what = absl::StrCat("exec plugin \"", config.command, "\"");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat(what, ": pipe: ", std::strerror(errno)));
  }
  FdCloser read_end(pipe_fds[0]);
  std::optional<FdCloser> write_end(std::in_place, pipe_fds[1]);

  std::vector<std::pair<std::string, std::string>> overrides = config.env;
  overrides.emplace_back("KUBERNETES_EXEC_INFO",
                         absl::StrCat(R"({"kind":"ExecCredential","apiVersion":")",
                                      config.api_version, R"(","spec":{"interactive":false}})"));
  std::vector<std::string> environment = PluginEnvironment(overrides);
  std::vector<std::string> argv_storage = {config.command};
  argv_storage.insert(argv_storage.end(), config.args.begin(), config.args.end());
  std::vector<char*> argv, envp;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  pid_t pid = 0;
  const int spawn_error =
      ::posix_spawnp(&pid, config.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();  // so that reading sees EOF when the plugin exits
  if (spawn_error != 0) {
    return absl::UnavailableError(absl::StrCat(what, ": cannot run: ", std::strerror(spawn_error),
                                               config.install_hint.empty() ? "" : "; ",
                                               config.install_hint));
  }
  std::string output;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    return absl::UnavailableError(
        absl::StrCat(what, ": failed (",
                     WIFEXITED(wait_status) ? absl::StrCat("exit status ", WEXITSTATUS(wait_status))
                                            : std::string("killed by a signal"),
                     ")"));
  }
  return output;
}

}  // namespace

// ---- FileToken ----

FileToken::FileToken(std::string path, absl::Duration recheck_interval, const util::Clock* clock)
    : path_(std::move(path)),
      recheck_interval_(recheck_interval),
      clock_(clock != nullptr ? clock : RealClockInstance()) {}

absl::StatusOr<std::string> FileToken::Token() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  if (token_.has_value() && now - last_check_ < recheck_interval_) return *token_;
  last_check_ = now;
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) {
    // Keep serving the last good token through a rotation's brief absence of the file.
    if (token_.has_value()) return *token_;
    return absl::UnavailableError(
        absl::StrCat("token file ", path_, ": cannot read: ", std::strerror(errno)));
  }
  const int64_t mtime_ns =
      static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  const int64_t size = static_cast<int64_t>(info.st_size);
  if (token_.has_value() && mtime_ns == mtime_ns_ && size == size_) return *token_;
  absl::StatusOr<std::string> token = ReadTokenFile(path_);
  if (!token.ok()) {
    if (token_.has_value()) return *token_;
    return token.status();
  }
  token_ = *token;
  mtime_ns_ = mtime_ns;
  size_ = size;
  return token;
}

void FileToken::Invalidate() {
  absl::MutexLock lock(&mu_);
  // Forget the stat snapshot, keep the token as a fallback: the next Token() re-reads the file.
  mtime_ns_ = -1;
  size_ = -1;
  last_check_ = absl::InfinitePast();
}

// ---- ExecToken ----

absl::StatusOr<ExecCredential> ParseExecCredential(const std::string& json,
                                                   const std::string& expected_api_version) {
  rapidjson::Document document;
  document.Parse(json.data(), json.size());
  if (document.HasParseError() || !document.IsObject()) {
    return absl::InvalidArgumentError("ExecCredential: output is not a JSON object");
  }
  auto string_at = [](const rapidjson::Value& object,
                      const char* name) -> std::optional<std::string> {
    auto it = object.FindMember(name);
    if (it == object.MemberEnd() || !it->value.IsString()) return std::nullopt;
    return std::string(it->value.GetString(), it->value.GetStringLength());
  };
  const std::string api_version = string_at(document, "apiVersion").value_or("");
  if (!expected_api_version.empty() && api_version != expected_api_version) {
    return absl::InvalidArgumentError(absl::StrCat("ExecCredential: apiVersion \"", api_version,
                                                   "\", expected \"", expected_api_version, "\""));
  }
  auto status = document.FindMember("status");
  if (status == document.MemberEnd() || !status->value.IsObject()) {
    return absl::InvalidArgumentError("ExecCredential: no status");
  }
  ExecCredential out;
  std::optional<std::string> token = string_at(status->value, "token");
  if (!token.has_value() || token->empty()) {
    const bool has_cert = string_at(status->value, "clientCertificateData").has_value();
    return absl::InvalidArgumentError(
        has_cert ? "ExecCredential: client certificates from exec plugins are not supported"
                 : "ExecCredential: status.token missing");
  }
  out.token = *std::move(token);
  if (std::optional<std::string> expiry = string_at(status->value, "expirationTimestamp")) {
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, *expiry, &out.expiration, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExecCredential: status.expirationTimestamp \"", *expiry, "\": ", error));
    }
  }
  return out;
}

ExecToken::ExecToken(ExecConfig config, const util::Clock* clock, absl::Duration refresh_margin)
    : config_(std::move(config)),
      clock_(clock != nullptr ? clock : RealClockInstance()),
      refresh_margin_(refresh_margin) {}

absl::StatusOr<std::string> ExecToken::Token() {
  absl::MutexLock lock(&mu_);
  if (token_.has_value() && clock_->Now() < expires_ - refresh_margin_) return *token_;
  ++runs_;
  absl::StatusOr<std::string> output = RunPlugin(config_);
  if (!output.ok()) return output.status();
  absl::StatusOr<ExecCredential> credential = ParseExecCredential(*output, config_.api_version);
  if (!credential.ok()) {
    return absl::Status(
        credential.status().code(),
        absl::StrCat("exec plugin \"", config_.command, "\": ", credential.status().message()));
  }
  token_ = credential->token;
  expires_ = credential->expiration;
  return *token_;
}

void ExecToken::Invalidate() {
  absl::MutexLock lock(&mu_);
  token_.reset();
}

int ExecToken::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

}  // namespace kubesched::client
