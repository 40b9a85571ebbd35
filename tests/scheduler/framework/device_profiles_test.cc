// Interned device profiles: equal shape lists share one profile for the life of the process.

#include "scheduler/framework/device_profiles.h"

#include <catch2/catch.hpp>
#include <vector>

namespace kubesched::framework {
namespace {

TEST_CASE("equal shape lists share one profile, others get their own", "[dra]") {
  const size_t before = DeviceProfiles::Count();
  const DeviceProfile* first = DeviceProfiles::Intern({90001, 90002, 90002});
  CHECK(DeviceProfiles::Count() == before + 1);
  CHECK(first->countable);
  CHECK(first->shapes == std::vector<api::DeviceShape>{90001, 90002, 90002});
  CHECK(DeviceProfiles::Intern({90001, 90002, 90002}) == first);
  CHECK(DeviceProfiles::Count() == before + 1);
  // Order counts: the held devices are bits by position.
  const DeviceProfile* reordered = DeviceProfiles::Intern({90002, 90001, 90002});
  CHECK(reordered != first);
  CHECK(DeviceProfiles::Count() == before + 2);
  CHECK(DeviceProfiles::Uncountable() == DeviceProfiles::Uncountable());
  CHECK_FALSE(DeviceProfiles::Uncountable()->countable);
}

}  // namespace
}  // namespace kubesched::framework
