// The embedded cluster's PodGroup status writes (client::PodGroupStatusWriter).

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/util/log.h"

namespace kubesched::cluster {

void EmbeddedCluster::WriteStatus(const std::string& namespace_name, const std::string& name,
                                  const api::PodGroupStatus& status) {
  const std::string key = absl::StrCat(namespace_name, "/", name);
  absl::MutexLock lock(&mu_);
  const auto it = pod_groups_.find(key);
  if (it == pod_groups_.end()) {
    util::LogWarning(absl::StrCat("writing the status of PodGroup ", key, ": not found"));
    return;
  }
  if (it->second->status == status) return;  // the API server would change nothing either
  api::PodGroup updated = *it->second;
  updated.status = status;
  Replace(pod_groups_, key, std::move(updated));
}

std::shared_ptr<const api::PodGroup> EmbeddedCluster::GetPodGroup(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  const auto it = pod_groups_.find(key);
  return it == pod_groups_.end() ? nullptr : it->second;
}

}  // namespace kubesched::cluster
