#pragma once

// The process's log: one line per message on stderr. Every part of kubesched (client, scheduler,
// run mode, plugins) logs through these functions, so that the format is a change to one file.
//
// Two formats, as kube-scheduler's --logging-format:
//   text (the default):  "I 2026-01-02T03:04:05.678Z message" ("W" warnings, "E" errors)
//   json:  {"ts":1767323045.678,"caller":"run/api_reporter.cc:31","msg":"message","v":2,
//           "level":"info","pod":{"name":"p","namespace":"default"},"node":"n1"}
// JSON lines carry the key/values a call passes (KV, KObj); the text format leaves them out,
// because its messages already say the same in words. Errors carry "err" and no "v", as
// kube-scheduler's do. Strings that are not UTF-8 are written with U+FFFD, so every line parses.
//
// Thread-safe: lines from concurrent threads never interleave.

#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <version>
#if defined(__cpp_lib_source_location)
#include <source_location>
#endif
#include <streambuf>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace kubesched::util {

enum class LogFormat { kText, kJson };
void SetLogFormat(LogFormat format);
LogFormat CurrentLogFormat();

// One key/value of a structured line. Views: valid for the duration of the log call only.
struct LogField {
  enum class Kind { kString, kInt, kObject };
  std::string_view key{};
  Kind kind = Kind::kString;
  std::string_view text{};            // kString: the value; kObject: the object's name
  std::string_view namespace_name{};  // kObject: "" for cluster-scoped objects
  int64_t number = 0;                 // kInt
};
using LogFields = std::initializer_list<LogField>;

inline LogField KV(std::string_view key, std::string_view value) {
  return {.key = key, .kind = LogField::Kind::kString, .text = value};
}
inline LogField KV(std::string_view key, int64_t value) {
  return {.key = key, .kind = LogField::Kind::kInt, .number = value};
}
// An object reference as kube-scheduler's klog.KObj writes it: {"name":..,"namespace":..}.
inline LogField KObj(std::string_view key, std::string_view namespace_name, std::string_view name) {
  return {
      .key = key, .kind = LogField::Kind::kObject, .text = name, .namespace_name = namespace_name};
}
// The same from a "namespace/name" key (a pod's PodInfo::key).
LogField KObjFromKey(std::string_view key, std::string_view namespaced_name);

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
// clang 14 with libstdc++ 12 (the fuzz build) has no std::source_location; the builtins it does
// have give the same file and line where the default argument is evaluated: at the caller.
struct SourceLocation {
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          uint_least32_t line = __builtin_LINE()) {
    SourceLocation where;
    where.file_ = file;
    where.line_ = line;
    return where;
  }
  constexpr const char* file_name() const { return file_; }
  constexpr uint_least32_t line() const { return line_; }

 private:
  const char* file_ = "";
  uint_least32_t line_ = 0;
};
#endif

void LogWarning(std::string_view message, LogFields fields = {},
                SourceLocation where = SourceLocation::current());
void LogInfo(std::string_view message, LogFields fields = {},
             SourceLocation where = SourceLocation::current());
// A failure: `message` says what failed, `error` why ("err" in JSON; "message: error" in text).
void LogError(std::string_view message, std::string_view error, LogFields fields = {},
              SourceLocation where = SourceLocation::current());

// Levelled detail, as kube-scheduler's -v: LogV(level, message) writes an "I" line only when the
// verbosity (`kubesched run -v N`, default 0) is at least `level`. Level 1: a line per preemption;
// level 2: a line per scheduling outcome of a pod (bound, unschedulable). Nothing logs per node.
// A call site that builds its message guards it with `if (util::V(level))`, so that nothing is
// formatted while the level is off.
void SetVerbosity(int level);
int Verbosity();
inline std::atomic<int> verbosity_level{0};
inline bool V(int level) { return verbosity_level.load(std::memory_order_relaxed) >= level; }
void LogV(int level, std::string_view message, LogFields fields = {},
          SourceLocation where = SourceLocation::current());

// Debian's absl::string_view is not std::string_view, and absl::Status::message() is the commonest
// thing to log. Templates constrained to exactly absl::string_view, so that std::string and string
// literals still pick the overloads above without ambiguity.
template <std::same_as<absl::string_view> View>
void LogWarning(View message, LogFields fields = {},
                SourceLocation where = SourceLocation::current()) {
  LogWarning(std::string_view(message.data(), message.size()), fields, where);
}
template <std::same_as<absl::string_view> View>
void LogInfo(View message, LogFields fields = {},
             SourceLocation where = SourceLocation::current()) {
  LogInfo(std::string_view(message.data(), message.size()), fields, where);
}

// A stream whose every line becomes one LogError line (`message` and the line, without a leading
// "error: ", as its error), for code that reports fatal errors to an std::ostream while the log is
// JSON. A partial last line is written on flush and on destruction.
class ErrorLogStream : public std::ostream {
 public:
  explicit ErrorLogStream(std::string message, SourceLocation where = SourceLocation::current());
  ~ErrorLogStream() override;

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::string message, SourceLocation where)
        : message_(std::move(message)), where_(where) {}
    void Emit();

   protected:
    int_type overflow(int_type c) override;
    int sync() override;

   private:
    std::string message_;
    SourceLocation where_;
    std::string line_;
  };
  Buffer buffer_;
};

// Receives every line instead of stderr (level is "W", "I" or "E", message without the timestamp,
// key/values or error) while installed; an empty function restores stderr. For tests that assert
// what was logged. The sink is called under the logging lock, so it must not log itself.
using LogSink = std::function<void(std::string_view level, std::string_view message)>;
void SetLogSinkForTesting(LogSink sink);

// Receives every formatted line (with its newline) instead of stderr while installed, in the
// current format; an empty function restores stderr. A LogSink, when installed, takes precedence.
using LogLineSink = std::function<void(std::string_view line)>;
void SetLogLineSinkForTesting(LogLineSink sink);

}  // namespace kubesched::util
