// Watches: the event stream of one watch request (selectors, bookmarks, timeouts, Table
// output) and the answers to resource versions too old or not yet reached.

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/event_views.h"
#include "tests/testapi/routes_internal.h"
#include "tests/testapi/tables.h"

namespace kubesched::testapi {

using routes_internal::ErrorResponse;
using routes_internal::ParseBool;
using routes_internal::ParseSelectors;
using routes_internal::StatusDetails;
using routes_internal::StatusJson;
using routes_internal::StatusResponse;
using util::Absl;

namespace {

std::string WatchEventJson(std::string_view type, std::string_view object_json) {
  return absl::StrCat("{\"type\":\"", Absl(type), "\",\"object\":", Absl(object_json), "}\n");
}

std::string ExpiredEventJson(std::string_view message) {
  return WatchEventJson("ERROR", StatusJson(410, "Expired", message, {}));
}

}  // namespace

// One watch response: takes the store's events for it, applies the selectors (an object that
// stops matching is sent as DELETED, one that starts matching as ADDED, as the real API does),
// adds bookmarks and ends at its timeout.
class ApiServer::WatchStream : public ResponseStream {
 public:
  struct Settings {
    const ResourceType* type = nullptr;  // as served: events.k8s.io/v1 Events watch core ones
    LabelSelector labels;
    FieldSelector fields;
    absl::Time deadline;
    bool bookmarks = false;
    absl::Duration bookmark_interval;
    bool table = false;  // objects as one-row meta.k8s.io/v1 Tables (kubectl get -w)
    int64_t close_after_events = 0;
  };

  WatchStream(Store* store, ApiServer* server, Settings settings)
      : store_(store),
        server_(server),
        settings_(std::move(settings)),
        relay_(std::make_shared<WakeRelay>()) {
    next_bookmark_ = absl::Now() + settings_.bookmark_interval;
  }
  ~WatchStream() override {
    if (watcher_ != nullptr) store_->StopWatch(watcher_);
  }

  // The function the store calls; it forwards to the server's wake once Start has run.
  std::function<void()> StoreWake() {
    return [relay = relay_] { relay->Fire(); };
  }
  void Attach(std::shared_ptr<Watcher> watcher) { watcher_ = std::move(watcher); }

  void Start(std::function<void()> wake) override { relay_->Set(std::move(wake)); }

  Output Poll(absl::Time now) override {
    Output output;
    if (server_->faults_->WatchStalled(settings_.type->plural)) {
      // Held back, not lost: delivered once the stall is cleared (polled again meanwhile).
      output.next_deadline = std::min(settings_.deadline, now + absl::Milliseconds(100));
      return output;
    }
    for (const WatchEvent& event : watcher_->Take()) {
      std::optional<std::string> line = Translate(event);
      if (!line.has_value()) continue;
      output.chunks.push_back(*std::move(line));
      ++sent_events_;
      if (settings_.close_after_events > 0 && sent_events_ >= settings_.close_after_events) {
        server_->Count("faults.watchClosed");
        output.finished = true;
        return output;
      }
    }
    if (watcher_->overflowed() || now >= settings_.deadline) {
      output.finished = true;
      return output;
    }
    if (settings_.bookmarks && now >= next_bookmark_) {
      if (std::optional<uint64_t> rv = store_->BookmarkResourceVersion(*watcher_)) {
        output.chunks.push_back(WatchEventJson(
            "BOOKMARK",
            absl::StrCat("{\"kind\":\"", settings_.type->kind, "\",\"apiVersion\":\"",
                         settings_.type->api_version(), "\",\"metadata\":{\"resourceVersion\":\"",
                         *rv, "\",\"creationTimestamp\":null}}")));
        next_bookmark_ = now + settings_.bookmark_interval;
      }
    }
    output.next_deadline = settings_.deadline;
    if (settings_.bookmarks) output.next_deadline = std::min(output.next_deadline, next_bookmark_);
    return output;
  }

 private:
  class WakeRelay {
   public:
    void Fire() {
      std::function<void()> wake;
      {
        absl::MutexLock lock(&mu_);
        if (!wake_) {
          fired_ = true;
          return;
        }
        wake = wake_;
      }
      wake();
    }
    void Set(std::function<void()> wake) {
      bool fired;
      {
        absl::MutexLock lock(&mu_);
        wake_ = wake;
        fired = fired_;
      }
      if (fired) wake();
    }

   private:
    absl::Mutex mu_;
    std::function<void()> wake_ ABSL_GUARDED_BY(mu_);
    bool fired_ ABSL_GUARDED_BY(mu_) = false;
  };

  bool Selected(const StoredObject& object) const {
    return settings_.labels.Matches(object.labels) &&
           settings_.fields.Matches(
               [&object](std::string_view field) { return object.Field(field); });
  }

  std::optional<std::string> Translate(const WatchEvent& event) const {
    bool now_selected = Selected(*event.object);
    switch (event.type) {
      case EventType::kAdded:
        if (!now_selected) return std::nullopt;
        return WatchEventJson("ADDED", Served(*event.object));
      case EventType::kDeleted:
        if (!Selected(*event.previous)) return std::nullopt;
        return WatchEventJson("DELETED", Served(*event.object));
      case EventType::kModified:
        break;
    }
    bool was_selected = event.previous != nullptr && Selected(*event.previous);
    if (now_selected && was_selected) {
      return WatchEventJson("MODIFIED", Served(*event.object));
    }
    if (now_selected) return WatchEventJson("ADDED", Served(*event.object));
    if (!was_selected) return std::nullopt;
    // Stopped matching: the previous content with this event's resourceVersion.
    rapidjson::Document previous = event.previous->Parse();
    SetString(previous["metadata"], "resourceVersion", absl::StrCat(event.object->resource_version),
              previous.GetAllocator());
    return WatchEventJson("DELETED", Render(*settings_.type, previous, TypeMeta::kInclude));
  }

  std::string Served(const StoredObject& object) const {
    if (settings_.table) return TableJson(*settings_.type, object, absl::Now());
    return Render(*settings_.type, object, TypeMeta::kInclude);
  }

  Store* const store_;
  ApiServer* const server_;
  const Settings settings_;
  std::shared_ptr<WakeRelay> relay_;
  std::shared_ptr<Watcher> watcher_;
  absl::Time next_bookmark_;
  int64_t sent_events_ = 0;
};

namespace {

// A 200 watch response that carries one ERROR event and ends.
class SingleEventStream : public ResponseStream {
 public:
  explicit SingleEventStream(std::string line) : line_(std::move(line)) {}
  void Start(std::function<void()>) override {}
  Output Poll(absl::Time) override {
    Output output;
    output.chunks.push_back(line_);
    output.finished = true;
    return output;
  }

 private:
  const std::string line_;
};

// What the real watch cache answers for a resourceVersion it has not reached
// (storage.NewTooLargeResourceVersionError): 504 Timeout with a ResourceVersionTooLarge cause,
// which client-go's reflector takes as a reason to list again.
HttpResponse TooLargeResourceVersionResponse(std::string_view message) {
  StatusDetails details;
  details.causes.emplace_back("ResourceVersionTooLarge", "Too large resource version");
  details.retry_after_seconds = 1;
  return StatusResponse(504, "Timeout", absl::StrCat("Timeout: ", Absl(message)), details);
}

HttpResponse ExpiredWatchResponse(bool as_event, std::string_view message) {
  if (!as_event) return StatusResponse(410, "Expired", message);
  HttpResponse response;
  response.stream = std::make_shared<SingleEventStream>(ExpiredEventJson(message));
  return response;
}

}  // namespace

HttpResponse ApiServer::Watch(const Route& route) {
  WatchStream::Settings settings;
  settings.type = route.type;
  absl::Status status =
      ParseSelectors(*route.type, route.Param("labelSelector"), route.Param("fieldSelector"),
                     &settings.labels, &settings.fields);
  if (!status.ok()) return ErrorResponse(status, {});
  uint64_t from = 0;
  std::string rv_text = route.Param("resourceVersion");
  if (!rv_text.empty() && !absl::SimpleAtoi(rv_text, &from)) {
    return StatusResponse(400, "BadRequest", absl::StrCat("invalid resource version: ", rv_text));
  }
  absl::Duration timeout = options_.default_watch_timeout;
  if (std::string seconds = route.Param("timeoutSeconds"); !seconds.empty()) {
    int64_t value = 0;
    if (absl::SimpleAtoi(seconds, &value) && value > 0) timeout = absl::Seconds(value);
  }
  settings.deadline = absl::Now() + timeout;
  settings.bookmarks = ParseBool(route.Param("allowWatchBookmarks"));
  settings.table = WantsTable(route.accept);
  settings.bookmark_interval = options_.bookmark_interval;
  settings.close_after_events = faults_->watch_close_after_events();

  if (std::optional<bool> as_event = faults_->TakeWatchGone()) {
    Count("faults.watchGone");
    return ExpiredWatchResponse(*as_event,
                                absl::StrCat("too old resource version: ", from, " (",
                                             store_->current_resource_version() + 1, ")"));
  }
  auto stream = std::make_shared<WatchStream>(store_, this, std::move(settings));
  auto watcher =
      store_->Watch(StoredType(*route.type), route.namespace_name, from, stream->StoreWake());
  if (!watcher.ok()) {
    if (watcher.status().code() == absl::StatusCode::kOutOfRange) {
      Count("watch.expired");
      return ExpiredWatchResponse(options_.expired_watch_as_event,
                                  util::Std(watcher.status().message()));
    }
    if (watcher.status().code() == absl::StatusCode::kDeadlineExceeded) {
      Count("watch.tooLarge");
      return TooLargeResourceVersionResponse(util::Std(watcher.status().message()));
    }
    return ErrorResponse(watcher.status(), route.Details());
  }
  stream->Attach(*std::move(watcher));
  Count("watch.opened");
  HttpResponse response;
  response.stream = std::move(stream);
  return response;
}

}  // namespace kubesched::testapi
