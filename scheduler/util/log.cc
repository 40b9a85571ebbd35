#include "scheduler/util/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kubesched::util {
namespace {

std::mutex& LogMutex() {
  static std::mutex mu;
  return mu;
}

// Guarded by LogMutex().
LogSink& Sink() {
  static LogSink* sink = new LogSink();
  return *sink;
}

void Log(std::string_view level, std::string_view message) {
  // Formatted before taking the lock so the critical section is one write.
  const std::string timestamp =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::string line;
  line.reserve(timestamp.size() + message.size() + 8);
  line.append(level).append(" ").append(timestamp).append(" ").append(message).append("\n");
  std::lock_guard<std::mutex> lock(LogMutex());
  if (Sink()) {
    Sink()(level, message);
    return;
  }
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void LogWarning(std::string_view message) { Log("W", message); }
void LogInfo(std::string_view message) { Log("I", message); }

namespace {
std::atomic<int>& VerbosityLevel() {
  static std::atomic<int> level{0};
  return level;
}
}  // namespace

void SetVerbosity(int level) { VerbosityLevel().store(level, std::memory_order_relaxed); }
int Verbosity() { return VerbosityLevel().load(std::memory_order_relaxed); }

void LogV(int level, std::string_view message) {
  if (Verbosity() >= level) Log("I", message);
}

void SetLogSinkForTesting(LogSink sink) {
  std::lock_guard<std::mutex> lock(LogMutex());
  Sink() = std::move(sink);
}

}  // namespace kubesched::util
