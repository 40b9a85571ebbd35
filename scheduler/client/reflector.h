#pragma once

// A Reflector mirrors one kind of API object into a local store and turns every change into an
// event, with the semantics of client-go's Reflector and the API server's list/watch contract:
//
//   1. LIST the collection page by page (`limit` + `continue`) and remember the list's
//      resourceVersion. A `continue` token that expires mid-way (410) restarts the list once,
//      unpaginated, as client-go's pager does.
//   2. WATCH from that resourceVersion with bookmarks on and a random server-side timeout in
//      [watch_timeout_min, watch_timeout_max), so that many clients do not reconnect in lock step.
//      Every event, bookmarks included, advances the resourceVersion the next watch starts from.
//   3. When the watch ends normally (server timeout) or fails (connection error, a non-2xx or an
//      ERROR event other than those of step 4), watch again from the last resourceVersion after a
//      jittered exponential backoff; a healthy watch resets the backoff.
//   4. LIST again and deliver the difference against the store (new keys ADDED, changed
//      resourceVersion or uid MODIFIED, vanished keys DELETED with their last known state) when
//      the watch cannot go on from the resourceVersion (RelistReason): it is too old (HTTP 410, or
//      an ERROR event carrying a 410 Status: the history is gone); it is ahead of the server (504
//      Timeout with cause ResourceVersionTooLarge, or a BOOKMARK older than what was seen: the
//      server lost its state, as after an etcd restore, and re-watching would keep objects that
//      no longer exist and miss new ones forever); or the periodic resync is due. Each relist is
//      logged with its reason and counted.
//
// The store also makes the event stream idempotent across re-watches: an ADDED of a key already
// present at the same resourceVersion is dropped, an ADDED at another version becomes MODIFIED, a
// MODIFIED of an unknown key becomes ADDED, a DELETED of an unknown key is dropped.
//
// An object that does not decode is logged (the message names it), counted and skipped; the stored
// version of it, if any, is kept, because a decoder gap is no evidence that the object is gone.
// Each version of a rejected object is logged and counted as rejected once: a relist or re-watch
// that delivers it again adds to decode_errors only, so a bad object cannot flood the log.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/event_handler.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/util/clock.h"

namespace kubesched::client {

// What to list and watch. Selectors are raw ("a!=b,c=d"); the reflector URL-encodes them.
struct ResourceKind {
  std::string kind;       // as DecodeObjectValue names it: "Pod", "Node", ...
  std::string list_path;  // "/api/v1/pods"
  std::string field_selector;
  std::string label_selector;
  // A custom resource that a cluster may not have (its CRD is not installed): a LIST answered
  // 404 counts as an empty list, so that the informers sync without it, and is logged once as a
  // warning naming `crd`; the reflector then lists again every `absent_retry_interval` until the
  // CRD appears, and watches from then on. A 403 (RBAC rules older than the kind) is treated the
  // same, so that a missing rule costs the feature, not all scheduling.
  bool optional = false;
  std::string crd;  // "podgroups.scheduling.x-k8s.io"
  // Why a 404 means the kind is absent, for the warning; empty: "the <crd> CRD is not installed".
  std::string absent_reason;
};

// The kinds the scheduler watches. Pods exclude terminal phases: the scheduler has nothing to do
// with them, and a pod that turns Succeeded/Failed leaves the selection, which a real server
// reports as DELETED.
ResourceKind PodResourceKind();
ResourceKind NodeResourceKind();
ResourceKind NamespaceResourceKind();
ResourceKind PersistentVolumeClaimResourceKind();
ResourceKind PersistentVolumeResourceKind();
ResourceKind StorageClassResourceKind();
ResourceKind CsiNodeResourceKind();
ResourceKind VolumeAttachmentResourceKind();
ResourceKind PodGroupResourceKind();  // optional: scheduler-plugins' CRD
// Optional: resource.k8s.io/v1, which API servers before Kubernetes 1.34 do not serve.
ResourceKind DeviceClassResourceKind();
ResourceKind ResourceSliceResourceKind();
ResourceKind ResourceClaimResourceKind();
ResourceKind ResourceClaimTemplateResourceKind();
ResourceKind PriorityClassResourceKind();
ResourceKind PodDisruptionBudgetResourceKind();
ResourceKind ConfigMapResourceKind(std::string_view namespace_name);

// Percent-encodes a query parameter value: everything except RFC 3986 unreserved characters
// (A-Z a-z 0-9 - . _ ~) becomes %XX with upper-case hex.
std::string UrlEncodeQueryValue(std::string_view value);

// Why a reflector lists again after its first list; the `reason` label of
// kubesched_informer_relists_total.
enum class RelistReason : uint8_t {
  kExpired,   // the watch's resourceVersion is older than the server's history (410)
  kTooLarge,  // the server has not reached the resourceVersion (504 ResourceVersionTooLarge)
  kBookmarkWentBack,  // a BOOKMARK carried a resourceVersion below the last one seen
  kResync,            // ReflectorOptions::resync_interval passed
};
inline constexpr int kRelistReasonCount = 4;
// "expired", "too_large", "bookmark_went_back", "resync".
std::string_view RelistReasonName(RelistReason reason);

struct ReflectorOptions {
  int page_size = 500;  // list `limit`; <= 0 lists in one request
  // The watch's `timeoutSeconds` is drawn uniformly from [min, max) (whole seconds).
  absl::Duration watch_timeout_min = absl::Seconds(300);
  absl::Duration watch_timeout_max = absl::Seconds(600);
  // Waits before retrying a failed list or re-watching: doubled after each failure up to the max,
  // each wait stretched by a random factor in [1, 1 + backoff_jitter).
  absl::Duration backoff_initial = absl::Milliseconds(800);
  absl::Duration backoff_max = absl::Seconds(30);
  double backoff_jitter = 0.5;
  // A watch that ends without error is healthy (and resets the backoff) if it delivered at least
  // one line or stayed open this long; a server or proxy that closes empty watches at once is
  // thereby backed off like an error.
  absl::Duration healthy_watch_duration = absl::Seconds(10);
  util::Clock* clock = nullptr;  // measures watch lifetimes; nullptr means the real clock
  // How often an optional kind whose CRD is missing is listed again (ResourceKind::optional): a
  // low rate, since a CRD is installed rarely and the 404 costs the API server little.
  absl::Duration absent_retry_interval = absl::Minutes(1);
  // Lists again this long after the last list even when the watch is healthy, so that a
  // divergence no event reveals is bounded in time; zero never does. Watches are cut short to
  // end when it is due.
  absl::Duration resync_interval = absl::ZeroDuration();
};

struct ReflectorStats {
  std::string kind;
  int64_t lists = 0;    // full lists completed (initial and relists)
  int64_t relists = 0;  // lists after the first one, for any RelistReason
  std::array<int64_t, kRelistReasonCount> relists_by_reason{};  // indexed by RelistReason
  int64_t watch_starts = 0;                                     // WATCH requests sent
  int64_t watch_errors = 0;      // watches that ended in an error rather than a server timeout
  int64_t decode_errors = 0;     // lines or objects skipped because they did not decode
  int64_t rejected_objects = 0;  // distinct object versions that did not decode (each logged)
  int64_t events = 0;            // events delivered to the sink
  bool absent = false;           // an optional kind whose last LIST said the CRD is not installed
  std::string last_resource_version;
};

// One change of one object, as the reflector delivers it. The objects hold the alternative
// named by the reflector's kind.
struct ObjectEvent {
  EventType type = EventType::kAdded;
  std::shared_ptr<const api::Object> old_object;  // kModified only
  std::shared_ptr<const api::Object> object;      // for kDeleted the last known state
};

// The store maps "namespace/name" (or "name" for cluster-scoped kinds) to the decoded object as a
// shared_ptr<const api::Object>; Informers turns it into the handler's shared_ptr<const T> with
// the aliasing constructor, so no object is copied.
//
// Thread-safety: Run() is called once, from one thread, and owns the store; the sink is called on
// that thread only. Stats() and HasSynced() may be called from any thread at any time.
class Reflector {
 public:
  using EventSink = std::function<void(const ObjectEvent&)>;

  // `transport` must outlive the reflector. `on_synced`, if set, is called once on the Run thread
  // right after the first full list has been delivered.
  Reflector(ResourceKind kind, HttpTransport* transport, EventSink sink, ReflectorOptions options,
            std::function<void()> on_synced = nullptr);

  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists and watches until `stop` is requested. Returns promptly on stop while watching or
  // backing off; an in-flight LIST request is waited for (HttpTransport::Do takes no stop token,
  // its own timeout bounds it).
  void Run(std::stop_token stop);

  // One full list, delivered to the sink as Run's first list is, and no watch: a one-time read
  // of the cluster (`kubesched explain --kubeconfig`). An optional kind whose CRD is absent
  // (404, or 403) counts as empty; any other failure is returned, not retried.
  absl::Status ListOnce(std::stop_token stop);

  // True once the first full list has been delivered to the sink.
  bool HasSynced() const { return synced_.load(std::memory_order_acquire); }
  ReflectorStats Stats() const;
  const ResourceKind& kind() const { return kind_; }

 private:
  // kVanished: an optional kind's watch answered 404 (its CRD was removed). kRelist: the watch
  // cannot resume from the resourceVersion (WatchState says why).
  enum class WatchOutcome { kEnded, kFailed, kRelist, kVanished, kStopped };
  struct ListedObjects;  // defined in the .cc, which alone sees RapidJSON
  struct WatchState;

  absl::Status ListAndReconcile(std::stop_token stop);
  // An optional kind's LIST answered 404 (or 403): deliver an empty list (what was listed before
  // is gone with the CRD) and report synced; warns once per absence, saying which it was.
  void TreatAsAbsent(const absl::Status& listed);
  absl::Status ListAll(std::stop_token stop, ListedObjects* listed);
  absl::Status ParseListPage(std::string_view body, ListedObjects* listed,
                             std::string* continue_token);
  void DeliverDifference(const ListedObjects& listed);
  WatchOutcome WatchOnce(std::stop_token stop, bool* healthy);
  void HandleWatchLine(std::string_view line, WatchState& state);
  // A watch refused with 410, or with 504 ResourceVersionTooLarge, sets `state.relist`.
  void ReadRefusal(const HttpResponse& response, WatchState& state);
  void HandleBookmark(std::string_view bookmark, WatchState& state);
  bool ResyncDue() const;
  void CountRelist(RelistReason reason, std::string_view detail);
  // `decoded` is null when the event's object did not decode; `key` may then be empty.
  void ApplyWatchEvent(EventType type, const std::string& key,
                       std::shared_ptr<const api::Object> decoded);

  std::string ListTarget(std::string_view continue_token, bool paginate) const;
  std::string WatchTarget();
  std::string SelectorQuery() const;

  void Deliver(EventType type, std::shared_ptr<const api::Object> old_object,
               std::shared_ptr<const api::Object> object);
  void CountDecodeError(std::string_view what);
  // A listed or watched object that did not decode: counted, and logged (`what` names it and
  // says why) unless the same version of it (`key` at `resource_version`) already was.
  void RejectObject(const std::string& key, std::string_view resource_version,
                    std::string_view what);
  // The object under `key` decoded or went away: a later bad version is news again.
  void ForgetRejection(const std::string& key) {
    if (!rejected_versions_.empty()) rejected_versions_.erase(key);
  }
  void SetResourceVersion(std::string resource_version);
  void LogDistinct(std::string_view message);
  absl::Duration InitialBackoff() const;
  absl::Duration NextBackoff();

  const ResourceKind kind_;
  HttpTransport* const transport_;
  const EventSink sink_;
  const ReflectorOptions options_;
  const std::function<void()> on_synced_;
  util::Clock* const clock_;

  // Touched only by the Run thread.
  absl::flat_hash_map<std::string, std::shared_ptr<const api::Object>> store_;
  std::string resource_version_;
  absl::Duration current_backoff_;
  std::string last_logged_failure_;
  absl::BitGen random_;
  bool absence_logged_ = false;
  absl::Time last_list_ = absl::InfinitePast();
  // key -> the resourceVersion of it last rejected (and logged).
  absl::flat_hash_map<std::string, std::string> rejected_versions_;

  std::atomic<bool> synced_{false};
  mutable std::mutex stats_mu_;
  ReflectorStats stats_;  // guarded by stats_mu_
};

}  // namespace kubesched::client
