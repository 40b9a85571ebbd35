#pragma once

// /configz: the effective configuration as kube-scheduler serves it, {"componentconfig": {...}}
// with the field names of its internal KubeSchedulerConfiguration (Go's, capitalised:
// "Parallelism", "LeaderElection", "Profiles", ...). kubesched's own sections (queues, policies)
// are not part of that shape and are left out, and so are NodeAffinity's added selectors.

#include <string>

#include "config/config.h"

namespace kubesched::serving {

std::string ConfigzJson(const config::Configuration& config);

// A duration as Go prints it (metav1.Duration): "15s", "1m30s", "1h0m0s", "500ms", "0s".
std::string GoDuration(absl::Duration duration);

}  // namespace kubesched::serving
