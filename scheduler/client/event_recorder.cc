#include "scheduler/client/event_recorder.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {

namespace {

using util::Absl;

constexpr std::string_view kTruncationSuffix = " ...";

bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string_view KindName(EventKind kind) {
  return kind == EventKind::kWarning ? "Warning" : "Normal";
}

}  // namespace

std::string TruncateEventNote(std::string_view note) {
  if (note.size() <= kEventNoteLimit) return std::string(note);
  size_t cut = kEventNoteLimit - kTruncationSuffix.size();
  // Back up to the first byte of the character at `cut`, so that no sequence is split.
  while (cut > 0 && IsUtf8Continuation(note[cut])) --cut;
  std::string truncated(note.substr(0, cut));
  truncated.append(kTruncationSuffix);
  return truncated;
}

EventRecorder::EventRecorder(HttpTransport* transport, const util::Clock* clock,
                             EventRecorderOptions options)
    : transport_(transport),
      clock_(clock),
      options_(std::move(options)),
      writer_(options_.queue_capacity) {}

EventRecorder::~EventRecorder() { Stop(absl::ZeroDuration()); }

void EventRecorder::Start() {
  writer_.Start();
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.sweep_interval > absl::ZeroDuration() && !stopping_ && !sweeper_.joinable()) {
    sweeper_ = std::thread([this] { SweepLoop(); });
  }
}

void EventRecorder::Stop(absl::Duration timeout) {
  std::vector<Write> writes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    // What the series counted since their last write would otherwise be lost.
    const absl::Time now = clock_->Now();
    for (auto& [key, series] : series_) {
      if (series.observed.count > series.written_count) writes.push_back(SeriesWrite(series, now));
    }
  }
  stop_requested_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
  for (Write& write : writes) writer_.Enqueue(std::move(write));
  writer_.Stop(timeout);
}

void EventRecorder::SweepLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    stop_requested_.wait_for(lock, absl::ToChronoMilliseconds(options_.sweep_interval));
    if (stopping_) break;
    lock.unlock();
    SweepSeries(clock_->Now());
    lock.lock();
  }
}

void EventRecorder::SweepSeries(absl::Time now) {
  std::vector<Write> writes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = series_.begin(); it != series_.end();) {
      Series& series = it->second;
      const bool finished = now - series.observed.last_observed >= options_.series_finish_time;
      const bool due = finished || now - series.last_write >= options_.series_update_interval;
      if (due && series.observed.count > series.written_count) {
        writes.push_back(SeriesWrite(series, now));
      }
      if (finished) {
        series_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (Write& write : writes) writer_.Enqueue(std::move(write));
}

bool EventRecorder::Record(const api::Pod& regarding, const api::Pod* related, EventKind kind,
                           std::string_view reason, std::string_view action,
                           std::string_view note) {
  std::optional<ObjectRef> related_ref;
  if (related != nullptr) {
    related_ref =
        ObjectRef{"Pod", related->meta.namespace_name, related->meta.name, related->meta.uid};
  }
  return RecordRef({"Pod", regarding.meta.namespace_name, regarding.meta.name, regarding.meta.uid},
                   std::move(related_ref), kind, reason, action, note);
}

bool EventRecorder::RecordAbout(std::string_view kind, const api::ObjectMeta& regarding,
                                EventKind event_kind, std::string_view reason,
                                std::string_view action, std::string_view note) {
  return RecordRef({std::string(kind), regarding.namespace_name, regarding.name, regarding.uid},
                   std::nullopt, event_kind, reason, action, note);
}

bool EventRecorder::RecordRef(ObjectRef regarding, std::optional<ObjectRef> related, EventKind kind,
                              std::string_view reason, std::string_view action,
                              std::string_view note) {
  const absl::Time now = clock_->Now();
  const std::string object_key =
      regarding.uid.empty() ? absl::StrCat(regarding.kind == "Pod" ? "" : regarding.kind + ":",
                                           regarding.namespace_name, "/", regarding.name)
                            : regarding.uid;
  const std::string series_key =
      absl::StrCat(object_key, "\x1f", related.has_value() ? related->uid : "", "\x1f",
                   Absl(KindName(kind)), "\x1f", Absl(reason), "\x1f", Absl(action));
  // Truncating here bounds the copy; encoding waits for the worker, off the caller's thread.
  std::string truncated = TruncateEventNote(note);
  std::vector<Write> writes;
  std::shared_ptr<PendingEvent> event;
  Write series_write;
  bool joined = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    joined = JoinSeries(series_key, truncated, now, &series_write);
  }
  if (joined) {
    aggregated_.fetch_add(1, std::memory_order_relaxed);
    return series_write == nullptr || writer_.Enqueue(std::move(series_write));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!Admit(object_key, now)) {
      rate_limited_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    event = std::make_shared<PendingEvent>();
    const int64_t nanos = UniqueEventNanos(now);
    event->name = absl::StrFormat("%s.%016x", regarding.name, static_cast<uint64_t>(nanos));
    event->regarding = std::move(regarding);
    event->related = std::move(related);
    event->time = absl::FromUnixNanos(nanos);
    event->kind = kind;
    event->reason = std::string(reason);
    event->action = std::string(action);
    event->note = std::move(truncated);
    // The previous Event under this key is finished: its last count goes out first.
    if (auto it = series_.find(series_key); it != series_.end()) {
      if (it->second.observed.count > it->second.written_count) {
        writes.push_back(SeriesWrite(it->second, now));
      }
      series_.erase(it);
    } else if (series_.size() >= options_.max_tracked_objects) {
      EvictSeries(now, &writes);
    }
    series_.emplace(series_key, Series{event, {1, event->time}, 1, now});
  }
  for (Write& write : writes) writer_.Enqueue(std::move(write));
  return writer_.Enqueue([this, event] { Send(*event, nullptr); });
}

bool EventRecorder::JoinSeries(const std::string& key, std::string_view note, absl::Time now,
                               Write* write) {
  auto it = series_.find(key);
  if (it == series_.end()) return false;
  Series& series = it->second;
  if (series.event->note != note ||
      now - series.observed.last_observed >= options_.series_finish_time) {
    return false;
  }
  ++series.observed.count;
  series.observed.last_observed = now;
  // The second occurrence turns the Event into a series at once, as upstream does; later counts
  // wait for the interval (the sweep writes what is held back).
  if (series.written_count == 1 || now - series.last_write >= options_.series_update_interval) {
    *write = SeriesWrite(series, now);
  }
  return true;
}

EventRecorder::Write EventRecorder::SeriesWrite(Series& series, absl::Time now) {
  series.written_count = series.observed.count;
  series.last_write = now;
  std::shared_ptr<const PendingEvent> event = series.event;
  const SeriesCount count = series.observed;
  return [this, event, count] { SendSeries(*event, count); };
}

void EventRecorder::EvictSeries(absl::Time now, std::vector<Write>* writes) {
  // Finished series first (their last count is written), then the least recently observed down
  // to 7/8 of the cap; a repeat of an evicted one starts a new Event.
  std::vector<std::pair<absl::Time, std::string>> by_age;
  by_age.reserve(series_.size());
  for (auto& [key, series] : series_) by_age.emplace_back(series.observed.last_observed, key);
  const size_t target = options_.max_tracked_objects - options_.max_tracked_objects / 8;
  std::sort(by_age.begin(), by_age.end());
  for (const auto& [last_observed, key] : by_age) {
    const bool finished = now - last_observed >= options_.series_finish_time;
    if (!finished && series_.size() < std::max<size_t>(target, 1)) break;
    auto it = series_.find(key);
    if (it->second.observed.count > it->second.written_count) {
      writes->push_back(SeriesWrite(it->second, now));
    }
    series_.erase(it);
  }
}

bool EventRecorder::Scheduled(const api::Pod& pod, std::string_view node_name) {
  return Record(pod, nullptr, EventKind::kNormal, "Scheduled", "Binding",
                absl::StrCat("Successfully assigned ", pod.meta.namespace_name, "/", pod.meta.name,
                             " to ", Absl(node_name)));
}

bool EventRecorder::FailedScheduling(const api::Pod& pod, std::string_view message) {
  return Record(pod, nullptr, EventKind::kWarning, "FailedScheduling", "Scheduling", message);
}

bool EventRecorder::Preempted(const api::Pod& victim, const api::Pod& preemptor,
                              std::string_view node_name) {
  return Record(
      victim, &preemptor, EventKind::kNormal, "Preempted", "Preempting",
      absl::StrCat("Preempted by pod ", preemptor.meta.uid, " on node ", Absl(node_name)));
}

size_t EventRecorder::tracked_objects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

size_t EventRecorder::tracked_series() const {
  std::lock_guard<std::mutex> lock(mu_);
  return series_.size();
}

double EventRecorder::TokensAt(const TokenBucket& bucket, absl::Time now) const {
  const double refilled =
      options_.refill_interval > absl::ZeroDuration()
          ? absl::FDivDuration(std::max(now - bucket.updated, absl::ZeroDuration()),
                               options_.refill_interval)
          : static_cast<double>(options_.burst);
  return std::min<double>(options_.burst, bucket.tokens + refilled);
}

bool EventRecorder::Admit(const std::string& key, absl::Time now) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_tracked_objects) EvictBuckets(now);
    it = buckets_.emplace(key, TokenBucket{static_cast<double>(options_.burst), now}).first;
  }
  TokenBucket& bucket = it->second;
  bucket.tokens = TokensAt(bucket, now);
  bucket.updated = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

void EventRecorder::EvictBuckets(absl::Time now) {
  // A bucket that has refilled completely behaves exactly like a new one: forgetting it loses
  // nothing.
  absl::erase_if(buckets_,
                 [&](const auto& entry) { return TokensAt(entry.second, now) >= options_.burst; });
  // Every object is busy: forget the least recently used down to 7/8 of the cap, so that this
  // scan runs at most once per max_tracked_objects/8 new objects. They get a fresh burst: memory
  // stays bounded at the price of a few extra events.
  const size_t target = options_.max_tracked_objects - options_.max_tracked_objects / 8;
  if (buckets_.size() < options_.max_tracked_objects || buckets_.empty()) return;
  std::vector<std::pair<absl::Time, std::string>> by_age;
  by_age.reserve(buckets_.size());
  for (const auto& [key, bucket] : buckets_) by_age.emplace_back(bucket.updated, key);
  const size_t evict = std::min(by_age.size(), std::max<size_t>(by_age.size() - target, 1));
  std::nth_element(by_age.begin(), by_age.begin() + static_cast<ptrdiff_t>(evict - 1),
                   by_age.end());
  for (size_t i = 0; i < evict; ++i) buckets_.erase(by_age[i].second);
}

int64_t EventRecorder::UniqueEventNanos(absl::Time now) {
  int64_t nanos = absl::ToUnixNanos(now);
  int64_t last = last_event_nanos_.load(std::memory_order_relaxed);
  while (true) {
    const int64_t next = std::max(nanos, last + 1);
    if (last_event_nanos_.compare_exchange_weak(last, next, std::memory_order_relaxed)) {
      return next;
    }
  }
}

std::string EventRecorder::EventBody(const PendingEvent& event, const SeriesCount* series) const {
  auto write_ref = [](JsonWriter& json, const ObjectRef& ref) {
    json.BeginObject()
        .Field("apiVersion", "v1")
        .Field("kind", ref.kind)
        .Field("namespace", ref.namespace_name)
        .Field("name", ref.name)
        .Field("uid", ref.uid)
        .EndObject();
  };
  JsonWriter json;
  json.BeginObject()
      .Field("apiVersion", "events.k8s.io/v1")
      .Field("kind", "Event")
      .Key("metadata")
      .BeginObject()
      .Field("name", event.name)
      .Field("namespace", event.regarding.namespace_name)
      .EndObject()
      .Field("eventTime", FormatMicroTime(event.time));
  if (series != nullptr) {
    json.Key("series")
        .BeginObject()
        .Field("count", int64_t{series->count})
        .Field("lastObservedTime", FormatMicroTime(series->last_observed))
        .EndObject();
  }
  json.Field("reportingController", options_.reporting_controller)
      .Field("reportingInstance", options_.reporting_instance)
      .Field("action", event.action)
      .Field("reason", event.reason)
      .Key("regarding");
  write_ref(json, event.regarding);
  if (event.related.has_value()) {
    json.Key("related");
    write_ref(json, *event.related);
  }
  json.Field("note", event.note).Field("type", KindName(event.kind)).EndObject();
  return json.str();
}

bool EventRecorder::Send(const PendingEvent& event, const SeriesCount* series) {
  if (!ValidatePathSegment("event namespace", event.regarding.namespace_name).ok()) {
    send_failures_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  HttpRequest request;
  request.method = "POST";
  request.target =
      absl::StrCat("/apis/events.k8s.io/v1/namespaces/", event.regarding.namespace_name, "/events");
  request.body = EventBody(event, series);
  request.content_type = "application/json";
  request.timeout = options_.request_timeout;
  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  if (response.ok() && response->status >= 200 && response->status < 300) {
    sent_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  CountFailure(
      event, response.ok() ? StatusFromResponse(*response, "recording event") : response.status());
  return false;
}

void EventRecorder::SendSeries(const PendingEvent& event, SeriesCount count) {
  if (!ValidatePathSegment("event namespace", event.regarding.namespace_name).ok() ||
      !ValidatePathSegment("event name", event.name).ok()) {
    send_failures_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  JsonWriter patch;
  patch.BeginObject()
      .Key("series")
      .BeginObject()
      .Field("count", int64_t{count.count})
      .Field("lastObservedTime", FormatMicroTime(count.last_observed))
      .EndObject()
      .EndObject();
  HttpRequest request;
  request.method = "PATCH";
  request.target = absl::StrCat("/apis/events.k8s.io/v1/namespaces/",
                                event.regarding.namespace_name, "/events/", event.name);
  request.body = patch.str();
  request.content_type = "application/strategic-merge-patch+json";
  request.timeout = options_.request_timeout;
  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  if (response.ok() && response->status >= 200 && response->status < 300) {
    sent_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Gone (expired after the API server's event TTL, or its POST was lost): create it again, with
  // the series, under the same name, as client-go does.
  if (response.ok() && response->status == 404) {
    Send(event, &count);
    return;
  }
  CountFailure(event, response.ok() ? StatusFromResponse(*response, "updating event series")
                                    : response.status());
}

void EventRecorder::CountFailure(const PendingEvent& event, const absl::Status& error) {
  const uint64_t failures = send_failures_.fetch_add(1, std::memory_order_relaxed) + 1;
  // Events are best-effort and fail together when the server is down: log the 1st, 2nd, 4th...
  // failure so that the log shows the problem without one line per event.
  if ((failures & (failures - 1)) == 0) {
    util::LogWarning(absl::StrCat("dropped event ", event.reason, " about pod ",
                                  event.regarding.namespace_name, "/", event.regarding.name, ": ",
                                  error.message(), " (", failures, " failed so far)"));
  }
}

}  // namespace kubesched::client
