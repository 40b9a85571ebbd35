#include "scheduler/run/ledger_sync.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/log.h"
#include "scheduler/util/sleep.h"

namespace kubesched::scheduler {
namespace {

using util::LogInfo;
using util::LogWarning;

// The budget ledger's ConfigMap when queues.ledger does not name one (in the lease's namespace).
constexpr std::string_view kDefaultLedgerName = "kubesched-queue-ledger";

}  // namespace

config::ObjectRef LedgerConfigMap(const config::Configuration& config) {
  config::ObjectRef where = config.queues.ledger;
  if (where.empty()) {
    where = {config.leader_election.resource_namespace, std::string(kDefaultLedgerName)};
  }
  return where;
}

LedgerSync::LedgerSync(client::HttpTransport* transport, quota::QuotaTracker* quota,
                       config::ObjectRef where, absl::Duration interval)
    : quota_(quota), where_(std::move(where)), interval_(interval), store_(transport) {}

void LedgerSync::Run(const std::stop_token& stop, const std::atomic<bool>& leading) {
  Import();
  {
    std::lock_guard<std::mutex> lock(mu_);
    imported_ = true;
  }
  imported_cv_.notify_all();
  while (util::SleepFor(stop, interval_)) {
    if (!leading.load(std::memory_order_acquire)) return;
    Write();
  }
}

void LedgerSync::Import() {
  const std::string where = absl::StrCat(where_.namespace_name, "/", where_.name);
  absl::StatusOr<std::optional<quota::Ledger>> ledger =
      store_.Read(where_.namespace_name, where_.name);
  if (!ledger.ok()) {
    LogWarning(absl::StrCat("queue budget ledger: ", ledger.status().message(),
                            "; starting with an empty ledger"));
    return;
  }
  if (!ledger->has_value()) {
    LogInfo(absl::StrCat("queue budget ledger: ConfigMap ", where,
                         " does not exist yet; starting with an empty ledger"));
    return;
  }
  exists_ = true;
  quota_->ImportLedger(**ledger);
  LogInfo(absl::StrCat(
      "queue budget ledger: read ConfigMap ", where, " (", (*ledger)->entries.size(),
      " entries, written ",
      absl::FormatTime(absl::RFC3339_sec, (*ledger)->written_at, absl::UTCTimeZone()), ")"));
}

void LedgerSync::Write() {
  const quota::Ledger ledger = quota_->ExportLedger();
  if (ledger.entries.empty() && !exists_) return;
  absl::Status status = store_.Write(where_.namespace_name, where_.name, ledger);
  if (!status.ok()) {
    LogWarning(absl::StrCat("queue budget ledger: ", status.message()));
    return;
  }
  exists_ = true;
}

bool LedgerSync::WaitForImport(const std::stop_token& stop) {
  std::unique_lock<std::mutex> lock(mu_);
  return imported_cv_.wait(lock, stop, [this] { return imported_; });
}

bool LedgerSync::Imported() {
  std::lock_guard<std::mutex> lock(mu_);
  return imported_;
}

}  // namespace kubesched::scheduler
