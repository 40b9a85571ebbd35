#include "scheduler/client/json_encode.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "scheduler/util/strings.h"
#include "scheduler/util/utf8.h"

namespace kubesched::client {

namespace {

constexpr size_t kMaxPathSegmentBytes = 253;

bool IsPathSafeChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

rapidjson::SizeType JsonLength(std::string_view text) {
  return static_cast<rapidjson::SizeType>(text.size());
}

}  // namespace

JsonWriter& JsonWriter::BeginObject() {
  writer_.StartObject();
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  writer_.EndObject();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  writer_.StartArray();
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  writer_.EndArray();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  if (!util::IsValidUtf8(key)) {
    const std::string valid = util::ToValidUtf8(key);
    writer_.Key(valid.data(), JsonLength(valid));
    return *this;
  }
  writer_.Key(key.data(), JsonLength(key));
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  // The explicit length keeps embedded NULs and avoids a strlen; rapidjson escapes quotes,
  // backslashes and control characters, but copies invalid UTF-8 as it is, which the API server
  // would refuse.
  if (!util::IsValidUtf8(value)) {
    const std::string valid = util::ToValidUtf8(value);
    writer_.String(valid.data(), JsonLength(valid));
    return *this;
  }
  writer_.String(value.data(), JsonLength(value));
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  writer_.Int64(value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  writer_.Bool(value);
  return *this;
}

JsonWriter& JsonWriter::Null() {
  writer_.Null();
  return *this;
}

JsonWriter& JsonWriter::RawValue(std::string_view json) {
  writer_.RawValue(json.data(), JsonLength(json), rapidjson::kObjectType);
  return *this;
}

std::string FormatRfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

std::string FormatMicroTime(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", time, absl::UTCTimeZone());
}

std::string PodPath(std::string_view namespace_name, std::string_view name) {
  return absl::StrCat("/api/v1/namespaces/", util::Absl(namespace_name), "/pods/",
                      util::Absl(name));
}

absl::Status ValidatePathSegment(std::string_view what, std::string_view value) {
  bool valid =
      !value.empty() && value.size() <= kMaxPathSegmentBytes && value != "." && value != "..";
  for (char c : value) valid = valid && IsPathSafeChar(c);
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid ", util::Absl(what), " \"", util::Absl(value),
                   "\": must be a non-empty DNS name of at most 253 characters"));
}

}  // namespace kubesched::client
