#include "scheduler/simulate/compare.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "scheduler/simulate/json_writer.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

using json_writer::Field;
using json_writer::Key;
using json_writer::Resources;
using json_writer::Writer;

std::string PodKey(const PodResult& pod) { return absl::StrCat(pod.namespace_name, "/", pod.name); }

void ComparePods(const SimulationReport& before, const SimulationReport& after,
                 SimulationComparison* comparison) {
  absl::flat_hash_map<std::string, const PodResult*> first;
  for (const auto& pod : before.pod_results) first[PodKey(pod)] = &pod;
  for (const auto& pod : after.pod_results) {
    auto it = first.find(PodKey(pod));
    if (it == first.end() || pod.skipped) continue;
    const std::optional<std::string>& was = it->second->node;
    PodChange change{PodKey(pod), was, pod.node};
    if (was.has_value() && pod.node.has_value() && *was != *pod.node) {
      comparison->moved.push_back(std::move(change));
    } else if (was.has_value() && !pod.node.has_value()) {
      comparison->now_unschedulable.push_back(std::move(change));
    } else if (!was.has_value() && pod.node.has_value()) {
      comparison->now_schedulable.push_back(std::move(change));
    }
  }
}

void CompareNodes(const SimulationReport& before, const SimulationReport& after,
                  SimulationComparison* comparison) {
  absl::flat_hash_map<std::string, const NodeResult*> first;
  for (const auto& node : before.nodes) first[node.name] = &node;
  for (const auto& node : after.nodes) {
    auto it = first.find(node.name);
    if (it == first.end()) continue;
    const NodeResult& was = *it->second;
    if (was.pods == node.pods && was.requested == node.requested) continue;
    comparison->nodes.push_back(
        {node.name, was.pods, node.pods, was.requested, node.requested, node.allocatable});
  }
}

void CompareQueues(const SimulationReport& before, const SimulationReport& after,
                   SimulationComparison* comparison) {
  absl::flat_hash_map<std::string, const quota::QueueUsage*> first;
  for (const auto& queue : before.queues) first[queue.path] = &queue;
  for (const auto& queue : after.queues) {
    auto it = first.find(queue.path);
    api::ResourceList was = it == first.end() ? api::ResourceList() : it->second->used;
    if (was == queue.used) continue;
    comparison->queues.push_back({queue.path, std::move(was), queue.used});
  }
}

std::string Amounts(const api::ResourceList& list) {
  std::vector<std::string> parts;
  list.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
    parts.push_back(
        absl::StrCat(util::Absl(api::ResourceName(id)), "=", api::FormatAmount(id, amount)));
  });
  return parts.empty() ? "-" : util::Join(parts, ",");
}

std::string PodsSection(std::string_view title, const std::vector<PodChange>& pods) {
  if (pods.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"POD", "BEFORE", "AFTER"}};
  for (const auto& pod : pods) {
    rows.push_back({pod.pod, pod.before.value_or("<none>"), pod.after.value_or("<none>")});
  }
  return absl::StrCat("\n", util::Absl(title), " (", pods.size(), "):\n", AlignedColumns(rows));
}

void PodsJson(Writer& w, std::string_view key, const std::vector<PodChange>& pods) {
  Key(w, key);
  w.StartArray();
  for (const auto& pod : pods) {
    w.StartObject();
    Field(w, "pod", std::string_view(pod.pod));
    Field(w, "before", pod.before);
    Field(w, "after", pod.after);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

SimulationComparison CompareSimulations(const SimulationReport& before,
                                        const SimulationReport& after) {
  SimulationComparison comparison;
  comparison.scheduled_before = before.scheduled;
  comparison.scheduled_after = after.scheduled;
  comparison.unschedulable_before = before.unschedulable;
  comparison.unschedulable_after = after.unschedulable;
  ComparePods(before, after, &comparison);
  CompareNodes(before, after, &comparison);
  CompareQueues(before, after, &comparison);
  return comparison;
}

std::string ComparisonTable(const SimulationComparison& c) {
  std::string out = absl::StrCat("before: ", c.before_name, "\nafter:  ", c.after_name, "\n");
  absl::StrAppend(&out, "scheduled ", c.scheduled_before, " -> ", c.scheduled_after,
                  ", unschedulable ", c.unschedulable_before, " -> ", c.unschedulable_after, "; ",
                  c.moved.size(), " moved, ", c.now_schedulable.size(), " now schedulable, ",
                  c.now_unschedulable.size(), " now unschedulable\n");
  out += PodsSection("Pods that move", c.moved);
  out += PodsSection("Pods that become schedulable", c.now_schedulable);
  out += PodsSection("Pods that become unschedulable", c.now_unschedulable);
  if (!c.nodes.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"NODE", "PODS BEFORE", "PODS AFTER", "REQUESTED BEFORE", "REQUESTED AFTER"}};
    for (const auto& node : c.nodes) {
      rows.push_back({node.name, absl::StrCat(node.pods_before), absl::StrCat(node.pods_after),
                      Amounts(node.requested_before), Amounts(node.requested_after)});
    }
    out += absl::StrCat("\nNodes that change (", c.nodes.size(), "):\n", AlignedColumns(rows));
  }
  if (!c.queues.empty()) {
    std::vector<std::vector<std::string>> rows = {{"QUEUE", "USED BEFORE", "USED AFTER"}};
    for (const auto& queue : c.queues) {
      rows.push_back({queue.path, Amounts(queue.used_before), Amounts(queue.used_after)});
    }
    out += absl::StrCat("\nQueues that change (", c.queues.size(), "):\n", AlignedColumns(rows));
  }
  return out;
}

std::string ComparisonJson(const SimulationComparison& c) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  Field(w, "before", std::string_view(c.before_name));
  Field(w, "after", std::string_view(c.after_name));
  Key(w, "summary");
  w.StartObject();
  Field(w, "scheduledBefore", int64_t{c.scheduled_before});
  Field(w, "scheduledAfter", int64_t{c.scheduled_after});
  Field(w, "unschedulableBefore", int64_t{c.unschedulable_before});
  Field(w, "unschedulableAfter", int64_t{c.unschedulable_after});
  w.EndObject();
  PodsJson(w, "moved", c.moved);
  PodsJson(w, "nowSchedulable", c.now_schedulable);
  PodsJson(w, "nowUnschedulable", c.now_unschedulable);
  Key(w, "nodes");
  w.StartArray();
  for (const auto& node : c.nodes) {
    w.StartObject();
    Field(w, "name", std::string_view(node.name));
    Field(w, "podsBefore", int64_t{node.pods_before});
    Field(w, "podsAfter", int64_t{node.pods_after});
    Key(w, "requestedBefore");
    Resources(w, node.requested_before);
    Key(w, "requestedAfter");
    Resources(w, node.requested_after);
    Key(w, "allocatable");
    Resources(w, node.allocatable);
    w.EndObject();
  }
  w.EndArray();
  Key(w, "queues");
  w.StartArray();
  for (const auto& queue : c.queues) {
    w.StartObject();
    Field(w, "path", std::string_view(queue.path));
    Key(w, "usedBefore");
    Resources(w, queue.used_before);
    Key(w, "usedAfter");
    Resources(w, queue.used_after);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace kubesched::scheduler
