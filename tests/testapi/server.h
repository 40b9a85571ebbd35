#pragma once

// kubesched-testapi as one object: the store, the API, fault injection and the HTTP(S) listener,
// configured from the command line (main.cc) or directly by in-process tests:
//
//   testapi::ServerOptions options;               // plain HTTP on 127.0.0.1, a free port
//   auto server = testapi::Server::Start(options);
//   ... talk to (*server)->url() ...
//
// Thread-safety: all methods may be called from any thread; Stop() must not race destruction.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/testapi/faults.h"
#include "tests/testapi/http_server.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/store.h"
#include "tests/testapi/volume_controller.h"

namespace kubesched::testapi {

struct ServerOptions {
  HttpServerOptions http;
  ApiServerOptions api;
  StoreOptions store;
  FaultConfig faults;
  std::vector<std::string> load_files{};  // created at start, after the bootstrap objects
  std::string port_file{};                // when set, the URL is written there once listening
  bool volume_controller = false;         // start with the volume controller on
};

// Parses the command line of kubesched-testapi (see kUsage in server.cc / --help). Returns
// InvalidArgument naming the bad flag; `*help` is set for --help.
absl::StatusOr<ServerOptions> ParseServerFlags(const std::vector<std::string>& args, bool* help);
extern const char kServerUsage[];

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();

  std::string url() const { return http_->url(); }
  int port() const { return http_->port(); }
  Store& store() { return *store_; }
  Faults& faults() { return *faults_; }
  ApiServer& api() { return *api_; }
  VolumeController& volume_controller() { return *volumes_; }

  // Stops serving and writes the state file compactly (when there is one).
  absl::Status Stop();

 private:
  Server() = default;

  std::unique_ptr<Store> store_{};
  std::unique_ptr<Faults> faults_{};
  std::unique_ptr<VolumeController> volumes_{};
  std::unique_ptr<ApiServer> api_{};
  std::unique_ptr<HttpServer> http_{};
  bool stopped_ = false;
};

}  // namespace kubesched::testapi
