#pragma once

// The process's log: one line per message on stderr, with a UTC timestamp and a level. Every
// part of kubesched (client, scheduler, run mode, plugins) logs through these functions, so that
// a structured format is a change to one file.
//
// Thread-safe: lines from concurrent threads never interleave.

#include <concepts>
#include <functional>
#include <string_view>

#include "absl/strings/string_view.h"

namespace kubesched::util {

void LogWarning(std::string_view message);
void LogInfo(std::string_view message);

// Levelled detail, as kube-scheduler's -v: LogV(level, message) writes an "I" line only when the
// verbosity (`kubesched run -v N`, default 0) is at least `level`. Level 1: a line per preemption;
// level 2: a line per scheduling outcome of a pod (bound, unschedulable). Nothing logs per node.
void SetVerbosity(int level);
int Verbosity();
void LogV(int level, std::string_view message);

// Debian's absl::string_view is not std::string_view, and absl::Status::message() is the commonest
// thing to log. Templates constrained to exactly absl::string_view, so that std::string and string
// literals still pick the overloads above without ambiguity.
template <std::same_as<absl::string_view> View>
void LogWarning(View message) {
  LogWarning(std::string_view(message.data(), message.size()));
}
template <std::same_as<absl::string_view> View>
void LogInfo(View message) {
  LogInfo(std::string_view(message.data(), message.size()));
}

// Receives every line instead of stderr (level is "W" or "I", message without the timestamp) while
// installed; an empty function restores stderr. For tests that assert what was logged. The sink is
// called under the logging lock, so it must not log itself.
using LogSink = std::function<void(std::string_view level, std::string_view message)>;
void SetLogSinkForTesting(LogSink sink);

}  // namespace kubesched::util
