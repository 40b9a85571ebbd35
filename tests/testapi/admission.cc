#include "tests/testapi/admission.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

// Requests default to limits where only limits are given (the real API's defaulting).
void DefaultRequestsFromLimits(rapidjson::Value& container, Allocator& allocator) {
  if (!HasMember(container, "resources") || !container["resources"].IsObject()) return;
  rapidjson::Value& resources = container["resources"];
  if (!HasMember(resources, "limits") || !resources["limits"].IsObject()) return;
  rapidjson::Value& requests = ObjectMember(resources, "requests", allocator);
  for (auto it = resources["limits"].MemberBegin(); it != resources["limits"].MemberEnd(); ++it) {
    if (!requests.HasMember(it->name)) {
      requests.AddMember(rapidjson::Value(it->name, allocator),
                         rapidjson::Value(it->value, allocator), allocator);
    }
  }
}

// The QoS class, comparing quantities as written (so "1" and "1000m" count as different).
std::string QosClass(const rapidjson::Value& spec) {
  bool any_resources = false;
  bool guaranteed = true;
  for (const char* list : {"containers", "initContainers"}) {
    if (!HasMember(spec, list) || !spec[list].IsArray()) continue;
    for (const auto& container : spec[list].GetArray()) {
      const rapidjson::Value* resources =
          HasMember(container, "resources") ? &container["resources"] : nullptr;
      auto get = [&](const char* kind, const char* name) -> std::string {
        if (resources == nullptr || !HasMember(*resources, kind)) return "";
        return StringAt((*resources)[kind], name);
      };
      for (const char* name : {"cpu", "memory"}) {
        std::string request = get("requests", name);
        std::string limit = get("limits", name);
        any_resources = any_resources || !request.empty() || !limit.empty();
        if (limit.empty() || request != limit) guaranteed = false;
      }
    }
  }
  if (!any_resources) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

void AddDefaultTolerations(rapidjson::Value& spec, Allocator& allocator) {
  rapidjson::Value& tolerations = spec["tolerations"];
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    bool present = false;
    for (const auto& toleration : tolerations.GetArray()) {
      std::string toleration_key = StringAt(toleration, "key");
      std::string effect = StringAt(toleration, "effect");
      bool tolerates_all = toleration_key.empty() && StringAt(toleration, "operator") == "Exists";
      present = present || tolerates_all ||
                (toleration_key == key && (effect.empty() || effect == "NoExecute"));
    }
    if (present) continue;
    rapidjson::Value toleration(rapidjson::kObjectType);
    toleration.AddMember("key", rapidjson::StringRef(key), allocator);
    toleration.AddMember("operator", "Exists", allocator);
    toleration.AddMember("effect", "NoExecute", allocator);
    toleration.AddMember("tolerationSeconds", 300, allocator);
    tolerations.PushBack(toleration, allocator);
  }
}

void SetDefaultString(rapidjson::Value& object, const char* name, const char* value,
                      Allocator& allocator) {
  if (!HasMember(object, name))
    object.AddMember(rapidjson::StringRef(name), rapidjson::StringRef(value), allocator);
}

absl::Status RequireContainers(const rapidjson::Value& spec, const std::string& pod_name) {
  if (HasMember(spec, "containers") && spec["containers"].IsArray() &&
      !spec["containers"].Empty()) {
    return absl::OkStatus();
  }
  return MarkInvalid(absl::InvalidArgumentError(
      absl::StrCat("Pod \"", pod_name, "\" is invalid: spec.containers: Required value")));
}

void DefaultPodSpec(rapidjson::Value& spec, Allocator& allocator) {
  SetDefaultString(spec, "schedulerName", "default-scheduler", allocator);
  SetDefaultString(spec, "restartPolicy", "Always", allocator);
  SetDefaultString(spec, "dnsPolicy", "ClusterFirst", allocator);
  if (!spec.HasMember("terminationGracePeriodSeconds")) {
    spec.AddMember("terminationGracePeriodSeconds", 30, allocator);
  }
}

// Reads value and preemptionPolicy of a PriorityClass into `priority` and `preemption_policy`.
void ReadPriorityClass(const StoredObject& priority_class, int64_t* priority,
                       std::string* preemption_policy) {
  rapidjson::Document object = priority_class.Parse();
  if (HasMember(object, "value") && object["value"].IsInt64())
    *priority = object["value"].GetInt64();
  if (std::string policy = StringAt(object, "preemptionPolicy"); !policy.empty()) {
    *preemption_policy = policy;
  }
}

// Priority admission: resolves priorityClassName (or the global default class) to a value.
absl::Status AdmitPriority(const Store& store, rapidjson::Value& spec, const std::string& pod_name,
                           Allocator& allocator) {
  const ResourceType& priority_classes =
      *FindResourceType("scheduling.k8s.io", "v1", "priorityclasses");
  std::string class_name = StringAt(spec, "priorityClassName");
  int64_t priority = 0;
  std::string preemption_policy = "PreemptLowerPriority";
  if (!class_name.empty()) {
    auto priority_class = store.Get(priority_classes, "", class_name);
    if (!priority_class.ok()) {
      return absl::PermissionDeniedError(
          absl::StrCat("pods \"", pod_name, "\" is forbidden: no PriorityClass with name ",
                       class_name, " was found"));
    }
    ReadPriorityClass(**priority_class, &priority, &preemption_policy);
  } else if (auto all = store.List(priority_classes, {}); all.ok()) {
    for (const ObjectPtr& item : all->items) {
      if (StringAt(item->Parse(), "globalDefault") != "true") continue;
      SetString(spec, "priorityClassName", item->name, allocator);
      ReadPriorityClass(*item, &priority, &preemption_policy);
      break;
    }
  }
  SetMember(spec, "priority", rapidjson::Value(priority), allocator);
  SetString(spec, "preemptionPolicy", preemption_policy, allocator);
  return absl::OkStatus();
}

// status.phase Pending and the QoS class; the rest of a given status is kept when `keep_status`.
void DefaultPodStatus(rapidjson::Document& pod, bool keep_status) {
  auto& allocator = pod.GetAllocator();
  std::string qos_class = QosClass(pod["spec"]);
  if (keep_status && HasMember(pod, "status") && pod["status"].IsObject()) {
    SetDefaultString(pod["status"], "phase", "Pending", allocator);
    SetString(pod["status"], "qosClass", qos_class, allocator);
    return;
  }
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("phase", "Pending", allocator);
  SetString(status, "qosClass", qos_class, allocator);
  SetMember(pod, "status", std::move(status), allocator);
}

// The real API's applySchedulingGatedCondition (pod strategy, PrepareForCreate): a new pod with
// scheduling gates and no PodScheduled condition is marked as held by its gates.
void ApplySchedulingGatedCondition(rapidjson::Document& pod) {
  if (!HasSchedulingGates(pod["spec"])) return;
  auto& allocator = pod.GetAllocator();
  rapidjson::Value& status = ObjectMember(pod, "status", allocator);
  if (!HasMember(status, "conditions") || !status["conditions"].IsArray()) {
    SetMember(status, "conditions", rapidjson::Value(rapidjson::kArrayType), allocator);
  }
  rapidjson::Value& conditions = status["conditions"];
  for (const rapidjson::Value& condition : conditions.GetArray()) {
    if (StringAt(condition, "type") == "PodScheduled") return;
  }
  rapidjson::Value condition(rapidjson::kObjectType);
  condition.AddMember("type", "PodScheduled", allocator);
  condition.AddMember("status", "False", allocator);
  condition.AddMember("lastProbeTime", rapidjson::Value(), allocator);
  SetString(condition, "lastTransitionTime", NowTimestamp(), allocator);
  condition.AddMember("reason", "SchedulingGated", allocator);
  condition.AddMember("message", "Scheduling is blocked due to non-empty scheduling gates",
                      allocator);
  conditions.PushBack(condition, allocator);
}

}  // namespace

bool HasSchedulingGates(const rapidjson::Value& spec) {
  return HasMember(spec, "schedulingGates") && spec["schedulingGates"].IsArray() &&
         !spec["schedulingGates"].Empty();
}

absl::Status Admit(const Store& store, const ResourceType& type, rapidjson::Document& object,
                   bool keep_status) {
  if (type.kind == "Pod" && type.group.empty()) return AdmitPod(store, object, keep_status);
  if (type.kind == "Namespace") AdmitNamespace(object);
  if (type.kind == "PriorityClass") return AdmitPriorityClass(object);
  return absl::OkStatus();
}

absl::Status AdmitPod(const Store& store, rapidjson::Document& pod, bool keep_status) {
  auto& allocator = pod.GetAllocator();
  rapidjson::Value& spec = ObjectMember(pod, "spec", allocator);
  std::string name = StringAt(pod, "metadata.name");
  if (absl::Status status = RequireContainers(spec, name); !status.ok()) return status;
  DefaultPodSpec(spec, allocator);
  if (absl::Status status = AdmitPriority(store, spec, name, allocator); !status.ok()) {
    return status;
  }
  if (!HasMember(spec, "tolerations") || !spec["tolerations"].IsArray()) {
    SetMember(spec, "tolerations", rapidjson::Value(rapidjson::kArrayType), allocator);
  }
  AddDefaultTolerations(spec, allocator);
  for (const char* list : {"containers", "initContainers"}) {
    if (!HasMember(spec, list) || !spec[list].IsArray()) continue;
    for (auto& container : spec[list].GetArray()) DefaultRequestsFromLimits(container, allocator);
  }
  DefaultPodStatus(pod, keep_status);
  ApplySchedulingGatedCondition(pod);
  return absl::OkStatus();
}

void AdmitNamespace(rapidjson::Document& ns) {
  auto& allocator = ns.GetAllocator();
  rapidjson::Value& metadata = ObjectMember(ns, "metadata", allocator);
  std::string name = StringAt(metadata, "name");
  SetString(ObjectMember(metadata, "labels", allocator), "kubernetes.io/metadata.name", name,
            allocator);
  rapidjson::Value& spec = ObjectMember(ns, "spec", allocator);
  if (!spec.HasMember("finalizers")) {
    rapidjson::Value finalizers(rapidjson::kArrayType);
    finalizers.PushBack("kubernetes", allocator);
    spec.AddMember("finalizers", finalizers, allocator);
  }
  SetString(ObjectMember(ns, "status", allocator), "phase", "Active", allocator);
}

absl::Status AdmitPriorityClass(rapidjson::Document& priority_class) {
  if (!HasMember(priority_class, "value") || !priority_class["value"].IsInt64()) {
    return MarkInvalid(absl::InvalidArgumentError(
        absl::StrCat("PriorityClass \"", StringAt(priority_class, "metadata.name"),
                     "\" is invalid: value: Required value")));
  }
  // Upstream's ValidatePriorityClass, on create only (the value is immutable, and updates do
  // not check it again). Names with the system- prefix are not checked here.
  constexpr int64_t kHighestUserDefinablePriority = 1000000000;
  const std::string name = StringAt(priority_class, "metadata.name");
  if (!absl::StartsWith(name, "system-") &&
      priority_class["value"].GetInt64() > kHighestUserDefinablePriority) {
    return MarkInvalid(absl::InvalidArgumentError(absl::StrCat(
        "PriorityClass.scheduling.k8s.io \"", name,
        "\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is ",
        kHighestUserDefinablePriority)));
  }
  SetDefaultString(priority_class, "preemptionPolicy", "PreemptLowerPriority",
                   priority_class.GetAllocator());
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
