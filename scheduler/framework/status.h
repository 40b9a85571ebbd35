#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace kubesched::framework {

// The verdict of a plugin. A verdict is not an error: Unschedulable is an ordinary answer.
enum class Code : uint8_t {
  // The plugin is satisfied.
  kSuccess,
  // An internal failure; the pod goes to the backoff queue and is retried.
  kError,
  // The pod does not fit this node now; preemption may help; the pod waits in the
  // unschedulable queue until a cluster event could change the answer.
  kUnschedulable,
  // The pod does not fit and removing pods would not change that (selector, taint...):
  // preemption skips the node.
  kUnschedulableAndUnresolvable,
  // Permit only: hold the pod, reserved, until it is allowed or rejected (framework::WaitingPods).
  kWait,
  // PreFilter/PreScore: the plugin has nothing to do for this pod; its Filter/Score is skipped.
  kSkip,
};

std::string_view CodeName(Code code);

// Code plus reasons plus the plugin that produced it (stamped by the runner, not the plugin).
//
// Reasons are views, not owned strings, so that a failing node costs no allocation: pass string
// literals, or text made stable with api::StableText(). Building a Status is cheap; building a
// reason string happens only for nodes that fail.
class Status {
 public:
  Status() = default;  // Success
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string_view reason) : code_(code) { reasons_.push_back(reason); }
  // Lets a plugin return a rejection it gathered reason by reason as one prvalue, which the
  // caller's slot takes without a copy.
  Status(Code code, absl::Span<const std::string_view> reasons)
      : code_(code), reasons_(reasons.begin(), reasons.end()) {}

  static Status Success() { return Status(); }
  static Status Skip() { return Status(Code::kSkip); }
  static Status Wait() { return Status(Code::kWait); }
  static Status Unschedulable(std::string_view reason) {
    return Status(Code::kUnschedulable, reason);
  }
  static Status Unresolvable(std::string_view reason) {
    return Status(Code::kUnschedulableAndUnresolvable, reason);
  }
  // The message is copied into stable storage; errors are rare.
  static Status Error(std::string_view message);

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  bool IsWait() const { return code_ == Code::kWait; }
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable;
  }
  absl::Span<const std::string_view> reasons() const { return reasons_; }
  void AddReason(std::string_view reason) { reasons_.push_back(reason); }

  std::string_view plugin() const { return plugin_; }
  void set_plugin(std::string_view plugin) { plugin_ = plugin; }

  // Reasons joined with ", ".
  std::string Message() const;

 private:
  Code code_ = Code::kSuccess;
  absl::InlinedVector<std::string_view, 2> reasons_;
  std::string_view plugin_;
};

// How many nodes gave each reason: the histogram of upstream's FitError message.
class ReasonCounts {
 public:
  void Add(std::string_view reason, size_t count = 1);
  void AddAll(const Status& status) {
    for (const std::string_view reason : status.reasons()) Add(reason);
  }
  bool empty() const { return counts_.empty(); }
  // "<count> <reason>" for each reason, sorted as text (upstream's order).
  std::vector<std::string> SortedParts() const;

 private:
  std::vector<std::pair<std::string_view, size_t>> counts_;
};

}  // namespace kubesched::framework
