#pragma once

// The budget ledger (quota::Ledger) as JSON, the form `kubesched run` keeps it in under the data
// key "ledger.json" of a ConfigMap:
//
//   {"version": 1, "writtenAt": "2026-01-02T03:04:05.123456789Z",
//    "entries": [{"queue": "root.prod.search", "resource": "nvidia.com/gpu",
//                 "usedUnitSeconds": 3600000, "periodStart": "2026-01-01T00:00:00Z"}]}
//
// usedUnitSeconds is in the resource's canonical units (milli-cores for cpu, whole units
// otherwise) times seconds, as LedgerEntry::used_unit_seconds. Times are RFC 3339 in UTC with
// fractional seconds. Unknown members are ignored, so a newer writer's extra fields do not stop an
// older reader.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::quota {

// Data key of the ledger ConfigMap.
inline constexpr char kLedgerConfigMapKey[] = "ledger.json";

std::string EncodeLedger(const Ledger& ledger);

// InvalidArgument naming the member for anything that is not a ledger this version writes: not
// JSON, a missing or mistyped member, a time that does not parse, a negative or non-finite amount.
absl::StatusOr<Ledger> DecodeLedger(std::string_view text);

}  // namespace kubesched::quota
