// kubesched-testapi: an in-memory Kubernetes API server for tests and demos (see server.cc for
// the flags). Serves until SIGTERM or SIGINT, then saves its state file and exits 0.

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/testapi/server.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool help = false;
  auto options = kubesched::testapi::ParseServerFlags(args, &help);
  if (help) {
    std::fputs(kubesched::testapi::kServerUsage, stdout);
    return 0;
  }
  if (!options.ok()) {
    std::fprintf(stderr, "kubesched-testapi: %s\n",
                 std::string(options.status().message()).c_str());
    return 2;
  }
  // Block the shutdown signals before any thread starts, so that only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto server = kubesched::testapi::Server::Start(*std::move(options));
  if (!server.ok()) {
    std::fprintf(stderr, "kubesched-testapi: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  std::printf("listening on %s\n", (*server)->url().c_str());
  std::fflush(stdout);

  int received = 0;
  sigwait(&signals, &received);
  absl::Status status = (*server)->Stop();
  if (!status.ok()) {
    std::fprintf(stderr, "kubesched-testapi: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
