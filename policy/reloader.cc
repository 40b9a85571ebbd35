#include "policy/reloader.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/policy_set.h"
#include "scheduler/util/log.h"

namespace kubesched::policy {

absl::StatusOr<std::unique_ptr<PolicyReloader>> PolicyReloader::Create(
    std::vector<Policy> file_policies, config::ObjectRef config_map,
    const plugins::PluginHandle& handle, const plugins::RegistryMap& registry,
    std::vector<PolicyBinding> file_bindings) {
  std::unique_ptr<PolicyReloader> reloader(new PolicyReloader(
      std::move(file_policies), std::move(file_bindings), std::move(config_map), handle, registry));
  auto built = reloader->Build({}, 0);
  if (!built.ok()) return built.status();
  absl::MutexLock lock(&reloader->mu_);
  reloader->current_ = *std::move(built);
  return reloader;
}

absl::StatusOr<std::shared_ptr<const PolicyRuntime>> PolicyReloader::Build(
    const std::map<std::string, std::string>& data, int64_t generation) const {
  auto set = BuildPolicySet(file_policies_, data, generation, file_bindings_);
  if (!set.ok()) return set.status();
  return PolicyRuntime::Build(*std::move(set), handle_, registry_);
}

std::optional<PolicyReloader::Outcome> PolicyReloader::Reload(const api::ConfigMap& map,
                                                              bool deleted) {
  if (!config_map_.Names(map.meta.namespace_name, map.meta.name)) return std::nullopt;
  const std::string source =
      absl::StrCat("ConfigMap ", config_map_.namespace_name, "/", config_map_.name);
  int64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    generation = ++generation_;
  }
  std::map<std::string, std::string> data;
  if (!deleted) data.insert(map.data.begin(), map.data.end());
  absl::StatusOr<std::shared_ptr<const PolicyRuntime>> built = Build(data, generation);
  Outcome outcome;
  if (!built.ok()) {
    const std::string error = absl::StrCat(
        source,
        ": policies rejected, the last good set stays in force: ", built.status().message());
    util::LogWarning(error);
    absl::MutexLock lock(&mu_);
    ++reloads_.rejected;
    reloads_.last_error = error;
    outcome.error = error;
    return outcome;
  }
  for (const std::string& name : (*built)->set().names()) {
    outcome.wake_keys.push_back(PolicyWaitKey(name));
  }
  util::LogInfo(absl::StrCat(source, deleted ? " deleted: the configuration file's " : ": ",
                             (*built)->set().Describe(), " in force"));
  absl::MutexLock lock(&mu_);
  outcome.bindings_changed = current_->set().bindings().size() != file_bindings_.size() ||
                             (*built)->set().bindings().size() != file_bindings_.size();
  current_ = *std::move(built);
  ++reloads_.applied;
  outcome.applied = true;
  return outcome;
}

std::shared_ptr<const PolicyRuntime> PolicyReloader::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

config::ConfigReloads PolicyReloader::reloads() const {
  absl::MutexLock lock(&mu_);
  return reloads_;
}

}  // namespace kubesched::policy
