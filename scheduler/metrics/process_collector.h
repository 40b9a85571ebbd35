#pragma once

// The process_* families every Prometheus client library exports (client_golang's process
// collector, which kube-scheduler serves), read from /proc/self when scraped: CPU time, resident
// and virtual memory, open and maximum file descriptors, start time. prometheus-cpp has none.
//
// Threads: Collect may run on any thread; it only reads /proc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace kubesched::metrics {

inline constexpr char kProcessCpuSecondsTotal[] = "process_cpu_seconds_total";
inline constexpr char kProcessResidentMemoryBytes[] = "process_resident_memory_bytes";
inline constexpr char kProcessVirtualMemoryBytes[] = "process_virtual_memory_bytes";
inline constexpr char kProcessOpenFds[] = "process_open_fds";
inline constexpr char kProcessMaxFds[] = "process_max_fds";
inline constexpr char kProcessStartTimeSeconds[] = "process_start_time_seconds";

// The fields of /proc/<pid>/stat the collector reads (proc(5) numbering), in clock ticks and
// pages as the kernel gives them.
struct ProcStat {
  uint64_t utime_ticks = 0;      // 14
  uint64_t stime_ticks = 0;      // 15
  uint64_t starttime_ticks = 0;  // 22: after boot
  uint64_t vsize_bytes = 0;      // 23
  uint64_t rss_pages = 0;        // 24
};

// Parses the one line of /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from its last ')'. InvalidArgument saying what is
// missing otherwise.
absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);

// The "btime" line of /proc/stat: boot time in seconds since the epoch. InvalidArgument if absent.
absl::StatusOr<int64_t> ParseBootTime(std::string_view proc_stat);

class ProcessCollector : public prometheus::Collectable {
 public:
  // Reads the boot time once (it never changes). `proc` is the /proc to read ("/proc"; tests
  // point it elsewhere).
  explicit ProcessCollector(std::string proc = "/proc");

  // The families whose source could be read; one that cannot is left out (never an error).
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string proc_;
  std::optional<int64_t> boot_time_seconds_;
};

}  // namespace kubesched::metrics
