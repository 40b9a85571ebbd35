// What the test API server adds to the real API: the /testapi/ control endpoints (faults,
// volume controller, statistics, request log), the bootstrap objects of a fresh cluster and
// fixture loading.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/event_views.h"
#include "tests/testapi/routes_internal.h"

namespace kubesched::testapi {

using routes_internal::JsonQuote;
using routes_internal::JsonResponse;
using routes_internal::StatusResponse;
using util::Absl;

namespace {

constexpr int64_t kSystemClusterCritical = 2000000000;
constexpr int64_t kSystemNodeCritical = 2000001000;

// GET, or POST/PUT {"enabled": bool}: the volume controller's state (volume_controller.h).
HttpResponse HandleVolumeController(const HttpRequest& request, VolumeController& controller) {
  if (request.method == "POST" || request.method == "PUT") {
    rapidjson::Document body;
    if (body.Parse(request.body.data(), request.body.size()).HasParseError() || !body.IsObject() ||
        !HasMember(body, "enabled") || !body["enabled"].IsBool()) {
      return StatusResponse(400, "BadRequest", "expected {\"enabled\": true|false}");
    }
    controller.SetEnabled(body["enabled"].GetBool());
  } else if (request.method != "GET") {
    return StatusResponse(405, "MethodNotAllowed", "GET or POST");
  }
  return JsonResponse(200, controller.enabled() ? "{\"enabled\":true}" : "{\"enabled\":false}");
}

}  // namespace

HttpResponse ApiServer::HandleControl(const HttpRequest& request, std::string_view path) {
  if (path == "/testapi/faults") {
    if (request.method == "GET") return JsonResponse(200, FaultConfigToJson(faults_->Get()));
    if (request.method == "DELETE") {
      faults_->Set({});
      return JsonResponse(200, FaultConfigToJson(faults_->Get()));
    }
    if (request.method == "POST" || request.method == "PUT") {
      auto config = ParseFaultConfig(request.body);
      if (!config.ok())
        return StatusResponse(400, "BadRequest", util::Std(config.status().message()));
      faults_->Set(*std::move(config));
      return JsonResponse(200, FaultConfigToJson(faults_->Get()));
    }
  }
  if (path == "/testapi/volume-controller" && volume_controller_ != nullptr) {
    return HandleVolumeController(request, *volume_controller_);
  }
  if (path == "/testapi/stats" && request.method == "GET") return JsonResponse(200, StatsJson());
  if (path == "/testapi/requests" && request.method == "GET") {
    return JsonResponse(200, request_log_.Json());
  }
  if (path == "/testapi/stats/reset" && request.method == "POST") {
    absl::MutexLock lock(&stats_mu_);
    request_counts_.clear();
    stat_counters_.clear();
    binds_by_pod_uid_.clear();
    bind_log_.clear();
    request_log_.Clear();
    return JsonResponse(200, "{}");
  }
  return StatusResponse(404, "NotFound", "the server could not find the requested resource");
}

std::string ApiServer::StatsJson() const {
  auto object_of = [](const std::map<std::string, int64_t>& counts) {
    std::vector<std::string> fields;
    for (const auto& [key, value] : counts)
      fields.push_back(absl::StrCat(JsonQuote(key), ":", value));
    return absl::StrCat("{", absl::StrJoin(fields, ","), "}");
  };
  std::map<std::string, int64_t> objects;
  for (const ResourceType& type : AllResourceTypes()) {
    objects[type.id()] = static_cast<int64_t>(store_->Count(StoredType(type)));
  }
  absl::MutexLock lock(&stats_mu_);
  int64_t pods_bound_more_than_once = 0;
  for (const auto& [uid, count] : binds_by_pod_uid_) pods_bound_more_than_once += count > 1 ? 1 : 0;
  auto counter = [this](const char* key) {
    auto it = stat_counters_.find(key);
    return it == stat_counters_.end() ? 0 : it->second;
  };
  return absl::StrCat(
      "{\"resourceVersion\":\"", store_->current_resource_version(),
      "\",\"oldestWatchableResourceVersion\":\"", store_->oldest_watchable_resource_version(),
      "\",\"requests\":", object_of(request_counts_), ",\"counters\":", object_of(stat_counters_),
      ",\"binds\":", counter("binds"), ",\"bindConflicts\":", counter("binds.conflicts"),
      ",\"podsBound\":", binds_by_pod_uid_.size(),
      ",\"podsBoundMoreThanOnce\":", pods_bound_more_than_once,
      ",\"bindsByPodUid\":", object_of(binds_by_pod_uid_), ",\"bindLog\":[",
      absl::StrJoin(bind_log_, ",",
                    [](std::string* out, const BindRecord& bind) {
                      absl::StrAppend(out, "{\"by\":", JsonQuote(bind.by),
                                      ",\"atMicros\":", absl::ToUnixMicros(bind.at), "}");
                    }),
      "]", ",\"watchesOpen\":", store_->open_watches(), ",\"objects\":", object_of(objects), "}");
}

absl::Status ApiServer::Bootstrap() {
  const ResourceType& namespaces = *FindResourceType("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (store_->Get(namespaces, "", name).ok()) continue;
    rapidjson::Document ns;
    std::string json = absl::StrCat("{\"metadata\":{\"name\":\"", name, "\"}}");
    ns.Parse(json.data(), json.size());
    auto created = CreateObject(namespaces, std::move(ns), false);
    if (!created.ok()) return created.status();
  }
  const ResourceType& priority_classes =
      *FindResourceType("scheduling.k8s.io", "v1", "priorityclasses");
  for (auto [name, value] : {std::pair{"system-cluster-critical", kSystemClusterCritical},
                             std::pair{"system-node-critical", kSystemNodeCritical}}) {
    if (store_->Get(priority_classes, "", name).ok()) continue;
    rapidjson::Document pc;
    std::string json = absl::StrCat(
        "{\"metadata\":{\"name\":\"", name, "\"},\"value\":", value,
        ",\"description\":\"Used for system critical pods that must not be moved from their "
        "current node.\"}");
    pc.Parse(json.data(), json.size());
    auto created = CreateObject(priority_classes, std::move(pc), false);
    if (!created.ok()) return created.status();
  }
  return absl::OkStatus();
}

absl::Status ApiServer::LoadObjects(std::string_view text, std::string_view source) {
  rapidjson::Document documents;
  absl::Status status = api::internal::YamlToJson(text, source, &documents);
  if (!status.ok()) return status;
  std::vector<const rapidjson::Value*> objects;
  for (const auto& document : documents.GetArray()) {
    if (!document.IsObject()) continue;
    if (StringAt(document, "kind") == "List" ||
        absl::EndsWith(StringAt(document, "kind"), "List")) {
      if (HasMember(document, "items") && document["items"].IsArray()) {
        for (const auto& item : document["items"].GetArray()) objects.push_back(&item);
      }
      continue;
    }
    objects.push_back(&document);
  }
  // Namespaces and priority classes first, so that pods referring to them are admitted.
  std::stable_sort(objects.begin(), objects.end(), [](const auto* a, const auto* b) {
    auto rank = [](const rapidjson::Value* object) {
      std::string kind = StringAt(*object, "kind");
      return kind == "Namespace" ? 0 : kind == "PriorityClass" ? 1 : 2;
    };
    return rank(a) < rank(b);
  });
  for (const rapidjson::Value* value : objects) {
    const ResourceType* type =
        FindResourceTypeByKind(StringAt(*value, "apiVersion"), StringAt(*value, "kind"));
    if (type == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(Absl(source), ": unsupported object ",
                                                     StringAt(*value, "apiVersion"), " ",
                                                     StringAt(*value, "kind")));
    }
    rapidjson::Document object;
    object.CopyFrom(*value, object.GetAllocator());
    rapidjson::Value& metadata = ObjectMember(object, "metadata", object.GetAllocator());
    if (type->namespaced && StringAt(metadata, "namespace").empty()) {
      SetString(metadata, "namespace", "default", object.GetAllocator());
    }
    // A cluster dump holds the objects every API server creates itself (default namespaces,
    // system priority classes): those already exist here, and loading keeps them.
    const bool built_in_kind = type->kind == "Namespace" || type->kind == "PriorityClass";
    if (built_in_kind && store_->Get(*type, "", StringAt(metadata, "name")).ok()) continue;
    auto created = CreateObject(*type, std::move(object), /*keep_status=*/true);
    if (!created.ok()) {
      return absl::Status(created.status().code(),
                          absl::StrCat(Absl(source), ": ", created.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
