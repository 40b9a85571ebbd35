// Decoding of scheduler-plugins' PodGroup (see decode_internal.h and pod_group.h).

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::api::internal {
namespace {

// The top-level object member `name` ("spec", "status"), or nullptr when absent or null.
absl::StatusOr<const Json*> Section(const Json& object, std::string_view name) {
  const Json* section = Find(object, name);
  if (section != nullptr) KUBESCHED_RETURN_IF_ERROR(ExpectObject(*section, Path(name)));
  return section;
}

// The spec's problems that leave a usable object: the group keeps them in `error` for its pods.
absl::Status DecodePodGroupSpec(const Json& object, PodGroup* out) {
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok()) return spec.status();
  const Path path("spec");
  if (*spec == nullptr || Find(**spec, "minMember") == nullptr) {
    return path.Field("minMember").Error("missing");
  }
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**spec, "minMember", path, &out->min_member));
  KUBESCHED_RETURN_IF_ERROR(
      ReadInt32(**spec, "scheduleTimeoutSeconds", path, &out->schedule_timeout_seconds));
  ResourceList min_resources;
  KUBESCHED_RETURN_IF_ERROR(ReadResources(**spec, "minResources", path, &min_resources));
  out->min_resources = std::move(min_resources);
  if (out->min_member < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.minMember must be at least 1 (is ", out->min_member, ")"));
  }
  return absl::OkStatus();
}

absl::Status DecodePodGroupStatus(const Json& object, PodGroupStatus* out) {
  absl::StatusOr<const Json*> status = Section(object, "status");
  if (!status.ok() || *status == nullptr) return status.status();
  const Path path("status");
  KUBESCHED_RETURN_IF_ERROR(ReadString(**status, "phase", path, &out->phase));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "scheduled", path, &out->scheduled));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "running", path, &out->running));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "succeeded", path, &out->succeeded));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "failed", path, &out->failed));
  KUBESCHED_RETURN_IF_ERROR(ReadString(**status, "occupiedBy", path, &out->occupied_by));
  return ReadTime(**status, "scheduleStartTime", path, &out->schedule_start_time);
}

}  // namespace

absl::StatusOr<PodGroup> DecodePodGroup(const Json& object) {
  PodGroup group;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &group.meta));
  // A bad status is no reason to hold the group's pods back, but a structural error the API
  // server's schema would have refused: the object is reported and skipped like any other.
  KUBESCHED_RETURN_IF_ERROR(DecodePodGroupStatus(object, &group.status));
  if (absl::Status spec = DecodePodGroupSpec(object, &group); !spec.ok()) {
    group.error = util::Std(spec.message());
  }
  return group;
}

}  // namespace kubesched::api::internal
