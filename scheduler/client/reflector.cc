#include "scheduler/client/reflector.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/util/log.h"
#include "scheduler/util/sleep.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

using util::Absl;

constexpr int kHttpNotFound = 404;
constexpr int kHttpGone = 410;
constexpr int kHttpGatewayTimeout = 504;
constexpr size_t kMaxLoggedLineLength = 200;

bool IsSuccess(int status) { return status >= 200 && status < 300; }

const rapidjson::Value* Member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  const auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string_view StringMember(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* value = Member(object, name);
  if (value == nullptr || !value->IsString()) return {};
  return std::string_view(value->GetString(), value->GetStringLength());
}

std::string_view MetadataString(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* metadata = Member(object, "metadata");
  return metadata == nullptr ? std::string_view() : StringMember(*metadata, name);
}

const api::ObjectMeta& MetaOf(const api::Object& object) {
  return std::visit([](const auto& typed) -> const api::ObjectMeta& { return typed.meta; }, object);
}

std::string StoreKey(std::string_view namespace_name, std::string_view name) {
  if (namespace_name.empty()) return std::string(name);
  return absl::StrCat(Absl(namespace_name), "/", Absl(name));
}

std::string StoreKey(const api::Object& object) {
  const api::ObjectMeta& meta = MetaOf(object);
  return StoreKey(meta.namespace_name, meta.name);
}

// The key of an object that did not decode, from whatever metadata it has; "" if none.
std::string RawStoreKey(const rapidjson::Value& object) {
  const std::string_view name = MetadataString(object, "name");
  if (name.empty()) return {};
  return StoreKey(MetadataString(object, "namespace"), name);
}

const std::string& ResourceVersionOf(const api::Object& object) {
  return MetaOf(object).resource_version;
}

// A v1 Status as found in error response bodies and ERROR watch events.
struct ApiStatus {
  int code = 0;
  std::string reason;
  std::string message;
  bool too_large_cause = false;  // details.causes names ResourceVersionTooLarge
};

ApiStatus ReadApiStatus(const rapidjson::Value& json) {
  ApiStatus status;
  const rapidjson::Value* code = Member(json, "code");
  if (code != nullptr && code->IsInt()) status.code = code->GetInt();
  status.reason = std::string(StringMember(json, "reason"));
  status.message = std::string(StringMember(json, "message"));
  const rapidjson::Value* details = Member(json, "details");
  const rapidjson::Value* causes = details == nullptr ? nullptr : Member(*details, "causes");
  if (causes != nullptr && causes->IsArray()) {
    for (const rapidjson::Value& cause : causes->GetArray()) {
      status.too_large_cause |= StringMember(cause, "reason") == "ResourceVersionTooLarge" ||
                                StringMember(cause, "message") == "Too large resource version";
    }
  }
  return status;
}

bool IsExpired(const ApiStatus& status) {
  return status.code == kHttpGone || status.reason == "Expired" || status.reason == "Gone";
}

// client-go's isTooLargeResourceVersionError: the cause, or for servers before 1.17 (which sent
// none) a Timeout whose message says so.
bool IsTooLarge(const ApiStatus& status) {
  if (status.too_large_cause) return true;
  return (status.code == kHttpGatewayTimeout || status.reason == "Timeout") &&
         status.message.find("Too large resource version") != std::string::npos;
}

std::optional<RelistReason> RelistReasonOf(const ApiStatus& status) {
  if (IsExpired(status)) return RelistReason::kExpired;
  if (IsTooLarge(status)) return RelistReason::kTooLarge;
  return std::nullopt;
}

// resourceVersions are opaque to clients, but every API server stores etcd revisions, which only
// grow; a version that is not a number is never taken as going back.
bool ResourceVersionWentBack(std::string_view seen, std::string_view now) {
  uint64_t seen_number = 0;
  uint64_t now_number = 0;
  return absl::SimpleAtoi(Absl(seen), &seen_number) && absl::SimpleAtoi(Absl(now), &now_number) &&
         now_number < seen_number;
}

absl::StatusCode CodeForHttpStatus(int status) {
  if (status == 401) return absl::StatusCode::kUnauthenticated;
  if (status == 403) return absl::StatusCode::kPermissionDenied;
  if (status == 404) return absl::StatusCode::kNotFound;
  if (status == kHttpGone) return absl::StatusCode::kFailedPrecondition;
  if (status == 429) return absl::StatusCode::kResourceExhausted;
  if (status >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kInvalidArgument;
}

// "<what>: <Status message, else reason, else 'HTTP status'> (HTTP <code>)", with a hint for the
// authentication and authorization failures that are nearly always credentials or RBAC.
absl::Status HttpFailure(const HttpResponse& response, std::string_view what) {
  rapidjson::Document body;
  body.Parse(response.body.data(), response.body.size());
  ApiStatus status;
  if (!body.HasParseError()) status = ReadApiStatus(body);
  std::string detail = !status.message.empty()  ? status.message
                       : !status.reason.empty() ? status.reason
                                                : std::string("HTTP status");
  std::string text = absl::StrCat(Absl(what), ": ", detail, " (HTTP ", response.status, ")");
  if (response.status == 401) {
    absl::StrAppend(&text, "; the API server rejected the scheduler's credentials (token/cert)");
  } else if (response.status == 403) {
    absl::StrAppend(&text, "; the scheduler's RBAC permissions do not allow this");
  }
  return absl::Status(CodeForHttpStatus(response.status), text);
}

std::string Truncated(std::string_view text) {
  if (text.size() <= kMaxLoggedLineLength) return std::string(text);
  return absl::StrCat(Absl(text.substr(0, kMaxLoggedLineLength)), "...");
}

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

// A zero backoff would turn every retry loop into a busy loop.
constexpr absl::Duration kMinimumBackoff = absl::Milliseconds(1);

util::Clock* RealClockInstance() {
  static util::RealClock* clock = new util::RealClock();
  return clock;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct Reflector::ListedObjects {
  std::string resource_version;
  std::vector<std::pair<std::string, std::shared_ptr<const api::Object>>> objects;  // list order
  // Keys of listed objects that did not decode: they exist, so they are not reported deleted.
  absl::flat_hash_set<std::string> undecodable_keys;
};

struct Reflector::WatchState {
  std::stop_source abort;  // ends the watch early after an ERROR event
  // The watch cannot resume from its resourceVersion (an ERROR event or a BOOKMARK said so).
  std::optional<RelistReason> relist;
  std::string relist_detail;
  bool failed = false;          // another ERROR event
  int64_t progress_events = 0;  // ADDED/MODIFIED/DELETED/BOOKMARK lines seen
};

Reflector::Reflector(ResourceKind kind, HttpTransport* transport, EventSink sink,
                     ReflectorOptions options, std::function<void()> on_synced)
    : kind_(std::move(kind)),
      transport_(transport),
      sink_(std::move(sink)),
      options_(std::move(options)),
      on_synced_(std::move(on_synced)),
      clock_(options_.clock != nullptr ? options_.clock : RealClockInstance()),
      current_backoff_(InitialBackoff()) {
  stats_.kind = kind_.kind;
}

ReflectorStats Reflector::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void Reflector::Run(std::stop_token stop) {
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      const absl::Status listed = ListAndReconcile(stop);
      if (stop.stop_requested()) return;
      if (!listed.ok() && kind_.optional &&
          (absl::IsNotFound(listed) || absl::IsPermissionDenied(listed))) {
        TreatAsAbsent(listed);
        util::SleepFor(stop, std::max(options_.absent_retry_interval, kMinimumBackoff));
        continue;
      }
      if (!listed.ok()) {
        LogDistinct(util::Std(listed.message()));
        util::SleepFor(stop, NextBackoff());
        continue;
      }
      need_list = false;
    }
    bool healthy = false;
    switch (WatchOnce(stop, &healthy)) {
      case WatchOutcome::kStopped:
        return;
      case WatchOutcome::kVanished:
        need_list = true;
        break;
      case WatchOutcome::kRelist:
        need_list = true;  // counted and logged by WatchOnce
        break;
      case WatchOutcome::kFailed:
      case WatchOutcome::kEnded:
        if (ResyncDue()) {
          CountRelist(
              RelistReason::kResync,
              absl::StrCat(absl::FormatDuration(options_.resync_interval), " since the last list"));
          need_list = true;
        }
        break;
    }
    if (healthy) {
      current_backoff_ = InitialBackoff();
      last_logged_failure_.clear();
    }
    // Even after a healthy watch: a short pause keeps a misbehaving server from causing a loop.
    util::SleepFor(stop, NextBackoff());
  }
}

// --- Listing ----------------------------------------------------------------------------------

absl::Status Reflector::ListOnce(std::stop_token stop) {
  const absl::Status listed = ListAndReconcile(stop);
  if (!listed.ok() && kind_.optional &&
      (absl::IsNotFound(listed) || absl::IsPermissionDenied(listed))) {
    TreatAsAbsent(listed);
    return absl::OkStatus();
  }
  return listed;
}

absl::Status Reflector::ListAndReconcile(std::stop_token stop) {
  ListedObjects listed;
  KUBESCHED_RETURN_IF_ERROR(ListAll(stop, &listed));
  if (stop.stop_requested()) return absl::CancelledError("stopped");
  DeliverDifference(listed);
  last_list_ = clock_->Now();
  last_logged_failure_.clear();
  if (absence_logged_) {
    util::LogInfo(absl::StrCat(kind_.kind, " reflector: ", kind_.list_path, " is served now"));
    absence_logged_ = false;
  }
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.lists;
    stats_.absent = false;
  }
  if (!synced_.exchange(true, std::memory_order_acq_rel) && on_synced_) on_synced_();
  return absl::OkStatus();
}

void Reflector::TreatAsAbsent(const absl::Status& listed) {
  DeliverDifference(ListedObjects());  // what was listed before can no longer be seen
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.absent = true;
  }
  if (!absence_logged_) {
    absence_logged_ = true;
    const std::string why =
        absl::IsNotFound(listed)
            ? absl::StrCat("the API server does not serve ", kind_.list_path, " (HTTP 404): ",
                           kind_.absent_reason.empty()
                               ? absl::StrCat("the ", kind_.crd, " CRD is not installed")
                               : kind_.absent_reason)
            : absl::StrCat("the scheduler may not list ", kind_.list_path,
                           " (HTTP 403): its RBAC rules lack get/list/watch on ", kind_.crd);
    util::LogWarning(absl::StrCat(kind_.kind, " reflector: ", why,
                                  "; treating it as empty and listing again every ",
                                  absl::FormatDuration(options_.absent_retry_interval)));
  }
  if (!synced_.exchange(true, std::memory_order_acq_rel) && on_synced_) on_synced_();
}

absl::Status Reflector::ListAll(std::stop_token stop, ListedObjects* listed) {
  std::string continue_token;
  bool paginate = options_.page_size > 0;
  while (true) {
    HttpRequest request;
    request.target = ListTarget(continue_token, paginate);
    const absl::StatusOr<HttpResponse> response = transport_->Do(request);
    const std::string what = absl::StrCat(kind_.kind, " reflector: list ", kind_.list_path);
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat(what, ": ", response.status().message()));
    }
    if (response->status == kHttpGone && !continue_token.empty() && paginate) {
      // The continue token outlived the server's history: start over in one unpaginated
      // request, which cannot expire half-way (client-go's pager does the same).
      util::LogInfo(
          absl::StrCat(what, ": continue token expired (HTTP 410); listing again unpaginated"));
      *listed = ListedObjects();
      continue_token.clear();
      paginate = false;
      continue;
    }
    if (!IsSuccess(response->status)) return HttpFailure(*response, what);
    KUBESCHED_RETURN_IF_ERROR(ParseListPage(response->body, listed, &continue_token));
    if (continue_token.empty()) return absl::OkStatus();
    if (stop.stop_requested()) return absl::CancelledError("stopped");
  }
}

absl::Status Reflector::ParseListPage(std::string_view body, ListedObjects* listed,
                                      std::string* continue_token) {
  rapidjson::Document page;
  page.Parse(body.data(), body.size());
  if (page.HasParseError() || !page.IsObject()) {
    return absl::DataLossError(absl::StrCat(kind_.kind, " reflector: list ", kind_.list_path,
                                            ": response is not a JSON object"));
  }
  *continue_token = std::string(MetadataString(page, "continue"));
  listed->resource_version = std::string(MetadataString(page, "resourceVersion"));
  const rapidjson::Value* items = Member(page, "items");
  if (items == nullptr || items->IsNull()) return absl::OkStatus();  // an empty list
  if (!items->IsArray()) {
    return absl::DataLossError(
        absl::StrCat(kind_.kind, " reflector: list ", kind_.list_path, ": items is not an array"));
  }
  for (const rapidjson::Value& item : items->GetArray()) {
    absl::StatusOr<api::Object> decoded = api::DecodeObjectValue(item, kind_.kind);
    if (!decoded.ok()) {
      std::string key = RawStoreKey(item);
      RejectObject(key, MetadataString(item, "resourceVersion"),
                   util::Std(decoded.status().message()));
      if (!key.empty()) listed->undecodable_keys.insert(std::move(key));
      continue;
    }
    auto object = std::make_shared<const api::Object>(*std::move(decoded));
    listed->objects.emplace_back(StoreKey(*object), std::move(object));
  }
  return absl::OkStatus();
}

void Reflector::DeliverDifference(const ListedObjects& listed) {
  absl::flat_hash_set<std::string_view> listed_keys;
  listed_keys.reserve(listed.objects.size());
  for (const auto& [key, object] : listed.objects) {
    listed_keys.insert(key);
    const auto it = store_.find(key);
    if (it == store_.end()) {
      store_.emplace(key, object);
      Deliver(EventType::kAdded, nullptr, object);
    } else if (ResourceVersionOf(*it->second) != ResourceVersionOf(*object) ||
               MetaOf(*it->second).uid != MetaOf(*object).uid) {
      // A uid check too: a server that lost its state may hand out a version number again.
      std::shared_ptr<const api::Object> old_object = std::exchange(it->second, object);
      Deliver(EventType::kModified, std::move(old_object), object);
    }
  }
  std::vector<std::string> vanished;
  for (const auto& [key, object] : store_) {
    if (!listed_keys.contains(key) && !listed.undecodable_keys.contains(key)) {
      vanished.push_back(key);
    }
  }
  std::sort(vanished.begin(), vanished.end());  // a stable order for handlers and tests
  for (const std::string& key : vanished) {
    const auto it = store_.find(key);
    std::shared_ptr<const api::Object> last_known = std::move(it->second);
    store_.erase(it);
    Deliver(EventType::kDeleted, nullptr, std::move(last_known));
  }
  // Rejections of objects that now decode or are gone need not be remembered.
  absl::erase_if(rejected_versions_, [&listed](const auto& entry) {
    return !listed.undecodable_keys.contains(entry.first);
  });
  SetResourceVersion(listed.resource_version);
}

// --- Watching ---------------------------------------------------------------------------------

Reflector::WatchOutcome Reflector::WatchOnce(std::stop_token stop, bool* healthy) {
  *healthy = false;
  HttpRequest request;
  request.target = WatchTarget();
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.watch_starts;
  }
  WatchState state;
  // The transport watches `state.abort`, which the caller's stop also triggers.
  const std::stop_callback forward_stop(stop, [&state] { state.abort.request_stop(); });
  const absl::Time started = clock_->Now();
  const absl::StatusOr<HttpResponse> response = transport_->Watch(
      request, [this, &state](std::string_view line) { HandleWatchLine(line, state); },
      state.abort.get_token());
  if (stop.stop_requested()) return WatchOutcome::kStopped;

  *healthy =
      state.progress_events > 0 || clock_->Now() - started >= options_.healthy_watch_duration;
  const std::string what = absl::StrCat(kind_.kind, " reflector: watch ", kind_.list_path);
  if (!state.relist.has_value() && response.ok() && !IsSuccess(response->status)) {
    ReadRefusal(*response, state);
  }
  WatchOutcome outcome = WatchOutcome::kEnded;
  if (state.relist.has_value()) {
    CountRelist(*state.relist, state.relist_detail);
    outcome = WatchOutcome::kRelist;
  } else if (state.failed) {
    outcome = WatchOutcome::kFailed;  // logged where the ERROR event was read
  } else if (!response.ok()) {
    LogDistinct(absl::StrCat(what, ": ", response.status().message()));
    outcome = WatchOutcome::kFailed;
  } else if (response->status == kHttpNotFound && kind_.optional) {
    return WatchOutcome::kVanished;  // the CRD was removed: the next list says so
  } else if (!IsSuccess(response->status)) {
    LogDistinct(util::Std(HttpFailure(*response, what).message()));
    outcome = WatchOutcome::kFailed;
  }
  if (outcome == WatchOutcome::kFailed) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.watch_errors;
  }
  return outcome;
}

void Reflector::ReadRefusal(const HttpResponse& response, WatchState& state) {
  if (response.status != kHttpGone && response.status != kHttpGatewayTimeout) return;
  rapidjson::Document body;
  body.Parse(response.body.data(), response.body.size());
  ApiStatus status;
  if (!body.HasParseError()) status = ReadApiStatus(body);
  status.code = response.status;
  state.relist = RelistReasonOf(status);
  if (state.relist == RelistReason::kExpired) {
    state.relist_detail =
        absl::StrCat("resourceVersion ", resource_version_, " is too old (410 Gone)");
  } else if (state.relist.has_value()) {
    state.relist_detail = absl::StrCat(status.message, " (HTTP ", response.status, ")");
  }
}

void Reflector::HandleBookmark(std::string_view bookmark, WatchState& state) {
  if (ResourceVersionWentBack(resource_version_, bookmark)) {
    state.relist = RelistReason::kBookmarkWentBack;
    state.relist_detail = absl::StrCat("a BOOKMARK carried resourceVersion ", Absl(bookmark),
                                       ", below the ", resource_version_, " already seen");
    state.abort.request_stop();
    return;
  }
  if (!bookmark.empty()) SetResourceVersion(std::string(bookmark));
}

void Reflector::HandleWatchLine(std::string_view line, WatchState& state) {
  // After an ERROR event the stream carries nothing the reflector may apply.
  if (state.relist.has_value() || state.failed || IsBlank(line)) return;
  rapidjson::Document event;
  event.Parse(line.data(), line.size());
  if (event.HasParseError() || !event.IsObject()) {
    CountDecodeError(absl::StrCat("watch event is not a JSON object: ", Truncated(line)));
    return;
  }
  const std::string_view type = StringMember(event, "type");
  const rapidjson::Value* object = Member(event, "object");
  if (object == nullptr || !object->IsObject()) {
    CountDecodeError(absl::StrCat("watch event without an object: ", Truncated(line)));
    return;
  }
  if (type == "ERROR") {
    const ApiStatus status = ReadApiStatus(*object);
    if (const std::optional<RelistReason> reason = RelistReasonOf(status); reason.has_value()) {
      state.relist = reason;
      state.relist_detail = absl::StrCat("error event: ", status.message);
    } else {
      state.failed = true;
      LogDistinct(absl::StrCat(kind_.kind, " reflector: watch ", kind_.list_path,
                               ": error event: ", status.message, " (code ", status.code, ")"));
    }
    state.abort.request_stop();
    return;
  }

  EventType event_type;
  if (type == "ADDED") {
    event_type = EventType::kAdded;
  } else if (type == "MODIFIED") {
    event_type = EventType::kModified;
  } else if (type == "DELETED") {
    event_type = EventType::kDeleted;
  } else if (type == "BOOKMARK") {
    ++state.progress_events;
    HandleBookmark(MetadataString(*object, "resourceVersion"), state);
    return;
  } else {
    CountDecodeError(absl::StrCat("watch event of unknown type \"", Absl(type), "\""));
    return;
  }
  ++state.progress_events;

  absl::StatusOr<api::Object> decoded = api::DecodeObjectValue(*object, kind_.kind);
  const std::string_view resource_version = MetadataString(*object, "resourceVersion");
  if (decoded.ok()) {
    auto shared = std::make_shared<const api::Object>(*std::move(decoded));
    const std::string key = StoreKey(*shared);
    ForgetRejection(key);
    ApplyWatchEvent(event_type, key, std::move(shared));
  } else {
    const std::string key = RawStoreKey(*object);
    RejectObject(key, resource_version, util::Std(decoded.status().message()));
    if (event_type == EventType::kDeleted) ForgetRejection(key);
    ApplyWatchEvent(event_type, key, nullptr);
  }
  // The event was seen even if its object was not usable: resume after it.
  if (!resource_version.empty()) SetResourceVersion(std::string(resource_version));
}

void Reflector::ApplyWatchEvent(EventType type, const std::string& key,
                                std::shared_ptr<const api::Object> decoded) {
  const auto it = store_.find(key);
  if (decoded == nullptr) {
    // The old state of a changed object stays; a deleted object is gone whatever its final
    // state looks like, so its last known state is reported.
    if (type == EventType::kDeleted && !key.empty() && it != store_.end()) {
      std::shared_ptr<const api::Object> last_known = std::move(it->second);
      store_.erase(it);
      Deliver(EventType::kDeleted, nullptr, std::move(last_known));
    }
    return;
  }
  if (type == EventType::kDeleted) {
    if (it == store_.end()) return;  // never seen, or already reported by a relist
    store_.erase(it);
    Deliver(EventType::kDeleted, nullptr, std::move(decoded));
    return;
  }
  if (it == store_.end()) {
    store_.emplace(key, decoded);
    Deliver(EventType::kAdded, nullptr, std::move(decoded));
    return;
  }
  // Replayed after a re-watch: the store already has this version.
  if (ResourceVersionOf(*it->second) == ResourceVersionOf(*decoded)) return;
  std::shared_ptr<const api::Object> old_object = std::exchange(it->second, decoded);
  Deliver(EventType::kModified, std::move(old_object), std::move(decoded));
}

}  // namespace kubesched::client
