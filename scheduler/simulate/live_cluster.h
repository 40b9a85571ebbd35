#pragma once

// simulate and explain on a live cluster: connect as `run` does, read the cluster once (the
// informers' kinds, listed page by page: client/cluster_lister.h) and hand the objects to the
// same code that runs on a dump. Nothing is written to the cluster.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/simulate/simulation.h"

namespace kubesched::scheduler {

struct LiveClusterSource {
  std::string kubeconfig;  // empty: $KUBECONFIG, in-cluster, ~/.kube/config (as run)
  std::string context;     // empty: the kubeconfig's current-context
};

// The API client for `source`; the error says what was tried.
absl::StatusOr<std::unique_ptr<client::HttpTransport>> ConnectLive(const LiveClusterSource& source);

// Every object `run` would watch under `config` (its ConfigMaps in the namespace run watches),
// as of now. Objects that do not decode are skipped and become problems.
absl::StatusOr<api::DecodedObjects> ListLive(client::HttpTransport* transport,
                                             const config::Configuration& config);

// The configuration held by the ConfigMap `ref`, "NAMESPACE/NAME" or "NAMESPACE/NAME:KEY": the
// KEY's value, else the key config.yaml, else the ConfigMap's only key.
absl::StatusOr<config::Configuration> ConfigFromConfigMap(client::HttpTransport* transport,
                                                          std::string_view ref);

struct LivePod {
  std::string namespace_name;
  std::string name;
};

// "NAME" or "pod/NAME" (also "pods/NAME", as kubectl spells it) in `namespace_name`.
absl::StatusOr<LivePod> ParseLivePod(std::string_view argument, std::string namespace_name);

// Explains the pod `pod` of `objects` (bound or pending) as ExplainObjects does; NotFound when
// the cluster holds no such pod.
absl::StatusOr<ExplainReport> ExplainListedPod(const api::DecodedObjects& objects,
                                               const LivePod& pod,
                                               const config::Configuration& config, uint64_t seed,
                                               const std::optional<std::string>& policy);

}  // namespace kubesched::scheduler
