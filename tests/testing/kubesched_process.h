#pragma once

// `kubesched run` as a child process, for the end-to-end tests: started against a test API
// server with ports picked by the kernel, its log (stderr) waited on, the ports it logs, and its
// /metrics. Waits fail the test with kubesched's log when what they wait for never comes.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "scheduler/client/rest_client.h"
#include "tests/testing/child_process.h"
#include "tests/testing/scrape.h"
#include "tests/testing/wait.h"

namespace kubesched::testing {

struct KubeschedRunFlags {
  std::string kubeconfig{};
  std::string config_path{};  // "" = defaults
  bool leader_elect = false;
  std::string identity{};  // "" = kubesched's default
  int verbosity = 0;       // -v N when above 0 (2: a log line per scheduling outcome)
  std::string shutdown_grace = "5s";
  // The HTTPS port on 127.0.0.1 (FreeLocalPort()); 0: none, so that tests never contend for
  // the default 10259.
  int secure_port = 0;
  std::vector<std::string> extra_args{};  // appended as given
};

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick, released), for a server
// whose port 0 means "off" rather than "any".
inline int FreeLocalPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  ::close(fd);
  REQUIRE(bound);
  return ntohs(address.sin_port);
}

inline std::unique_ptr<ChildProcess> StartKubeschedRun(const KubeschedRunFlags& flags) {
  std::vector<std::string> argv = {KUBESCHED_BINARY,         "run",
                                   "--kubeconfig",           flags.kubeconfig,
                                   "--health-bind-address",  "127.0.0.1:0",
                                   "--metrics-bind-address", "127.0.0.1:0",
                                   "--shutdown-grace",       flags.shutdown_grace};
  argv.insert(argv.end(), {"--secure-port", absl::StrCat(flags.secure_port)});
  if (flags.secure_port != 0) argv.insert(argv.end(), {"--bind-address", "127.0.0.1"});
  // pflag's rules: a bare boolean flag is true, and never takes the next argument.
  argv.push_back(flags.leader_elect ? "--leader-elect" : "--leader-elect=false");
  if (!flags.config_path.empty()) argv.insert(argv.end(), {"--config", flags.config_path});
  if (!flags.identity.empty()) argv.insert(argv.end(), {"--identity", flags.identity});
  if (flags.verbosity > 0) argv.insert(argv.end(), {"-v", absl::StrCat(flags.verbosity)});
  argv.insert(argv.end(), flags.extra_args.begin(), flags.extra_args.end());
  auto process = ChildProcess::Start({.argv = argv});
  REQUIRE(process.ok());
  return *std::move(process);
}

// Waits until `done` holds; fails, naming `what` and showing the log, when `process` exits first
// or `timeout` passes.
inline void RequireEventually(std::string_view what, ChildProcess& process,
                              const std::function<bool()>& done,
                              absl::Duration timeout = absl::Seconds(30)) {
  WaitUntil([&] { return done() || !process.Running(); }, timeout);
  if (done()) return;
  INFO("waiting until " << what << "; the process " << process.Describe() << "; its log:\n"
                        << process.ReadStderr());
  FAIL((process.Running() ? "timed out" : "the process exited") << " before " << what);
}

// How often `text` occurs in the process's log.
inline int CountInLog(const ChildProcess& process, std::string_view text) {
  const std::string log = process.ReadStderr();
  int found = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++found;
  return found;
}

// Waits until the process's log holds `text` at least `count` times.
inline void WaitForLog(ChildProcess& process, std::string_view text, int count = 1,
                       absl::Duration timeout = absl::Seconds(30)) {
  RequireEventually(
      absl::StrCat("the log holds \"", std::string(text), "\" ", count, " time(s)"), process,
      [&] { return CountInLog(process, text) >= count; }, timeout);
}

// The port kubesched logs after `prefix` ("metrics on port ", "health probes on port "), once it
// has.
inline int LoggedPort(ChildProcess& process, std::string_view prefix) {
  WaitForLog(process, prefix);
  const std::string log = process.ReadStderr();
  const size_t begin = log.find(prefix) + prefix.size();
  int port = 0;
  INFO(log);
  REQUIRE(absl::SimpleAtoi(log.substr(begin, log.find('\n', begin) - begin), &port));
  return port;
}

// GET http://127.0.0.1:`port``path`; the request must get an answer.
inline client::HttpResponse LocalGet(int port, const std::string& path) {
  client::RestConfig config;
  config.server = absl::StrCat("http://127.0.0.1:", port);
  auto rest = client::RestClient::Create(config);
  REQUIRE(rest.ok());
  client::HttpRequest request;
  request.target = path;
  auto response = (*rest)->Do(request);
  INFO(path << ": " << response.status());
  REQUIRE(response.ok());
  return *response;
}

// One scrape of kubesched's /metrics, on the port it logged.
inline Scrape ScrapeMetrics(ChildProcess& process) {
  const client::HttpResponse response =
      LocalGet(LoggedPort(process, "metrics on port "), "/metrics");
  INFO(response.body);
  REQUIRE(response.status == 200);
  auto scrape = Scrape::Parse(response.body);
  REQUIRE(scrape.ok());
  return *scrape;
}

}  // namespace kubesched::testing
