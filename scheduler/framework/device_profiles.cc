#include "scheduler/framework/device_profiles.h"

#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace kubesched::framework {
namespace {

struct Registry {
  absl::Mutex mu;
  // The profiles own their shapes; the keys are copies (profiles are few and small).
  absl::flat_hash_map<std::vector<api::DeviceShape>, std::unique_ptr<const DeviceProfile>> profiles
      ABSL_GUARDED_BY(mu);
};

Registry& TheRegistry() {
  static Registry* const registry = new Registry();
  return *registry;
}

}  // namespace

const DeviceProfile* DeviceProfiles::Intern(std::vector<api::DeviceShape> shapes) {
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  auto [it, inserted] = registry.profiles.try_emplace(shapes, nullptr);
  if (inserted) {
    it->second = std::make_unique<const DeviceProfile>(DeviceProfile{true, std::move(shapes)});
  }
  return it->second.get();
}

const DeviceProfile* DeviceProfiles::Uncountable() {
  static const DeviceProfile* const uncountable = new DeviceProfile{false, {}};
  return uncountable;
}

size_t DeviceProfiles::Count() {
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  return registry.profiles.size() + 1;
}

}  // namespace kubesched::framework
