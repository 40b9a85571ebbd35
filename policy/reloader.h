#pragma once

// The per-pod policies in force, and their reload from the watched policy ConfigMap
// (policyConfigMap): the file's policies plus one per data key, rebuilt whole on every update of
// the ConfigMap. A bad update is logged with the policy and field and the last good set stays;
// deleting the ConfigMap leaves the file's policies.
//
// Threads: Reload runs on an informer thread, Current on the scheduling thread (once per cycle)
// and the counters on a scrape; mu_ guards the set in force and the counts. A cycle keeps the
// set it took for its whole length: a set is never changed once built.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "config/config.h"
#include "plugins/plugin_handle.h"
#include "plugins/registry/registry.h"
#include "policy/policy.h"
#include "policy/policy_runtime.h"
#include "scheduler/api/objects.h"

namespace kubesched::policy {

class PolicyReloader {
 public:
  // Builds the file's policies (`file_policies`, from ParseFilePolicies) and bindings
  // (`file_bindings`, from ParseFileBindings) with the frameworks' `handle` and `registry`. An
  // error names the policy or the binding.
  static absl::StatusOr<std::unique_ptr<PolicyReloader>> Create(
      std::vector<Policy> file_policies, config::ObjectRef config_map,
      const plugins::PluginHandle& handle, const plugins::RegistryMap& registry,
      std::vector<PolicyBinding> file_bindings = {});

  struct Outcome {
    bool applied = false;
    // On success: the wait keys (PolicyWaitKey) of every policy now in force, so that pods
    // waiting for a policy, or for args that fill a changed template, try again.
    std::vector<std::string> wake_keys;
    // The bindings before or after the update are not the file's alone: a pod that waits under
    // one policy (or its profile) may now be bound to another, so every waiting pod tries again.
    bool bindings_changed = false;
    // When refused: why (as logged).
    std::string error;
  };
  // An add, update or delete (`deleted`) of `map`; nullopt when `map` is not the policy ConfigMap.
  std::optional<Outcome> Reload(const api::ConfigMap& map, bool deleted);

  // The set in force; never null.
  std::shared_ptr<const PolicyRuntime> Current() const;
  config::ConfigReloads reloads() const;

 private:
  PolicyReloader(std::vector<Policy> file_policies, std::vector<PolicyBinding> file_bindings,
                 config::ObjectRef config_map, const plugins::PluginHandle& handle,
                 const plugins::RegistryMap& registry)
      : file_policies_(std::move(file_policies)),
        file_bindings_(std::move(file_bindings)),
        config_map_(std::move(config_map)),
        handle_(handle),
        registry_(registry) {}
  absl::StatusOr<std::shared_ptr<const PolicyRuntime>> Build(
      const std::map<std::string, std::string>& data, int64_t generation) const;

  const std::vector<Policy> file_policies_;         // in force with or without the ConfigMap
  const std::vector<PolicyBinding> file_bindings_;  // likewise, tried before the ConfigMap's
  const config::ObjectRef config_map_;
  const plugins::PluginHandle handle_;
  const plugins::RegistryMap& registry_;

  mutable absl::Mutex mu_;
  std::shared_ptr<const PolicyRuntime> current_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  config::ConfigReloads reloads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::policy
