#include "scheduler/client/pod_status_writer.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {

namespace {

constexpr std::string_view kStrategicMergePatch = "application/strategic-merge-patch+json";
constexpr std::string_view kMergePatch = "application/merge-patch+json";

const api::PodCondition* FindCondition(const api::Pod& pod, std::string_view type) {
  for (const auto& condition : pod.status.conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

bool HasCondition(const api::Pod& pod, std::string_view type, std::string_view status,
                  std::string_view reason, std::string_view message) {
  const api::PodCondition* condition = FindCondition(pod, type);
  return condition != nullptr && condition->status == status && condition->reason == reason &&
         condition->message == message;
}

void UidPrecondition(JsonWriter& json, std::string_view uid) {
  if (!uid.empty()) json.Key("metadata").BeginObject().Field("uid", uid).EndObject();
}

}  // namespace

std::string PodStatusWriter::ConditionPatch(std::string_view uid, std::string_view type,
                                            std::string_view status, std::string_view reason,
                                            std::string_view message,
                                            const absl::Time* transition_time) {
  JsonWriter json;
  json.BeginObject();
  UidPrecondition(json, uid);
  json.Key("status").BeginObject().Key("conditions").BeginArray().BeginObject();
  json.Field("type", type)
      .Field("status", status)
      .Field("reason", reason)
      .Field("message", message)
      .NullField("lastProbeTime");
  if (transition_time != nullptr) {
    json.Field("lastTransitionTime", FormatRfc3339(*transition_time));
  }
  json.EndObject().EndArray().EndObject().EndObject();
  return json.str();
}

std::string PodStatusWriter::NominatedNodeNamePatch(std::string_view uid,
                                                    std::string_view node_name) {
  JsonWriter json;
  json.BeginObject();
  UidPrecondition(json, uid);
  json.Key("status").BeginObject();
  // In a merge patch null deletes the field; "" would store an empty string.
  if (node_name.empty()) {
    json.NullField("nominatedNodeName");
  } else {
    json.Field("nominatedNodeName", node_name);
  }
  json.EndObject().EndObject();
  return json.str();
}

absl::Status PodStatusWriter::SetUnschedulable(const api::Pod& pod, std::string_view message,
                                               absl::Time now) {
  if (HasCondition(pod, "PodScheduled", "False", "Unschedulable", message)) {
    return absl::OkStatus();
  }
  const api::PodCondition* existing = FindCondition(pod, "PodScheduled");
  const bool status_changes = existing == nullptr || existing->status != "False";
  std::string body = ConditionPatch(pod.meta.uid, "PodScheduled", "False", "Unschedulable", message,
                                    status_changes ? &now : nullptr);
  return Patch(pod, kStrategicMergePatch, std::move(body), "setting PodScheduled=False on pod");
}

absl::Status PodStatusWriter::SetNominatedNodeName(const api::Pod& pod,
                                                   std::string_view node_name) {
  if (pod.status.nominated_node_name == node_name) return absl::OkStatus();
  if (!node_name.empty()) {
    KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("node name", node_name));
  }
  return Patch(pod, kMergePatch, NominatedNodeNamePatch(pod.meta.uid, node_name),
               "setting nominatedNodeName on pod");
}

absl::Status PodStatusWriter::AddDisruptionTarget(const api::Pod& pod, std::string_view message,
                                                  absl::Time now) {
  if (HasCondition(pod, "DisruptionTarget", "True", "PreemptionByScheduler", message)) {
    return absl::OkStatus();
  }
  const api::PodCondition* existing = FindCondition(pod, "DisruptionTarget");
  const bool status_changes = existing == nullptr || existing->status != "True";
  std::string body =
      ConditionPatch(pod.meta.uid, "DisruptionTarget", "True", "PreemptionByScheduler", message,
                     status_changes ? &now : nullptr);
  return Patch(pod, kStrategicMergePatch, std::move(body), "setting DisruptionTarget=True on pod");
}

absl::Status PodStatusWriter::Patch(const api::Pod& pod, std::string_view content_type,
                                    std::string body, std::string_view what) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("pod namespace", pod.meta.namespace_name));
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("pod name", pod.meta.name));
  const std::string description = absl::StrCat(util::Absl(what), " ", pod.Key());

  HttpRequest request;
  request.method = "PATCH";
  request.target = absl::StrCat(PodPath(pod.meta.namespace_name, pod.meta.name), "/status");
  request.body = std::move(body);
  request.content_type = std::string(content_type);

  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(description, ": ", response.status().message()));
  }
  absl::Status status = StatusFromResponse(*response, description);
  // The pod this status was meant for is gone; another one has its name now.
  if (absl::IsAborted(status) && absl::StrContains(status.message(), "UID in precondition")) {
    return absl::NotFoundError(status.message());
  }
  return status;
}

}  // namespace kubesched::client
