#pragma once

// Fault injection for kubesched-testapi: what to break, set by flags at start and replaced at run
// time through POST /testapi/faults, and the per-request decisions drawn from it.
//
// The JSON form (every field optional; POST replaces the whole configuration):
//   {"watchCloseAfterEvents": 5,            // end every watch cleanly after 5 events
//    "watchGone": {"count": 2, "mode": "http"|"event"},   // next 2 watches: 410 Expired
//    "errors":  [{"verb": "create", "resource": "pods/binding", "code": 409|429|500,
//                 "count": 3, "probability": 0.0}],
//    "latency": [{"verb": "create", "resource": "pods/binding", "ms": 20}],
//    "drops":   [{"verb": "create", "resource": "pods/binding", "count": 1, "probability": 0.0}],
//    "watchStall": ["pods"],                 // open and new watches of pods deliver nothing
//                                            // (no events, no bookmarks) until this is cleared
//    "seed": 42}                             // probabilities drawn from this seed (reproducible)
// A rule matches a request when its verb and resource equal the request's (absent or "*" match
// anything). `resource` is the plural, with "/subresource" when there is one ("pods/status");
// other groups may be named "leases" or "leases.coordination.k8s.io". A rule with a count fires
// for that many matching requests; with a probability (0..1) and no count it fires on that share
// of them for ever; with both, each of the `count` firings is drawn with that probability.
//
// Thread-safety: Faults is safe to use from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kubesched::testapi {

struct FaultRule {
  std::string verb{};      // "" matches every verb
  std::string resource{};  // "" matches every resource
  int code = 0;            // errors only
  int64_t count = -1;      // -1: unlimited
  double probability = 1.0;
  absl::Duration latency = absl::ZeroDuration();  // latency only
};

struct FaultConfig {
  int64_t watch_close_after_events = 0;  // 0: off
  int64_t watch_gone_count = 0;
  bool watch_gone_as_event = false;  // 200 with one ERROR event instead of an HTTP 410
  std::vector<FaultRule> errors{};
  std::vector<FaultRule> latency{};
  std::vector<FaultRule> drops{};
  std::vector<std::string> watch_stall{};  // plural resource names
  std::optional<uint64_t> seed{};
};

absl::StatusOr<FaultConfig> ParseFaultConfig(std::string_view json);
std::string FaultConfigToJson(const FaultConfig& config);

// What a request is, for matching: verb "create", resource "pods/binding", and the group-qualified
// resource "pods/binding" or "leases.coordination.k8s.io".
struct RequestKind {
  std::string verb{};
  std::string resource{};            // plural[/subresource]
  std::string qualified_resource{};  // plural[.group][/subresource]
};

class Faults {
 public:
  void Set(FaultConfig config);
  FaultConfig Get() const;

  // Each call consumes one firing of the first matching rule that fires.
  std::optional<int> TakeError(const RequestKind& request);
  bool TakeDrop(const RequestKind& request);
  absl::Duration Latency(const RequestKind& request) const;
  // nullopt, or whether this watch's 410 is sent as an in-stream ERROR event.
  std::optional<bool> TakeWatchGone();
  int64_t watch_close_after_events() const;
  // Whether watches of `resource` (plural) hold their events back now.
  bool WatchStalled(std::string_view resource) const;

 private:
  bool Fires(FaultRule& rule, const RequestKind& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  FaultConfig config_ ABSL_GUARDED_BY(mu_);
  absl::BitGen bitgen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::testapi
