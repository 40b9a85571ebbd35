#include "tests/testapi/store.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;
using util::Absl;

// A watch this far behind is closed rather than allowed to hold unbounded memory.
constexpr size_t kMaxQueuedWatchEvents = 1'000'000;
constexpr char kInvalidPayloadUrl[] = "kubesched.testapi/reason";

std::string_view View(const rapidjson::Value& string_value) {
  return std::string_view(string_value.GetString(), string_value.GetStringLength());
}

std::string ObjectKey(std::string_view namespace_name, std::string_view name) {
  return absl::StrCat(Absl(namespace_name), "/", Absl(name));
}

const rapidjson::Value* MemberAt(const rapidjson::Value& object, std::string_view dotted_path) {
  const rapidjson::Value* current = &object;
  size_t start = 0;
  while (current != nullptr) {
    size_t dot = dotted_path.find('.', start);
    std::string_view segment = dotted_path.substr(
        start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!current->IsObject()) return nullptr;
    auto it =
        current->FindMember(rapidjson::Value(rapidjson::StringRef(segment.data(), segment.size())));
    current = it == current->MemberEnd() ? nullptr : &it->value;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return current;
}

std::string RandomSuffix(size_t length) {
  // The alphabet the real API uses for generateName (no vowels, no confusable digits).
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  thread_local absl::BitGen bitgen;
  std::string suffix;
  for (size_t i = 0; i < length; ++i) {
    suffix.push_back(kAlphabet[absl::Uniform<size_t>(bitgen, 0, kAlphabet.size())]);
  }
  return suffix;
}

std::string NewUid() {
  thread_local absl::BitGen bitgen;
  uint64_t high = absl::Uniform<uint64_t>(bitgen);
  uint64_t low = absl::Uniform<uint64_t>(bitgen);
  // Version 4, variant 1.
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", high >> 32, (high >> 16) & 0xffff,
                         high & 0xffff, low >> 48, low & 0xffffffffffffULL);
}

bool IsDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

absl::Status InvalidName(const ResourceType& type, std::string_view name) {
  return MarkInvalid(absl::InvalidArgumentError(absl::StrCat(
      type.kind, " \"", Absl(name), "\" is invalid: metadata.name: Invalid value: \"", Absl(name),
      "\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
      "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
      "regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")));
}

absl::Status NotFound(const ResourceType& type, std::string_view name) {
  return absl::NotFoundError(absl::StrCat(type.plural, " \"", Absl(name), "\" not found"));
}

absl::Status Conflict(const ResourceType& type, std::string_view name, std::string_view why) {
  return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on ", type.plural, " \"",
                                         Absl(name), "\": ", Absl(why)));
}

// Keeps the order of the other members (RemoveMember would move the last one into the gap).
void EraseMember(rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return;
  auto it = object.FindMember(name);
  if (it != object.MemberEnd()) object.EraseMember(it);
}

bool HasFinalizers(const rapidjson::Value& object) {
  const rapidjson::Value* finalizers = MemberAt(object, "metadata.finalizers");
  return finalizers != nullptr && finalizers->IsArray() && !finalizers->Empty();
}

Labels ExtractLabels(const rapidjson::Value& object) {
  Labels labels;
  const rapidjson::Value* value = MemberAt(object, "metadata.labels");
  if (value == nullptr || !value->IsObject()) return labels;
  for (auto it = value->MemberBegin(); it != value->MemberEnd(); ++it) {
    if (it->value.IsString()) labels.emplace(View(it->name), View(it->value));
  }
  return labels;
}

}  // namespace

// ---- helpers ----

absl::Status MarkInvalid(absl::Status status) {
  status.SetPayload(kInvalidPayloadUrl, absl::Cord("Invalid"));
  return status;
}

bool IsMarkedInvalid(const absl::Status& status) {
  return status.GetPayload(kInvalidPayloadUrl).has_value();
}

bool HasMember(const rapidjson::Value& object, const char* name) {
  return object.IsObject() && object.HasMember(name);
}

std::string StringAt(const rapidjson::Value& object, std::string_view dotted_path) {
  const rapidjson::Value* value = MemberAt(object, dotted_path);
  if (value == nullptr) return "";
  if (value->IsString()) return std::string(View(*value));
  if (value->IsBool()) return value->GetBool() ? "true" : "false";
  if (value->IsInt64()) return absl::StrCat(value->GetInt64());
  return "";
}

rapidjson::Value& ObjectMember(rapidjson::Value& object, std::string_view name,
                               Allocator& allocator) {
  auto it = object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  if (it == object.MemberEnd()) {
    object.AddMember(
        rapidjson::Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), allocator),
        rapidjson::Value(rapidjson::kObjectType), allocator);
    it = object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  } else if (!it->value.IsObject()) {
    it->value.SetObject();
  }
  return it->value;
}

void SetMember(rapidjson::Value& object, std::string_view name, rapidjson::Value value,
               Allocator& allocator) {
  auto it = object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  if (it != object.MemberEnd()) {
    it->value = std::move(value);
    return;
  }
  object.AddMember(
      rapidjson::Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), allocator),
      value, allocator);
}

void SetString(rapidjson::Value& object, std::string_view name, std::string_view value,
               Allocator& allocator) {
  rapidjson::Value string_value(value.data(), static_cast<rapidjson::SizeType>(value.size()),
                                allocator);
  auto it = object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  if (it != object.MemberEnd()) {
    it->value = std::move(string_value);
    return;
  }
  object.AddMember(
      rapidjson::Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), allocator),
      string_value, allocator);
}

std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string NowTimestamp() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

std::string EncodeContinueToken(uint64_t resource_version, std::string_view last_key) {
  rapidjson::Document token(rapidjson::kObjectType);
  auto& allocator = token.GetAllocator();
  token.AddMember("v", "meta.k8s.io/v1", allocator);
  token.AddMember("rv", resource_version, allocator);
  SetString(token, "start", last_key, allocator);
  return absl::WebSafeBase64Escape(Serialize(token));
}

absl::Status DecodeContinueToken(std::string_view token, uint64_t* resource_version,
                                 std::string* last_key) {
  std::string json;
  rapidjson::Document doc;
  if (!absl::WebSafeBase64Unescape(Absl(token), &json) ||
      doc.Parse(json.data(), json.size()).HasParseError() || !doc.IsObject() ||
      !doc.HasMember("rv") || !doc["rv"].IsUint64() || !doc.HasMember("start") ||
      !doc["start"].IsString()) {
    return absl::InvalidArgumentError("continue key is not valid: invalid continue token");
  }
  *resource_version = doc["rv"].GetUint64();
  *last_key = std::string(View(doc["start"]));
  return absl::OkStatus();
}

// ---- StoredObject ----

std::string_view StoredObject::Field(std::string_view field) const {
  if (field == "metadata.name") return name;
  if (field == "metadata.namespace") return namespace_name;
  for (const auto& [path, value] : fields) {
    if (path == field) return value;
  }
  return {};
}

std::string StoredObject::WithTypeMeta() const {
  std::string out =
      absl::StrCat("{\"kind\":\"", type->kind, "\",\"apiVersion\":\"", type->api_version(), "\"");
  if (json.size() > 2) out.push_back(',');
  out.append(json, 1, std::string::npos);
  return out;
}

rapidjson::Document StoredObject::Parse() const {
  rapidjson::Document doc;
  std::string full = WithTypeMeta();
  doc.Parse(full.data(), full.size());
  return doc;
}

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "ERROR";
}

// ---- Watcher ----

std::vector<WatchEvent> Watcher::Take() {
  absl::MutexLock lock(&mu_);
  std::vector<WatchEvent> events;
  events.swap(queue_);
  return events;
}

bool Watcher::overflowed() const {
  absl::MutexLock lock(&mu_);
  return overflowed_;
}

void Watcher::Push(WatchEvent event) {
  bool was_empty;
  {
    absl::MutexLock lock(&mu_);
    if (overflowed_) return;
    if (queue_.size() >= kMaxQueuedWatchEvents) {
      overflowed_ = true;
      queue_.clear();
      was_empty = true;
    } else {
      was_empty = queue_.empty();
      queue_.push_back(std::move(event));
    }
  }
  if (was_empty && wake_) wake_();
}

// ---- Store ----

Store::Store(StoreOptions options) : options_(std::move(options)) {}

Store::~Store() {
  absl::MutexLock lock(&mu_);
  if (journal_ != nullptr) std::fclose(journal_);
}

Store::TypeState& Store::StateFor(const ResourceType& type) { return types_[&type]; }

const Store::TypeState* Store::FindState(const ResourceType& type) const {
  auto it = types_.find(&type);
  return it == types_.end() ? nullptr : &it->second;
}

ObjectPtr Store::Publish(const ResourceType& type, rapidjson::Document& object) {
  auto& allocator = object.GetAllocator();
  EraseMember(object, "kind");
  EraseMember(object, "apiVersion");
  rapidjson::Value& metadata = ObjectMember(object, "metadata", allocator);
  auto record = std::make_shared<StoredObject>();
  record->type = &type;
  record->resource_version = ++resource_version_;
  SetString(metadata, "resourceVersion", absl::StrCat(record->resource_version), allocator);
  record->name = StringAt(metadata, "name");
  record->namespace_name = StringAt(metadata, "namespace");
  record->uid = StringAt(metadata, "uid");
  record->labels = ExtractLabels(object);
  for (const std::string& field : type.selectable_fields) {
    record->fields.emplace_back(field, type.field_value != nullptr ? type.field_value(object, field)
                                                                   : StringAt(object, field));
  }
  record->json = Serialize(object);
  return record;
}

void Store::Record(WatchEvent event) {
  const StoredObject& object = *event.object;
  auto state = types_.find(object.type);
  if (state != types_.end()) {
    for (const auto& watcher : state->second.watchers) {
      if (watcher->namespace_name().empty() || watcher->namespace_name() == object.namespace_name) {
        watcher->Push(event);
      }
    }
  }
  history_.push_back(std::move(event));
  while (history_.size() > options_.history_size) {
    compacted_resource_version_ = history_.front().object->resource_version;
    history_.pop_front();
  }
}

absl::StatusOr<ObjectPtr> Store::Create(const ResourceType& type, rapidjson::Document object) {
  if (!object.IsObject()) return absl::InvalidArgumentError("the object must be a JSON object");
  auto& allocator = object.GetAllocator();
  rapidjson::Value& metadata = ObjectMember(object, "metadata", allocator);
  std::string name = StringAt(metadata, "name");
  std::string generate_name = StringAt(metadata, "generateName");
  if (name.empty() && generate_name.empty()) {
    return MarkInvalid(absl::InvalidArgumentError(
        absl::StrCat(type.kind,
                     " \"\" is invalid: metadata.name: Required value: name or "
                     "generateName is required")));
  }
  std::string namespace_name = type.namespaced ? StringAt(metadata, "namespace") : "";
  if (!type.namespaced) EraseMember(metadata, "namespace");
  if (type.namespaced && namespace_name.empty()) {
    return absl::InvalidArgumentError("the namespace of the object must be set");
  }
  absl::MutexLock lock(&mu_);
  if (type.namespaced) {
    const ResourceType* namespaces = FindResourceType("", "v1", "namespaces");
    const TypeState* namespace_state = FindState(*namespaces);
    if (namespace_state == nullptr ||
        !namespace_state->objects.contains(ObjectKey("", namespace_name))) {
      return NotFound(*namespaces, namespace_name);
    }
  }
  TypeState& state = StateFor(type);
  if (name.empty()) {
    // Retry on the (rare) collision, as the real API's generator does not; a test would only
    // see a spurious AlreadyExists.
    do {
      name = generate_name + RandomSuffix(5);
    } while (state.objects.contains(ObjectKey(namespace_name, name)));
    SetString(metadata, "name", name, allocator);
  }
  if (!IsDnsSubdomain(name)) return InvalidName(type, name);
  std::string key = ObjectKey(namespace_name, name);
  if (state.objects.contains(key)) {
    return absl::AlreadyExistsError(
        absl::StrCat(type.plural, " \"", Absl(name), "\" already exists"));
  }
  SetString(metadata, "uid", NewUid(), allocator);
  SetString(metadata, "creationTimestamp", NowTimestamp(), allocator);
  EraseMember(metadata, "deletionTimestamp");
  ObjectPtr record = Publish(type, object);
  state.objects.emplace(std::move(key), record);
  JournalPut(*record);
  Record({.type = EventType::kAdded, .object = record, .previous = nullptr});
  return record;
}

absl::StatusOr<ObjectPtr> Store::Get(const ResourceType& type, std::string_view namespace_name,
                                     std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  const TypeState* state = FindState(type);
  if (state != nullptr) {
    auto it = state->objects.find(ObjectKey(type.namespaced ? namespace_name : "", name));
    if (it != state->objects.end()) return it->second;
  }
  return NotFound(type, name);
}

absl::StatusOr<ListResult> Store::List(const ResourceType& type, const ListOptions& options) const {
  ListResult result;
  std::string start_after;
  absl::ReaderMutexLock lock(&mu_);
  result.resource_version = resource_version_;
  if (!options.continue_token.empty()) {
    absl::Status status =
        DecodeContinueToken(options.continue_token, &result.resource_version, &start_after);
    if (!status.ok()) return status;
    if (result.resource_version < compacted_resource_version_) {
      return absl::OutOfRangeError(
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter, or use the continue token in "
          "this response to retrieve the remainder of the results. Continuing with the provided "
          "token results in an inconsistent list - objects that were created, modified, or "
          "deleted between the time the first chunk was returned and now may show up in the "
          "list.");
    }
  }
  const TypeState* state = FindState(type);
  if (state == nullptr) return result;
  std::string prefix =
      type.namespaced && !options.namespace_name.empty() ? options.namespace_name + "/" : "";
  auto it = start_after.empty() ? state->objects.lower_bound(prefix)
                                : state->objects.upper_bound(start_after);
  if (!prefix.empty() && it != state->objects.end() && it->first < prefix) {
    it = state->objects.lower_bound(prefix);
  }
  bool filtered = (options.labels != nullptr && !options.labels->empty()) ||
                  (options.fields != nullptr && !options.fields->empty());
  for (; it != state->objects.end(); ++it) {
    if (!prefix.empty() && !std::string_view(it->first).starts_with(prefix)) break;
    const StoredObject& object = *it->second;
    if (options.labels != nullptr && !options.labels->Matches(object.labels)) continue;
    if (options.fields != nullptr && !options.fields->Matches([&object](std::string_view field) {
          return object.Field(field);
        })) {
      continue;
    }
    if (options.limit > 0 && static_cast<int64_t>(result.items.size()) == options.limit) {
      result.continue_token =
          EncodeContinueToken(result.resource_version, result.items.back()->namespace_name + "/" +
                                                           result.items.back()->name);
      if (!filtered) {
        int64_t remaining = 0;
        for (; it != state->objects.end(); ++it) {
          if (!prefix.empty() && !std::string_view(it->first).starts_with(prefix)) break;
          ++remaining;
        }
        result.remaining_item_count = remaining;
      }
      break;
    }
    result.items.push_back(it->second);
  }
  return result;
}

absl::StatusOr<ObjectPtr> Store::Update(const ResourceType& type, std::string_view namespace_name,
                                        std::string_view name, const Mutation& mutate) {
  absl::MutexLock lock(&mu_);
  TypeState& state = StateFor(type);
  auto it = state.objects.find(ObjectKey(type.namespaced ? namespace_name : "", name));
  if (it == state.objects.end()) return NotFound(type, name);
  ObjectPtr current = it->second;
  rapidjson::Document object = current->Parse();
  absl::Status status = mutate(object);
  if (!status.ok()) return status;
  if (!object.IsObject()) return absl::InvalidArgumentError("the object must be a JSON object");
  auto& allocator = object.GetAllocator();
  rapidjson::Value& metadata = ObjectMember(object, "metadata", allocator);
  std::string requested_name = StringAt(metadata, "name");
  if (!requested_name.empty() && requested_name != current->name) {
    return absl::InvalidArgumentError(absl::StrCat("the name of the object (", requested_name,
                                                   ") does not match the name on the URL (",
                                                   current->name, ")"));
  }
  // The real API takes a uid in the written object as a precondition (a patch carrying
  // metadata.uid, as kube-scheduler's status patches do, must not land on a successor).
  const std::string requested_uid = StringAt(metadata, "uid");
  if (!requested_uid.empty() && requested_uid != current->uid) {
    return Conflict(type, current->name,
                    absl::StrCat("Precondition failed: UID in precondition: ", requested_uid,
                                 ", UID in object meta: ", current->uid));
  }
  rapidjson::Document original = current->Parse();
  for (const char* immutable : {"name", "namespace", "uid", "creationTimestamp"}) {
    auto value = original["metadata"].FindMember(immutable);
    if (value == original["metadata"].MemberEnd()) {
      EraseMember(metadata, immutable);
    } else {
      SetMember(metadata, immutable, rapidjson::Value(value->value, allocator), allocator);
    }
  }
  // A write that changes nothing keeps the resourceVersion and sends no event, as in the real API.
  SetString(metadata, "resourceVersion", absl::StrCat(current->resource_version), allocator);
  EraseMember(object, "kind");
  EraseMember(object, "apiVersion");
  if (Serialize(object) == current->json) return current;
  if (MemberAt(object, "metadata.deletionTimestamp") != nullptr && !HasFinalizers(object)) {
    return RemoveLocked(type, current);
  }
  ObjectPtr record = Publish(type, object);
  it->second = record;
  JournalPut(*record);
  Record({.type = EventType::kModified, .object = record, .previous = current});
  return record;
}

absl::StatusOr<ObjectPtr> Store::Delete(const ResourceType& type, std::string_view namespace_name,
                                        std::string_view name,
                                        std::optional<std::string> uid_precondition,
                                        std::optional<std::string> resource_version_precondition) {
  absl::MutexLock lock(&mu_);
  TypeState& state = StateFor(type);
  auto it = state.objects.find(ObjectKey(type.namespaced ? namespace_name : "", name));
  if (it == state.objects.end()) return NotFound(type, name);
  ObjectPtr current = it->second;
  if (uid_precondition.has_value() && *uid_precondition != current->uid) {
    return Conflict(type, name,
                    absl::StrCat("Precondition failed: UID in precondition: ", *uid_precondition,
                                 ", UID in object meta: ", current->uid));
  }
  if (resource_version_precondition.has_value() &&
      *resource_version_precondition != absl::StrCat(current->resource_version)) {
    return Conflict(type, name,
                    absl::StrCat("Precondition failed: ResourceVersion in precondition: ",
                                 *resource_version_precondition,
                                 ", ResourceVersion in object meta: ", current->resource_version));
  }
  rapidjson::Document object = current->Parse();
  if (!HasFinalizers(object)) return RemoveLocked(type, current);
  rapidjson::Value& metadata = object["metadata"];
  if (metadata.HasMember("deletionTimestamp")) return current;
  SetString(metadata, "deletionTimestamp", NowTimestamp(), object.GetAllocator());
  metadata.AddMember("deletionGracePeriodSeconds", 0, object.GetAllocator());
  ObjectPtr record = Publish(type, object);
  it->second = record;
  JournalPut(*record);
  Record({.type = EventType::kModified, .object = record, .previous = current});
  return record;
}

absl::StatusOr<ObjectPtr> Store::RemoveLocked(const ResourceType& type, const ObjectPtr& current) {
  rapidjson::Document object = current->Parse();
  ObjectPtr record = Publish(type, object);
  StateFor(type).objects.erase(ObjectKey(current->namespace_name, current->name));
  JournalDelete(*record);
  Record({.type = EventType::kDeleted, .object = record, .previous = current});
  return record;
}

absl::StatusOr<std::shared_ptr<Watcher>> Store::Watch(const ResourceType& type,
                                                      std::string namespace_name,
                                                      uint64_t from_resource_version,
                                                      std::function<void()> wake) {
  if (!type.namespaced) namespace_name.clear();
  auto watcher = std::make_shared<Watcher>(&type, std::move(namespace_name), std::move(wake));
  absl::MutexLock lock(&mu_);
  auto in_scope = [&](const StoredObject& object) {
    return watcher->namespace_name().empty() || object.namespace_name == watcher->namespace_name();
  };
  if (from_resource_version == 0) {
    for (const auto& [key, object] : StateFor(type).objects) {
      if (in_scope(*object)) {
        watcher->Push({.type = EventType::kAdded, .object = object, .previous = nullptr});
      }
    }
  } else {
    // A version the store has not reached: its state was lost (etcd restored from a backup, a
    // new cluster behind the same address). The real watch cache refuses it the same way, and
    // clients must list again to learn what exists now.
    if (from_resource_version > resource_version_) {
      return absl::DeadlineExceededError(absl::StrCat(
          "Too large resource version: ", from_resource_version, ", current: ", resource_version_));
    }
    if (from_resource_version < compacted_resource_version_) {
      return absl::OutOfRangeError(absl::StrCat("too old resource version: ", from_resource_version,
                                                " (", compacted_resource_version_ + 1, ")"));
    }
    // history_ is ordered by resourceVersion; skip to the first event after the requested one.
    auto first = std::upper_bound(
        history_.begin(), history_.end(), from_resource_version,
        [](uint64_t rv, const WatchEvent& event) { return rv < event.object->resource_version; });
    for (auto it = first; it != history_.end(); ++it) {
      if (it->object->type == &type && in_scope(*it->object)) watcher->Push(*it);
    }
  }
  StateFor(type).watchers.insert(watcher);
  ++watch_count_;
  return watcher;
}

void Store::StopWatch(const std::shared_ptr<Watcher>& watcher) {
  absl::MutexLock lock(&mu_);
  if (StateFor(*watcher->type()).watchers.erase(watcher) > 0) --watch_count_;
}

std::optional<uint64_t> Store::BookmarkResourceVersion(const Watcher& watcher) const {
  absl::ReaderMutexLock lock(&mu_);
  absl::MutexLock watcher_lock(&watcher.mu_);
  if (!watcher.queue_.empty()) return std::nullopt;
  return resource_version_;
}

uint64_t Store::current_resource_version() const {
  absl::ReaderMutexLock lock(&mu_);
  return resource_version_;
}

uint64_t Store::oldest_watchable_resource_version() const {
  absl::ReaderMutexLock lock(&mu_);
  return compacted_resource_version_;
}

size_t Store::Count(const ResourceType& type) const {
  absl::ReaderMutexLock lock(&mu_);
  const TypeState* state = FindState(type);
  return state == nullptr ? 0 : state->objects.size();
}

size_t Store::open_watches() const {
  absl::ReaderMutexLock lock(&mu_);
  return watch_count_;
}

// ---- journal ----
//
// One JSON object per line: {"op":"rv","rv":N} (the counter at the last rewrite),
// {"op":"put","type":ID,"object":{...}} and {"op":"delete","type":ID,"key":"ns/name","rv":N}.
// Lines are flushed as they are written, so a killed server loses nothing it acknowledged.

void Store::JournalPut(const StoredObject& object) {
  if (journal_ == nullptr) return;
  JournalAppend(absl::StrCat("{\"op\":\"put\",\"type\":\"", object.type->id(),
                             "\",\"object\":", object.json, "}\n"));
}

void Store::JournalDelete(const StoredObject& object) {
  if (journal_ == nullptr) return;
  rapidjson::Document line(rapidjson::kObjectType);
  auto& allocator = line.GetAllocator();
  line.AddMember("op", "delete", allocator);
  SetString(line, "type", object.type->id(), allocator);
  SetString(line, "key", ObjectKey(object.namespace_name, object.name), allocator);
  line.AddMember("rv", object.resource_version, allocator);
  JournalAppend(Serialize(line) + "\n");
}

void Store::JournalAppend(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), journal_);
  std::fflush(journal_);
  // Keep the file proportional to the live state: rewrite once it is mostly superseded lines.
  size_t objects = 0;
  for (const auto& [type, state] : types_) objects += state.objects.size();
  if (++journal_lines_ > std::max<size_t>(20000, 4 * objects)) {
    absl::Status status = RewriteJournal();
    if (!status.ok()) std::fprintf(stderr, "testapi: %s\n", status.ToString().c_str());
  }
}

absl::Status Store::Open() {
  absl::MutexLock lock(&mu_);
  if (options_.journal_path.empty()) return absl::OkStatus();
  absl::Status status = ReplayJournal();
  if (!status.ok()) return status;
  compacted_resource_version_ = resource_version_;
  return RewriteJournal();
}

absl::Status Store::Checkpoint() {
  absl::MutexLock lock(&mu_);
  if (options_.journal_path.empty()) return absl::OkStatus();
  return RewriteJournal();
}

absl::Status Store::ReplayJournal() {
  std::ifstream in(options_.journal_path);
  if (!in) return absl::OkStatus();  // first start
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    rapidjson::Document entry;
    if (entry.Parse(line.data(), line.size()).HasParseError() || !entry.IsObject() ||
        !entry.HasMember("op") || !entry["op"].IsString()) {
      // A torn last line (killed mid-write) is expected; anything else is reported.
      if (in.peek() == EOF) break;
      return absl::DataLossError(absl::StrCat("state file ", options_.journal_path, ":",
                                              line_number, ": not a journal entry"));
    }
    std::string_view op = View(entry["op"]);
    if (op == "rv") {
      if (entry.HasMember("rv") && entry["rv"].IsUint64()) {
        resource_version_ = std::max(resource_version_, entry["rv"].GetUint64());
      }
      continue;
    }
    std::string type_id =
        entry.HasMember("type") && entry["type"].IsString() ? std::string(View(entry["type"])) : "";
    const ResourceType* type = nullptr;
    for (const ResourceType& candidate : AllResourceTypes()) {
      if (candidate.id() == type_id) type = &candidate;
    }
    if (type == nullptr) continue;
    if (op == "delete") {
      StateFor(*type).objects.erase(StringAt(entry, "key"));
      if (entry.HasMember("rv") && entry["rv"].IsUint64()) {
        resource_version_ = std::max(resource_version_, entry["rv"].GetUint64());
      }
    } else if (op == "put" && entry.HasMember("object") && entry["object"].IsObject()) {
      rapidjson::Document object;
      object.CopyFrom(entry["object"], object.GetAllocator());
      uint64_t rv = 0;
      if (!absl::SimpleAtoi(Absl(StringAt(object, "metadata.resourceVersion")), &rv)) continue;
      // Publish stamps the next counter value; set the counter so it stamps the recorded one.
      uint64_t saved = std::max(resource_version_, rv);
      resource_version_ = rv - 1;
      ObjectPtr record = Publish(*type, object);
      resource_version_ = saved;
      StateFor(*type).objects[ObjectKey(record->namespace_name, record->name)] = record;
    }
  }
  return absl::OkStatus();
}

absl::Status Store::RewriteJournal() {
  if (journal_ != nullptr) {
    std::fclose(journal_);
    journal_ = nullptr;
  }
  std::string temp_path = options_.journal_path + ".tmp";
  std::FILE* out = std::fopen(temp_path.c_str(), "w");
  if (out == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", temp_path, ": ", std::strerror(errno)));
  }
  journal_ = out;
  journal_lines_ = 0;
  std::string header = absl::StrCat("{\"op\":\"rv\",\"rv\":", resource_version_, "}\n");
  std::fwrite(header.data(), 1, header.size(), out);
  for (const auto& [type, state] : types_) {
    for (const auto& [key, object] : state.objects) {
      std::string line = absl::StrCat("{\"op\":\"put\",\"type\":\"", type->id(),
                                      "\",\"object\":", object->json, "}\n");
      std::fwrite(line.data(), 1, line.size(), out);
    }
  }
  if (std::fflush(out) != 0 || std::rename(temp_path.c_str(), options_.journal_path.c_str()) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", options_.journal_path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
