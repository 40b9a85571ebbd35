#include "scheduler/client/api_binder.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {

namespace {

using util::Absl;

bool IsRetryableHttpStatus(int status) { return status == 429 || status >= 500; }

std::string BindingTarget(const api::Pod& pod) {
  return absl::StrCat("/api/v1/namespaces/", pod.meta.namespace_name, "/pods/", pod.meta.name,
                      "/binding");
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

  std::string last_failure;
  for (int attempt = 1; attempt <= options_.attempts; ++attempt) {
    if (attempt > 1) SleepBeforeAttempt(attempt);
    absl::StatusOr<HttpResponse> response = transport_->Do(request);
    if (!response.ok()) {
      last_failure = absl::StrCat(what, ": ", response.status().message());
      continue;
    }
    if (response->status == 200 || response->status == 201) return framework::Status::Success();
    const std::string message = std::string(StatusFromResponse(*response, what).message());
    // 404/409 (gone, or bound elsewhere) and other permanent answers: asking again cannot help.
    if (!IsRetryableHttpStatus(response->status)) return framework::Status::Error(message);
    last_failure = message;
  }
  return framework::Status::Error(
      absl::StrCat(last_failure, " (gave up after ", options_.attempts, " attempts)"));
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
