#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "config/config.h"
#include "scheduler/run/secure_serving.h"

namespace kubesched::scheduler {

// `kubesched run`: what the flags say, before the configuration file is read.
struct RunOptions {
  std::optional<std::string> config_path;  // KubeSchedulerConfiguration; defaults if absent
  std::string kubeconfig;                  // --kubeconfig; else the config's, $KUBECONFIG, ...
  std::string context;                     // --context; else the kubeconfig's current-context
  // Plain-HTTP listeners, each only when its flag is given ("" = none): the secure port serves
  // the same paths.
  std::string health_bind_address;
  std::string metrics_bind_address;
  SecureServingOptions serving;  // --secure-port, --bind-address, --tls-*, --authentication-*, ...
  std::optional<bool> leader_elect;  // overrides leaderElection.leaderElect
  std::string identity;              // lease holder identity; "" = <hostname>_<uuid>
  std::optional<double> qps;         // override clientConnection.qps
  std::optional<int> burst;          // override clientConnection.burst
  int bind_workers = 16;             // concurrent binding cycles
  int threads = 0;                   // filter/score threads; 0 = CPU count - 1 (at least 1)
  absl::Duration shutdown_grace = absl::Seconds(10);  // for in-flight binds and events on exit
  // Every informer lists again this often besides its watch (zero: only when the watch needs it),
  // a safety net against an API server whose watch silently missed changes.
  absl::Duration relist_interval = absl::ZeroDuration();
  // kube-scheduler's flags: --leader-elect-* override the rest of leaderElection, after
  // leader_elect above; --master is the API server URL, over the kubeconfig's server.
  config::LeaderElectionOverrides leader_election;
  std::string master;
};

// Connects to the API server, watches it and schedules until SIGTERM/SIGINT (exit 0 after a
// graceful stop) or until leadership is lost (exit 1, at once, as upstream). Bad flags or
// configuration: 2; no usable connection (no kubeconfig, TLS or auth failure): 1. Logs to `err`.
int RunScheduler(const RunOptions& options, std::ostream& err);

}  // namespace kubesched::scheduler
