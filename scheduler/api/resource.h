#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "scheduler/api/quantity.h"

namespace kubesched::api {

// Interned resource name. The four built-in resources have fixed ids; extended resources
// ("nvidia.com/gpu", "hugepages-2Mi", ...) get the next id on first sight. Thread-safe.
using ResourceId = uint16_t;
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kEphemeralStorage = 2;
inline constexpr ResourceId kPods = 3;

ResourceId InternResource(std::string_view name);
// The name of a resource id; the view lives as long as the process.
std::string_view ResourceName(ResourceId id);
// Number of resource ids handed out so far.
size_t ResourceCount();

// Upstream's classification: anything that is not cpu, memory, ephemeral-storage or pods is a
// "scalar" resource (extended resources, hugepages-*, attachable volumes).
bool IsScalarResource(ResourceId id);
// Extended = scalar and not in the kubernetes.io/ namespace and not hugepages-*.
bool IsExtendedResourceName(std::string_view name);
bool IsHugePagesResourceName(std::string_view name);

// Whether amounts are milli-units: cpu, and queue quota's per-model cpu keys ("cpu.A4"), which no
// pod can request but must count like cpu.
bool CountsInMilli(ResourceId id);

// Amount of a resource in canonical units: milli-cores for cpu, whole units rounded up for every
// other resource (bytes for memory), as upstream's MilliValue()/Value().
int64_t CanonicalAmount(ResourceId id, const Quantity& quantity);
// The inverse, for output: cpu prints as "250m"/"2", byte-sized resources as "3Gi" when exact.
std::string FormatAmount(ResourceId id, int64_t amount);

// A dense per-resource vector of canonical amounts, indexed by ResourceId. Absent entries are 0.
// Dense so that the per-node fit check is an indexed compare, never a map lookup.
class ResourceList {
 public:
  int64_t Get(ResourceId id) const { return id < amounts_.size() ? amounts_[id] : 0; }
  void Set(ResourceId id, int64_t amount);
  void Add(ResourceId id, int64_t amount) { Set(id, Get(id) + amount); }
  void Add(const ResourceList& other);
  void Subtract(const ResourceList& other);
  // Per resource max(this, other).
  void SetMax(const ResourceList& other);
  bool IsZero() const;
  // Back to all zeros, keeping the buffer.
  void Clear() { amounts_.clear(); }
  // One past the highest id that may be non-zero.
  size_t size() const { return amounts_.size(); }

  // Calls fn(ResourceId, int64_t) for every non-zero entry, in id order.
  template <typename Fn>
  void ForEachNonZero(Fn&& fn) const {
    for (size_t i = 0; i < amounts_.size(); ++i) {
      if (amounts_[i] != 0) fn(static_cast<ResourceId>(i), amounts_[i]);
    }
  }

  friend bool operator==(const ResourceList& a, const ResourceList& b);

 private:
  absl::InlinedVector<int64_t, 6> amounts_;
};

}  // namespace kubesched::api
