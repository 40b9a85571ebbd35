#include "tests/testapi/tables.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

constexpr std::string_view kNone = "<none>";

struct Column {
  std::string_view name;
  std::string_view type;    // "string", "integer", "date"
  std::string_view format;  // "name" for the Name column
  int priority;             // 1: shown only with -o wide
  std::string_view description;
};

std::string ColumnsJson(const std::vector<Column>& columns) {
  std::vector<std::string> out;
  for (const Column& column : columns) {
    out.push_back(absl::StrCat(
        "{\"name\":\"", util::Absl(column.name), "\",\"type\":\"", util::Absl(column.type),
        "\",\"format\":\"", util::Absl(column.format), "\",\"description\":\"",
        util::Absl(column.description), "\",\"priority\":", column.priority, "}"));
  }
  return absl::StrCat("[", absl::StrJoin(out, ","), "]");
}

// The entries of an Accept header.
std::vector<std::string> AcceptEntries(std::string_view accept) {
  std::vector<std::string> entries;
  for (absl::string_view entry : absl::StrSplit(util::Absl(accept), ',')) {
    entries.emplace_back(entry.data(), entry.size());
  }
  return entries;
}

std::string Quote(std::string_view text) {
  rapidjson::Value value(rapidjson::StringRef(text.data(), text.size()));
  return Serialize(value);
}

std::string OrNone(std::string value) { return value.empty() ? std::string(kNone) : value; }

// The age of the timestamp at `path`, as kubectl prints it; "" when there is none.
std::string Since(const rapidjson::Value& object, std::string_view path, absl::Time now) {
  absl::Time at;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, StringAt(object, path), &at, &error)) return "";
  return HumanDuration(now - at);
}

std::string Age(const rapidjson::Value& object, absl::Time now) {
  std::string age = Since(object, "metadata.creationTimestamp", now);
  return age.empty() ? "<unknown>" : age;
}

const rapidjson::Value* ArrayAt(const rapidjson::Value& object, const char* parent,
                                const char* name) {
  if (!HasMember(object, parent) || !HasMember(object[parent], name)) return nullptr;
  const rapidjson::Value& value = object[parent][name];
  return value.IsArray() ? &value : nullptr;
}

// The STATUS column of a pod, as kubectl's printer reads it (simplified: phase, pod reason,
// scheduling gates, the first container that is waiting or terminated with a reason, deletion).
std::string PodStatus(const rapidjson::Value& pod) {
  std::string reason = StringAt(pod, "status.phase");
  if (std::string pod_reason = StringAt(pod, "status.reason"); !pod_reason.empty()) {
    reason = pod_reason;
  }
  if (const rapidjson::Value* conditions = ArrayAt(pod, "status", "conditions")) {
    for (const auto& condition : conditions->GetArray()) {
      if (StringAt(condition, "type") == "PodScheduled" &&
          StringAt(condition, "reason") == "SchedulingGated") {
        reason = "SchedulingGated";
      }
    }
  }
  if (const rapidjson::Value* statuses = ArrayAt(pod, "status", "containerStatuses")) {
    for (const auto& status : statuses->GetArray()) {
      std::string waiting = StringAt(status, "state.waiting.reason");
      std::string terminated = StringAt(status, "state.terminated.reason");
      if (!waiting.empty() || !terminated.empty()) {
        reason = waiting.empty() ? terminated : waiting;
        break;
      }
    }
  }
  if (HasMember(pod["metadata"], "deletionTimestamp")) reason = "Terminating";
  return reason;
}

std::string PodRow(const rapidjson::Value& pod, absl::Time now) {
  int total = 0;
  if (const rapidjson::Value* containers = ArrayAt(pod, "spec", "containers")) {
    total = static_cast<int>(containers->Size());
  }
  int ready = 0;
  int64_t restarts = 0;
  if (const rapidjson::Value* statuses = ArrayAt(pod, "status", "containerStatuses")) {
    for (const auto& status : statuses->GetArray()) {
      if (StringAt(status, "ready") == "true") ++ready;
      if (HasMember(status, "restartCount") && status["restartCount"].IsInt64()) {
        restarts += status["restartCount"].GetInt64();
      }
    }
  }
  std::string gates(kNone);
  if (const rapidjson::Value* readiness = ArrayAt(pod, "spec", "readinessGates")) {
    if (!readiness->Empty()) gates = absl::StrCat("0/", readiness->Size());
  }
  return absl::StrCat(Quote(StringAt(pod, "metadata.name")), ",",
                      Quote(absl::StrCat(ready, "/", total)), ",", Quote(PodStatus(pod)), ",",
                      Quote(absl::StrCat(restarts)), ",", Quote(Age(pod, now)), ",",
                      Quote(OrNone(StringAt(pod, "status.podIP"))), ",",
                      Quote(OrNone(StringAt(pod, "spec.nodeName"))), ",",
                      Quote(OrNone(StringAt(pod, "status.nominatedNodeName"))), ",", Quote(gates));
}

std::string NodeStatus(const rapidjson::Value& node) {
  std::string status = "Unknown";
  if (const rapidjson::Value* conditions = ArrayAt(node, "status", "conditions")) {
    for (const auto& condition : conditions->GetArray()) {
      if (StringAt(condition, "type") != "Ready") continue;
      status = StringAt(condition, "status") == "True" ? "Ready" : "NotReady";
    }
  }
  if (StringAt(node, "spec.unschedulable") == "true") status += ",SchedulingDisabled";
  return status;
}

std::string NodeRoles(const rapidjson::Value& node) {
  constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
  std::vector<std::string> roles;
  if (HasMember(node["metadata"], "labels") && node["metadata"]["labels"].IsObject()) {
    for (const auto& label : node["metadata"]["labels"].GetObject()) {
      std::string_view key(label.name.GetString(), label.name.GetStringLength());
      if (key.starts_with(kRolePrefix) && key.size() > kRolePrefix.size()) {
        roles.emplace_back(key.substr(kRolePrefix.size()));
      } else if (key == "kubernetes.io/role" && label.value.IsString()) {
        roles.emplace_back(label.value.GetString());
      }
    }
  }
  std::sort(roles.begin(), roles.end());
  return roles.empty() ? std::string(kNone) : absl::StrJoin(roles, ",");
}

std::string NodeAddress(const rapidjson::Value& node, std::string_view type) {
  if (const rapidjson::Value* addresses = ArrayAt(node, "status", "addresses")) {
    for (const auto& address : addresses->GetArray()) {
      if (StringAt(address, "type") == type) return StringAt(address, "address");
    }
  }
  return std::string(kNone);
}

std::string NodeRow(const rapidjson::Value& node, absl::Time now) {
  auto info = [&](const char* field) {
    std::string value = StringAt(node, absl::StrCat("status.nodeInfo.", field));
    return value.empty() ? std::string("<unknown>") : value;
  };
  return absl::StrCat(Quote(StringAt(node, "metadata.name")), ",", Quote(NodeStatus(node)), ",",
                      Quote(NodeRoles(node)), ",", Quote(Age(node, now)), ",",
                      Quote(StringAt(node, "status.nodeInfo.kubeletVersion")), ",",
                      Quote(NodeAddress(node, "InternalIP")), ",",
                      Quote(NodeAddress(node, "ExternalIP")), ",", Quote(info("osImage")), ",",
                      Quote(info("kernelVersion")), ",", Quote(info("containerRuntimeVersion")));
}

// A core v1 Event (events.k8s.io/v1 Events are stored so): series first, then the deprecated
// count and timestamps, as kubectl's printer reads them.
std::string EventRow(const rapidjson::Value& event, absl::Time now) {
  std::string first_seen = Since(event, "firstTimestamp", now);
  if (first_seen.empty()) first_seen = Since(event, "eventTime", now);
  std::string last_seen = Since(event, "lastTimestamp", now);
  if (last_seen.empty()) last_seen = first_seen;
  int64_t count =
      HasMember(event, "count") && event["count"].IsInt64() ? event["count"].GetInt64() : 0;
  if (HasMember(event, "series") && event["series"].IsObject()) {
    const rapidjson::Value& series = event["series"];
    last_seen = Since(series, "lastObservedTime", now);
    if (HasMember(series, "count") && series["count"].IsInt64()) count = series["count"].GetInt64();
  }
  // Without a source (written through events.k8s.io/v1), the reporter names it.
  std::string source = StringAt(event, "source.component");
  std::string host = StringAt(event, "source.host");
  if (source.empty()) {
    source = StringAt(event, "reportingComponent");
    host = StringAt(event, "reportingInstance");
  }
  if (!host.empty()) source = absl::StrCat(source, ", ", host);
  const std::string object =
      absl::StrCat(absl::AsciiStrToLower(StringAt(event, "involvedObject.kind")), "/",
                   StringAt(event, "involvedObject.name"));
  return absl::StrCat(Quote(last_seen), ",", Quote(StringAt(event, "type")), ",",
                      Quote(StringAt(event, "reason")), ",", Quote(object), ",",
                      Quote(StringAt(event, "involvedObject.fieldPath")), ",", Quote(source), ",",
                      Quote(StringAt(event, "message")), ",", Quote(first_seen), ",", count, ",",
                      Quote(StringAt(event, "metadata.name")));
}

constexpr std::string_view kNameHelp =
    "Name must be unique within a namespace. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

const std::vector<Column>& PodColumns() {
  static const std::vector<Column> columns = {
      {"Name", "string", "name", 0, kNameHelp},
      {"Ready", "string", "", 0,
       "The aggregate readiness state of this pod for accepting traffic."},
      {"Status", "string", "", 0, "The aggregate status of the containers in this pod."},
      {"Restarts", "string", "", 0,
       "The number of times the containers in this pod have been restarted and when the last "
       "container in this pod has restarted."},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."},
      {"IP", "string", "", 1,
       "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
       "allocated."},
      {"Node", "string", "", 1, "NodeName is a request to schedule this pod onto a specific node."},
      {"Nominated Node", "string", "", 1,
       "nominatedNodeName is set when this pod preempts other pods on the node."},
      {"Readiness Gates", "string", "", 1,
       "If specified, all readiness gates will be evaluated for pod readiness."}};
  return columns;
}

const std::vector<Column>& NodeColumns() {
  static const std::vector<Column> columns = {
      {"Name", "string", "name", 0, kNameHelp},
      {"Status", "string", "", 0, "The status of the node"},
      {"Roles", "string", "", 0, "The roles of the node"},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."},
      {"Version", "string", "", 0, "Kubelet Version reported by the node."},
      {"Internal-IP", "string", "", 1,
       "List of addresses reachable to the node. Queried from cloud provider, if available."},
      {"External-IP", "string", "", 1,
       "List of addresses reachable to the node. Queried from cloud provider, if available."},
      {"OS-Image", "string", "", 1,
       "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."},
      {"Kernel-Version", "string", "", 1,
       "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."},
      {"Container-Runtime", "string", "", 1,
       "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
       "containerd://1.4.2)."}};
  return columns;
}

const std::vector<Column>& NamespaceColumns() {
  static const std::vector<Column> columns = {
      {"Name", "string", "name", 0, kNameHelp},
      {"Status", "string", "", 0, "The status of the namespace"},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."}};
  return columns;
}

const std::vector<Column>& ConfigMapColumns() {
  static const std::vector<Column> columns = {
      {"Name", "string", "name", 0, kNameHelp},
      {"Data", "integer", "", 0, "Data contains the configuration data."},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."}};
  return columns;
}

const std::vector<Column>& EventColumns() {
  static const std::vector<Column> columns = {
      {"Last Seen", "string", "", 0, "Time when last event from this group was observed."},
      {"Type", "string", "", 0, "Type of this event."},
      {"Reason", "string", "", 0, "Reason is why the action was taken."},
      {"Object", "string", "", 0, "The object this Event is about."},
      {"Subobject", "string", "", 1, "The subobject this Event is about."},
      {"Source", "string", "", 1, "The component reporting this event."},
      {"Message", "string", "", 0, "A human-readable description of the status of this operation."},
      {"First Seen", "string", "", 1, "Time when first event from this group was observed."},
      {"Count", "string", "", 1, "The number of times this event has occurred."},
      {"Name", "string", "name", 1, kNameHelp}};
  return columns;
}

const std::vector<Column>& DefaultColumns() {
  static const std::vector<Column> columns = {{"Name", "string", "name", 0, kNameHelp},
                                              {"Created At", "date", "", 0,
                                               "CreationTimestamp is a timestamp representing the "
                                               "server time when this object was created."}};
  return columns;
}

// The cells of one row, as a JSON array body (without brackets).
std::string Cells(const ResourceType& type, const rapidjson::Value& object, absl::Time now) {
  if (type.group.empty() && type.kind == "Pod") return PodRow(object, now);
  if (type.group.empty() && type.kind == "Node") return NodeRow(object, now);
  if (type.group.empty() && type.kind == "Namespace") {
    return absl::StrCat(Quote(StringAt(object, "metadata.name")), ",",
                        Quote(StringAt(object, "status.phase")), ",", Quote(Age(object, now)));
  }
  if (type.kind == "Event") return EventRow(object, now);
  if (type.group.empty() && type.kind == "ConfigMap") {
    size_t entries = 0;
    for (const char* field : {"data", "binaryData"}) {
      if (HasMember(object, field) && object[field].IsObject()) {
        entries += object[field].MemberCount();
      }
    }
    return absl::StrCat(Quote(StringAt(object, "metadata.name")), ",", entries, ",",
                        Quote(Age(object, now)));
  }
  return absl::StrCat(Quote(StringAt(object, "metadata.name")), ",",
                      Quote(StringAt(object, "metadata.creationTimestamp")));
}

const std::vector<Column>& ColumnsFor(const ResourceType& type) {
  if (type.group.empty() && type.kind == "Pod") return PodColumns();
  if (type.group.empty() && type.kind == "Node") return NodeColumns();
  if (type.group.empty() && type.kind == "Namespace") return NamespaceColumns();
  if (type.group.empty() && type.kind == "ConfigMap") return ConfigMapColumns();
  if (type.kind == "Event") return EventColumns();
  return DefaultColumns();
}

}  // namespace

std::string MediaType(std::string_view content_type) {
  std::string type(content_type.substr(0, content_type.find(';')));
  absl::StripAsciiWhitespace(&type);
  absl::AsciiStrToLower(&type);
  return type;
}

bool WantsTable(std::string_view accept) {
  for (std::string entry : AcceptEntries(accept)) {
    if (MediaType(entry) != "application/json") continue;
    // The first JSON entry decides: a plain one before any Table means plain objects.
    absl::AsciiStrToLower(&entry);
    entry.erase(std::remove(entry.begin(), entry.end(), ' '), entry.end());
    return absl::StrContains(entry, ";as=table") && absl::StrContains(entry, ";g=meta.k8s.io") &&
           !absl::StrContains(entry, ";v=v1beta1");
  }
  return false;
}

bool AcceptsJson(std::string_view accept) {
  if (MediaType(accept).empty() && accept.find(',') == std::string_view::npos) return true;
  for (const std::string& entry : AcceptEntries(accept)) {
    const std::string media_type = MediaType(entry);
    if (media_type == "application/json" || media_type == "*/*" || media_type == "application/*" ||
        media_type == "application/yaml") {
      return true;
    }
  }
  return false;
}

namespace {

std::string RowJson(const ResourceType& type, const StoredObject& item, absl::Time now) {
  rapidjson::Document object = item.Parse();
  std::string object_metadata =
      HasMember(object, "metadata") ? Serialize(object["metadata"]) : std::string("{}");
  return absl::StrCat(
      "{\"cells\":[", Cells(type, object, now),
      "],\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
      "\"metadata\":",
      object_metadata, "}}");
}

std::string Table(const ResourceType& type, std::string_view metadata,
                  const std::vector<std::string>& rows) {
  return absl::StrCat(
      "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":", util::Absl(metadata),
      ",\"columnDefinitions\":", ColumnsJson(ColumnsFor(type)), ",\"rows\":[",
      absl::StrJoin(rows, ","), "]}");
}

}  // namespace

std::string TableJson(const ResourceType& type, const StoredObject& object, absl::Time now) {
  rapidjson::Document parsed = object.Parse();
  return Table(
      type,
      absl::StrCat("{\"resourceVersion\":\"", StringAt(parsed, "metadata.resourceVersion"), "\"}"),
      {RowJson(type, object, now)});
}

std::string TableJson(const ResourceType& type, const std::vector<ObjectPtr>& items,
                      const ListResult* list, absl::Time now) {
  std::string metadata = "{}";
  if (list != nullptr) {
    metadata = absl::StrCat("{\"resourceVersion\":\"", list->resource_version, "\"");
    if (!list->continue_token.empty()) {
      absl::StrAppend(&metadata, ",\"continue\":", Quote(list->continue_token));
    }
    if (list->remaining_item_count >= 0) {
      absl::StrAppend(&metadata, ",\"remainingItemCount\":", list->remaining_item_count);
    }
    metadata += "}";
  }
  std::vector<std::string> rows;
  rows.reserve(items.size());
  for (const ObjectPtr& item : items) rows.push_back(RowJson(type, *item, now));
  return Table(type, metadata, rows);
}

std::string HumanDuration(absl::Duration age) {
  const int64_t seconds = absl::ToInt64Seconds(age);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return absl::StrCat(seconds, "s");
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    return seconds % 60 == 0 ? absl::StrCat(minutes, "m")
                             : absl::StrCat(minutes, "m", seconds % 60, "s");
  }
  if (minutes < 180) return absl::StrCat(minutes, "m");
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    return minutes % 60 == 0 ? absl::StrCat(hours, "h")
                             : absl::StrCat(hours, "h", minutes % 60, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? absl::StrCat(hours / 24, "d")
                           : absl::StrCat(hours / 24, "d", hours % 24, "h");
  }
  if (hours < 24 * 365 * 2) return absl::StrCat(hours / 24, "d");
  const int64_t days = hours / 24;
  if (hours < 24 * 365 * 8) {
    return days % 365 == 0 ? absl::StrCat(days / 365, "y")
                           : absl::StrCat(days / 365, "y", days % 365, "d");
  }
  return absl::StrCat(days / 365, "y");
}

}  // namespace kubesched::testapi
