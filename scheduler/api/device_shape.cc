// Device shapes (dra.h): a device's driver, attributes and capacity, written as bytes and
// interned.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/dra.h"

namespace kubesched::api {
namespace {

template <typename T>
void Append(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void AppendText(std::string& key, const std::string& text) {
  Append(key, text.size());
  key.append(text);
}

// Attributes and capacities are sorted by name, so equal content gives equal bytes.
std::string KeyOf(Symbol driver, const Device& device) {
  std::string key;
  Append(key, driver);
  Append(key, device.attributes.size());
  for (const DeviceAttribute& attribute : device.attributes) {
    Append(key, attribute.name);
    Append(key, attribute.type);
    Append(key, attribute.int_value);
    Append(key, attribute.bool_value);
    AppendText(key, attribute.string_value);
  }
  for (const DeviceCapacity& capacity : device.capacity) {
    Append(key, capacity.name);
    Append(key, capacity.value.milli());
    Append(key, capacity.value.format());
  }
  return key;
}

class ShapeTable {
 public:
  DeviceShape Intern(std::string key) {
    {
      absl::ReaderMutexLock lock(&mu_);
      const auto it = shapes_.find(key);
      if (it != shapes_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    const auto [it, inserted] =
        shapes_.try_emplace(std::move(key), static_cast<DeviceShape>(shapes_.size() + 1));
    return it->second;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, DeviceShape> shapes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

DeviceShape InternDeviceShape(Symbol driver, const Device& device) {
  static auto* table = new ShapeTable();  // never destroyed, as the symbol table
  return table->Intern(KeyOf(driver, device));
}

}  // namespace kubesched::api
