#include "scheduler/api/resource.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/resource_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::api {
namespace {

constexpr size_t kMaxIds = std::numeric_limits<ResourceId>::max() + size_t{1};
// Handed out by InternResource once every id is taken, so that it never fails; decoders use
// TryInternResource with a far lower limit, so real input never gets here.
constexpr std::string_view kOverflowName = "kubesched.io/resource-table-full";

// Owner of every resource name. Thread-safe; names are never removed, and the deque never moves
// its elements, so the views handed out stay valid for the life of the process.
class ResourceRegistry {
 public:
  ResourceRegistry() {
    absl::MutexLock lock(&mu_);
    for (std::string_view name : {"cpu", "memory", "ephemeral-storage", "pods"}) Add(name);
  }

  std::optional<ResourceId> Intern(std::string_view name, size_t limit) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = index_.find(name);
      if (it != index_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    if (names_.size() >= limit) return std::nullopt;
    return Add(name);
  }

  std::string_view Name(ResourceId id) const {
    absl::ReaderMutexLock lock(&mu_);
    return id < names_.size() ? std::string_view(names_[id]) : std::string_view();
  }

  size_t Count() const {
    absl::ReaderMutexLock lock(&mu_);
    return names_.size();
  }

 private:
  ResourceId Add(std::string_view name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    names_.emplace_back(name);
    const auto id = static_cast<ResourceId>(names_.size() - 1);
    index_.emplace(std::string_view(names_.back()), id);
    return id;
  }

  mutable absl::Mutex mu_;
  std::deque<std::string> names_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string_view, ResourceId> index_ ABSL_GUARDED_BY(mu_);
};

ResourceRegistry& Registry() {
  static auto* registry = new ResourceRegistry();  // never destroyed: names must outlive all
  return *registry;
}

bool IsByteSized(ResourceId id) {
  if (id == kMemory || id == kEphemeralStorage) return true;
  const std::string_view name = ResourceName(id);
  return IsHugePagesResourceName(name) || name.starts_with("memory.");
}

}  // namespace

namespace internal {

std::optional<ResourceId> TryInternResource(std::string_view name, size_t limit) {
  return Registry().Intern(name, std::min(limit, kMaxIds - 1));
}

}  // namespace internal

ResourceId InternResource(std::string_view name) {
  if (auto id = Registry().Intern(name, kMaxIds - 1)) return *id;
  return *Registry().Intern(kOverflowName, kMaxIds);
}

std::string_view ResourceName(ResourceId id) { return Registry().Name(id); }
size_t ResourceCount() { return Registry().Count(); }

bool IsScalarResource(ResourceId id) { return id > kPods; }

bool IsHugePagesResourceName(std::string_view name) { return name.starts_with("hugepages-"); }

// Mirrors upstream's v1helper.IsExtendedResourceName: not native (a name without '/' or one in
// the kubernetes.io/ namespace), not a quota "requests." name, and still a qualified name once
// prefixed with "requests.".
bool IsExtendedResourceName(std::string_view name) {
  const bool native =
      name.find('/') == std::string_view::npos || name.find("kubernetes.io/") != name.npos;
  if (native || name.starts_with("requests.")) return false;
  const std::string quota_name = absl::StrCat("requests.", util::Absl(name));
  return IsValidLabelKey(quota_name);
}

bool CountsInMilli(ResourceId id) { return id == kCpu || ResourceName(id).starts_with("cpu."); }

int64_t CanonicalAmount(ResourceId id, const Quantity& quantity) {
  return CountsInMilli(id) ? quantity.milli() : quantity.ValueCeil();
}

std::string FormatAmount(ResourceId id, int64_t amount) {
  if (CountsInMilli(id)) {
    if (amount % 1000 == 0) return absl::StrCat(amount / 1000);
    return absl::StrCat(amount, "m");
  }
  if (IsByteSized(id) && amount != 0 && amount % 1024 == 0) {
    return Quantity::FromValue(amount, Quantity::Format::kBinarySI).ToString();
  }
  return absl::StrCat(amount);
}

void ResourceList::Set(ResourceId id, int64_t amount) {
  if (id >= amounts_.size()) {
    if (amount == 0) return;  // absent already reads as zero
    amounts_.resize(size_t{id} + 1, 0);
  }
  amounts_[id] = amount;
}

void ResourceList::Add(const ResourceList& other) {
  if (other.amounts_.size() > amounts_.size()) amounts_.resize(other.amounts_.size(), 0);
  for (size_t i = 0; i < other.amounts_.size(); ++i) amounts_[i] += other.amounts_[i];
}

void ResourceList::Subtract(const ResourceList& other) {
  if (other.amounts_.size() > amounts_.size()) amounts_.resize(other.amounts_.size(), 0);
  for (size_t i = 0; i < other.amounts_.size(); ++i) amounts_[i] -= other.amounts_[i];
}

void ResourceList::SetMax(const ResourceList& other) {
  if (other.amounts_.size() > amounts_.size()) amounts_.resize(other.amounts_.size(), 0);
  for (size_t i = 0; i < other.amounts_.size(); ++i) {
    amounts_[i] = std::max(amounts_[i], other.amounts_[i]);
  }
}

bool ResourceList::IsZero() const {
  return std::all_of(amounts_.begin(), amounts_.end(), [](int64_t v) { return v == 0; });
}

bool operator==(const ResourceList& a, const ResourceList& b) {
  const auto& shorter = a.amounts_.size() <= b.amounts_.size() ? a.amounts_ : b.amounts_;
  const auto& longer = a.amounts_.size() <= b.amounts_.size() ? b.amounts_ : a.amounts_;
  if (!std::equal(shorter.begin(), shorter.end(), longer.begin())) return false;
  return std::all_of(longer.begin() + static_cast<std::ptrdiff_t>(shorter.size()), longer.end(),
                     [](int64_t v) { return v == 0; });
}

}  // namespace kubesched::api
