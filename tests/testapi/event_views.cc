#include "tests/testapi/event_views.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

struct FieldNames {
  std::string_view events_v1{};
  std::string_view core{};
};

// In the order the real API serializes events.k8s.io/v1 Events.
constexpr std::array<FieldNames, 14> kEventsV1Order = {{
    {"eventTime", "eventTime"},
    {"series", "series"},
    {"reportingController", "reportingComponent"},
    {"reportingInstance", "reportingInstance"},
    {"action", "action"},
    {"reason", "reason"},
    {"regarding", "involvedObject"},
    {"related", "related"},
    {"note", "message"},
    {"type", "type"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
}};

// The same pairs in the order the real API serializes core v1 Events.
constexpr std::array<FieldNames, 14> kCoreOrder = {{
    {"regarding", "involvedObject"},
    {"reason", "reason"},
    {"note", "message"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"type", "type"},
    {"eventTime", "eventTime"},
    {"series", "series"},
    {"action", "action"},
    {"related", "related"},
    {"reportingController", "reportingComponent"},
    {"reportingInstance", "reportingInstance"},
}};

constexpr std::string_view kRegardingPrefix = "regarding.";
constexpr std::string_view kInvolvedObjectPrefix = "involvedObject.";

bool IsCoreEvent(const ResourceType& type) { return type.kind == "Event" && type.group.empty(); }

bool IsEventsV1Event(const ResourceType& type) {
  return type.kind == "Event" && type.group == "events.k8s.io";
}

rapidjson::Value Name(std::string_view name) {
  return rapidjson::Value(rapidjson::StringRef(name.data(), name.size()));
}

void Erase(rapidjson::Value& object, std::string_view name) {
  auto it = object.FindMember(Name(name));
  if (it != object.MemberEnd()) object.EraseMember(it);
}

// Rebuilds `event` as metadata, then the members of `order` renamed from one side of each pair to
// the other, then the members it does not know, unchanged. kind and apiVersion are dropped.
void Rebuild(rapidjson::Value& event, const std::array<FieldNames, 14>& order, bool to_core,
             Allocator& allocator) {
  if (!event.IsObject()) return;
  Erase(event, "kind");
  Erase(event, "apiVersion");
  rapidjson::Value rebuilt(rapidjson::kObjectType);
  auto take = [&](std::string_view from, std::string_view to) {
    auto it = event.FindMember(Name(from));
    if (it == event.MemberEnd()) return;
    rebuilt.AddMember(Name(to), it->value, allocator);  // moves the value
    event.EraseMember(it);
  };
  take("metadata", "metadata");
  for (const FieldNames& names : order) {
    if (to_core) {
      take(names.events_v1, names.core);
    } else {
      take(names.core, names.events_v1);
    }
  }
  for (auto it = event.MemberBegin(); it != event.MemberEnd(); ++it) {
    rebuilt.AddMember(it->name, it->value, allocator);
  }
  event.Swap(rebuilt);
}

// Older kubectl releases and other core v1 clients read only source for "From"; an event written
// through events.k8s.io/v1 has only reportingController/reportingInstance, so show those there.
void DefaultSourceFromReporter(rapidjson::Value& event, Allocator& allocator) {
  std::string controller = StringAt(event, "reportingComponent");
  std::string instance = StringAt(event, "reportingInstance");
  bool component_missing = StringAt(event, "source.component").empty() && !controller.empty();
  bool host_missing = StringAt(event, "source.host").empty() && !instance.empty();
  if (!component_missing && !host_missing) return;
  rapidjson::Value& source = ObjectMember(event, "source", allocator);
  if (component_missing) SetString(source, "component", controller, allocator);
  if (host_missing) SetString(source, "host", instance, allocator);
}

// Puts kind and apiVersion first, as the real API does.
void PrependTypeMeta(const ResourceType& type, rapidjson::Value& object, Allocator& allocator) {
  rapidjson::Value with_meta(rapidjson::kObjectType);
  SetString(with_meta, "kind", type.kind, allocator);
  SetString(with_meta, "apiVersion", type.api_version(), allocator);
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    with_meta.AddMember(it->name, it->value, allocator);
  }
  object.Swap(with_meta);
}

}  // namespace

const ResourceType& StoredType(const ResourceType& type) {
  if (IsEventsV1Event(type)) return *FindResourceType("", "v1", "events");
  return type;
}

bool IsView(const ResourceType& type) { return &StoredType(type) != &type; }

void ToStoredForm(const ResourceType& type, rapidjson::Value& object, Allocator& allocator) {
  if (IsEventsV1Event(type)) {
    Rebuild(object, kCoreOrder, /*to_core=*/true, allocator);
    return;
  }
  if (!object.IsObject()) return;
  Erase(object, "kind");
  Erase(object, "apiVersion");
}

void ToViewForm(const ResourceType& type, rapidjson::Value& object, Allocator& allocator) {
  if (IsEventsV1Event(type)) {
    Rebuild(object, kEventsV1Order, /*to_core=*/false, allocator);
    return;
  }
  if (!object.IsObject()) return;
  Erase(object, "kind");
  Erase(object, "apiVersion");
}

std::string Render(const ResourceType& type, const StoredObject& object, TypeMeta meta) {
  if (!IsCoreEvent(type) && !IsEventsV1Event(type)) {
    return meta == TypeMeta::kInclude ? object.WithTypeMeta() : object.json;
  }
  rapidjson::Document stored = object.Parse();
  return Render(type, stored, meta);
}

std::string Render(const ResourceType& type, rapidjson::Document& stored, TypeMeta meta) {
  auto& allocator = stored.GetAllocator();
  ToViewForm(type, stored, allocator);
  if (IsCoreEvent(type)) DefaultSourceFromReporter(stored, allocator);
  if (meta == TypeMeta::kInclude) PrependTypeMeta(type, stored, allocator);
  return Serialize(stored);
}

namespace {

constexpr size_t kNoteLimit = 1024;
constexpr size_t kShortFieldLimit = 128;

// validateV1EventSeries: only when the series is set (and, on updates, changed).
void CheckSeries(const rapidjson::Value& event, std::vector<std::string>& errors) {
  const rapidjson::Value& series = event["series"];
  const bool has_count = HasMember(series, "count") && series["count"].IsInt();
  if (!has_count || series["count"].GetInt() < 2) {
    errors.emplace_back("series.count: Invalid value: \"\": should be at least 2");
  }
  if (StringAt(series, "lastObservedTime").empty()) {
    errors.emplace_back("series.lastObservedTime: Required value");
  }
}

bool HasSeries(const rapidjson::Value& event) {
  return HasMember(event, "series") && !event["series"].IsNull();
}

// ValidateEventCreate for events.k8s.io/v1, in the real API's order and wording.
std::vector<std::string> CreateErrors(const rapidjson::Value& event) {
  std::vector<std::string> errors;
  const std::string regarding_namespace = StringAt(event, "regarding.namespace");
  const std::string event_namespace = StringAt(event, "metadata.namespace");
  if (!regarding_namespace.empty() && !event_namespace.empty() &&
      regarding_namespace != event_namespace) {
    errors.push_back(absl::StrCat("involvedObject.namespace: Invalid value: \"",
                                  regarding_namespace, "\": does not match event.namespace"));
  }
  if (HasSeries(event)) CheckSeries(event, errors);
  if (StringAt(event, "eventTime").empty()) errors.emplace_back("eventTime: Required value");
  const std::string type = StringAt(event, "type");
  if (type != "Normal" && type != "Warning") {
    errors.push_back(absl::StrCat("type: Invalid value: \"\": has invalid value: ", type));
  }
  auto required = [&](std::string_view field, size_t limit) {
    const size_t size = StringAt(event, field).size();
    if (size == 0) errors.push_back(absl::StrCat(util::Absl(field), ": Required value"));
    if (size > limit) {
      errors.push_back(absl::StrCat(util::Absl(field), ": Invalid value: \"\": can have at most ",
                                    limit, " characters"));
    }
  };
  required("reportingController", 316);
  required("reportingInstance", kShortFieldLimit);
  required("action", kShortFieldLimit);
  required("reason", kShortFieldLimit);
  if (StringAt(event, "note").size() > kNoteLimit) {
    errors.push_back(
        absl::StrCat("note: Invalid value: \"\": can have at most ", kNoteLimit, " characters"));
  }
  return errors;
}

}  // namespace

absl::Status ValidateWrite(const ResourceType& type, const rapidjson::Value& object,
                           const rapidjson::Value* previous) {
  if (!IsEventsV1Event(type)) return absl::OkStatus();
  std::vector<std::string> errors;
  if (previous == nullptr) {
    errors = CreateErrors(object);
  } else if (HasSeries(object) &&
             (!HasSeries(*previous) || !(object["series"] == (*previous)["series"]))) {
    CheckSeries(object, errors);
  }
  if (errors.empty()) return absl::OkStatus();
  std::string fields =
      errors.size() == 1 ? errors.front() : absl::StrCat("[", absl::StrJoin(errors, ", "), "]");
  return MarkInvalid(absl::InvalidArgumentError(absl::StrCat(
      "Event.events.k8s.io \"", StringAt(object, "metadata.name"), "\" is invalid: ", fields)));
}

FieldSelector ToStoredSelector(const ResourceType& type, const FieldSelector& selector) {
  if (!IsEventsV1Event(type)) return selector;
  return selector.RenameFields([](std::string_view field) -> std::string {
    if (field.starts_with(kRegardingPrefix)) {
      return std::string(kInvolvedObjectPrefix) +
             std::string(field.substr(kRegardingPrefix.size()));
    }
    if (field == "reportingController") return "reportingComponent";
    return std::string(field);
  });
}

std::string CoreEventFieldValue(const rapidjson::Value& event, std::string_view field) {
  if (field != "source") return StringAt(event, field);
  std::string component = StringAt(event, "source.component");
  return component.empty() ? StringAt(event, "reportingComponent") : component;
}

}  // namespace kubesched::testapi
