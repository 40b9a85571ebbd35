// `queues.devices`: which Dynamic Resource Allocation devices count as which resource (see
// DeviceResourceSpec).

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "scheduler/api/labels.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::Reader;

// Upstream's limits: a driver name is a DNS subdomain of at most 63 characters, an attribute's
// name a C identifier of at most 32.
constexpr size_t kMaxDriverLength = 63;
constexpr size_t kMaxIdentifierLength = 32;

bool IsCIdentifier(std::string_view s) {
  const auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (s.empty() || s.size() > kMaxIdentifierLength || !letter(s.front())) return false;
  for (char c : s) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// A DNS subdomain: the part of a label key before its '/' is validated as one.
bool IsDriverName(std::string_view s) {
  return !s.empty() && s.size() <= kMaxDriverLength &&
         s.find_first_of("/ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string_view::npos &&
         api::IsValidLabelKey(absl::StrCat(Absl(s), "/x"));
}

// An attribute name as a device selector writes it: "productName" (the driver's own) or
// "domain/productName"; returned fully qualified, "" when it is not one.
std::string QualifiedAttribute(std::string_view name, std::string_view driver) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    return IsCIdentifier(name) ? absl::StrCat(Absl(driver), "/", Absl(name)) : std::string();
  }
  const std::string_view domain = name.substr(0, slash);
  if (!IsDriverName(domain) || !IsCIdentifier(name.substr(slash + 1))) return std::string();
  return std::string(name);
}

constexpr std::string_view kNotAttribute =
    "\" is not an attribute name (a C identifier of at most 32 characters, optionally after a "
    "domain and '/')";

void DecodeAttributes(Reader& r, const YAML::Node& node, std::string_view path,
                      DeviceResourceSpec* out) {
  if (!HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(path, "must be a map of attribute name to value, got " + yaml::Describe(node));
    return;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string qualified = QualifiedAttribute(name, out->driver);
    if (qualified.empty()) {
      r.Fail(path, absl::StrCat("\"", name, Absl(kNotAttribute)));
      return;
    }
    if (!entry.second.IsScalar()) {
      r.Fail(Field(path, name),
             "must be a value (string, number or boolean), got " + yaml::Describe(entry.second));
      return;
    }
    for (const auto& [seen, value] : out->attributes) {
      if (seen == qualified) {
        r.Fail(Field(path, name), absl::StrCat("names attribute ", qualified, " twice"));
        return;
      }
    }
    out->attributes.emplace_back(qualified, entry.second.Scalar());
  }
}

void DecodeDevice(Reader& r, const YAML::Node& node, std::string_view path,
                  DeviceResourceSpec* out) {
  static constexpr std::array<std::string_view, 4> kFields = {"driver", "resource",
                                                              "modelAttribute", "attributes"};
  if (!HasValue(node)) {
    r.Fail(path, "must be a device kind ({driver, resource, modelAttribute, attributes})");
    return;
  }
  if (!r.Map(node, path, kFields)) return;
  r.String(Get(node, "driver"), Field(path, "driver"), &out->driver);
  r.String(Get(node, "resource"), Field(path, "resource"), &out->resource);
  std::string model;
  r.String(Get(node, "modelAttribute"), Field(path, "modelAttribute"), &model);
  if (!r.ok()) return;
  if (out->driver.empty()) {
    r.Fail(Field(path, "driver"), "required");
  } else if (!IsDriverName(out->driver)) {
    r.Fail(Field(path, "driver"), absl::StrCat("\"", out->driver,
                                               "\" is not a driver name (a lower-case DNS "
                                               "subdomain of at most 63 characters)"));
  } else if (out->resource.empty()) {
    r.Fail(Field(path, "resource"), "required");
  } else if (out->resource.find('/') == std::string::npos || !api::IsValidLabelKey(out->resource)) {
    r.Fail(Field(path, "resource"),
           absl::StrCat("\"", out->resource,
                        "\" is not an extended resource name (a domain, '/' and a name, as "
                        "nvidia.com/gpu)"));
  } else if (!model.empty()) {
    out->model_attribute = QualifiedAttribute(model, out->driver);
    if (out->model_attribute.empty()) {
      r.Fail(Field(path, "modelAttribute"), absl::StrCat("\"", model, Absl(kNotAttribute)));
    }
  }
  if (!r.ok()) return;
  DecodeAttributes(r, Get(node, "attributes"), Field(path, "attributes"), out);
}

// Two kinds with the same driver and the same attribute values (in any order) would both claim
// every device of the first: the second never counts anything.
bool SameDevices(const DeviceResourceSpec& a, const DeviceResourceSpec& b) {
  if (a.driver != b.driver || a.attributes.size() != b.attributes.size()) return false;
  for (const auto& wanted : a.attributes) {
    bool found = false;
    for (const auto& other : b.attributes) found = found || other == wanted;
    if (!found) return false;
  }
  return true;
}

}  // namespace

void DecodeQueueDevices(Reader& r, const YAML::Node& node, std::string_view path,
                        QueuesConfig* out) {
  if (!HasValue(node)) return;
  if (!node.IsSequence()) {
    r.Fail(path, "must be a list of device kinds, got " + yaml::Describe(node));
    return;
  }
  for (size_t i = 0; i < node.size() && r.ok(); ++i) {
    const std::string where = Index(path, i);
    DeviceResourceSpec device;
    DecodeDevice(r, node[i], where, &device);
    if (!r.ok()) return;
    for (size_t j = 0; j < out->devices.size(); ++j) {
      if (!SameDevices(out->devices[j], device)) continue;
      r.Fail(where, absl::StrCat("counts the same devices as ", Index(path, j),
                                 " (same driver and attributes): only the first would count"));
      return;
    }
    out->devices.push_back(std::move(device));
  }
}

}  // namespace kubesched::config
