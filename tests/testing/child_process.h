#pragma once

// Child processes for end-to-end tests (kubesched-testapi, kubesched run, kubectl, python3):
// spawn with arguments and environment, capture stdout/stderr to files, wait with a timeout,
// signal, and read what the child printed.
//
//   ChildProcessOptions options{.argv = {KUBESCHED_TESTAPI_BINARY, "--listen", "127.0.0.1:0"}};
//   auto server = ChildProcess::Start(options);              // StatusOr<unique_ptr<...>>
//   auto line = (*server)->WaitForStdoutLine(absl::Seconds(10));  // "listening on http://..."
//   ...
//   auto exit_code = (*server)->Stop();                      // SIGTERM, then SIGKILL after 5 s
//
//   auto result = RunCommand({.argv = {"kubectl", "version"}}, absl::Seconds(30));
//   // result->exit_code, result->stdout_text, result->stderr_text
//
// Output goes to files (not pipes), so a chatty child never blocks on a full pipe and the output
// survives for failure messages. Unless paths are given, the files live in a temporary directory
// removed with the ChildProcess.
//
// Thread-safety: a ChildProcess is not thread-safe; use it from one thread. Start() is safe to
// call from several threads (it forks and only uses async-signal-safe calls in the child).

#include <sys/types.h>

#include <csignal>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubesched::testing {

struct ChildProcessOptions {
  // argv[0] is the program: a path, or a name looked up on PATH.
  std::vector<std::string> argv{};
  // Set in (or overriding) the inherited environment; with inherit_environment false, the whole
  // environment.
  std::vector<std::pair<std::string, std::string>> env{};
  bool inherit_environment = true;
  std::string working_directory{};  // "" keeps the current one
  std::string stdin_path{};         // "" reads /dev/null
  std::string stdout_path{};        // "" captures to a temporary file
  std::string stderr_path{};        // "" captures to a temporary file
};

class ChildProcess {
 public:
  // Starts the child. Fails (without a child) when the program cannot be executed.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(ChildProcessOptions options);
  // Kills (SIGKILL) and reaps a child still running, and removes the temporary files.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False once the child has exited (it is reaped then).
  bool Running();
  // The exit code (128 + N when killed by signal N), or DeadlineExceeded if still running.
  absl::StatusOr<int> Wait(absl::Duration timeout);
  absl::Status Signal(int signal_number);
  // Sends `signal_number`, waits up to `grace`, then SIGKILLs; returns the exit code.
  absl::StatusOr<int> Stop(int signal_number = SIGTERM, absl::Duration grace = absl::Seconds(5));

  // The first complete stdout line (without its newline), once printed. DeadlineExceeded if none
  // came in time; FailedPrecondition if the child exited without printing one (with its stderr).
  absl::StatusOr<std::string> WaitForStdoutLine(absl::Duration timeout);
  // Waits until stdout contains `text`; returns all of stdout then.
  absl::StatusOr<std::string> WaitForStdout(std::string_view text, absl::Duration timeout);

  std::string ReadStdout() const;
  std::string ReadStderr() const;
  const std::string& stdout_path() const { return stdout_path_; }
  const std::string& stderr_path() const { return stderr_path_; }
  // "exited with 3" / "killed by signal 9" / "running", for failure messages.
  std::string Describe();

 private:
  ChildProcess() = default;
  // Reaps without blocking; true when the child has exited.
  bool Poll();

  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = 0;
  std::string temp_dir_{};  // "" when the caller chose every path
  std::string stdout_path_{};
  std::string stderr_path_{};
};

struct CommandResult {
  int exit_code = 0;
  std::string stdout_text{};
  std::string stderr_text{};
};

// Runs a command to completion. DeadlineExceeded (after killing it) when it takes longer than
// `timeout`.
absl::StatusOr<CommandResult> RunCommand(ChildProcessOptions options, absl::Duration timeout);

// True when `program` (a name) is an executable on PATH.
bool IsOnPath(std::string_view program);

}  // namespace kubesched::testing
