#pragma once

// Small helpers for building API request bodies. Every body the scheduler writes goes through
// JsonWriter (rapidjson's Writer underneath), so that messages with quotes, backslashes and
// newlines are always escaped correctly. Stateless functions are thread-safe; a JsonWriter belongs
// to one thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kubesched::client {

// Builds one JSON document. Calls must nest correctly (Begin/End pairs, a Key before each value
// inside an object); rapidjson asserts on misuse in debug builds. Keys and strings that are not
// valid UTF-8 are written with each bad byte replaced by U+FFFD, so the document always is.
class JsonWriter {
 public:
  JsonWriter() : writer_(buffer_) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // A value that is JSON text already (a decoded object's opaque parameters), copied as it is:
  // the caller vouches that it is one complete JSON value.
  JsonWriter& RawValue(std::string_view json);

  // Key followed by its value.
  JsonWriter& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonWriter& NullField(std::string_view key) { return Key(key).Null(); }

  // The document written so far (complete once every Begin has its End).
  std::string str() const { return std::string(buffer_.GetString(), buffer_.GetSize()); }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

// "2026-01-02T03:04:05Z": metav1.Time, whole seconds, UTC (condition timestamps).
std::string FormatRfc3339(absl::Time time);

// "2026-01-02T03:04:05.123456Z": metav1.MicroTime, always six fractional digits, UTC (event
// times, lease acquire/renew times).
std::string FormatMicroTime(absl::Time time);

// Checks that `value` can be placed in a URL path as it is: non-empty, at most 253 bytes, only
// ASCII letters, digits, '-', '.' and '_', and not "." or "..". Object names and namespaces are
// DNS names, so this never rejects a valid object; it keeps a corrupt name from addressing another
// path. InvalidArgument naming `what` otherwise.
absl::Status ValidatePathSegment(std::string_view what, std::string_view value);

// "/api/v1/namespaces/NS/pods/NAME", the one place a pod's URL is spelled. Validate both segments
// first when they come from objects (ValidatePathSegment).
std::string PodPath(std::string_view namespace_name, std::string_view name);

}  // namespace kubesched::client
