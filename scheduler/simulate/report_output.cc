#include "scheduler/simulate/report_output.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"
#include "scheduler/quota/budget_period.h"
#include "scheduler/simulate/json_writer.h"
#include "scheduler/util/strings.h"
#include "scheduler/util/utf8.h"

namespace kubesched::scheduler {
namespace {

using json_writer::Field;
using json_writer::Key;
using json_writer::OptionalString;
using json_writer::Resources;
using json_writer::String;
using json_writer::Writer;

void Strings(Writer& w, std::string_view key, const std::vector<std::string>& values) {
  Key(w, key);
  w.StartArray();
  for (const auto& value : values) String(w, value);
  w.EndArray();
}

// The resources in `ids` (all of them, zeros included) plus any other non-zero entry.
void LimitedResources(Writer& w, const api::ResourceList& list,
                      const std::vector<api::ResourceId>& ids) {
  w.StartObject();
  std::vector<api::ResourceId> all = ids;
  list.ForEachNonZero([&](api::ResourceId id, int64_t) {
    if (std::find(all.begin(), all.end(), id) == all.end()) all.push_back(id);
  });
  std::sort(all.begin(), all.end());
  for (api::ResourceId id : all) {
    Key(w, api::ResourceName(id));
    String(w, api::FormatAmount(id, list.Get(id)));
  }
  w.EndObject();
}

void Queue(Writer& w, const quota::QueueUsage& queue) {
  w.StartObject();
  Field(w, "name", std::string_view(queue.path));
  Key(w, "leaf");
  w.Bool(queue.leaf);
  Key(w, "autoCreated");
  w.Bool(queue.auto_created);
  Key(w, "max");
  api::ResourceList max;
  for (api::ResourceId id : queue.limited) max.Set(id, queue.max.Get(id));
  LimitedResources(w, max, queue.limited);
  Key(w, "used");
  LimitedResources(w, queue.used, queue.limited);
  Key(w, "budgets");
  w.StartArray();
  for (const auto& budget : queue.budgets) {
    w.StartObject();
    Field(w, "resource", api::ResourceName(budget.resource));
    Field(w, "budget", std::string_view(budget.limit));
    Field(w, "budgetHours", budget.limit_hours);
    Field(w, "usedHours", budget.used_hours);
    Key(w, "period");
    if (budget.period.has_value()) {
      String(w, absl::FormatDuration(*budget.period));
    } else {
      w.Null();
    }
    Key(w, "periodStart");
    if (budget.period_start.has_value()) {
      String(w, absl::FormatTime(absl::RFC3339_sec, *budget.period_start, absl::UTCTimeZone()));
    } else {
      w.Null();
    }
    Key(w, "nextReset");
    OptionalString(w, budget.next_reset.has_value()
                          ? std::optional(quota::FormatResetTime(*budget.next_reset))
                          : std::nullopt);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// "queue root.prod.search: cpu 600/750 (150 free), pods 3/-" lines, leaf first.
std::string QueueLines(const std::vector<quota::QueueUsage>& path) {
  std::string out;
  for (const auto& queue : path) {
    std::vector<std::string> parts;
    for (api::ResourceId id : queue.limited) {
      const int64_t used = queue.used.Get(id);
      const int64_t max = queue.max.Get(id);
      parts.push_back(absl::StrCat(util::Absl(api::ResourceName(id)), " ",
                                   api::FormatAmount(id, used), "/", api::FormatAmount(id, max),
                                   " (", api::FormatAmount(id, std::max<int64_t>(0, max - used)),
                                   " free)"));
    }
    for (const auto& budget : queue.budgets) {
      parts.push_back(absl::StrFormat("budget %s %.6gh of %s",
                                      util::Absl(api::ResourceName(budget.resource)),
                                      budget.used_hours, budget.limit));
    }
    if (parts.empty()) parts.push_back("no limits");
    absl::StrAppend(&out, "queue ", queue.path, ": ", util::Join(parts, ", "), "\n");
  }
  return out;
}

// max - used - held, floored at 0.
int64_t Free(const quota::QueueUsage& queue, api::ResourceId id) {
  return std::max<int64_t>(0, queue.max.Get(id) - queue.used.Get(id) - queue.held.Get(id));
}

// "group": the explained pod's gang, or null when it is in none.
void Group(Writer& w, const std::optional<GangExplanation>& group) {
  Key(w, "group");
  if (!group.has_value()) {
    w.Null();
    return;
  }
  w.StartObject();
  const size_t slash = group->key.find('/');
  Field(w, "namespace", std::string_view(group->key).substr(0, slash));
  Field(w, "name", std::string_view(group->key).substr(slash + 1));
  Field(w, "kind", std::string_view(group->implicit ? "implicit" : "PodGroup"));
  Key(w, "minMember");
  if (group->min_member.has_value()) {
    w.Int64(*group->min_member);
  } else {
    w.Null();
  }
  Field(w, "members", int64_t{group->counts.pods});
  Field(w, "placed", int64_t{group->counts.assigned});
  Field(w, "phase", std::string_view(group->phase));
  Field(w, "problem", group->problem.empty() ? std::optional<std::string>() : group->problem);
  Key(w, "need");
  Resources(w, group->need);
  Field(w, "needFrom",
        std::string_view(group->need_from_min_resources ? "minResources" : "requests"));
  Key(w, "queuePath");
  w.StartArray();
  for (const auto& queue : group->queue_path) {
    w.StartObject();
    Field(w, "name", std::string_view(queue.path));
    api::ResourceList max, free;
    for (api::ResourceId id : queue.limited) {
      max.Set(id, queue.max.Get(id));
      free.Set(id, Free(queue, id));
    }
    Key(w, "max");
    LimitedResources(w, max, queue.limited);
    Key(w, "used");
    LimitedResources(w, queue.used, queue.limited);
    Key(w, "held");
    LimitedResources(w, queue.held, queue.limited);
    Key(w, "free");
    LimitedResources(w, free, queue.limited);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// "cpu 3, pods 3"
std::string ResourceText(const api::ResourceList& list) {
  std::vector<std::string> parts;
  list.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
    parts.push_back(
        absl::StrCat(util::Absl(api::ResourceName(id)), " ", api::FormatAmount(id, amount)));
  });
  return parts.empty() ? "nothing" : util::Join(parts, ", ");
}

// The table's group section: the group, its need, and per queue on the pod's path (leaf first)
// "group room in queue root.ml: cpu 1/4, 2 held for other groups (1 free, group needs 3)" for
// each limited resource the group needs; empty when the pod is in no group.
std::string GroupLines(const std::optional<GangExplanation>& group) {
  if (!group.has_value()) return "";
  std::string out = absl::StrCat(
      "pod group ", group->key, " (", group->implicit ? "implicit" : "PodGroup", ", minMember ",
      group->min_member.has_value() ? absl::StrCat(*group->min_member) : "-",
      "): ", group->counts.pods, " member(s), ", group->counts.assigned, " placed, ", group->phase,
      "\n");
  if (!group->problem.empty()) absl::StrAppend(&out, "group unusable: ", group->problem, "\n");
  if (!group->min_member.has_value()) return out;
  absl::StrAppend(&out, "group needs ", ResourceText(group->need), " (",
                  group->need_from_min_resources
                      ? std::string("spec.minResources")
                      : absl::StrCat("the requests of its first ", *group->min_member, " members"),
                  ")\n");
  for (const auto& queue : group->queue_path) {
    std::vector<std::string> parts;
    for (api::ResourceId id : queue.limited) {
      if (group->need.Get(id) == 0) continue;
      std::string part = absl::StrCat(util::Absl(api::ResourceName(id)), " ",
                                      api::FormatAmount(id, queue.used.Get(id)), "/",
                                      api::FormatAmount(id, queue.max.Get(id)));
      if (queue.held.Get(id) > 0) {
        absl::StrAppend(&part, ", ", api::FormatAmount(id, queue.held.Get(id)),
                        " held for other groups");
      }
      absl::StrAppend(&part, " (", api::FormatAmount(id, Free(queue, id)), " free, group needs ",
                      api::FormatAmount(id, group->need.Get(id)), ")");
      parts.push_back(std::move(part));
    }
    if (parts.empty()) parts.push_back("no limit on what the group needs");
    absl::StrAppend(&out, "group room in queue ", queue.path, ": ", util::Join(parts, ", "), "\n");
  }
  return out;
}

// "watermark": {"mode", "allocatedRatio", "pool"}, or null when no profile uses the Watermark
// strategy.
void Watermark(Writer& w, const std::optional<WatermarkReport>& watermark) {
  Key(w, "watermark");
  if (!watermark.has_value()) {
    w.Null();
    return;
  }
  w.StartObject();
  Field(w, "mode", std::string_view(watermark->mode));
  Field(w, "allocatedRatio", watermark->allocated_ratio);
  Field(w, "pool", std::string_view(watermark->pool));
  w.EndObject();
}

// The table's one-line form; empty without a Watermark strategy.
std::string WatermarkLine(const std::optional<WatermarkReport>& watermark) {
  if (!watermark.has_value()) return "";
  return absl::StrFormat("watermark: %s (pool %s, allocated ratio %.4f)\n", watermark->mode,
                         watermark->pool, watermark->allocated_ratio);
}

void Summary(Writer& w, const SimulationReport& r) {
  Key(w, "summary");
  w.StartObject();
  Field(w, "pods", int64_t{r.pods});
  Field(w, "scheduled", int64_t{r.scheduled});
  Field(w, "unschedulable", int64_t{r.unschedulable});
  Field(w, "skipped", int64_t{r.skipped});
  Field(w, "preempted", int64_t{r.preempted});
  Field(w, "seconds", r.seconds);
  Field(w, "podsPerSecond", r.pods_per_second);
  Key(w, "attemptLatencySeconds");
  w.StartObject();
  Field(w, "p50", r.attempt_latency.p50);
  Field(w, "p90", r.attempt_latency.p90);
  Field(w, "p99", r.attempt_latency.p99);
  w.EndObject();
  Watermark(w, r.watermark);
  w.EndObject();
}

void Pods(Writer& w, const SimulationReport& r) {
  Key(w, "pods");
  w.StartArray();
  for (const auto& pod : r.pod_results) {
    w.StartObject();
    Field(w, "namespace", std::string_view(pod.namespace_name));
    Field(w, "name", std::string_view(pod.name));
    Field(w, "node", pod.node);
    Field(w, "nominatedNode", pod.nominated_node);
    Field(w, "policy", pod.policy);
    Field(w, "queue", pod.queue);
    Field(w, "attempts", int64_t{pod.attempts});
    Field(w, "message", pod.message);
    w.EndObject();
  }
  w.EndArray();
}

void Nodes(Writer& w, const SimulationReport& r) {
  Key(w, "nodes");
  w.StartArray();
  for (const auto& node : r.nodes) {
    w.StartObject();
    Field(w, "name", std::string_view(node.name));
    Key(w, "allocatable");
    Resources(w, node.allocatable);
    Key(w, "requested");
    Resources(w, node.requested);
    Field(w, "pods", int64_t{node.pods});
    w.EndObject();
  }
  w.EndArray();
}

// "groups": one object per gang; left out when there is none, so that reports of clusters
// without gangs keep their shape.
void Groups(Writer& w, const std::vector<GroupResult>& groups) {
  if (groups.empty()) return;
  Key(w, "groups");
  w.StartArray();
  for (const auto& group : groups) {
    w.StartObject();
    Field(w, "namespace", std::string_view(group.namespace_name));
    Field(w, "name", std::string_view(group.name));
    Field(w, "kind", std::string_view(group.kind));
    Key(w, "minMember");
    if (group.min_member.has_value()) {
      w.Int64(*group.min_member);
    } else {
      w.Null();
    }
    Field(w, "members", int64_t{group.members});
    Field(w, "placed", int64_t{group.placed});
    Field(w, "state", std::string_view(group.state));
    Field(w, "reason", std::string_view(group.reason));
    w.EndObject();
  }
  w.EndArray();
}

// Left-aligned columns sized to their widest cell.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string ResourceSummary(const api::ResourceList& requested, const api::ResourceList& alloc,
                            api::ResourceId id) {
  return absl::StrCat(api::FormatAmount(id, requested.Get(id)), "/",
                      api::FormatAmount(id, alloc.Get(id)));
}

// The groups section of the table, preceded by a blank line; empty when there is no group.
std::string GroupsTable(const std::vector<GroupResult>& groups) {
  if (groups.empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      {"GROUP", "KIND", "MIN", "MEMBERS", "PLACED", "STATE", "REASON"}};
  for (const auto& group : groups) {
    rows.push_back({absl::StrCat(group.namespace_name, "/", group.name), group.kind,
                    group.min_member.has_value() ? absl::StrCat(*group.min_member) : "-",
                    absl::StrCat(group.members), absl::StrCat(group.placed), group.state,
                    group.reason});
  }
  return "\n" + Table(rows);
}

}  // namespace

std::string SimulationJson(const SimulationReport& report) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  Summary(w, report);
  Pods(w, report);
  Key(w, "preemptions");
  w.StartArray();
  for (const auto& preemption : report.preemptions) {
    w.StartObject();
    Field(w, "preemptor", std::string_view(preemption.preemptor));
    Field(w, "node", std::string_view(preemption.node));
    Key(w, "victims");
    w.StartArray();
    for (const auto& victim : preemption.victims) String(w, victim);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  Nodes(w, report);
  Strings(w, "typedLimitWarnings", report.typed_limit_warnings);
  Key(w, "queues");
  w.StartArray();
  for (const auto& queue : report.queues) Queue(w, queue);
  w.EndArray();
  Groups(w, report.groups);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string SimulationTable(const SimulationReport& report) {
  // The POLICY column appears only when some pod asked for a per-pod policy.
  const bool policies = std::any_of(report.pod_results.begin(), report.pod_results.end(),
                                    [](const PodResult& pod) { return pod.policy.has_value(); });
  // Each table's rows are dropped once the table is written, so that a large cluster's report
  // never holds the rows of both tables and their text at once.
  std::string out;
  {
    std::vector<std::vector<std::string>> pods = {{"NAMESPACE", "NAME", "NODE", "ATTEMPTS"}};
    if (policies) pods.front().push_back("POLICY");
    pods.front().push_back("MESSAGE");
    pods.reserve(report.pod_results.size() + 1);
    for (const auto& pod : report.pod_results) {
      pods.push_back(
          {pod.namespace_name, pod.name, pod.node.value_or("<none>"), absl::StrCat(pod.attempts)});
      if (policies) pods.back().push_back(pod.policy.value_or("-"));
      pods.back().push_back(pod.message.value_or(""));
    }
    // --pods-output none leaves no pod to list: no header either.
    if (!report.pod_results.empty()) {
      out = Table(pods);
      out += "\n";
    }
  }
  {
    std::vector<std::vector<std::string>> nodes = {{"NODE", "PODS", "CPU", "MEMORY", "GPU"}};
    nodes.reserve(report.nodes.size() + 1);
    const auto gpu = api::InternResource("nvidia.com/gpu");
    for (const auto& node : report.nodes) {
      nodes.push_back({node.name, absl::StrCat(node.pods),
                       ResourceSummary(node.requested, node.allocatable, api::kCpu),
                       ResourceSummary(node.requested, node.allocatable, api::kMemory),
                       ResourceSummary(node.requested, node.allocatable, gpu)});
    }
    out += Table(nodes);
  }
  out += absl::StrFormat(
      "\n%d pods: %d scheduled, %d unschedulable, %d skipped, %d preempted\n"
      "%.3f s, %.0f pods/s, attempt latency p50 %.1f us, p90 %.1f us, p99 %.1f us\n",
      report.pods, report.scheduled, report.unschedulable, report.skipped, report.preempted,
      report.seconds, report.pods_per_second, report.attempt_latency.p50 * 1e6,
      report.attempt_latency.p90 * 1e6, report.attempt_latency.p99 * 1e6);
  out += WatermarkLine(report.watermark);
  std::vector<std::vector<std::string>> queues = {{"QUEUE", "MAX", "USED", "BUDGET USED"}};
  for (const auto& queue : report.queues) {
    std::vector<std::string> max;
    std::vector<std::string> used;
    for (api::ResourceId id : queue.limited) {
      max.push_back(absl::StrCat(util::Absl(api::ResourceName(id)), "=",
                                 api::FormatAmount(id, queue.max.Get(id))));
    }
    queue.used.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
      used.push_back(
          absl::StrCat(util::Absl(api::ResourceName(id)), "=", api::FormatAmount(id, amount)));
    });
    std::vector<std::string> budgets;
    for (const auto& budget : queue.budgets) {
      budgets.push_back(absl::StrFormat("%s=%.6gh/%s",
                                        util::Absl(api::ResourceName(budget.resource)),
                                        budget.used_hours, budget.limit));
    }
    queues.push_back({queue.path, max.empty() ? "-" : util::Join(max, ","),
                      used.empty() ? "-" : util::Join(used, ","),
                      budgets.empty() ? "-" : util::Join(budgets, ",")});
  }
  const bool any_limits =
      std::any_of(report.queues.begin(), report.queues.end(),
                  [](const auto& q) { return !q.limited.empty() || !q.budgets.empty(); });
  if (any_limits) out += "\n" + Table(queues);
  for (const auto& warning : report.typed_limit_warnings)
    absl::StrAppend(&out, "warning: ", warning, "\n");
  out += GroupsTable(report.groups);
  return out;
}

std::string ExplainJson(const ExplainReport& report) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  Field(w, "pod", std::string_view(report.pod));
  Field(w, "policy", report.policy);
  if (report.policy_binding.has_value()) Field(w, "policyBinding", report.policy_binding);
  Key(w, "nodes");
  w.StartArray();
  for (const auto& node : report.nodes) {
    w.StartObject();
    Field(w, "name", std::string_view(node.name));
    Key(w, "feasible");
    w.Bool(node.feasible);
    Key(w, "filters");
    w.StartArray();
    for (const auto& filter : node.filters) {
      w.StartObject();
      Field(w, "plugin", std::string_view(filter.plugin));
      Field(w, "code", std::string_view(framework::CodeName(filter.code)));
      Key(w, "reasons");
      w.StartArray();
      for (const auto& reason : filter.reasons) String(w, reason);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    Key(w, "scores");
    w.StartArray();
    for (const auto& score : node.scores) {
      w.StartObject();
      Field(w, "plugin", std::string_view(score.plugin));
      Field(w, "raw", int64_t{score.raw});
      Field(w, "normalized", int64_t{score.normalized});
      Field(w, "weight", int64_t{score.weight});
      w.EndObject();
    }
    w.EndArray();
    Field(w, "total", int64_t{node.total});
    w.EndObject();
  }
  w.EndArray();
  Field(w, "selected", report.selected);
  Field(w, "message", report.message);
  Watermark(w, report.watermark);
  Key(w, "preemption");
  if (report.preemption_node.has_value()) {
    w.StartObject();
    Field(w, "node", std::string_view(*report.preemption_node));
    Key(w, "victims");
    w.StartArray();
    for (const auto& victim : report.preemption_victims) String(w, victim);
    w.EndArray();
    w.EndObject();
  } else {
    w.Null();
  }
  Field(w, "queue", report.queue);
  Strings(w, "typedLimitWarnings", report.typed_limit_warnings);
  Key(w, "queuePath");
  w.StartArray();
  for (const auto& queue : report.queue_path) Queue(w, queue);
  w.EndArray();
  Group(w, report.group);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string ExplainTable(const ExplainReport& report) {
  std::string out = absl::StrCat("Pod ", report.pod, "\n\n");
  std::vector<std::vector<std::string>> rows = {
      {"", "NODE", "FEASIBLE", "TOTAL", "FILTERS / SCORES"}};
  for (const auto& node : report.nodes) {
    const bool chosen = report.selected.has_value() && *report.selected == node.name;
    std::vector<std::string> details;
    for (const auto& filter : node.filters) {
      if (filter.code == framework::Code::kSuccess || filter.code == framework::Code::kSkip) {
        continue;
      }
      details.push_back(absl::StrCat(filter.plugin, ": ", util::Join(filter.reasons, ", ")));
    }
    for (const auto& score : node.scores) {
      details.push_back(absl::StrCat(score.plugin, " ", score.normalized, "x", score.weight,
                                     " (raw ", score.raw, ")"));
    }
    rows.push_back({chosen ? "*" : "", node.name, node.feasible ? "yes" : "no",
                    node.feasible ? absl::StrCat(node.total) : "-", util::Join(details, "; ")});
  }
  return out + Table(rows) + ExplainFooter(report);
}

std::string AlignedColumns(const std::vector<std::vector<std::string>>& rows) {
  return Table(rows);
}

std::string ExplainFooter(const ExplainReport& report) {
  std::string out;
  if (report.selected.has_value()) {
    out += absl::StrCat("\nselected: ", *report.selected, "\n");
  } else {
    out += absl::StrCat("\nno node fits: ", report.message.value_or(""), "\n");
    if (report.preemption_node.has_value()) {
      out += absl::StrCat("preemption would nominate ", *report.preemption_node, " and evict ",
                          util::Join(report.preemption_victims, ", "), "\n");
    }
  }
  if (report.policy.has_value()) {
    out += absl::StrCat("policy: ", *report.policy);
    if (report.policy_binding.has_value()) absl::StrAppend(&out, " (", *report.policy_binding, ")");
    out += "\n";
  }
  out += WatermarkLine(report.watermark);
  out += QueueLines(report.queue_path);
  for (const auto& warning : report.typed_limit_warnings)
    absl::StrAppend(&out, "warning: ", warning, "\n");
  out += GroupLines(report.group);
  return out;
}

}  // namespace kubesched::scheduler
