#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stop_token>

#include "absl/time/time.h"
#include "config/config.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/client/ledger_store.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::scheduler {

// The budget ledger's ConfigMap: queues.ledger, else kubesched-queue-ledger in the lease's
// namespace.
config::ObjectRef LedgerConfigMap(const config::Configuration& config);

// Keeps the queue budget ledger in its ConfigMap while this process leads: read once into the
// quota tracker (then scheduling may start), written every `interval`, and written once more at
// shutdown. Budgets must not stop scheduling: read and write errors are logged, never returned.
//
// Threads: Run is the ledger thread's body; WaitForImport and Imported may be called from any
// thread (ledger_mu_); Write on the ledger thread, or after it has ended.
class LedgerSync {
 public:
  // `transport` and `quota` must outlive it.
  LedgerSync(client::HttpTransport* transport, quota::QuotaTracker* quota, config::ObjectRef where,
             absl::Duration interval);
  LedgerSync(const LedgerSync&) = delete;
  LedgerSync& operator=(const LedgerSync&) = delete;

  // Imports the ledger, then writes it every interval until `stop` is requested or `leading`
  // turns false.
  void Run(const std::stop_token& stop, const std::atomic<bool>& leading);

  // Until Run has imported the ledger; false when stopped first.
  bool WaitForImport(const std::stop_token& stop);
  bool Imported();

  // Writes the ledger. Nothing is created while no queue has a budget (clusters that use none get
  // no ConfigMap); once it exists it is kept current, also when budgets are removed.
  void Write();

 private:
  // A read error other than "not found" is logged and the ledger starts empty.
  void Import();

  quota::QuotaTracker* const quota_;
  const config::ObjectRef where_;
  const absl::Duration interval_;
  client::LedgerStore store_;
  // Whether the ConfigMap exists (read or written): only the ledger thread, then Write after it,
  // use it.
  bool exists_ = false;
  std::mutex mu_;
  std::condition_variable_any imported_cv_;
  bool imported_ = false;  // guarded by mu_
};

}  // namespace kubesched::scheduler
