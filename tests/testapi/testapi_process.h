#pragma once

// Helpers for tests that run kubesched-testapi as a child process with TLS and a bearer token:
// certificates in a temporary directory, the server process, and a kubeconfig for it. Header
// only, for the *_test.cc files of tests/testapi.

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/child_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_certs.h"

namespace kubesched::testapi {

class TestApiProcess {
 public:
  static constexpr char kToken[] = "kubesched-test-token";

  // Generates certificates into a fresh directory and starts the server on a free port.
  static absl::StatusOr<std::unique_ptr<TestApiProcess>> Start(
      std::vector<std::string> extra_flags = {}) {
    std::unique_ptr<TestApiProcess> process(new TestApiProcess());
    auto dir = testing::MakeTempDirectory("kubesched-testapi");
    if (!dir.ok()) return dir.status();
    process->dir_ = *std::move(dir);
    auto certs = testing::GenerateTestCertificates();
    if (!certs.ok()) return certs.status();
    absl::Status status = testing::WriteTestCertificates(*certs, process->dir_);
    if (!status.ok()) return status;
    process->extra_flags_ = std::move(extra_flags);
    status = process->Launch("127.0.0.1:0");
    if (!status.ok()) return status;
    return process;
  }

  ~TestApiProcess() {
    server_.reset();
    testing::RemoveTree(dir_).IgnoreError();  // best effort: a test's leftovers in /tmp
  }

  // kKept: the server comes back with what it stored. kLost: it comes back empty, as after an
  // etcd restore from an old backup; its resourceVersions start again below the ones clients saw.
  enum class State { kKept, kLost };

  // Kills the server (SIGKILL, like a crash) and starts it again on the same port, with its
  // state file or without it.
  absl::Status Restart(State state = State::kKept) {
    if (server_ != nullptr) server_->Stop(SIGKILL).IgnoreError();
    if (state == State::kLost) {
      absl::Status removed = testing::RemoveFile(state_file());
      if (!removed.ok()) return removed;
    }
    return Launch(url_.substr(url_.find("://") + 3));
  }

  // Kills the server (SIGKILL) and leaves it down until Restart(), e.g. to edit its state file.
  void Kill() {
    if (server_ != nullptr) server_->Stop(SIGKILL).IgnoreError();
  }
  // The journal the server keeps its objects in (--state-file): one JSON line per object.
  std::string state_file() const { return dir_ + "/state.jsonl"; }

  const std::string& url() const { return url_; }
  const std::string& dir() const { return dir_; }
  std::string ca_file() const { return dir_ + "/ca.crt"; }
  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }
  testing::ChildProcess& process() { return *server_; }

 private:
  TestApiProcess() = default;

  absl::Status Launch(const std::string& listen) {
    std::vector<std::string> argv = {KUBESCHED_TESTAPI_BINARY,
                                     "--listen",
                                     listen,
                                     "--tls-cert-file",
                                     dir_ + "/server.crt",
                                     "--tls-key-file",
                                     dir_ + "/server.key",
                                     "--token",
                                     kToken,
                                     "--state-file",
                                     state_file()};
    argv.insert(argv.end(), extra_flags_.begin(), extra_flags_.end());
    auto server = testing::ChildProcess::Start({.argv = argv});
    if (!server.ok()) return server.status();
    server_ = *std::move(server);
    auto line = server_->WaitForStdoutLine(absl::Seconds(20));
    if (!line.ok()) return line.status();
    constexpr absl::string_view kPrefix = "listening on ";
    if (!absl::StartsWith(*line, kPrefix)) {
      return absl::InternalError(absl::StrCat("unexpected first line: ", *line));
    }
    url_ = line->substr(kPrefix.size());
    std::ofstream(kubeconfig()) << absl::StrCat(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: testapi\n  cluster:\n    server: ", url_,
        "\n    certificate-authority: ", ca_file(),
        "\nusers:\n- name: test\n  user:\n    token: ", kToken,
        "\ncontexts:\n- name: test\n  context:\n    cluster: testapi\n    user: test\n"
        "current-context: test\n");
    return absl::OkStatus();
  }

  std::string dir_{};
  std::string url_{};
  std::vector<std::string> extra_flags_{};
  std::unique_ptr<testing::ChildProcess> server_{};
};

}  // namespace kubesched::testapi
