#include "config/queues.h"

#include <array>
#include <exception>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "config/yaml_reader.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/quantity.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::Reader;

constexpr std::array<std::string_view, 4> kQueueFields = {"name", "max", "budget", "queues"};
constexpr std::string_view kRoot = "root";

// "queues.tree[0].queues[1] (root.prod.search)": where a queue is, by position and by name.
std::string Where(std::string_view path, std::string_view queue_path) {
  if (queue_path.empty()) return std::string(path);
  return absl::StrCat(Absl(path), " (", Absl(queue_path), ")");
}

// A resource name as a quota key: a qualified name ("cpu", "nvidia.com/gpu", "cpu.A4").
bool ValidResourceKey(std::string_view name) { return api::IsValidLabelKey(name); }

void DecodeMax(Reader& r, const YAML::Node& node, std::string_view where, QueueSpec* queue) {
  if (!HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(Field(where, "max"),
           "must be a map of resource quantities, got " + yaml::Describe(node));
    return;
  }
  for (const auto& entry : node) {
    if (!r.ok()) return;
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string field = Field(where, absl::StrCat("max.", key));
    if (!ValidResourceKey(key)) {
      r.Fail(Field(where, "max"), absl::StrCat("\"", key, "\" is not a resource name"));
      return;
    }
    if (!entry.second.IsScalar()) {
      r.Fail(field, "must be a quantity, got " + yaml::Describe(entry.second));
      return;
    }
    auto quantity = api::Quantity::Parse(entry.second.Scalar());
    if (!quantity.ok()) {
      r.Fail(field, absl::StrCat("\"", entry.second.Scalar(), "\" is not a quantity"));
      return;
    }
    if (quantity->milli() < 0) {
      r.Fail(field, absl::StrCat("must not be negative, got ", entry.second.Scalar()));
      return;
    }
    const api::ResourceId id = api::InternResource(key);
    for (api::ResourceId seen : queue->limited) {
      if (seen == id) {
        r.Fail(field, "is given twice");
        return;
      }
    }
    queue->limited.push_back(id);
    queue->max.Set(id, api::CanonicalAmount(id, *quantity));
  }
}

// "1000h" (resource-hours) or "500mh" for cpu: a quantity followed by "h".
absl::StatusOr<double> ParseResourceHours(api::ResourceId id, std::string_view text) {
  if (text.size() < 2 || text.back() != 'h') {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", Absl(text),
                     "\" is not an amount of resource-hours (a quantity followed by h, e.g. "
                     "1000h)"));
  }
  auto quantity = api::Quantity::Parse(text.substr(0, text.size() - 1));
  if (!quantity.ok() || quantity->milli() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", Absl(text), "\" is not a non-negative amount of resource-hours"));
  }
  // Canonical units (milli for cpu) per hour, as seconds.
  const double canonical = api::CountsInMilli(id) ? static_cast<double>(quantity->milli())
                                                  : static_cast<double>(quantity->milli()) / 1000.0;
  return canonical * 3600.0;
}

void DecodeAlignment(Reader& r, const std::string& text, const std::string& field,
                     QueueSpec* queue) {
  if (text == "week") {
    queue->align_to = PeriodAlignment::kWeek;
  } else if (text == "month") {
    queue->align_to = PeriodAlignment::kMonth;
  } else {
    r.Fail(field, absl::StrCat("must be week or month, got \"", text, "\""));
  }
}

// The period rules of an aligned budget, once the whole budget map is read.
void CheckAlignedPeriod(Reader& r, std::string_view where, QueueSpec* queue) {
  const std::string field = Field(where, "budget.period");
  if (queue->align_to == PeriodAlignment::kMonth && queue->period.has_value()) {
    r.Fail(field, "with alignTo: month each calendar month is one period; leave period out");
    return;
  }
  if (queue->align_to != PeriodAlignment::kWeek) return;
  const absl::Duration week = absl::Hours(24 * 7);
  if (!queue->period.has_value()) queue->period = week;
  absl::Duration remainder;
  absl::IDivDuration(*queue->period, week, &remainder);
  if (remainder != absl::ZeroDuration()) {
    r.Fail(field, absl::StrCat("with alignTo: week the period must be a whole number of weeks "
                               "(168h, 336h, ...), got ",
                               absl::FormatDuration(*queue->period)));
  }
}

void DecodeBudget(Reader& r, const YAML::Node& node, std::string_view where, QueueSpec* queue) {
  if (!HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(Field(where, "budget"), "must be a map, got " + yaml::Describe(node));
    return;
  }
  for (const auto& entry : node) {
    if (!r.ok()) return;
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string field = Field(where, absl::StrCat("budget.", key));
    if (!entry.second.IsScalar()) {
      r.Fail(field, "must be a string, got " + yaml::Describe(entry.second));
      return;
    }
    if (key == "period") {
      absl::Duration period;
      r.Duration(entry.second, field, &period);
      if (r.ok() && period <= absl::ZeroDuration()) r.Fail(field, "must be greater than 0");
      if (r.ok()) queue->period = period;
      continue;
    }
    if (key == "alignTo") {
      DecodeAlignment(r, entry.second.Scalar(), field, queue);
      continue;
    }
    if (!ValidResourceKey(key)) {
      r.Fail(Field(where, "budget"), absl::StrCat("\"", key, "\" is not a resource name"));
      return;
    }
    const api::ResourceId id = api::InternResource(key);
    auto hours = ParseResourceHours(id, entry.second.Scalar());
    if (!hours.ok()) {
      r.Fail(field, util::Std(hours.status().message()));
      return;
    }
    for (const auto& seen : queue->budget) {
      if (seen.resource == id) {
        r.Fail(field, "is given twice");
        return;
      }
    }
    queue->budget.push_back({id, *hours, entry.second.Scalar()});
  }
}

void DecodeQueueList(Reader& r, const YAML::Node& node, std::string_view path,
                     std::string_view parent_path, std::vector<QueueSpec>* out);

void DecodeQueue(Reader& r, const YAML::Node& node, std::string_view path,
                 std::string_view parent_path, QueueSpec* queue) {
  if (!r.Map(node, path, kQueueFields)) return;
  if (!HasValue(node)) {
    r.Fail(path, "must be a queue with a name");
    return;
  }
  r.String(Get(node, "name"), Field(path, "name"), &queue->name);
  if (!r.ok()) return;
  if (queue->name.empty()) {
    r.Fail(Field(path, "name"), "required");
    return;
  }
  if (absl::StrContains(queue->name, '.') || !api::IsValidLabelValue(queue->name)) {
    r.Fail(Field(path, "name"),
           absl::StrCat("\"", queue->name,
                        "\" is not a queue name (letters, digits, '-' and '_', no dots)"));
    return;
  }
  queue->path = absl::StrCat(Absl(parent_path), ".", queue->name);
  const std::string where = Where(path, queue->path);
  DecodeMax(r, Get(node, "max"), where, queue);
  DecodeBudget(r, Get(node, "budget"), where, queue);
  if (r.ok() && queue->period.has_value() && queue->budget.empty()) {
    r.Fail(Field(where, "budget.period"), "a period needs a budget to reset");
  }
  if (r.ok() && queue->align_to != PeriodAlignment::kNone && queue->budget.empty()) {
    r.Fail(Field(where, "budget.alignTo"), "an aligned period needs a budget to reset");
  }
  if (r.ok()) CheckAlignedPeriod(r, where, queue);
  DecodeQueueList(r, Get(node, "queues"), Field(path, "queues"), queue->path, &queue->queues);
}

void DecodeQueueList(Reader& r, const YAML::Node& node, std::string_view path,
                     std::string_view parent_path, std::vector<QueueSpec>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < node.size() && r.ok(); ++i) {
    const std::string item_path = Index(path, i);
    QueueSpec& queue = out->emplace_back();
    DecodeQueue(r, node[i], item_path, parent_path, &queue);
    if (r.ok() && !names.insert(queue.name).second) {
      r.Fail(Field(Where(item_path, queue.path), "name"),
             absl::StrCat("duplicate queue name \"", queue.name, "\" under ", Absl(parent_path)));
    }
  }
}

// A child's max above the max of its nearest ancestor limiting the same resource.
void CheckChildMax(Reader& r, const QueueSpec& queue, std::string_view path,
                   const std::vector<const QueueSpec*>& ancestors) {
  for (api::ResourceId id : queue.limited) {
    for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
      const QueueSpec& ancestor = **it;
      if (std::find(ancestor.limited.begin(), ancestor.limited.end(), id) ==
          ancestor.limited.end()) {
        continue;
      }
      if (queue.max.Get(id) > ancestor.max.Get(id)) {
        r.Fail(Field(Where(path, queue.path), absl::StrCat("max.", Absl(api::ResourceName(id)))),
               absl::StrCat(api::FormatAmount(id, queue.max.Get(id)), " is above ", ancestor.path,
                            "'s max ", api::FormatAmount(id, ancestor.max.Get(id))));
        return;
      }
      break;
    }
  }
  std::vector<const QueueSpec*> below = ancestors;
  below.push_back(&queue);
  for (size_t i = 0; i < queue.queues.size() && r.ok(); ++i) {
    CheckChildMax(r, queue.queues[i], Index(Field(path, "queues"), i), below);
  }
}

void DecodeModelLabels(Reader& r, const YAML::Node& node, std::string_view path,
                       QueuesConfig* out) {
  if (!HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(path, "must be a map of resource name to node label, got " + yaml::Describe(node));
    return;
  }
  out->model_labels.clear();
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (!ValidResourceKey(key)) {
      r.Fail(path, absl::StrCat("\"", key, "\" is not a resource name"));
      return;
    }
    std::string label;
    r.String(entry.second, Field(path, key), &label);
    if (!r.ok()) return;
    if (!api::IsValidLabelKey(label)) {
      r.Fail(Field(path, key), absl::StrCat("\"", label, "\" is not a label key"));
      return;
    }
    out->model_labels.emplace_back(key, label);
  }
}

// Whether some label value matches both patterns ('*' only last: a prefix).
bool PatternsOverlap(std::string_view a, std::string_view b) {
  const bool a_prefix = a.ends_with('*');
  const bool b_prefix = b.ends_with('*');
  if (a_prefix) a.remove_suffix(1);
  if (b_prefix) b.remove_suffix(1);
  if (a_prefix && b_prefix) return a.starts_with(b) || b.starts_with(a);
  if (a_prefix) return b.starts_with(a);
  if (b_prefix) return a.starts_with(b);
  return a == b;
}

void DecodeModelPatterns(Reader& r, const YAML::Node& node, std::string_view path,
                         std::vector<std::string>* patterns) {
  r.StringList(node, path, patterns);
  if (r.ok() && patterns->empty()) r.Fail(path, "lists no label value");
  for (size_t i = 0; i < patterns->size() && r.ok(); ++i) {
    std::string_view pattern = (*patterns)[i];
    const std::string where = Index(path, i);
    // A prefix is the start of a label value: it may end in '-', '.' or '_'.
    const bool prefix = pattern.ends_with('*');
    if (prefix) pattern.remove_suffix(1);
    const bool valid =
        !pattern.empty() && (prefix ? api::IsValidLabelValue(absl::StrCat(util::Absl(pattern), "x"))
                                    : api::IsValidLabelValue(pattern));
    if (!valid) {
      r.Fail(where, absl::StrCat("\"", (*patterns)[i],
                                 "\" is not a label value (a trailing * matches by prefix)"));
    }
  }
}

// `models`: model name -> node label values (see QueuesConfig::models).
void DecodeModels(Reader& r, const YAML::Node& node, std::string_view path, QueuesConfig* out) {
  if (!HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(path, "must be a map of model name to node label values, got " + yaml::Describe(node));
    return;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string where = Field(path, name);
    if (name.empty() || !api::IsValidLabelValue(name) || !ValidResourceKey("x/gpu." + name)) {
      r.Fail(path, absl::StrCat("\"", name, "\" is not a model name (letters, digits, - _ .)"));
      return;
    }
    std::vector<std::string> patterns;
    DecodeModelPatterns(r, entry.second, where, &patterns);
    if (!r.ok()) return;
    for (const auto& [other, other_patterns] : out->models) {
      for (const std::string& mine : patterns) {
        for (const std::string& theirs : other_patterns) {
          if (!PatternsOverlap(mine, theirs)) continue;
          r.Fail(where, absl::StrCat("\"", mine, "\" overlaps \"", theirs, "\" of model ", other,
                                     ": a node's label value must name one model"));
          return;
        }
      }
    }
    out->models.emplace_back(name, std::move(patterns));
  }
}

void DecodeObjectRef(Reader& r, const YAML::Node& node, std::string_view path, ObjectRef* out) {
  if (!r.Map(node, path, {"namespace", "name"}) || !HasValue(node)) return;
  r.String(Get(node, "namespace"), Field(path, "namespace"), &out->namespace_name);
  r.String(Get(node, "name"), Field(path, "name"), &out->name);
  if (r.ok() && (out->name.empty() || out->namespace_name.empty())) {
    r.Fail(Field(path, out->name.empty() ? "name" : "namespace"), "required");
  }
}

// Paths decoded under an explicit root entry read "root.root.x"; they are "root.x".
void DropRootEntry(std::vector<QueueSpec>* queues) {
  for (QueueSpec& queue : *queues) {
    queue.path = "root" + queue.path.substr(std::string_view("root.root").size());
    DropRootEntry(&queue.queues);
  }
}

// Turns a tree written with an explicit `root` entry into root's children.
void UnwrapRoot(Reader& r, std::string_view path, std::vector<QueueSpec>* tree) {
  for (size_t i = 0; i < tree->size() && r.ok(); ++i) {
    QueueSpec& queue = (*tree)[i];
    if (queue.name != kRoot) continue;
    const std::string where = Where(Index(path, i), "root");
    if (!queue.limited.empty() || !queue.budget.empty()) {
      r.Fail(Field(where, queue.limited.empty() ? "budget" : "max"),
             "root takes no max or budget: it is the whole cluster");
    } else if (tree->size() != 1) {
      r.Fail(where, "a root entry must be the only top-level queue");
    }
  }
}

}  // namespace

void DecodeQueuesSection(Reader& r, const YAML::Node& node, std::string_view path, bool in_file,
                         QueuesConfig* out) {
  static constexpr std::array<std::string_view, 8> kFileFields = {
      "modelLabels", "models",    "tree",   "autoCreate",
      "devices",     "configMap", "ledger", "ledgerInterval"};
  static constexpr std::array<std::string_view, 4> kMapFields = {"modelLabels", "models", "tree",
                                                                 "autoCreate"};
  if (!in_file && HasValue(Get(node, "devices"))) {
    r.Fail(Field(path, "devices"),
           "may be set in the configuration file only: what counts as a device resource is "
           "fixed while kubesched runs");
    return;
  }
  if (in_file) {
    if (!r.Map(node, path, kFileFields)) return;
  } else if (!r.Map(node, path, kMapFields)) {
    return;
  }
  if (!HasValue(node)) return;
  DecodeModelLabels(r, Get(node, "modelLabels"), Field(path, "modelLabels"), out);
  DecodeModels(r, Get(node, "models"), Field(path, "models"), out);
  r.Bool(Get(node, "autoCreate"), Field(path, "autoCreate"), &out->auto_create);
  const std::string tree_path = Field(path, "tree");
  // The names are root's children; a root entry, if written, is unwrapped below.
  DecodeQueueList(r, Get(node, "tree"), tree_path, kRoot, &out->tree);
  UnwrapRoot(r, tree_path, &out->tree);
  if (r.ok() && out->tree.size() == 1 && out->tree.front().name == kRoot) {
    std::vector<QueueSpec> children = std::move(out->tree.front().queues);
    DropRootEntry(&children);
    out->tree = std::move(children);
  }
  for (size_t i = 0; i < out->tree.size() && r.ok(); ++i) {
    CheckChildMax(r, out->tree[i], Index(tree_path, i), {});
  }
  if (!in_file) return;
  DecodeQueueDevices(r, Get(node, "devices"), Field(path, "devices"), out);
  DecodeObjectRef(r, Get(node, "configMap"), Field(path, "configMap"), &out->config_map);
  DecodeObjectRef(r, Get(node, "ledger"), Field(path, "ledger"), &out->ledger);
  r.Duration(Get(node, "ledgerInterval"), Field(path, "ledgerInterval"), &out->ledger_interval);
  if (r.ok() && out->ledger_interval <= absl::ZeroDuration()) {
    r.Fail(Field(path, "ledgerInterval"), "must be greater than 0");
  }
}

absl::StatusOr<QueuesConfig> ParseQueuesDocument(std::string_view text) {
  try {
    auto root = yaml::ParseDocument(text);
    if (!root.ok()) return root.status();
    YAML::Node section = *root;
    std::string path = "queues";
    if (section.IsMap() && HasValue(Get(section, "queues"))) {
      Reader r;
      if (!r.Map(section, "", {"queues"})) return r.status();
      section = Get(section, "queues");
    }
    Reader r;
    QueuesConfig config;
    DecodeQueuesSection(r, section, path, /*in_file=*/false, &config);
    if (!r.ok()) return r.status();
    return config;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot decode queues: ", e.what()));
  }
}

}  // namespace kubesched::config
