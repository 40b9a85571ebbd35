#include "scheduler/client/api_pod_group_status_writer.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/log.h"
#include "scheduler/util/status_macros.h"

namespace kubesched::client {
namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";

// A string field, or null (removed by the merge patch) when empty.
void StringOrNull(JsonWriter& json, std::string_view key, std::string_view value) {
  if (value.empty()) {
    json.NullField(key);
  } else {
    json.Field(key, value);
  }
}

}  // namespace

std::string ApiPodGroupStatusWriter::StatusPatch(const api::PodGroupStatus& status) {
  JsonWriter json;
  json.BeginObject().Key("status").BeginObject();
  StringOrNull(json, "phase", status.phase);
  json.Field("scheduled", int64_t{status.scheduled})
      .Field("running", int64_t{status.running})
      .Field("succeeded", int64_t{status.succeeded})
      .Field("failed", int64_t{status.failed});
  StringOrNull(json, "occupiedBy", status.occupied_by);
  if (status.schedule_start_time.has_value()) {
    json.Field("scheduleStartTime", FormatRfc3339(*status.schedule_start_time));
  } else {
    json.NullField("scheduleStartTime");
  }
  json.EndObject().EndObject();
  return json.str();
}

absl::Status ApiPodGroupStatusWriter::Patch(const std::string& namespace_name,
                                            const std::string& name,
                                            const api::PodGroupStatus& status) {
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("PodGroup namespace", namespace_name));
  KUBESCHED_RETURN_IF_ERROR(ValidatePathSegment("PodGroup name", name));
  const std::string description =
      absl::StrCat("writing the status of PodGroup ", namespace_name, "/", name);
  HttpRequest request;
  request.method = "PATCH";
  request.target = absl::StrCat("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/", namespace_name,
                                "/podgroups/", name, "/status");
  request.body = StatusPatch(status);
  request.content_type = std::string(kMergePatch);
  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(description, ": ", response.status().message()));
  }
  return StatusFromResponse(*response, description);
}

void ApiPodGroupStatusWriter::WriteStatus(const std::string& namespace_name,
                                          const std::string& name,
                                          const api::PodGroupStatus& status) {
  const bool queued = writer_->Enqueue([this, namespace_name, name, status] {
    if (absl::Status written = Patch(namespace_name, name, status); !written.ok()) {
      util::LogWarning(written.message());
    }
  });
  if (!queued) {
    util::LogWarning(absl::StrCat("dropped a status write for PodGroup ", namespace_name, "/", name,
                                  ": the write queue is full or stopping"));
  }
}

}  // namespace kubesched::client
