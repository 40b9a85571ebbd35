#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "scheduler/api/objects.h"
#include "scheduler/client/async_writer.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/util/clock.h"

namespace kubesched::client {

// Longest note the API server accepts (events.k8s.io/v1 validation).
inline constexpr size_t kEventNoteLimit = 1024;

// `note` as the API server accepts it: unchanged up to kEventNoteLimit bytes; longer notes are cut
// at byte 1020 (earlier if that would split a UTF-8 sequence) and get a " ..." suffix, like
// upstream's truncateMessage.
std::string TruncateEventNote(std::string_view note);

struct EventRecorderOptions {
  std::string reporting_controller = "kubesched";
  // Who we are among replicas: the leader-election identity.
  std::string reporting_instance;
  // Per-object token bucket: `burst` events at once, then one per `refill_interval`. Upstream's
  // broadcaster allows 25 and one per 5 minutes per object; we are stricter because a pod failing
  // to schedule is retried far more often than it needs to be reported.
  int burst = 3;
  absl::Duration refill_interval = absl::Seconds(30);
  // Most objects tracked by the rate limiter; beyond it idle buckets are evicted first, then the
  // least recently used.
  size_t max_tracked_objects = 4096;
  // Events waiting to be sent; beyond it Record drops them.
  size_t queue_capacity = 1024;
  // Per-request deadline of an event POST or PATCH; zero means the transport's default.
  absl::Duration request_timeout = absl::Seconds(10);
  // A repeat joins its series (see EventRecorder); the series' count and lastObservedTime reach
  // the server at the second occurrence, then at most once per `series_update_interval`. Upstream
  // refreshes every 30 minutes, which leaves `kubectl describe` far behind; this keeps it within
  // the interval at no more writes than the rate limit above allows.
  absl::Duration series_update_interval = absl::Seconds(30);
  // A series with no occurrence for this long is finished: its last count is written and the
  // next occurrence starts a new Event (upstream's finishTime).
  absl::Duration series_finish_time = absl::Minutes(6);
  // How often a background thread writes the counts held back by series_update_interval and
  // finishes idle series. Zero: no thread (tests call SweepSeries).
  absl::Duration sweep_interval = absl::Seconds(10);
};

enum class EventKind { kNormal, kWarning };

// Records events.k8s.io/v1 Events about pods, as client-go's events recorder does: a name of
// "<pod>.<16 hex digits of the event time in ns>", eventTime in MicroTime, reportingController
// and reportingInstance, regarding (and optionally related) object references, and a note cut to
// the API's 1024-byte limit.
//
// Repeats are aggregated like client-go's EventBroadcaster: an event with the same regarding,
// related, type, reason and action as the last one about that object joins its series instead of
// becoming a new Event. The second occurrence PATCHes `series: {count: 2, lastObservedTime}` at
// once (a strategic merge patch, as upstream); later ones update the series in memory and are
// written at most once per series_update_interval, and when the series finishes. `kubectl
// describe` shows such an event as "(x7 over 33m)". A PATCH answered 404 (the event expired or
// its POST was lost) creates the event again, series included. Unlike upstream the note is part
// of the identity: a repeat with a different note (another node count, another reason) starts a
// new Event, so that what the pod shows is never an old diagnosis with a new count.
//
// Record never waits on the network: it rate-limits new Events per pod UID (repeats in a series
// cost nothing), then queues the POST or PATCH on its own AsyncWriter. Events are best-effort:
// rate-limited, dropped (queue full) and failed sends are counted, never retried.
//
// Thread-safe: Record and the helpers may be called from any thread (the scheduling thread, bind
// workers). Start/Stop from the owner.
class EventRecorder {
 public:
  // `transport` and `clock` must outlive the recorder.
  EventRecorder(HttpTransport* transport, const util::Clock* clock, EventRecorderOptions options);
  ~EventRecorder();  // Stop(ZeroDuration()) if still running
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  void Start();
  // Queues the counts of every series not yet written, then sends what it can within `timeout`
  // and drops the rest (see AsyncWriter::Stop).
  void Stop(absl::Duration timeout);

  // Writes the series counts that are due at `now` (held back for series_update_interval) and
  // finishes the series idle for series_finish_time. The sweep thread calls it; tests may too.
  void SweepSeries(absl::Time now);

  // Records an event about `regarding`; `related` (may be null) is a second object involved, like
  // the preemptor of a victim. Returns whether it was recorded: queued as a new Event, or joined to
  // its series (false: rate-limited or queue full).
  bool Record(const api::Pod& regarding, const api::Pod* related, EventKind kind,
              std::string_view reason, std::string_view action, std::string_view note);

  // The same about an object other than a pod (a configuration ConfigMap): `kind` is its kind in
  // the core group ("ConfigMap"). Rate-limited and aggregated per object like pod events.
  bool RecordAbout(std::string_view kind, const api::ObjectMeta& regarding, EventKind event_kind,
                   std::string_view reason, std::string_view action, std::string_view note);

  // Normal "Scheduled", action "Binding": "Successfully assigned <ns>/<pod> to <node>".
  bool Scheduled(const api::Pod& pod, std::string_view node_name);
  // Warning "FailedScheduling", action "Scheduling", with the fit error message.
  bool FailedScheduling(const api::Pod& pod, std::string_view message);
  // Normal "Preempted", action "Preempting", about the victim, related to the preemptor:
  // "Preempted by pod <preemptor uid> on node <node>".
  bool Preempted(const api::Pod& victim, const api::Pod& preemptor, std::string_view node_name);

  uint64_t rate_limited() const { return rate_limited_.load(std::memory_order_relaxed); }
  uint64_t queue_dropped() const { return writer_.dropped(); }
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  uint64_t send_failures() const { return send_failures_.load(std::memory_order_relaxed); }
  // Occurrences that joined a series instead of becoming a new Event.
  uint64_t aggregated() const { return aggregated_.load(std::memory_order_relaxed); }
  size_t tracked_objects() const;
  size_t tracked_series() const;

 private:
  struct TokenBucket {
    double tokens = 0;
    absl::Time updated;
  };
  struct ObjectRef {
    std::string kind = "Pod";
    std::string namespace_name;
    std::string name;
    std::string uid;
  };
  struct PendingEvent {
    ObjectRef regarding;
    std::optional<ObjectRef> related;
    std::string name;
    absl::Time time;
    EventKind kind;
    std::string reason;
    std::string action;
    std::string note;
  };
  // The series state of one Event as the server should see it.
  struct SeriesCount {
    int32_t count = 0;
    absl::Time last_observed;
  };
  // The last Event about one (regarding, related, type, reason, action).
  struct Series {
    std::shared_ptr<const PendingEvent> event;
    SeriesCount observed{1, absl::Time()};
    int32_t written_count = 1;  // the count last queued for the server
    absl::Time last_write;      // when it was queued
  };
  using Write = std::function<void()>;

  // Record's body: `object_key` rate-limits, `related_uid` is part of the series identity.
  bool RecordRef(ObjectRef regarding, std::optional<ObjectRef> related, EventKind kind,
                 std::string_view reason, std::string_view action, std::string_view note);
  // Joins `note` to the series under `key` when it repeats it; returns whether it did, with the
  // PATCH to queue (if due) in `write`. Called with mu_ held.
  bool JoinSeries(const std::string& key, std::string_view note, absl::Time now, Write* write);
  // The PATCH writing `series`' current count; updates what was written. Called with mu_ held.
  Write SeriesWrite(Series& series, absl::Time now);
  // Keeps the series map under max_tracked_objects; returns the final writes of what it evicts.
  // Called with mu_ held.
  void EvictSeries(absl::Time now, std::vector<Write>* writes);
  void SendSeries(const PendingEvent& event, SeriesCount count);

  // Takes a token for `key` at `now`; false when the bucket is empty. Called with mu_ held.
  bool Admit(const std::string& key, absl::Time now);
  // Keeps the bucket map under max_tracked_objects. Called with mu_ held.
  void EvictBuckets(absl::Time now);
  double TokensAt(const TokenBucket& bucket, absl::Time now) const;
  // Event names must be unique; two events in the same nanosecond would collide.
  int64_t UniqueEventNanos(absl::Time now);
  std::string EventBody(const PendingEvent& event, const SeriesCount* series) const;
  // POSTs `event` (with `series` when not null); false when the server refused it.
  bool Send(const PendingEvent& event, const SeriesCount* series);
  void CountFailure(const PendingEvent& event, const absl::Status& error);
  void SweepLoop();

  HttpTransport* transport_;
  const util::Clock* clock_;
  const EventRecorderOptions options_;

  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, TokenBucket> buckets_;  // guarded by mu_
  absl::flat_hash_map<std::string, Series> series_;        // guarded by mu_
  bool stopping_ = false;                                  // guarded by mu_
  std::condition_variable stop_requested_;
  std::thread sweeper_;  // touched only by Start/Stop

  std::atomic<int64_t> last_event_nanos_{0};
  std::atomic<uint64_t> rate_limited_{0};
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> send_failures_{0};
  std::atomic<uint64_t> aggregated_{0};
  // Last: destroyed first, so that its worker stops before the members it uses go away.
  AsyncWriter writer_;
};

}  // namespace kubesched::client
