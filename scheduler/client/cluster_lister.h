#pragma once

// A one-time read of the cluster: every kind the informers watch (informers.h), listed page by
// page by the reflectors' own listing and decoding code, and the node metrics the metrics poller
// reads. What `kubesched explain --kubeconfig` and `simulate --kubeconfig` run on: the view
// `run`'s informers start from. Nothing is watched and nothing is written.

#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/http_transport.h"

namespace kubesched::client {

struct ClusterListOptions {
  // Namespace whose ConfigMaps are listed (the queue and policy ConfigMaps'); empty = none.
  std::string config_map_namespace;
  // Also poll metrics.k8s.io node metrics once; a cluster without metrics-server gives none.
  bool node_metrics = true;
  int page_size = 500;
};

struct ListedCluster {
  std::vector<api::Object> objects;  // kinds in WatchedKinds' order, each kind in list order
  // Objects that did not decode are skipped (and logged by the reflector); counted here.
  int64_t decode_errors = 0;
};

// A failed LIST (other than an optional kind's missing CRD) is an error naming the kind.
absl::StatusOr<ListedCluster> ListCluster(HttpTransport* transport,
                                          const ClusterListOptions& options,
                                          std::stop_token stop = {});

}  // namespace kubesched::client
