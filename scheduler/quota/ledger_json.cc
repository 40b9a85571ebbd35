#include "scheduler/quota/ledger_json.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using util::Absl;

constexpr int kVersion = 1;
// RFC 3339, UTC, nanoseconds: absl::Time keeps sub-nanosecond ticks, the ledger does not need them.
constexpr char kTimeFormat[] = "%Y-%m-%d%ET%H:%M:%E9SZ";

std::string FormatLedgerTime(absl::Time time) {
  return absl::FormatTime(kTimeFormat, time, absl::UTCTimeZone());
}

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(kLedgerConfigMapKey, ": ", Absl(field), ": ", Absl(problem)));
}

const rapidjson::Value* Member(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

absl::StatusOr<std::string> StringMember(const rapidjson::Value& object, const char* name,
                                         const std::string& field) {
  const rapidjson::Value* value = Member(object, name);
  if (value == nullptr) return Invalid(field, "missing");
  if (!value->IsString()) return Invalid(field, "must be a string");
  std::string text(value->GetString(), value->GetStringLength());
  if (text.empty()) return Invalid(field, "must not be empty");
  return text;
}

absl::StatusOr<absl::Time> TimeMember(const rapidjson::Value& object, const char* name,
                                      const std::string& field) {
  absl::StatusOr<std::string> text = StringMember(object, name, field);
  if (!text.ok()) return text.status();
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, *text, &time, &error)) {
    return Invalid(field, absl::StrCat("\"", *text, "\" is not an RFC 3339 time: ", error));
  }
  if (time == absl::InfinitePast() || time == absl::InfiniteFuture()) {
    return Invalid(field, absl::StrCat("\"", *text, "\" is not a finite time"));
  }
  return time;
}

}  // namespace

std::string EncodeLedger(const Ledger& ledger) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  auto key = [&writer](std::string_view name) {
    writer.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  };
  auto string = [&writer](std::string_view value) {
    writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  writer.StartObject();
  key("version");
  writer.Int(kVersion);
  key("writtenAt");
  string(FormatLedgerTime(ledger.written_at));
  key("entries");
  writer.StartArray();
  for (const LedgerEntry& entry : ledger.entries) {
    writer.StartObject();
    key("queue");
    string(entry.queue);
    key("resource");
    string(entry.resource);
    key("usedUnitSeconds");
    // rapidjson writes nothing for NaN or infinity (the document would not parse back).
    double used = entry.used_unit_seconds;
    if (std::isnan(used)) used = 0;
    if (std::isinf(used)) used = used > 0 ? std::numeric_limits<double>::max() : 0;
    writer.Double(used);
    key("periodStart");
    string(FormatLedgerTime(entry.period_start));
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

absl::StatusOr<Ledger> DecodeLedger(std::string_view text) {
  rapidjson::Document document;
  // Iterative: deeply nested input must be an error, not a stack overflow.
  document.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (document.HasParseError()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLedgerConfigMapKey, ": not valid JSON at offset ", document.GetErrorOffset(),
                     ": ", rapidjson::GetParseError_En(document.GetParseError())));
  }
  if (!document.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(kLedgerConfigMapKey, ": must be a JSON object"));
  }

  const rapidjson::Value* version = Member(document, "version");
  if (version == nullptr) return Invalid("version", "missing");
  if (!version->IsInt()) return Invalid("version", "must be an integer");
  if (version->GetInt() != kVersion) {
    return Invalid("version", absl::StrCat(version->GetInt(),
                                           " is not supported (this kubesched "
                                           "reads version ",
                                           kVersion, ")"));
  }

  Ledger ledger;
  absl::StatusOr<absl::Time> written_at = TimeMember(document, "writtenAt", "writtenAt");
  if (!written_at.ok()) return written_at.status();
  ledger.written_at = *written_at;

  const rapidjson::Value* entries = Member(document, "entries");
  if (entries == nullptr) return Invalid("entries", "missing");
  if (!entries->IsArray()) return Invalid("entries", "must be an array");
  for (rapidjson::SizeType i = 0; i < entries->Size(); ++i) {
    const std::string where = absl::StrCat("entries[", i, "]");
    const rapidjson::Value& item = (*entries)[i];
    if (!item.IsObject()) return Invalid(where, "must be an object");
    LedgerEntry entry;
    absl::StatusOr<std::string> queue = StringMember(item, "queue", where + ".queue");
    if (!queue.ok()) return queue.status();
    entry.queue = *std::move(queue);
    absl::StatusOr<std::string> resource = StringMember(item, "resource", where + ".resource");
    if (!resource.ok()) return resource.status();
    entry.resource = *std::move(resource);
    const rapidjson::Value* used = Member(item, "usedUnitSeconds");
    const std::string used_field = where + ".usedUnitSeconds";
    if (used == nullptr) return Invalid(used_field, "missing");
    if (!used->IsNumber()) return Invalid(used_field, "must be a number");
    entry.used_unit_seconds = used->GetDouble();
    if (!std::isfinite(entry.used_unit_seconds) || entry.used_unit_seconds < 0) {
      return Invalid(used_field, "must be a finite number, at least 0");
    }
    absl::StatusOr<absl::Time> period_start =
        TimeMember(item, "periodStart", where + ".periodStart");
    if (!period_start.ok()) return period_start.status();
    entry.period_start = *period_start;
    ledger.entries.push_back(std::move(entry));
  }
  return ledger;
}

}  // namespace kubesched::quota
