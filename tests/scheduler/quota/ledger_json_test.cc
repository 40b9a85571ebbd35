#include "scheduler/quota/ledger_json.h"

#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"

namespace kubesched::quota {
namespace {

// 2026-01-02T03:04:05.123456789Z
const absl::Time kWritten = absl::FromUnixNanos(1767323045123456789);
const absl::Time kPeriodStart = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

Ledger Example() {
  Ledger ledger;
  ledger.written_at = kWritten;
  ledger.entries.push_back({"root.prod.search", "nvidia.com/gpu", 3'600'000.5, kPeriodStart});
  ledger.entries.push_back({"root.gpu", "cpu", 1e15, kWritten - absl::Hours(3)});
  ledger.entries.push_back({"root.a", "memory", 0, kPeriodStart});
  return ledger;
}

TEST_CASE("ledger JSON: a ledger round-trips exactly", "[quota][ledger]") {
  const Ledger ledger = Example();
  const std::string text = EncodeLedger(ledger);
  absl::StatusOr<Ledger> decoded = DecodeLedger(text);
  INFO(text);
  REQUIRE(decoded.ok());
  CHECK(decoded->written_at == ledger.written_at);
  REQUIRE(decoded->entries.size() == ledger.entries.size());
  for (size_t i = 0; i < ledger.entries.size(); ++i) {
    CHECK(decoded->entries[i].queue == ledger.entries[i].queue);
    CHECK(decoded->entries[i].resource == ledger.entries[i].resource);
    CHECK(decoded->entries[i].used_unit_seconds == ledger.entries[i].used_unit_seconds);
    CHECK(decoded->entries[i].period_start == ledger.entries[i].period_start);
  }
  // And again: encoding is stable.
  CHECK(EncodeLedger(*decoded) == text);
}

TEST_CASE("ledger JSON: the documented shape, RFC 3339 times with fractional seconds",
          "[quota][ledger]") {
  const std::string text = EncodeLedger(Example());
  rapidjson::Document json;
  json.Parse(text.c_str());
  REQUIRE(json.IsObject());
  CHECK(json["version"].GetInt() == 1);
  CHECK(std::string(json["writtenAt"].GetString()) == "2026-01-02T03:04:05.123456789Z");
  const rapidjson::Value& entry = json["entries"][0];
  CHECK(std::string(entry["queue"].GetString()) == "root.prod.search");
  CHECK(std::string(entry["resource"].GetString()) == "nvidia.com/gpu");
  CHECK(entry["usedUnitSeconds"].GetDouble() == 3'600'000.5);
  CHECK(std::string(entry["periodStart"].GetString()) == "2026-01-01T00:00:00.000000000Z");
}

TEST_CASE("ledger JSON: an empty ledger round-trips", "[quota][ledger]") {
  Ledger ledger;
  ledger.written_at = kWritten;
  absl::StatusOr<Ledger> decoded = DecodeLedger(EncodeLedger(ledger));
  REQUIRE(decoded.ok());
  CHECK(decoded->entries.empty());
  CHECK(decoded->written_at == kWritten);
}

TEST_CASE("ledger JSON: times written by others (offsets, no fraction) and unknown members",
          "[quota][ledger]") {
  absl::StatusOr<Ledger> decoded = DecodeLedger(R"({
    "version": 1, "writtenAt": "2026-01-02T05:04:05+02:00", "comment": "by hand",
    "entries": [{"queue": "root.q", "resource": "cpu", "usedUnitSeconds": 7, "periodStart":
                 "2026-01-01T00:00:00Z", "extra": [1, 2]}]})");
  REQUIRE(decoded.ok());
  CHECK(decoded->written_at == absl::FromUnixSeconds(1767323045));
  REQUIRE(decoded->entries.size() == 1);
  CHECK(decoded->entries[0].used_unit_seconds == 7);
}

TEST_CASE("ledger JSON: a non-finite amount is written as a number that reads back",
          "[quota][ledger]") {
  Ledger ledger;
  ledger.written_at = kWritten;
  ledger.entries.push_back({"root.q", "cpu", std::numeric_limits<double>::quiet_NaN(), kWritten});
  ledger.entries.push_back({"root.q", "memory", std::numeric_limits<double>::infinity(), kWritten});
  absl::StatusOr<Ledger> decoded = DecodeLedger(EncodeLedger(ledger));
  REQUIRE(decoded.ok());
  CHECK(decoded->entries[0].used_unit_seconds == 0);
  CHECK(decoded->entries[1].used_unit_seconds == std::numeric_limits<double>::max());
}

TEST_CASE("ledger JSON: bad input is an InvalidArgument error naming the member",
          "[quota][ledger]") {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::string entry_head = R"({"version":1,"writtenAt":"2026-01-02T03:04:05Z","entries":[)";
  const std::string good_entry =
      R"({"queue":"root.q","resource":"cpu","usedUnitSeconds":1,"periodStart":"2026-01-01T00:00:00Z"})";
  const Case cases[] = {
      {"", "not valid JSON at offset 0"},
      {"{\"version\": 1,", "not valid JSON"},
      {"[1, 2]", "ledger.json: must be a JSON object"},
      {"\"ledger\"", "must be a JSON object"},
      {R"({"writtenAt":"2026-01-02T03:04:05Z","entries":[]})", "ledger.json: version: missing"},
      {R"({"version":"1","writtenAt":"2026-01-02T03:04:05Z","entries":[]})",
       "version: must be an integer"},
      {R"({"version":2,"writtenAt":"2026-01-02T03:04:05Z","entries":[]})",
       "version: 2 is not supported"},
      {R"({"version":1,"entries":[]})", "writtenAt: missing"},
      {R"({"version":1,"writtenAt":17,"entries":[]})", "writtenAt: must be a string"},
      {R"({"version":1,"writtenAt":"yesterday","entries":[]})",
       "writtenAt: \"yesterday\" is not an RFC 3339 time"},
      {R"({"version":1,"writtenAt":"infinite-past","entries":[]})",
       "writtenAt: \"infinite-past\" is not a finite time"},
      {R"({"version":1,"writtenAt":"2026-01-02T03:04:05Z"})", "entries: missing"},
      {R"({"version":1,"writtenAt":"2026-01-02T03:04:05Z","entries":{}})",
       "entries: must be an array"},
      {entry_head + good_entry + ",3]}", "entries[1]: must be an object"},
      {entry_head +
           R"({"resource":"cpu","usedUnitSeconds":1,"periodStart":"2026-01-01T00:00:00Z"}]})",
       "entries[0].queue: missing"},
      {entry_head +
           R"({"queue":"","resource":"cpu","usedUnitSeconds":1,"periodStart":"2026-01-01T00:00:00Z"}]})",
       "entries[0].queue: must not be empty"},
      {entry_head +
           R"({"queue":"root.q","resource":null,"usedUnitSeconds":1,"periodStart":"2026-01-01T00:00:00Z"}]})",
       "entries[0].resource: must be a string"},
      {entry_head + R"({"queue":"root.q","resource":"cpu","periodStart":"2026-01-01T00:00:00Z"}]})",
       "entries[0].usedUnitSeconds: missing"},
      {entry_head +
           R"({"queue":"root.q","resource":"cpu","usedUnitSeconds":"5","periodStart":"2026-01-01T00:00:00Z"}]})",
       "entries[0].usedUnitSeconds: must be a number"},
      {entry_head +
           R"({"queue":"root.q","resource":"cpu","usedUnitSeconds":-1,"periodStart":"2026-01-01T00:00:00Z"}]})",
       "entries[0].usedUnitSeconds: must be a finite number, at least 0"},
      {entry_head +
           R"({"queue":"root.q","resource":"cpu","usedUnitSeconds":1e400,"periodStart":"2026-01-01T00:00:00Z"}]})",
       "not valid JSON"},  // rapidjson: number too big
      {entry_head + good_entry + R"(,{"queue":"root.q","resource":"cpu","usedUnitSeconds":1}]})",
       "entries[1].periodStart: missing"},
      {entry_head +
           R"({"queue":"root.q","resource":"cpu","usedUnitSeconds":1,"periodStart":"2026-13-01T00:00:00Z"}]})",
       "entries[0].periodStart: \"2026-13-01T00:00:00Z\" is not an RFC 3339 time"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Ledger> decoded = DecodeLedger(c.text);
    INFO(c.text << "\n→ " << decoded.status());
    REQUIRE(!decoded.ok());
    CHECK(absl::IsInvalidArgument(decoded.status()));
    CHECK(absl::StartsWith(decoded.status().message(), "ledger.json: "));
    CHECK(absl::StrContains(decoded.status().message(), c.expected));
  }
}

TEST_CASE("ledger JSON: truncated and mangled encodings never decode by accident",
          "[quota][ledger]") {
  const std::string text = EncodeLedger(Example());
  for (size_t size = 0; size < text.size(); ++size) {
    absl::StatusOr<Ledger> decoded = DecodeLedger(std::string_view(text).substr(0, size));
    INFO(text.substr(0, size));
    CHECK(absl::IsInvalidArgument(decoded.status()));
  }
  // Deep nesting is an error, not a stack overflow.
  CHECK(absl::IsInvalidArgument(DecodeLedger(std::string(1'000'000, '[')).status()));
  CHECK(absl::IsInvalidArgument(
      DecodeLedger(std::string(500'000, '[') + std::string(500'000, ']')).status()));
  // Any single byte changed: an error or a ledger, never a crash.
  for (size_t at = 0; at < text.size(); ++at) {
    std::string mangled = text;
    mangled[at] = static_cast<char>(mangled[at] ^ 0x5a);
    absl::StatusOr<Ledger> decoded = DecodeLedger(mangled);
    CHECK((decoded.ok() || absl::IsInvalidArgument(decoded.status())));
  }
}

}  // namespace
}  // namespace kubesched::quota
