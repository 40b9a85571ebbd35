#pragma once

// The `queues` section: the hierarchical queue quota tree (see DESIGN.md "Queue quota"). Read from
// the configuration file and from the watched ConfigMap's `queues.yaml`, with the same decoder and
// the same validation, so a ConfigMap update is accepted exactly when the same text would start
// the scheduler.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/api/resource.h"

namespace kubesched::config {

// A GPU-hour (or core-hour) allowance for one resource: canonical units (milli-cores for cpu)
// times seconds, so accrual is request x running time with no unit conversion.
struct BudgetLimit {
  api::ResourceId resource = 0;
  double unit_seconds = 0;
  std::string text;  // as written ("1000h"), for messages
};

// Where budget periods start. kNone: at the first launch (then every `period`); kWeek: at Monday
// 00:00 UTC (periods of whole weeks); kMonth: at the first of the month 00:00 UTC (each calendar
// month one period), so that a team's allowance follows the calendar it is handed out by.
enum class PeriodAlignment { kNone, kWeek, kMonth };

struct QueueSpec {
  std::string name;                      // one path segment, no dots
  std::string path;                      // "root.prod.search", filled by the decoder
  api::ResourceList max;                 // canonical amounts
  std::vector<api::ResourceId> limited;  // resources `max` names, in the order written
  std::vector<BudgetLimit> budget;
  // Budget reset period; none: the budget never resets (unless aligned to months). With kWeek a
  // whole number of weeks (default one); with kMonth none: the calendar decides.
  std::optional<absl::Duration> period;
  PeriodAlignment align_to = PeriodAlignment::kNone;  // budget.alignTo
  std::vector<QueueSpec> queues;                      // children
};

// A namespaced object the configuration names (a watched ConfigMap, the budget ledger).
struct ObjectRef {
  std::string namespace_name;
  std::string name;
  bool empty() const { return name.empty(); }
  bool Names(const std::string& namespace_name_of, const std::string& name_of) const {
    return !empty() && name == name_of && namespace_name == namespace_name_of;
  }
};

// A kind of Dynamic Resource Allocation device that counts as a resource, as the device plugin's
// `nvidia.com/gpu` counts: in queue quota (max, typed keys, budgets) and in the scores that weigh
// the resource (NodeResourcesBalancedAllocation, the Watermark's allocated ratio). A device
// published by `driver` whose attributes have every value in `attributes` is one `resource`; its
// model, for typed keys (`<resource>.<model>`), is the value of `model_attribute`, spaces and other
// characters a label value may not hold turned into '-' (as GPU feature discovery writes product
// names in labels), then named through QueuesConfig::models as a node's model label value is.
struct DeviceResourceSpec {
  std::string driver;           // "gpu.nvidia.com"
  std::string resource;         // "nvidia.com/gpu": an extended resource name
  std::string model_attribute;  // fully qualified ("gpu.nvidia.com/productName"); "" for none
  // Fully qualified attribute name -> the value's text (strings and versions as written, integers
  // in decimal, booleans true or false), in the order written.
  std::vector<std::pair<std::string, std::string>> attributes;
};

// Updates of a watched configuration ConfigMap (queues, policies) taken and refused, and why the
// last one was refused.
struct ConfigReloads {
  int64_t applied = 0;
  int64_t rejected = 0;
  std::string last_error;
};

struct QueuesConfig {
  // Resource name -> node label whose value names the model ("nvidia.com/gpu" ->
  // "nvidia.com/gpu.product"): `<resource>.<value>` is then a typed key that limits usage on such
  // nodes only.
  std::vector<std::pair<std::string, std::string>> model_labels = {
      {"nvidia.com/gpu", "nvidia.com/gpu.product"}};
  // Model name -> the node label values that are that model ("A100" -> "NVIDIA-A100-SXM4-80GB",
  // "NVIDIA-A100-PCIE-*"; a trailing '*' matches by prefix). A node whose model label value is
  // listed charges `<resource>.<model name>`; any other value charges `<resource>.<value>`. No
  // value matches two models (the decoder refuses overlapping patterns). In the order written.
  std::vector<std::pair<std::string, std::vector<std::string>>> models;
  std::vector<QueueSpec> tree;  // root's children
  // The DRA devices counted as resources, the first kind that matches a device counting it. Set
  // in the configuration file only: it decides what every node offers, so it is fixed while the
  // scheduler runs (a ConfigMap reload keeps the file's).
  std::vector<DeviceResourceSpec> devices;
  // Pods with no queue label or namespace annotation go to root.<namespace> (under the namespace's
  // kubesched.io/parent-queue). Off: such pods stay pending.
  bool auto_create = true;
  // A ConfigMap whose `queues.yaml` replaces `tree` and `modelLabels` while it exists.
  ObjectRef config_map;
  // Where `run` keeps the budget ledger, and how often it writes it.
  ObjectRef ledger;
  absl::Duration ledger_interval = absl::Minutes(1);
};

// Data key of the watched ConfigMap.
inline constexpr char kQueuesConfigMapKey[] = "queues.yaml";

// Decodes a `queues.yaml` document: either the section's content (`modelLabels`, `tree`, ...) or
// a document with a top-level `queues:` holding it. Only modelLabels, models, tree and autoCreate
// may be given there (where the ConfigMap itself lives is the file's business). Errors name the
// queue path and the field: `queues.tree[0].queues[1] (root.prod.search).max.cpu: 1000 is above
// root.prod's max 900`.
absl::StatusOr<QueuesConfig> ParseQueuesDocument(std::string_view text);

}  // namespace kubesched::config
