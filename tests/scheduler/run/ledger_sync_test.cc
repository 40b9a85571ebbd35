#include "scheduler/run/ledger_sync.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "config/queues.h"
#include "scheduler/client/ledger_store.h"
#include "scheduler/quota/ledger_json.h"
#include "scheduler/util/clock.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::scheduler {
namespace {

using client::HttpRequest;
using client::HttpResponse;
using testing::FakeTransport;

constexpr char kBudget[] = R"(
tree:
- name: research
  budget: {nvidia.com/gpu: 1000h, period: 168h}
)";

config::QueuesConfig Queues(const std::string& yaml) {
  auto parsed = config::ParseQueuesDocument(yaml);
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

const config::ObjectRef kWhere{"kube-system", "ledger"};

std::vector<std::string> Methods(const FakeTransport& transport) {
  std::vector<std::string> methods;
  for (const HttpRequest& request : transport.requests()) methods.push_back(request.method);
  return methods;
}

TEST_CASE("the ledger ConfigMap defaults to kubesched-queue-ledger in the lease's namespace",
          "[run]") {
  config::Configuration config = config::DefaultConfiguration();
  config.leader_election.resource_namespace = "sched";
  CHECK(LedgerConfigMap(config).namespace_name == "sched");
  CHECK(LedgerConfigMap(config).name == "kubesched-queue-ledger");
  config.queues.ledger = {"budgets", "gpu-hours"};
  CHECK(LedgerConfigMap(config).namespace_name == "budgets");
  CHECK(LedgerConfigMap(config).name == "gpu-hours");
}

TEST_CASE("LedgerSync imports the stored ledger into the quota tracker", "[run]") {
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  quota::QuotaTracker tracker(&clock, Queues(kBudget));
  quota::Ledger stored;
  stored.written_at = clock.Now();
  stored.entries.push_back({"root.research", "nvidia.com/gpu", 7200, clock.Now()});
  FakeTransport transport;
  transport.OnDo([&](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{
        200, client::LedgerStore::CreateBody("kube-system", "ledger", quota::EncodeLedger(stored))};
  });
  LedgerSync sync(&transport, &tracker, kWhere, absl::Hours(1));
  std::atomic<bool> leading{true};
  std::jthread ledger_thread([&](std::stop_token stop) { sync.Run(stop, leading); });

  std::stop_source never;
  REQUIRE(sync.WaitForImport(never.get_token()));
  CHECK(sync.Imported());
  const quota::Ledger exported = tracker.ExportLedger();
  REQUIRE(exported.entries.size() == 1);
  CHECK(exported.entries[0].used_unit_seconds == 7200);
}

TEST_CASE("WaitForImport gives up when stopped before the ledger was read", "[run]") {
  util::FakeClock clock;
  quota::QuotaTracker tracker(&clock, Queues(kBudget));
  FakeTransport transport;
  LedgerSync sync(&transport, &tracker, kWhere, absl::Hours(1));
  std::stop_source stop;
  stop.request_stop();
  CHECK_FALSE(sync.WaitForImport(stop.get_token()));
  CHECK_FALSE(sync.Imported());
}

TEST_CASE("LedgerSync creates no ConfigMap while no queue has a budget", "[run]") {
  util::FakeClock clock;
  quota::QuotaTracker tracker(&clock, Queues("tree: [{name: plain}]"));
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{404, R"({"kind":"Status","reason":"NotFound"})"};
  });
  LedgerSync sync(&transport, &tracker, kWhere, absl::Hours(1));
  {
    std::atomic<bool> leading{true};
    std::jthread ledger_thread([&](std::stop_token stop) { sync.Run(stop, leading); });
    std::stop_source never;
    REQUIRE(sync.WaitForImport(never.get_token()));
  }
  sync.Write();
  CHECK(Methods(transport) == std::vector<std::string>{"GET"});
}

TEST_CASE("LedgerSync keeps a ConfigMap it has read current, budgets or not", "[run]") {
  util::FakeClock clock;
  quota::QuotaTracker tracker(&clock, Queues("tree: [{name: plain}]"));
  FakeTransport transport;
  transport.OnDo([](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
    if (request.method == "PATCH") return HttpResponse{200, "{}"};
    return HttpResponse{
        200, client::LedgerStore::CreateBody("kube-system", "ledger", quota::EncodeLedger({}))};
  });
  LedgerSync sync(&transport, &tracker, kWhere, absl::Hours(1));
  {
    std::atomic<bool> leading{true};
    std::jthread ledger_thread([&](std::stop_token stop) { sync.Run(stop, leading); });
    std::stop_source never;
    REQUIRE(sync.WaitForImport(never.get_token()));
  }
  sync.Write();
  CHECK(Methods(transport) == std::vector<std::string>{"GET", "PATCH"});
}

}  // namespace
}  // namespace kubesched::scheduler
