#pragma once

// The object store of kubesched-testapi: every object as its serialized JSON plus the fields
// selectors need, one global resourceVersion counter, a bounded window of past events for watches
// that resume from a resourceVersion, the fan-out of new events to open watches, and an optional
// append-only journal that keeps the state across restarts.
//
// Thread-safety: Store is safe to use from any number of threads; one mutex guards everything and
// is held only for map operations and (de)serialization of the one object being written, never
// while calling out to I/O other than the journal append. StoredObject is immutable once
// published. Watcher is shared between the store (which appends) and one consumer (which takes).

#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rapidjson/document.h"
#include "tests/testapi/resources.h"
#include "tests/testapi/selectors.h"

namespace kubesched::testapi {

// One version of one object. `json` is compact and carries no kind/apiVersion (list items in the
// real API carry none either); WithTypeMeta() adds them for GET responses and watch events.
struct StoredObject {
  const ResourceType* type = nullptr;
  std::string namespace_name{};  // "" for cluster-scoped types
  std::string name{};
  std::string uid{};
  uint64_t resource_version = 0;
  std::string json{};
  Labels labels;
  // The type's selectable fields with their values, in ResourceType::selectable_fields order.
  std::vector<std::pair<std::string, std::string>> fields{};

  // The value a field selector compares against ("" when unset).
  std::string_view Field(std::string_view field) const;
  std::string WithTypeMeta() const;
  // Parses `json` into a fresh document (kind/apiVersion included).
  rapidjson::Document Parse() const;
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

enum class EventType { kAdded, kModified, kDeleted };
std::string_view EventTypeName(EventType type);

struct WatchEvent {
  EventType type = EventType::kAdded;
  ObjectPtr object;    // for DELETED: the last state, carrying the deletion's resourceVersion
  ObjectPtr previous;  // the version before a MODIFIED or DELETED; null for ADDED
};

// The event queue of one open watch. The store appends; the watch's consumer takes.
class Watcher {
 public:
  Watcher(const ResourceType* type, std::string namespace_name, std::function<void()> wake)
      : type_(type), namespace_name_(std::move(namespace_name)), wake_(std::move(wake)) {}

  const ResourceType* type() const { return type_; }
  const std::string& namespace_name() const { return namespace_name_; }

  // Removes and returns the queued events.
  std::vector<WatchEvent> Take();
  // True once more events were queued than a consumer could plausibly be behind by; the real API
  // closes such watches too, and the client re-lists.
  bool overflowed() const;

 private:
  friend class Store;
  void Push(WatchEvent event);  // calls wake_ when the queue was empty

  const ResourceType* const type_;
  const std::string namespace_name_;  // "" watches all namespaces
  const std::function<void()> wake_;
  mutable absl::Mutex mu_;
  std::vector<WatchEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;
};

struct ListResult {
  std::vector<ObjectPtr> items{};
  uint64_t resource_version = 0;      // of the snapshot (the first page's, for continued lists)
  std::string continue_token{};       // "" on the last page
  int64_t remaining_item_count = -1;  // -1 when not known
};

struct ListOptions {
  std::string namespace_name{};  // "" lists all namespaces
  const LabelSelector* labels = nullptr;
  const FieldSelector* fields = nullptr;
  int64_t limit = 0;  // 0: no limit
  std::string continue_token{};
};

struct StoreOptions {
  size_t history_size = 1000;  // events kept for watches that resume from a resourceVersion
  std::string journal_path{};  // "" keeps nothing across restarts
};

// Errors follow the real API's reasons through their absl codes: NotFound, AlreadyExists,
// Aborted (Conflict, 409), OutOfRange (Expired, 410), InvalidArgument (BadRequest, 400) or,
// with the payload from MarkInvalid, Invalid (422).
class Store {
 public:
  // Changes `object` in place; an error aborts the write and is returned unchanged.
  using Mutation = std::function<absl::Status(rapidjson::Document& object)>;

  explicit Store(StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Replays the journal (if any), then rewrites it compactly. RVs continue after the largest one
  // found; events before the restart are not replayed to watches (they get 410 Expired).
  absl::Status Open();
  // Rewrites the journal compactly and flushes it (on shutdown).
  absl::Status Checkpoint();

  // Creates an object. Sets uid, creationTimestamp and resourceVersion, resolves generateName,
  // checks that the namespace exists (namespaced types) and that the name is free.
  absl::StatusOr<ObjectPtr> Create(const ResourceType& type, rapidjson::Document object);
  absl::StatusOr<ObjectPtr> Get(const ResourceType& type, std::string_view namespace_name,
                                std::string_view name) const;
  absl::StatusOr<ListResult> List(const ResourceType& type, const ListOptions& options) const;
  // Read-modify-write under the store lock. Name, namespace, uid and creationTimestamp cannot be
  // changed by `mutate`. An object marked for deletion whose finalizers become empty is deleted.
  absl::StatusOr<ObjectPtr> Update(const ResourceType& type, std::string_view namespace_name,
                                   std::string_view name, const Mutation& mutate);
  // Deletes an object (returned with the deletion's resourceVersion), or, when it has
  // finalizers, marks it with deletionTimestamp and returns it still present.
  absl::StatusOr<ObjectPtr> Delete(const ResourceType& type, std::string_view namespace_name,
                                   std::string_view name,
                                   std::optional<std::string> uid_precondition,
                                   std::optional<std::string> resource_version_precondition);

  // Opens a watch. With `from_resource_version` 0 the current objects are queued first as ADDED
  // (the real API's "unset"/"0" semantics); otherwise the events after it are replayed from the
  // history window, or OutOfRange (410 Expired) when they are no longer all there, or
  // DeadlineExceeded (504 "Too large resource version") when the store has not reached it.
  absl::StatusOr<std::shared_ptr<Watcher>> Watch(const ResourceType& type,
                                                 std::string namespace_name,
                                                 uint64_t from_resource_version,
                                                 std::function<void()> wake);
  void StopWatch(const std::shared_ptr<Watcher>& watcher);
  // The resourceVersion a BOOKMARK may carry for `watcher`: the current one when every event so
  // far has been taken, else nullopt.
  std::optional<uint64_t> BookmarkResourceVersion(const Watcher& watcher) const;

  uint64_t current_resource_version() const;
  // The oldest resourceVersion a watch can still resume from.
  uint64_t oldest_watchable_resource_version() const;
  size_t Count(const ResourceType& type) const;
  size_t open_watches() const;

 private:
  struct TypeState {
    std::map<std::string, ObjectPtr, std::less<>> objects{};  // by "namespace/name"
    absl::flat_hash_set<std::shared_ptr<Watcher>> watchers{};
  };

  TypeState& StateFor(const ResourceType& type) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const TypeState* FindState(const ResourceType& type) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Stamps the next resourceVersion into `object`, serializes it and builds the record.
  ObjectPtr Publish(const ResourceType& type, rapidjson::Document& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Record(WatchEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ObjectPtr> RemoveLocked(const ResourceType& type, const ObjectPtr& current)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void JournalPut(const StoredObject& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void JournalDelete(const StoredObject& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void JournalAppend(const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReplayJournal() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RewriteJournal() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StoreOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const ResourceType*, TypeState> types_ ABSL_GUARDED_BY(mu_);
  uint64_t resource_version_ ABSL_GUARDED_BY(mu_) = 0;
  // Every event with a resourceVersion above this one is in history_.
  uint64_t compacted_resource_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<WatchEvent> history_ ABSL_GUARDED_BY(mu_);
  size_t watch_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::FILE* journal_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t journal_lines_ ABSL_GUARDED_BY(mu_) = 0;
};

// ---- helpers shared with the request handlers ----

// Marks an InvalidArgument status as the real API's 422 "Invalid" rather than 400 "BadRequest".
absl::Status MarkInvalid(absl::Status status);
bool IsMarkedInvalid(const absl::Status& status);

// True when `object` is a JSON object with a member `name`.
bool HasMember(const rapidjson::Value& object, const char* name);
// The string at a dotted path ("metadata.name", "spec.nodeName"); "" when absent or not a string.
// Booleans and numbers are rendered as the real API's field selectors see them ("true").
std::string StringAt(const rapidjson::Value& object, std::string_view dotted_path);
// The object member `name` of `object`, created (as an empty object) if missing.
rapidjson::Value& ObjectMember(rapidjson::Value& object, std::string_view name,
                               rapidjson::Document::AllocatorType& allocator);
void SetString(rapidjson::Value& object, std::string_view name, std::string_view value,
               rapidjson::Document::AllocatorType& allocator);
// Sets (in place, keeping member order) or adds a member.
void SetMember(rapidjson::Value& object, std::string_view name, rapidjson::Value value,
               rapidjson::Document::AllocatorType& allocator);
std::string Serialize(const rapidjson::Value& value);
// RFC 3339 UTC with seconds, as metadata timestamps are written.
std::string NowTimestamp();

// A continue token: opaque to clients, it holds the list snapshot's resourceVersion and the last
// key returned.
std::string EncodeContinueToken(uint64_t resource_version, std::string_view last_key);
absl::Status DecodeContinueToken(std::string_view token, uint64_t* resource_version,
                                 std::string* last_key);

}  // namespace kubesched::testapi
