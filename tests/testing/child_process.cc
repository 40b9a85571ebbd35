#include "tests/testing/child_process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace kubesched::testing {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string MakeTempDir() {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             absl::StrCat("kubesched-child-", getpid(), "-", counter.fetch_add(1));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return dir.string();
}

// The environment for the child: the inherited one (optionally) with `overrides` applied.
std::vector<std::string> BuildEnvironment(const ChildProcessOptions& options) {
  std::vector<std::string> entries;
  if (options.inherit_environment) {
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string_view text(*entry);
      std::string_view name = text.substr(0, text.find('='));
      bool overridden = false;
      for (const auto& [key, value] : options.env) overridden = overridden || key == name;
      if (!overridden) entries.emplace_back(text);
    }
  }
  for (const auto& [key, value] : options.env) entries.push_back(key + "=" + value);
  return entries;
}

std::vector<char*> PointerArray(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Only async-signal-safe calls between fork and exec. Reports exec failure through `error_fd`.
[[noreturn]] void RunChild(const ChildProcessOptions& options, char* const* argv, char* const* envp,
                           const char* stdin_path, const char* stdout_path, const char* stderr_path,
                           int error_fd) {
  auto fail = [error_fd] [[noreturn]] {
    int error = errno;
    (void)!write(error_fd, &error, sizeof(error));
    _exit(127);
  };
  int in = open(stdin_path, O_RDONLY);
  int out = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int err = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0) fail();
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) fail();
  if (!options.working_directory.empty() && chdir(options.working_directory.c_str()) != 0) fail();
  // Signals blocked by the parent's threads would stay blocked in the child.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execvpe(argv[0], argv, envp);
  fail();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(ChildProcessOptions options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("ChildProcess: empty argv");
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  if (options.stdout_path.empty() || options.stderr_path.empty()) {
    child->temp_dir_ = MakeTempDir();
  }
  child->stdout_path_ =
      options.stdout_path.empty() ? child->temp_dir_ + "/stdout" : options.stdout_path;
  child->stderr_path_ =
      options.stderr_path.empty() ? child->temp_dir_ + "/stderr" : options.stderr_path;
  std::string stdin_path = options.stdin_path.empty() ? "/dev/null" : options.stdin_path;

  std::vector<std::string> args = options.argv;
  std::vector<char*> argv = PointerArray(args);
  std::vector<std::string> environment = BuildEnvironment(options);
  std::vector<char*> envp = PointerArray(environment);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(error_pipe[0]);
    close(error_pipe[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(error_pipe[0]);
    RunChild(options, argv.data(), envp.data(), stdin_path.c_str(), child->stdout_path_.c_str(),
             child->stderr_path_.c_str(), error_pipe[1]);
  }
  close(error_pipe[1]);
  child->pid_ = pid;
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(error_pipe[0], &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (got == sizeof(child_errno)) {
    child->Wait(absl::Seconds(5)).IgnoreError();
    return absl::NotFoundError(
        absl::StrCat("cannot run ", options.argv[0], ": ", std::strerror(child_errno)));
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !Poll()) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

bool ChildProcess::Poll() {
  if (exited_) return true;
  int status = 0;
  pid_t result = waitpid(pid_, &status, WNOHANG);
  if (result == pid_) {
    exited_ = true;
    exit_code_ = DecodeWaitStatus(status);
  } else if (result < 0 && errno == ECHILD) {
    exited_ = true;  // reaped elsewhere; the exit code is unknown
    exit_code_ = -1;
  }
  return exited_;
}

bool ChildProcess::Running() { return !Poll(); }

absl::StatusOr<int> ChildProcess::Wait(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (!Poll()) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("process ", pid_, " still running after ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(kPollInterval);
  }
  return exit_code_;
}

absl::Status ChildProcess::Signal(int signal_number) {
  if (Poll()) return absl::FailedPreconditionError(absl::StrCat("process ", pid_, " has exited"));
  if (kill(pid_, signal_number) != 0) {
    return absl::InternalError(absl::StrCat("kill ", pid_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ChildProcess::Stop(int signal_number, absl::Duration grace) {
  if (Poll()) return exit_code_;
  kill(pid_, signal_number);
  auto code = Wait(grace);
  if (code.ok()) return code;
  kill(pid_, SIGKILL);
  return Wait(absl::Seconds(10));
}

absl::StatusOr<std::string> ChildProcess::WaitForStdoutLine(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::string text = ReadStdout();
    if (size_t newline = text.find('\n'); newline != std::string::npos) {
      return text.substr(0, newline);
    }
    if (Poll()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "process ", pid_, " ", Describe(), " before printing a line; stderr: ", ReadStderr()));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("no stdout line from process ", pid_,
                                                      " within ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(kPollInterval);
  }
}

absl::StatusOr<std::string> ChildProcess::WaitForStdout(std::string_view text,
                                                        absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::string out = ReadStdout();
    if (out.find(text) != std::string::npos) return out;
    bool exited = Poll();
    if (exited || absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("process ", pid_, " (", Describe(), ") did not print \"", std::string(text),
                       "\"; stdout: ", out, "; stderr: ", ReadStderr()));
    }
    absl::SleepFor(kPollInterval);
  }
}

std::string ChildProcess::ReadStdout() const { return ReadWholeFile(stdout_path_); }
std::string ChildProcess::ReadStderr() const { return ReadWholeFile(stderr_path_); }

std::string ChildProcess::Describe() {
  if (!Poll()) return "running";
  if (exit_code_ > 128) return absl::StrCat("killed by signal ", exit_code_ - 128);
  return absl::StrCat("exited with ", exit_code_);
}

absl::StatusOr<CommandResult> RunCommand(ChildProcessOptions options, absl::Duration timeout) {
  auto child = ChildProcess::Start(std::move(options));
  if (!child.ok()) return child.status();
  auto code = (*child)->Wait(timeout);
  if (!code.ok()) {
    (*child)->Stop(SIGKILL, absl::Seconds(5)).IgnoreError();
    return absl::DeadlineExceededError(absl::StrCat(code.status().message(),
                                                    "; stdout: ", (*child)->ReadStdout(),
                                                    "; stderr: ", (*child)->ReadStderr()));
  }
  return CommandResult{.exit_code = *code,
                       .stdout_text = (*child)->ReadStdout(),
                       .stderr_text = (*child)->ReadStderr()};
}

bool IsOnPath(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", std::string(program));
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace kubesched::testing
