#include "scheduler/metrics/process_collector.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "scheduler/util/strings.h"

namespace kubesched::metrics {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

MetricFamily Single(std::string name, std::string help, MetricType type, double value) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

// Entries of /proc/self/fd, less the descriptor this listing holds itself.
std::optional<int64_t> CountOpenFds(const std::string& proc) {
  DIR* dir = opendir(absl::StrCat(proc, "/self/fd").c_str());
  if (dir == nullptr) return std::nullopt;
  const std::string own = absl::StrCat(dirfd(dir));
  int64_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.' && entry->d_name != own) ++count;
  }
  closedir(dir);
  return count;
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) {
    return absl::InvalidArgumentError("/proc stat: no \")\" after the command name");
  }
  // Field 3 (state) onwards, so field N is at index N - 3.
  const std::vector<absl::string_view> fields = absl::StrSplit(
      absl::StripAsciiWhitespace(util::Absl(text.substr(close + 1))), ' ', absl::SkipEmpty());
  constexpr size_t kRssIndex = 24 - 3;
  if (fields.size() <= kRssIndex) {
    return absl::InvalidArgumentError(
        absl::StrCat("/proc stat: ", fields.size() + 2, " fields, want at least 24"));
  }
  ProcStat stat;
  const std::pair<size_t, uint64_t*> wanted[] = {{14, &stat.utime_ticks},
                                                 {15, &stat.stime_ticks},
                                                 {22, &stat.starttime_ticks},
                                                 {23, &stat.vsize_bytes},
                                                 {24, &stat.rss_pages}};
  for (const auto& [field, out] : wanted) {
    if (!absl::SimpleAtoi(fields[field - 3], out)) {
      return absl::InvalidArgumentError(absl::StrCat("/proc stat: field ", field, " (\"",
                                                     fields[field - 3], "\") is not a number"));
    }
  }
  return stat;
}

absl::StatusOr<int64_t> ParseBootTime(std::string_view proc_stat) {
  for (absl::string_view line : absl::StrSplit(util::Absl(proc_stat), '\n')) {
    if (!absl::ConsumePrefix(&line, "btime ")) continue;
    int64_t seconds = 0;
    if (absl::SimpleAtoi(line, &seconds)) return seconds;
    break;
  }
  return absl::InvalidArgumentError("/proc/stat: no btime line");
}

ProcessCollector::ProcessCollector(std::string proc) : proc_(std::move(proc)) {
  if (std::optional<std::string> text = ReadFile(absl::StrCat(proc_, "/stat"))) {
    if (absl::StatusOr<int64_t> boot = ParseBootTime(*text); boot.ok()) boot_time_seconds_ = *boot;
  }
}

std::vector<MetricFamily> ProcessCollector::Collect() const {
  std::vector<MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  absl::StatusOr<ProcStat> stat = absl::NotFoundError("no stat of this process");
  if (std::optional<std::string> text = ReadFile(absl::StrCat(proc_, "/self/stat"))) {
    stat = ParseProcStat(*text);
  }
  if (stat.ok() && ticks > 0) {
    out.push_back(Single(kProcessCpuSecondsTotal,
                         "Total user and system CPU time spent in seconds.", MetricType::Counter,
                         static_cast<double>(stat->utime_ticks + stat->stime_ticks) / ticks));
    out.push_back(Single(kProcessResidentMemoryBytes, "Resident memory size in bytes.",
                         MetricType::Gauge, static_cast<double>(stat->rss_pages) * page));
    out.push_back(Single(kProcessVirtualMemoryBytes, "Virtual memory size in bytes.",
                         MetricType::Gauge, static_cast<double>(stat->vsize_bytes)));
    if (boot_time_seconds_.has_value()) {
      out.push_back(Single(kProcessStartTimeSeconds,
                           "Start time of the process since unix epoch in seconds.",
                           MetricType::Gauge,
                           static_cast<double>(*boot_time_seconds_) +
                               static_cast<double>(stat->starttime_ticks) / ticks));
    }
  }
  if (std::optional<int64_t> open = CountOpenFds(proc_)) {
    out.push_back(Single(kProcessOpenFds, "Number of open file descriptors.", MetricType::Gauge,
                         static_cast<double>(*open)));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    out.push_back(Single(kProcessMaxFds, "Maximum number of open file descriptors.",
                         MetricType::Gauge, static_cast<double>(limit.rlim_cur)));
  }
  return out;
}

}  // namespace kubesched::metrics
