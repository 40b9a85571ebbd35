// Writes: create, update, patch, delete and deletecollection, the status subresource and
// pods/binding.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/admission.h"
#include "tests/testapi/custom_resources.h"
#include "tests/testapi/dra_validation.h"
#include "tests/testapi/event_views.h"
#include "tests/testapi/field_validation.h"
#include "tests/testapi/patch.h"
#include "tests/testapi/routes_internal.h"

namespace kubesched::testapi {

using routes_internal::ErrorResponse;
using routes_internal::JsonQuote;
using routes_internal::JsonResponse;
using routes_internal::ListJson;
using routes_internal::ParseBody;
using routes_internal::ParseSelectors;
using routes_internal::StatusDetails;
using routes_internal::StatusResponse;
using routes_internal::View;
using util::Absl;

namespace {

// What fieldValidation=Warn found, as the real API reports it: one "Warning: 299 - ..." each.
HttpResponse WithWarnings(HttpResponse response, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    response.headers.emplace_back("Warning", absl::StrCat("299 - ", JsonQuote(warning)));
  }
  return response;
}

std::string SuccessStatusJson(int code) {
  return absl::StrCat(
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\","
      "\"code\":",
      code, "}");
}

// For a type with a status subresource: a write to the main resource keeps the old status, a
// write to /status keeps the old spec (and, for pods, metadata other than labels/annotations
// stays as the main resource left it).
void KeepOtherHalf(const ResourceType& type, std::string_view subresource,
                   const rapidjson::Value& original, rapidjson::Document& updated) {
  if (!type.HasSubresource("status")) return;
  const char* kept = subresource == "status" ? "spec" : "status";
  auto& allocator = updated.GetAllocator();
  if (HasMember(original, kept)) {
    SetMember(updated, kept, rapidjson::Value(original[kept], allocator), allocator);
  } else if (auto it = updated.FindMember(kept); it != updated.MemberEnd()) {
    updated.EraseMember(it);
  }
}

enum class PatchKind { kMerge, kStrategic, kJson };

std::optional<PatchKind> PatchKindFor(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  if (content_type == "application/merge-patch+json") return PatchKind::kMerge;
  if (content_type == "application/strategic-merge-patch+json") return PatchKind::kStrategic;
  if (content_type == "application/json-patch+json") return PatchKind::kJson;
  return std::nullopt;
}

absl::Status ApplyPatch(PatchKind kind, const rapidjson::Document& patch,
                        rapidjson::Document& object) {
  switch (kind) {
    case PatchKind::kMerge:
      ApplyMergePatch(patch, &object);
      return absl::OkStatus();
    case PatchKind::kStrategic:
      return ApplyStrategicMergePatch(patch, &object);
    case PatchKind::kJson:
      return ApplyJsonPatch(patch, &object);
  }
  return absl::OkStatus();
}

// The checks every update and patch of an object or its status passes (create admits first).
absl::Status CheckWrite(const ResourceType& type, const rapidjson::Value& before,
                        const rapidjson::Value& object) {
  if (absl::Status status = CheckCustomResourceSchema(type, object); !status.ok()) return status;
  if (absl::Status status = CheckDraObject(type, object); !status.ok()) return status;
  return CheckClaimStatusUpdate(type, before, object);
}

// Replaces the PodScheduled condition of a pod's status with a true one.
void SetPodScheduled(rapidjson::Value& status, rapidjson::Document::AllocatorType& allocator) {
  if (!HasMember(status, "conditions") || !status["conditions"].IsArray()) {
    SetMember(status, "conditions", rapidjson::Value(rapidjson::kArrayType), allocator);
  }
  rapidjson::Value& conditions = status["conditions"];
  for (auto it = conditions.Begin(); it != conditions.End();) {
    it = StringAt(*it, "type") == "PodScheduled" ? conditions.Erase(it) : it + 1;
  }
  rapidjson::Value condition(rapidjson::kObjectType);
  condition.AddMember("type", "PodScheduled", allocator);
  condition.AddMember("status", "True", allocator);
  condition.AddMember("lastProbeTime", rapidjson::Value(), allocator);
  SetString(condition, "lastTransitionTime", NowTimestamp(), allocator);
  conditions.PushBack(condition, allocator);
}

// What a Binding does to its pod: sets spec.nodeName, adds the Binding's annotations and the
// PodScheduled condition. Refused (a conflict) for a pod whose UID is not `uid_precondition`
// (when given), one being deleted, one already assigned, or one with scheduling gates.
absl::Status AssignPod(const std::string& pod_name, const std::string& node_name,
                       const std::string& uid_precondition, const rapidjson::Value* annotations,
                       rapidjson::Document& pod) {
  auto conflict = [&pod_name](std::string_view why) {
    return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on pods/binding \"",
                                           pod_name, "\": ", Absl(why)));
  };
  auto& allocator = pod.GetAllocator();
  rapidjson::Value& metadata = pod["metadata"];
  if (!uid_precondition.empty() && StringAt(metadata, "uid") != uid_precondition) {
    return conflict(absl::StrCat("Precondition failed: UID in precondition: ", uid_precondition,
                                 ", UID in object meta: ", StringAt(metadata, "uid")));
  }
  if (HasMember(metadata, "deletionTimestamp")) {
    return conflict(
        absl::StrCat("pod ", pod_name, " is being deleted, cannot be assigned to a host"));
  }
  rapidjson::Value& spec = ObjectMember(pod, "spec", allocator);
  if (std::string current = StringAt(spec, "nodeName"); !current.empty()) {
    return conflict(
        absl::StrCat("pod ", pod_name, " is already assigned to node \"", current, "\""));
  }
  // The real API refuses to bind a pod that is not ready for scheduling (storage.go).
  if (HasSchedulingGates(spec)) {
    return conflict(absl::StrCat("pod ", pod_name, " has non-empty .spec.schedulingGates"));
  }
  SetString(spec, "nodeName", node_name, allocator);
  if (annotations != nullptr && annotations->IsObject()) {
    rapidjson::Value& pod_annotations = ObjectMember(metadata, "annotations", allocator);
    for (auto it = annotations->MemberBegin(); it != annotations->MemberEnd(); ++it) {
      SetMember(pod_annotations, View(it->name), rapidjson::Value(it->value, allocator), allocator);
    }
  }
  SetPodScheduled(ObjectMember(pod, "status", allocator), allocator);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ObjectPtr> ApiServer::CreateObject(const ResourceType& type,
                                                  rapidjson::Document object, bool keep_status) {
  if (!object.IsObject()) return absl::InvalidArgumentError("the object must be a JSON object");
  const ResourceType& stored_type = StoredType(type);
  ToStoredForm(type, object, object.GetAllocator());
  absl::Status status = Admit(*store_, stored_type, object, keep_status);
  if (!status.ok()) return status;
  status = CheckCustomResourceSchema(stored_type, object);
  if (!status.ok()) return status;
  status = CheckDraObject(stored_type, object);
  if (!status.ok()) return status;
  return store_->Create(stored_type, std::move(object));
}

HttpResponse ApiServer::Create(const HttpRequest& request, const Route& route) {
  auto body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(body.status(), {});
  rapidjson::Document object = *std::move(body);
  if (!object.IsObject())
    return StatusResponse(400, "BadRequest", "the body must be a JSON object");
  if (route.type->namespaced) {
    if (route.namespace_name.empty()) {
      return StatusResponse(405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource");
    }
    rapidjson::Value& metadata = ObjectMember(object, "metadata", object.GetAllocator());
    std::string body_namespace = StringAt(metadata, "namespace");
    if (!body_namespace.empty() && body_namespace != route.namespace_name) {
      return StatusResponse(400, "BadRequest",
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
    }
    SetString(metadata, "namespace", route.namespace_name, object.GetAllocator());
  }
  StatusDetails details = route.Details();
  details.name = StringAt(object, "metadata.name");
  auto field_validation = ParseFieldValidation(route.Param("fieldValidation"));
  if (!field_validation.ok()) return ErrorResponse(field_validation.status(), {});
  std::vector<std::string> warnings;
  if (absl::Status fields = ValidateFields(*field_validation, *route.type, object, &warnings);
      !fields.ok()) {
    return ErrorResponse(fields, {});
  }
  if (absl::Status valid = ValidateWrite(*route.type, object, nullptr); !valid.ok()) {
    return ErrorResponse(valid, details);
  }
  auto created = CreateObject(*route.type, std::move(object), /*keep_status=*/false);
  if (!created.ok()) {
    if (created.status().code() == absl::StatusCode::kNotFound) {
      // The namespace is what is missing.
      return ErrorResponse(created.status(), {.name = route.namespace_name, .kind = "namespaces"});
    }
    return ErrorResponse(created.status(), details);
  }
  return WithWarnings(JsonResponse(201, Render(*route.type, **created, TypeMeta::kInclude)),
                      warnings);
}

HttpResponse ApiServer::Bind(const HttpRequest& request, const Route& route) {
  {
    constexpr std::string_view kBearer = "Bearer ";
    std::string_view by = request.authorization;
    by = by.starts_with(kBearer) ? by.substr(kBearer.size()) : std::string_view();
    absl::MutexLock lock(&stats_mu_);
    bind_log_.push_back({std::string(by), absl::Now()});
  }
  auto body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(body.status(), {});
  const rapidjson::Document& binding = *body;
  std::string node_name = StringAt(binding, "target.name");
  std::string uid_precondition = StringAt(binding, "metadata.uid");
  StatusDetails details{.name = route.name, .kind = "pods/binding"};
  if (std::string binding_name = StringAt(binding, "metadata.name");
      !binding_name.empty() && binding_name != route.name) {
    return StatusResponse(400, "BadRequest", "name in URL does not match name in Binding object");
  }
  if (node_name.empty()) {
    return StatusResponse(
        422, "Invalid",
        absl::StrCat("Binding \"", route.name, "\" is invalid: target.name: Required value"),
        details);
  }
  const rapidjson::Value* annotations =
      HasMember(binding, "metadata") && HasMember(binding["metadata"], "annotations")
          ? &binding["metadata"]["annotations"]
          : nullptr;
  auto bound =
      store_->Update(*route.type, route.namespace_name, route.name, [&](rapidjson::Document& pod) {
        return AssignPod(route.name, node_name, uid_precondition, annotations, pod);
      });
  if (!bound.ok()) {
    Count(bound.status().code() == absl::StatusCode::kAborted ? "binds.conflicts" : "binds.failed");
    return ErrorResponse(bound.status(), bound.status().code() == absl::StatusCode::kNotFound
                                             ? route.Details()
                                             : details);
  }
  {
    absl::MutexLock lock(&stats_mu_);
    ++stat_counters_["binds"];
    ++binds_by_pod_uid_[(*bound)->uid];
  }
  return JsonResponse(201, SuccessStatusJson(201));
}

HttpResponse ApiServer::Update(const HttpRequest& request, const Route& route) {
  auto body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(body.status(), {});
  rapidjson::Document replacement = *std::move(body);
  if (!replacement.IsObject())
    return StatusResponse(400, "BadRequest", "the body must be a JSON object");
  std::string requested_rv = StringAt(replacement, "metadata.resourceVersion");
  const ResourceType& type = *route.type;
  auto field_validation = ParseFieldValidation(route.Param("fieldValidation"));
  if (!field_validation.ok()) return ErrorResponse(field_validation.status(), {});
  std::vector<std::string> warnings;
  if (absl::Status fields = ValidateFields(*field_validation, type, replacement, &warnings);
      !fields.ok()) {
    return ErrorResponse(fields, {});
  }
  if (IsView(type)) {
    // Checked as the client wrote it, against the object it replaces (none: a create).
    auto current = store_->Get(StoredType(type), route.namespace_name, route.name);
    rapidjson::Document previous;
    if (current.ok()) {
      previous = (*current)->Parse();
      ToViewForm(type, previous, previous.GetAllocator());
    }
    absl::Status valid = ValidateWrite(type, replacement, current.ok() ? &previous : nullptr);
    if (!valid.ok()) return ErrorResponse(valid, route.Details());
  }
  ToStoredForm(type, replacement, replacement.GetAllocator());
  auto updated = store_->Update(
      StoredType(type), route.namespace_name, route.name, [&](rapidjson::Document& object) {
        if (!requested_rv.empty() && requested_rv != StringAt(object, "metadata.resourceVersion")) {
          return absl::AbortedError(absl::StrCat(
              "Operation cannot be fulfilled on ", type.plural, " \"", route.name,
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again"));
        }
        rapidjson::Document original;
        original.CopyFrom(object, original.GetAllocator());
        object.CopyFrom(replacement, object.GetAllocator());
        KeepOtherHalf(type, route.subresource, original, object);
        return CheckWrite(type, original, object);
      });
  if (!updated.ok() && updated.status().code() == absl::StatusCode::kNotFound &&
      route.subresource.empty() && (type.kind == "Lease" || type.kind == "Event")) {
    // These types allow create on update, as in the real API.
    rapidjson::Value& metadata = ObjectMember(replacement, "metadata", replacement.GetAllocator());
    if (type.namespaced)
      SetString(metadata, "namespace", route.namespace_name, replacement.GetAllocator());
    if (StringAt(metadata, "name").empty())
      SetString(metadata, "name", route.name, replacement.GetAllocator());
    // Already in the stored form.
    auto created = CreateObject(StoredType(type), std::move(replacement), false);
    if (!created.ok()) return ErrorResponse(created.status(), route.Details());
    return JsonResponse(201, Render(type, **created, TypeMeta::kInclude));
  }
  if (!updated.ok()) return ErrorResponse(updated.status(), route.Details());
  return WithWarnings(JsonResponse(200, Render(type, **updated, TypeMeta::kInclude)), warnings);
}

HttpResponse ApiServer::Patch(const HttpRequest& request, const Route& route) {
  rapidjson::Document patch;
  if (patch.Parse(request.body.data(), request.body.size()).HasParseError()) {
    return StatusResponse(400, "BadRequest", "the patch is not valid JSON");
  }
  std::optional<PatchKind> kind = PatchKindFor(request.content_type);
  // Custom resources have no patch strategy to merge by.
  if (kind == PatchKind::kStrategic && route.type->custom) kind.reset();
  if (!kind.has_value()) {
    return StatusResponse(415, "UnsupportedMediaType",
                          absl::StrCat("the body of the request was in an unknown format - "
                                       "accepted media types include: "
                                       "application/json-patch+json, "
                                       "application/merge-patch+json, "
                                       "application/strategic-merge-patch+json"));
  }
  const ResourceType& type = *route.type;
  auto field_validation = ParseFieldValidation(route.Param("fieldValidation"));
  if (!field_validation.ok()) return ErrorResponse(field_validation.status(), {});
  std::vector<std::string> warnings;
  auto patched = store_->Update(
      StoredType(type), route.namespace_name, route.name, [&](rapidjson::Document& object) {
        std::string current_rv = StringAt(object, "metadata.resourceVersion");
        rapidjson::Document original;
        original.CopyFrom(object, original.GetAllocator());
        // A patch applies to the object as the client sees it, in the group it was sent to.
        rapidjson::Document previous;
        if (IsView(type)) {
          ToViewForm(type, object, object.GetAllocator());
          previous.CopyFrom(object, previous.GetAllocator());
        }
        absl::Status status = ApplyPatch(*kind, patch, object);
        if (!status.ok()) return MarkInvalid(status);
        if (!object.IsObject())
          return absl::InvalidArgumentError("the patched object is not an object");
        warnings.clear();  // the store may run this again on a conflict
        status = ValidateFields(*field_validation, type, object, &warnings);
        if (!status.ok()) return status;
        if (IsView(type)) {
          if (absl::Status valid = ValidateWrite(type, object, &previous); !valid.ok()) {
            return valid;
          }
          ToStoredForm(type, object, object.GetAllocator());
        }
        if (StringAt(object, "metadata.resourceVersion") != current_rv) {
          return absl::AbortedError(absl::StrCat(
              "Operation cannot be fulfilled on ", type.plural, " \"", route.name,
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again"));
        }
        // A uid in a patch is a precondition too: the object must be the one the client meant.
        if (const std::string uid = StringAt(object, "metadata.uid");
            uid != StringAt(original, "metadata.uid")) {
          return absl::AbortedError(
              absl::StrCat("Precondition failed: UID in precondition: ", uid,
                           ", UID in object meta: ", StringAt(original, "metadata.uid")));
        }
        KeepOtherHalf(type, route.subresource, original, object);
        return CheckWrite(type, original, object);
      });
  if (!patched.ok()) return ErrorResponse(patched.status(), route.Details());
  return WithWarnings(JsonResponse(200, Render(type, **patched, TypeMeta::kInclude)), warnings);
}

void ApiServer::DeleteNamespaceContents(const std::string& namespace_name) {
  for (const ResourceType& type : AllResourceTypes()) {
    if (!type.namespaced || IsView(type)) continue;
    auto items = store_->List(type, {.namespace_name = namespace_name});
    if (!items.ok()) continue;
    for (const ObjectPtr& item : items->items) {
      (void)store_->Delete(type, namespace_name, item->name, std::nullopt, std::nullopt);
    }
  }
}

HttpResponse ApiServer::Delete(const HttpRequest& request, const Route& route) {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
  if (!request.body.empty()) {
    rapidjson::Document options;
    if (options.Parse(request.body.data(), request.body.size()).HasParseError()) {
      return StatusResponse(400, "BadRequest", "the DeleteOptions body is not valid JSON");
    }
    if (HasMember(options, "preconditions")) {
      if (std::string value = StringAt(options, "preconditions.uid"); !value.empty()) uid = value;
      if (std::string value = StringAt(options, "preconditions.resourceVersion"); !value.empty()) {
        resource_version = value;
      }
    }
  }
  if (route.type->kind == "Namespace") {
    if (route.name == "default" || route.name == "kube-system" || route.name == "kube-public") {
      return StatusResponse(403, "Forbidden",
                            absl::StrCat("namespaces \"", route.name,
                                         "\" is forbidden: this namespace may not be deleted"),
                            route.Details());
    }
    if (store_->Get(*route.type, "", route.name).ok()) DeleteNamespaceContents(route.name);
  }
  auto deleted = store_->Delete(StoredType(*route.type), route.namespace_name, route.name, uid,
                                resource_version);
  if (!deleted.ok()) return ErrorResponse(deleted.status(), route.Details());
  return JsonResponse(200, Render(*route.type, **deleted, TypeMeta::kInclude));
}

HttpResponse ApiServer::DeleteCollection(const Route& route) {
  LabelSelector labels;
  FieldSelector fields;
  absl::Status status = ParseSelectors(*route.type, route.Param("labelSelector"),
                                       route.Param("fieldSelector"), &labels, &fields);
  if (!status.ok()) return ErrorResponse(status, {});
  const ResourceType& stored_type = StoredType(*route.type);
  auto items = store_->List(
      stored_type, {.namespace_name = route.namespace_name, .labels = &labels, .fields = &fields});
  if (!items.ok()) return ErrorResponse(items.status(), {});
  ListResult deleted;
  for (const ObjectPtr& item : items->items) {
    auto result =
        store_->Delete(stored_type, item->namespace_name, item->name, std::nullopt, std::nullopt);
    if (result.ok()) deleted.items.push_back(*result);
  }
  deleted.resource_version = store_->current_resource_version();
  return JsonResponse(200, ListJson(*route.type, deleted));
}

}  // namespace kubesched::testapi
