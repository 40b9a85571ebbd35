#include "scheduler/client/api_binder.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {

namespace {

using util::Absl;

bool IsRetryableHttpStatus(int status) { return status == 429 || status >= 500; }

// object[outer][inner] as a string; "" when absent or not a string.
std::string StringAt(const rapidjson::Value& object, const char* outer, const char* inner) {
  auto first = object.FindMember(outer);
  if (first == object.MemberEnd() || !first->value.IsObject()) return "";
  auto second = first->value.FindMember(inner);
  if (second == first->value.MemberEnd() || !second->value.IsString()) return "";
  return std::string(second->value.GetString(), second->value.GetStringLength());
}

std::string BindingTarget(const api::Pod& pod) {
  return absl::StrCat(PodPath(pod.meta.namespace_name, pod.meta.name), "/binding");
}

}  // namespace

ApiBinder::ApiBinder(HttpTransport* transport, ApiBinderOptions options)
    : transport_(transport), options_(std::move(options)) {
  options_.attempts = std::max(options_.attempts, 1);
}

std::string ApiBinder::BindingBody(const api::Pod& pod, std::string_view node_name) {
  JsonWriter json;
  json.BeginObject()
      .Field("apiVersion", "v1")
      .Field("kind", "Binding")
      .Key("metadata")
      .BeginObject()
      .Field("name", pod.meta.name)
      .Field("namespace", pod.meta.namespace_name)
      .Field("uid", pod.meta.uid)
      .EndObject()
      .Key("target")
      .BeginObject()
      .Field("apiVersion", "v1")
      .Field("kind", "Node")
      .Field("name", node_name)
      .EndObject()
      .EndObject();
  return json.str();
}

framework::Status ApiBinder::BindPod(const api::Pod& pod, std::string_view node_name) {
  const std::string what = absl::StrCat("binding pod ", pod.Key(), " to node ", Absl(node_name));
  for (const auto& [field, value] :
       {std::pair<std::string_view, std::string_view>{"pod namespace", pod.meta.namespace_name},
        {"pod name", pod.meta.name},
        {"node name", node_name}}) {
    absl::Status valid = ValidatePathSegment(field, value);
    if (!valid.ok()) return framework::Status::Error(absl::StrCat(what, ": ", valid.message()));
  }

  HttpRequest request;
  request.method = "POST";
  request.target = BindingTarget(pod);
  request.body = BindingBody(pod, node_name);
  request.content_type = "application/json";
  // This loop retries, so that the fence (may_send) is asked before every send.
  request.max_retries = 0;

  std::string last_failure;
  bool outcome_unknown = false;  // an attempt may have bound the pod without our hearing of it
  for (int attempt = 1;; ++attempt) {
    if (attempt > 1) SleepBeforeAttempt(attempt);
    if (options_.may_send && !options_.may_send()) {
      return framework::Status::Error(absl::StrCat(
          what, ": not sent: this replica may no longer bind",
          outcome_unknown ? absl::StrCat(" (after ", last_failure, ")") : std::string()));
    }
    absl::StatusOr<HttpResponse> response = transport_->Do(request);
    if (!response.ok()) {
      if (!outcome_unknown) {
        util::LogV(1, absl::StrCat(what, ": outcome unknown (", response.status().message(),
                                   "); the pod keeps its room and the Binding is sent again "
                                   "until the API server answers"));
      }
      outcome_unknown = true;
      last_failure = std::string(response.status().message());
      continue;
    }
    if (response->status == 200 || response->status == 201) return framework::Status::Success();
    const std::string message = std::string(StatusFromResponse(*response, what).message());
    if (response->status == 409) {
      const ConflictOutcome outcome = ResolveConflict(pod, node_name);
      if (outcome == ConflictOutcome::kBoundHere) return framework::Status::Success();
      if (outcome == ConflictOutcome::kBoundElsewhereOrGone) {
        return framework::Status::Error(message);
      }
      // Unbound after a refusal is definite only if no earlier Binding may still land.
      if (outcome == ConflictOutcome::kUnbound && !outcome_unknown) {
        return framework::Status::Error(message);
      }
      outcome_unknown = true;
      last_failure = message;
      continue;
    }
    // 404 (gone) and other permanent answers: asking again cannot help.
    if (!IsRetryableHttpStatus(response->status)) return framework::Status::Error(message);
    last_failure = message;
    if (!outcome_unknown && attempt >= options_.attempts) {
      return framework::Status::Error(
          absl::StrCat(last_failure, " (gave up after ", options_.attempts, " attempts)"));
    }
  }
}

ApiBinder::ConflictOutcome ApiBinder::ResolveConflict(const api::Pod& pod,
                                                      std::string_view node_name) const {
  HttpRequest request;
  request.target = PodPath(pod.meta.namespace_name, pod.meta.name);
  request.max_retries = 0;
  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  if (!response.ok()) return ConflictOutcome::kNoAnswer;
  if (response->status == 404) return ConflictOutcome::kBoundElsewhereOrGone;
  if (response->status != 200) return ConflictOutcome::kNoAnswer;
  rapidjson::Document object;
  object.Parse(response->body.data(), response->body.size());
  if (object.HasParseError() || !object.IsObject()) return ConflictOutcome::kNoAnswer;
  const std::string uid = StringAt(object, "metadata", "uid");
  const std::string node = StringAt(object, "spec", "nodeName");
  // Deleted and re-created under the same name: the pod we bound is gone.
  if (!pod.meta.uid.empty() && uid != pod.meta.uid) return ConflictOutcome::kBoundElsewhereOrGone;
  if (node.empty()) return ConflictOutcome::kUnbound;
  return node == node_name ? ConflictOutcome::kBoundHere : ConflictOutcome::kBoundElsewhereOrGone;
}

void ApiBinder::SleepBeforeAttempt(int attempt) const {
  absl::Duration backoff = options_.initial_backoff;
  for (int i = 2; i < attempt && backoff < options_.max_backoff; ++i) backoff *= 2;
  backoff = std::min(backoff, options_.max_backoff);
  absl::BitGen random;
  const absl::Duration wait = backoff * absl::Uniform(random, 0.5, 1.0);
  if (options_.sleep) {
    options_.sleep(wait);
  } else {
    absl::SleepFor(wait);
  }
}

}  // namespace kubesched::client
