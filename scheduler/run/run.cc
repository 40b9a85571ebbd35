#include "scheduler/run/run.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>
#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/client/api_binder.h"
#include "scheduler/client/api_claim_status_writer.h"
#include "scheduler/client/api_pod_deleter.h"
#include "scheduler/client/api_pod_group_status_writer.h"
#include "scheduler/client/api_volume_binder.h"
#include "scheduler/client/async_writer.h"
#include "scheduler/client/event_recorder.h"
#include "scheduler/client/informers.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/metrics_poller.h"
#include "scheduler/client/pod_status_writer.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/instrumentation.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/run/api_reporter.h"
#include "scheduler/run/bind_pool.h"
#include "scheduler/run/health_server.h"
#include "scheduler/run/leader_election.h"
#include "scheduler/run/ledger_sync.h"
#include "scheduler/run/secure_serving.h"
#include "scheduler/run/stop_on_signal.h"
#include "scheduler/serving/configz.h"
#include "scheduler/util/clock.h"
#include "scheduler/util/exit_codes.h"
#include "scheduler/util/log.h"
#include "scheduler/util/sleep.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

using util::LogInfo;
using util::LogWarning;

// The configuration with the flags' overrides applied; exit code 2 on error (already printed).
std::optional<config::Configuration> LoadRunConfiguration(const RunOptions& options,
                                                          std::ostream& err) {
  config::Configuration config = config::DefaultConfiguration();
  if (options.config_path.has_value()) {
    auto loaded = config::LoadConfigurationFile(*options.config_path);
    if (!loaded.ok()) {
      err << "error: " << loaded.status().message() << "\n";
      return std::nullopt;
    }
    config = *std::move(loaded);
  }
  if (auto status = CheckConfiguration(config); !status.ok()) {
    err << "error: " << options.config_path.value_or("configuration") << ": " << status.message()
        << "\n";
    return std::nullopt;
  }
  if (options.leader_elect.has_value()) config.leader_election.leader_elect = *options.leader_elect;
  if (absl::Status status =
          config::ApplyLeaderElectionOverrides(options.leader_election, &config.leader_election);
      !status.ok()) {
    err << "error: " << status.message() << "\n";
    return std::nullopt;
  }
  if (options.qps.has_value()) config.client_connection.qps = *options.qps;
  if (options.burst.has_value()) config.client_connection.burst = *options.burst;
  return config;
}

absl::StatusOr<client::ResolvedConnection> Connect(const RunOptions& options,
                                                   const config::Configuration& config) {
  client::ConnectionOptions connection;
  connection.kubeconfig_path = options.kubeconfig;
  connection.config_kubeconfig = config.client_connection.kubeconfig;
  connection.context = options.context;
  connection.master = options.master;
  connection.qps = config.client_connection.qps;
  connection.burst = config.client_connection.burst;
  connection.content_type = config.client_connection.content_type;
  return client::ResolveConnection(connection);
}

// Errors that waiting cannot fix: bad credentials, missing RBAC, a certificate that does not
// verify. Anything else (refused, timeout, 5xx) may be an API server that is still starting.
bool IsPermanent(const absl::Status& status) {
  if (absl::IsUnauthenticated(status) || absl::IsPermissionDenied(status) ||
      absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status)) {
    return true;
  }
  const std::string_view message(status.message().data(), status.message().size());
  return absl::StrContains(util::Absl(message), "certificate") ||
         absl::StrContains(util::Absl(message), "handshake");
}

// One cheap request that proves the server is reachable, trusted, and accepts our credentials, so
// that a wrong CA or token is one clear error at start-up rather than reflectors retrying forever.
absl::Status CheckServer(client::HttpTransport& transport, const std::string& server,
                         const std::stop_token& stop) {
  client::HttpRequest request;
  request.target = "/api/v1/namespaces?limit=1";
  request.max_retries = 0;
  absl::Duration wait = absl::Milliseconds(500);
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<client::HttpResponse> response = transport.Do(request);
    absl::Status status = response.ok() ? client::StatusFromResponse(*response, "list namespaces")
                                        : response.status();
    if (status.ok()) return status;
    status = absl::Status(status.code(), absl::StrCat(server, ": ", status.message()));
    if (IsPermanent(status)) return status;
    LogWarning(absl::StrCat("API server not ready (attempt ", attempt, "): ", status.message()));
    if (!util::SleepFor(stop, wait)) {
      return absl::CancelledError("stopped before the API server answered");
    }
    wait = std::min(wait * 2, absl::Seconds(10));
  }
}

// The scheduling thread: pops and schedules pods while we lead, and does the periodic upkeep. It
// pauses while `may_bind` says no (a lease renewal overdue: placing pods whose binds would not be
// sent only churns them) and while `bind_backlog` binds are queued or running, so that a leader
// that learns late that it lost the lease has few binds started on its behalf.
void SchedulingLoop(Scheduler& scheduler, const std::atomic<bool>& leading,
                    const std::function<bool()>& may_bind, BindWorkerPool& binds,
                    size_t bind_backlog, const std::function<void()>& upkeep,
                    const std::stop_token& stop) {
  auto last_upkeep = std::chrono::steady_clock::now();
  while (!stop.stop_requested() && leading.load(std::memory_order_acquire)) {
    if (!may_bind() || !binds.WaitForRoom(bind_backlog, absl::Milliseconds(100))) {
      util::SleepFor(stop, absl::Milliseconds(20));
      continue;
    }
    scheduler.ScheduleOne(absl::Milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (now - last_upkeep >= std::chrono::seconds(1)) {
      upkeep();
      last_upkeep = now;
    }
  }
}

// One CPU is left to the bind workers, informers and writers: on a 2-core machine a second
// filter thread only competes with them (measured with bench/e2e_throughput.py: about +35%
// pods/s with one filter thread instead of two).
int DefaultFilterThreads() {
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cpus - 1);
}

// Everything `run` owns, in construction order; members are destroyed in reverse, so threads that
// use a component stop before it goes away.
class Runner {
 public:
  Runner(const RunOptions& options, config::Configuration config, std::ostream& err)
      : options_(options), config_(std::move(config)), err_(err) {}

  int Run() {
    StopOnSignal signals(stop_);
    if (int code = PrepareServing(); code != kExitOk) return code;
    if (int code = Setup(); code != kExitOk) return code;
    if (!StartHealth() || !StartMetrics() || !StartSecureServing()) return kExitUsage;
    informers_->Start();
    LogInfo("waiting for the informers' initial lists");
    while (!informers_->WaitForSync(absl::Seconds(1))) {
      if (stop_.stop_requested()) return Shutdown();
    }
    LogInfo("informers synced");
    scheduler_->CheckTypedLimits();
    // After the sync, so that samples find their nodes; its own thread, never the scheduling one.
    if (metrics_poller_ != nullptr) metrics_poller_->Start();
    if (config_.leader_election.leader_elect) {
      StartLeaderElection();
    } else {
      StartScheduling();
    }
    WaitForStop();
    return Shutdown();
  }

 private:
  int Setup() {
    auto connection = Connect(options_, config_);
    if (!connection.ok()) {
      err_ << "error: " << connection.status().message() << "\n";
      return kExitFailure;
    }
    for (const std::string& warning : connection->warnings) LogWarning(warning);
    LogInfo(absl::StrCat("connecting to ", connection->rest.server, " (", connection->description,
                         ")"));
    instrumentation_ = std::make_unique<metrics::Instrumentation>(&clock_, config_);
    if (absl::Status status = instrumentation_->InstrumentRestClient(connection->rest);
        !status.ok()) {
      err_ << "error: " << status.message() << "\n";
      return kExitFailure;
    }
    auto rest = client::RestClient::Create(connection->rest);
    if (!rest.ok()) {
      err_ << "error: " << rest.status().message() << "\n";
      return kExitFailure;
    }
    rest_ = *std::move(rest);
    main_connection_ = connection->rest;
    for (const std::string& warning : rest_->warnings()) LogWarning(warning);
    if (absl::Status status = CheckServer(*rest_, rest_->server(), stop_.get_token());
        !status.ok()) {
      if (absl::IsCancelled(status)) return kExitOk;
      err_ << "error: " << status.message() << "\n";
      return kExitFailure;
    }
    return BuildScheduler();
  }

  int BuildScheduler() {
    identity_ = options_.identity.empty() ? DefaultLeaderIdentity() : options_.identity;
    client::ApiBinderOptions binder_options;
    binder_options.may_send = [this] { return MayBind(); };
    binder_ = std::make_unique<client::ApiBinder>(rest_.get(), std::move(binder_options));
    volume_binder_ = std::make_unique<client::ApiVolumeBinder>(rest_.get());
    claim_writer_ = std::make_unique<client::ApiClaimStatusWriter>(rest_.get());
    deleter_ = std::make_unique<client::ApiPodDeleter>(rest_.get());
    status_writer_ = std::make_unique<client::PodStatusWriter>(rest_.get());
    client::EventRecorderOptions event_options;
    event_options.reporting_instance = identity_;
    events_ = std::make_unique<client::EventRecorder>(rest_.get(), &clock_, event_options);
    events_->Start();
    status_queue_ = std::make_unique<client::AsyncWriter>(4096);
    status_queue_->Start();
    reporter_ = std::make_unique<ApiReporter>(events_.get(), status_writer_.get(),
                                              status_queue_.get(), &clock_);
    pod_group_status_ =
        std::make_unique<client::ApiPodGroupStatusWriter>(rest_.get(), status_queue_.get());
    bind_pool_ = std::make_unique<BindWorkerPool>(options_.bind_workers);

    SchedulerDeps deps;
    deps.clock = &clock_;
    deps.binder = binder_.get();
    deps.bind_executor = bind_pool_.get();
    deps.observer = reporter_.get();
    deps.threads = options_.threads > 0 ? options_.threads : DefaultFilterThreads();
    deps.deleter = deleter_.get();
    deps.volume_binder = volume_binder_.get();
    deps.claim_writer = claim_writer_.get();
    deps.pod_group_status = pod_group_status_.get();
    deps.may_bind = [this] { return MayBind(); };
    instrumentation_->Instrument(deps);
    auto scheduler = Scheduler::Create(config_, deps);
    if (!scheduler.ok()) {
      err_ << "error: " << scheduler.status().message() << "\n";
      return kExitUsage;
    }
    scheduler_ = *std::move(scheduler);
    instrumentation_->state().AttachScheduler(scheduler_.get());

    client::InformerOptions informer_options;
    informer_options.reflector.resync_interval = options_.relist_interval;
    // The informers watch ConfigMaps in one namespace: that of the queue ConfigMap
    // (queues.configMap) or of the policy ConfigMap (policyConfigMap), the ones the scheduler acts
    // on, else the scheduler's own (its lease's). RBAC must let kubesched get/list/watch
    // ConfigMaps there.
    const config::ObjectRef& queues_map = config_.queues.config_map;
    const config::ObjectRef& policies_map = config_.policy_config_map;
    if (!queues_map.empty() && !policies_map.empty() &&
        queues_map.namespace_name != policies_map.namespace_name) {
      err_ << "error: policyConfigMap.namespace (" << policies_map.namespace_name
           << ") must be queues.configMap's (" << queues_map.namespace_name
           << "): kubesched watches ConfigMaps in one namespace\n";
      return kExitUsage;
    }
    informer_options.scheduler_namespace = !queues_map.empty() ? queues_map.namespace_name
                                           : !policies_map.empty()
                                               ? policies_map.namespace_name
                                               : config_.leader_election.resource_namespace;
    ledger_ =
        std::make_unique<LedgerSync>(rest_.get(), &scheduler_->quota(), LedgerConfigMap(config_),
                                     config_.queues.ledger_interval);
    informers_ =
        std::make_unique<client::Informers>(rest_.get(), scheduler_.get(), informer_options);
    instrumentation_->state().AttachInformers(informers_.get());
    std::string_view consumer;
    if (std::optional<absl::Duration> interval = scheduler_->NodeMetricsPollInterval(&consumer)) {
      metrics_poller_ =
          std::make_unique<client::MetricsPoller>(rest_.get(), scheduler_.get(), *interval);
      LogInfo(absl::StrCat(util::Absl(consumer), ": polling node metrics every ",
                           absl::FormatDuration(*interval)));
    }
    return kExitOk;
  }

  HealthChecks Checks() {
    HealthChecks checks;
    checks.live = [] { return std::string(); };
    // A standby is ready too: it has a warm cache and takes over as soon as it leads.
    checks.ready = [this] {
      return informers_->HasSynced() ? std::string() : std::string("informers not synced");
    };
    return checks;
  }

  bool StartHealth() {
    if (options_.health_bind_address.empty()) return true;
    auto health = HealthServer::Start(options_.health_bind_address, Checks());
    if (!health.ok()) {
      err_ << "error: " << health.status().message() << "\n";
      return false;
    }
    health_ = *std::move(health);
    LogInfo(absl::StrCat("health probes on port ", health_->port()));
    return true;
  }

  // /metrics, served while leading and on standby alike (as upstream).
  bool StartMetrics() {
    if (options_.metrics_bind_address.empty()) return true;
    auto server = metrics::MetricsServer::Start(options_.metrics_bind_address,
                                                instrumentation_->collectables());
    if (!server.ok()) {
      err_ << "error: " << server.status().message() << "\n";
      return false;
    }
    metrics_server_ = *std::move(server);
    LogInfo(absl::StrCat("metrics on port ", metrics_server_->port()));
    return true;
  }

  // The certificate and the review connections, before connecting: a bad file is a usage error.
  int PrepareServing() {
    if (options_.serving.secure_port == 0) return kExitOk;
    absl::StatusOr<PreparedServing> prepared = PrepareSecureServing(options_.serving);
    if (!prepared.ok()) {
      err_ << "error: " << prepared.status().message() << "\n";
      return absl::IsFailedPrecondition(prepared.status()) ? kExitFailure : kExitUsage;
    }
    prepared_serving_ = *std::move(prepared);
    return kExitOk;
  }

  // /healthz, /livez, /readyz, /metrics and /configz over HTTPS, while leading and on standby.
  bool StartSecureServing() {
    if (!prepared_serving_.has_value()) {
      LogInfo("secure serving disabled (--secure-port 0)");
      return true;
    }
    ServingContent content;
    content.checks = Checks();
    content.metrics_text = [instrumentation = instrumentation_.get()] {
      return metrics::ScrapeText(instrumentation->collectables());
    };
    content.configz_json = serving::ConfigzJson(config_);
    const std::string source = prepared_serving_->certificate_source;
    auto serving = SecureServing::Start(options_.serving, *std::move(prepared_serving_),
                                        main_connection_, std::move(content));
    prepared_serving_.reset();
    if (!serving.ok()) {
      err_ << "error: " << serving.status().message() << "\n";
      return false;
    }
    secure_serving_ = *std::move(serving);
    LogInfo(absl::StrCat("secure serving (bind address ", options_.serving.bind_address,
                         ", certificate: ", source, ") on port ", secure_serving_->port()));
    return true;
  }

  void StartLeaderElection() {
    LeaderElectionConfig election;
    election.namespace_name = config_.leader_election.resource_namespace;
    election.name = config_.leader_election.resource_name;
    election.identity = identity_;
    election.lease_duration = config_.leader_election.lease_duration;
    election.renew_deadline = config_.leader_election.renew_deadline;
    election.retry_period = config_.leader_election.retry_period;
    elector_ = std::make_unique<LeaderElector>(rest_.get(), election);
    LogInfo(absl::StrCat("campaigning for lease ", election.namespace_name, "/", election.name,
                         " as ", identity_));
    election_thread_ = std::jthread([this] {
      LeaderCallbacks callbacks;
      callbacks.on_started_leading = [this] {
        LogInfo("became the leader; scheduling");
        StartScheduling();
      };
      callbacks.on_stopped_leading = [this] {
        leading_.store(false, std::memory_order_release);
        if (!stop_.stop_requested()) {
          LogWarning("lost the leader lease; stopping at once");
          lost_lease_ = true;
          stop_.request_stop();
        }
      };
      callbacks.on_leading_status = [this](bool leading) {
        instrumentation_->metrics().SetLeaderStatus(config_.leader_election.resource_name, leading);
      };
      callbacks.on_new_leader = [this](const std::string& leader) {
        if (leader != identity_) LogInfo(absl::StrCat("the leader is ", leader));
      };
      // Stopped by Shutdown (not by the stop request itself): the lease is kept, and renewed,
      // while binds drain and the budget ledger is written, and released on the way out.
      elector_->Run(election_stop_.get_token(), callbacks);
    });
  }

  // Called on the main thread, or on the election thread when it wins the lease; never after
  // Shutdown has taken the thread. Neither waits here for the network: the ledger thread reads
  // the budget ledger (then writes it every queues.ledgerInterval; Shutdown writes it once more),
  // and the scheduling thread waits for that before its first cycle.
  void StartScheduling() {
    std::lock_guard<std::mutex> lock(scheduling_mu_);
    if (stop_.stop_requested()) return;
    leading_.store(true, std::memory_order_release);
    ledger_thread_ = std::jthread([this] { ledger_->Run(stop_.get_token(), leading_); });
    scheduling_thread_ = std::jthread([this] {
      if (!ledger_->WaitForImport(stop_.get_token())) return;
      SchedulingLoop(
          *scheduler_, leading_, [this] { return MayBind(); }, *bind_pool_, BindBacklog(),
          [this] {
            scheduler_->Housekeep();
            reporter_->RetryUnwrittenReasons();
          },
          stop_.get_token());
    });
  }

  void StopScheduling() {
    std::jthread thread;
    {
      std::lock_guard<std::mutex> lock(scheduling_mu_);
      leading_.store(false, std::memory_order_release);
      thread = std::move(scheduling_thread_);
    }
    if (thread.joinable()) thread.join();
  }

  // Ends the ledger thread (its wait ends with the stop request); true when this process led and
  // read the ledger, so its final write is due.
  bool StopLedger() {
    std::jthread thread;
    {
      std::lock_guard<std::mutex> lock(scheduling_mu_);
      thread = std::move(ledger_thread_);
    }
    if (!thread.joinable()) return false;
    thread.join();
    return ledger_->Imported();
  }

  void WaitForStop() { util::SleepFor(stop_.get_token(), absl::InfiniteDuration()); }

  // The fence every bind passes, before its binding cycle starts and before each POST: we lead,
  // are not stopping, and (with leader election) renewed the lease within the renew deadline, so
  // that no other replica can have taken it over (its lease duration is longer).
  bool MayBind() const {
    if (!leading_.load(std::memory_order_acquire) || stop_.stop_requested()) return false;
    return elector_ == nullptr || elector_->RenewedWithin(config_.leader_election.renew_deadline);
  }

  // Binds queued or running before the scheduling thread waits: enough to keep every worker busy.
  size_t BindBacklog() const { return static_cast<size_t>(options_.bind_workers) * 2; }

  // The order matters: stop taking pods and starting binds (the stop request closes MayBind's
  // fence), give the binds already sent the grace to finish, write the ledger, and only then give
  // the lease up, so that the next leader never binds while we still do.
  int Shutdown() {
    stop_.request_stop();
    StopScheduling();
    if (lost_lease_) {
      // Another replica may already lead: exit now, as upstream does, rather than finish binds
      // and writes on behalf of a leadership we no longer hold.
      err_.flush();
      std::_Exit(kExitFailure);
    }
    // A bind still waiting for its volumes to be bound (up to bindTimeoutSeconds) gives up now.
    if (scheduler_ != nullptr) scheduler_->cache().StopStorageWaits();
    const bool binds_done = bind_pool_ == nullptr || bind_pool_->WaitIdle(options_.shutdown_grace);
    // The last ledger write: after the binds, while we still hold the lease (the elector renews
    // it until told to stop below). Not when the ledger was never read (stopped first): that
    // would overwrite it with less than it holds; not when the lease was lost meanwhile.
    if (StopLedger() && (elector_ == nullptr || elector_->IsLeader())) ledger_->Write();
    if (!binds_done) return AbandonBinds();
    election_stop_.request_stop();
    if (election_thread_.joinable()) election_thread_.join();  // releases the lease
    StopWriters();
    LogInfo("stopped");
    return kExitOk;
  }

  // Binds still sent after the grace: exit without releasing the lease. The next leader waits it
  // out (leaseDuration), by which time the last answers have come back or never will.
  int AbandonBinds() {
    LogWarning(absl::StrCat(bind_pool_->InFlight(), " bind(s) still in flight after the ",
                            absl::FormatDuration(options_.shutdown_grace),
                            " shutdown grace; exiting without releasing the lease, which expires "
                            "on its own"));
    StopWriters();
    LogInfo("stopped");
    err_.flush();
    std::_Exit(kExitOk);
  }

  void StopWriters() {
    if (status_queue_ != nullptr) status_queue_->Stop(absl::Seconds(2));
    if (events_ != nullptr) events_->Stop(absl::Seconds(2));
    if (metrics_poller_ != nullptr) metrics_poller_->Stop();
    if (informers_ != nullptr) informers_->Stop();
  }

  const RunOptions& options_;
  const config::Configuration config_;
  std::ostream& err_;
  util::RealClock clock_;
  std::stop_source stop_;
  std::stop_source election_stop_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> lost_lease_{false};
  std::string identity_;

  // Before everything that records into it (the REST client's callback, the scheduler).
  std::unique_ptr<metrics::Instrumentation> instrumentation_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<client::ApiBinder> binder_;
  std::unique_ptr<client::ApiVolumeBinder> volume_binder_;
  std::unique_ptr<client::ApiClaimStatusWriter> claim_writer_;
  std::unique_ptr<client::ApiPodDeleter> deleter_;
  std::unique_ptr<client::PodStatusWriter> status_writer_;
  // Its writes run on status_queue_, which goes first.
  std::unique_ptr<client::ApiPodGroupStatusWriter> pod_group_status_;
  std::unique_ptr<client::EventRecorder> events_;
  std::unique_ptr<client::AsyncWriter> status_queue_;
  std::unique_ptr<ApiReporter> reporter_;
  std::unique_ptr<Scheduler> scheduler_;
  // After the scheduler: its queued binding cycles call into the scheduler, so it goes first.
  std::unique_ptr<BindWorkerPool> bind_pool_;
  std::unique_ptr<client::Informers> informers_;
  // Feeds the scheduler's cache like the informers; stopped before the scheduler goes.
  std::unique_ptr<client::MetricsPoller> metrics_poller_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<LeaderElector> elector_;
  std::jthread election_thread_;
  // The budget ledger's ConfigMap kept in step with the quota tracker. Only the leader reads and
  // writes it, on ledger_thread_.
  std::unique_ptr<LedgerSync> ledger_;
  std::mutex scheduling_mu_;
  std::jthread ledger_thread_;                       // guarded by scheduling_mu_
  std::jthread scheduling_thread_;                   // guarded by scheduling_mu_
  std::optional<PreparedServing> prepared_serving_;  // until the secure port starts
  client::RestConfig main_connection_;               // the reviews' default connection
  // Last, so destroyed first: no scrape reads the scheduler or the informers once they go.
  std::unique_ptr<SecureServing> secure_serving_;
  std::unique_ptr<metrics::MetricsServer> metrics_server_;
};

}  // namespace

int RunScheduler(const RunOptions& options, std::ostream& err) {
  std::optional<config::Configuration> config = LoadRunConfiguration(options, err);
  if (!config.has_value()) return kExitUsage;
  Runner runner(options, *std::move(config), err);
  return runner.Run();
}

}  // namespace kubesched::scheduler
