#include "scheduler/run/leader_election.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/log.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::scheduler {
namespace {

using client::HttpRequest;
using client::HttpResponse;

constexpr char kLeases[] = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
constexpr char kLease[] = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched";
const absl::Time kStart = absl::FromUnixSeconds(1767323045);

struct LeaseSpec {
  std::string holder;
  int64_t duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  int64_t transitions = 0;
};

std::string StringOr(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

int64_t IntOr(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

// An in-memory Lease endpoint with the API server's optimistic concurrency: PUT must carry the
// current resourceVersion, POST fails when the lease exists. It also checks that updates keep the
// metadata the elector read (a label stands for all of it).
class FakeLeaseServer {
 public:
  explicit FakeLeaseServer(const util::Clock* clock) : clock_(clock) {}

  void Install(testing::FakeTransport& transport) {
    transport.OnDo([this](const HttpRequest& request) { return Handle(request); });
  }

  // Written by "another replica".
  void Set(const LeaseSpec& spec) {
    absl::MutexLock lock(&mu_);
    spec_ = spec;
    ++resource_version_;
  }
  std::optional<LeaseSpec> spec() const {
    absl::MutexLock lock(&mu_);
    return spec_;
  }
  void FailEverything(bool fail) {
    absl::MutexLock lock(&mu_);
    failing_ = fail;
  }
  // The next `n` PUTs lose a race against an invisible writer (409).
  void ConflictNextPuts(int n) {
    absl::MutexLock lock(&mu_);
    conflicts_ = n;
  }
  int puts() const {
    absl::MutexLock lock(&mu_);
    return puts_;
  }
  int creates() const {
    absl::MutexLock lock(&mu_);
    return creates_;
  }
  absl::Time last_write() const {
    absl::MutexLock lock(&mu_);
    return last_write_;
  }
  bool metadata_kept() const {
    absl::MutexLock lock(&mu_);
    return metadata_kept_;
  }

 private:
  absl::StatusOr<HttpResponse> Handle(const HttpRequest& request) {
    absl::MutexLock lock(&mu_);
    if (failing_) return absl::UnavailableError("connection refused");
    if (request.method == "GET" && request.target == kLease) {
      if (!spec_) return NotFound();
      return HttpResponse{200, Render()};
    }
    if (request.method == "POST" && request.target == kLeases) {
      ++creates_;
      if (spec_) return HttpResponse{409, Status(409, "leases \"kubesched\" already exists")};
      rapidjson::Document body;
      body.Parse(request.body.c_str());
      REQUIRE(body.IsObject());
      CHECK(StringOr(body, "apiVersion") == "coordination.k8s.io/v1");
      CHECK(StringOr(body, "kind") == "Lease");
      CHECK(StringOr(body["metadata"], "name") == "kubesched");
      CHECK(StringOr(body["metadata"], "namespace") == "kube-system");
      spec_ = SpecOf(body["spec"]);
      ++resource_version_;
      last_write_ = clock_->Now();
      return HttpResponse{201, Render()};
    }
    if (request.method == "PUT" && request.target == kLease) {
      ++puts_;
      if (!spec_) return NotFound();
      rapidjson::Document body;
      body.Parse(request.body.c_str());
      REQUIRE(body.IsObject());
      if (conflicts_ > 0) {
        --conflicts_;
        ++resource_version_;
        return HttpResponse{409, Status(409, "the object has been modified")};
      }
      if (StringOr(body["metadata"], "resourceVersion") != std::to_string(resource_version_)) {
        return HttpResponse{409, Status(409, "the object has been modified")};
      }
      const rapidjson::Value& metadata = body["metadata"];
      metadata_kept_ = metadata_kept_ && metadata.HasMember("labels") &&
                       StringOr(metadata["labels"], "keep") == "me";
      spec_ = SpecOf(body["spec"]);
      ++resource_version_;
      last_write_ = clock_->Now();
      return HttpResponse{200, Render()};
    }
    return HttpResponse{400, Status(400, "unexpected request")};
  }

  static LeaseSpec SpecOf(const rapidjson::Value& spec) {
    return {StringOr(spec, "holderIdentity"), IntOr(spec, "leaseDurationSeconds"),
            StringOr(spec, "acquireTime"), StringOr(spec, "renewTime"),
            IntOr(spec, "leaseTransitions")};
  }

  static std::string Status(int code, const std::string& message) {
    return absl::StrCat("{\"kind\":\"Status\",\"message\":\"", message, "\",\"code\":", code, "}");
  }
  static HttpResponse NotFound() {
    return {404, Status(404, "leases.coordination.k8s.io \"kubesched\" not found")};
  }

  std::string Render() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    client::JsonWriter json;
    json.BeginObject()
        .Field("apiVersion", "coordination.k8s.io/v1")
        .Field("kind", "Lease")
        .Key("metadata")
        .BeginObject()
        .Field("name", "kubesched")
        .Field("namespace", "kube-system")
        .Field("resourceVersion", std::to_string(resource_version_))
        .Key("labels")
        .BeginObject()
        .Field("keep", "me")
        .EndObject()
        .EndObject()
        .Key("spec")
        .BeginObject()
        .Field("holderIdentity", spec_->holder)
        .Field("leaseDurationSeconds", spec_->duration_seconds);
    if (!spec_->acquire_time.empty()) json.Field("acquireTime", spec_->acquire_time);
    if (!spec_->renew_time.empty()) json.Field("renewTime", spec_->renew_time);
    json.Field("leaseTransitions", spec_->transitions).EndObject().EndObject();
    return json.str();
  }

  const util::Clock* clock_;
  mutable absl::Mutex mu_;
  std::optional<LeaseSpec> spec_ ABSL_GUARDED_BY(mu_);
  int64_t resource_version_ ABSL_GUARDED_BY(mu_) = 100;
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  int conflicts_ ABSL_GUARDED_BY(mu_) = 0;
  int puts_ ABSL_GUARDED_BY(mu_) = 0;
  int creates_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_write_ ABSL_GUARDED_BY(mu_);
  bool metadata_kept_ ABSL_GUARDED_BY(mu_) = true;
};

// One candidate on a fake clock: waits advance the clock at once, and `on_wait` lets a test act
// between attempts (another replica renewing, the server failing...).
struct Candidate {
  Candidate(FakeLeaseServer& server, util::FakeClock& fake_clock, std::string identity,
            bool release_on_cancel = true)
      : clock(fake_clock) {
    server.Install(transport);
    LeaderElectionConfig config;
    config.identity = std::move(identity);
    config.release_on_cancel = release_on_cancel;
    elector.emplace(&transport, config, &clock,
                    [this](absl::Duration d, const std::stop_token& token) {
                      clock.Advance(d);
                      ++waits;
                      if (on_wait) on_wait();
                      if (waits > 1000) stop.request_stop();  // a broken test must still end
                      return !token.stop_requested();
                    });
    callbacks.on_started_leading = [this] {
      ++started;
      started_at = clock.Now();
      if (stop_when_leading) stop.request_stop();
    };
    callbacks.on_stopped_leading = [this] { ++stopped; };
    callbacks.on_new_leader = [this](const std::string& leader) { leaders.push_back(leader); };
    callbacks.on_leading_status = [this](bool leading) { statuses.push_back(leading); };
  }

  void Run() { elector->Run(stop.get_token(), callbacks); }

  util::FakeClock& clock;
  testing::FakeTransport transport;
  std::optional<LeaderElector> elector;
  LeaderCallbacks callbacks;
  std::stop_source stop;
  std::function<void()> on_wait;
  bool stop_when_leading = true;
  int waits = 0;
  int started = 0;
  int stopped = 0;
  absl::Time started_at;
  std::vector<std::string> leaders;
  std::vector<bool> statuses;  // what on_leading_status was told, in order
};

// Keeps expected warnings (failed attempts) out of the test output.
struct QuietLog {
  QuietLog() {
    util::SetLogSinkForTesting([](std::string_view, std::string_view) {});
  }
  ~QuietLog() { util::SetLogSinkForTesting({}); }
};

TEST_CASE("leader election creates the lease when there is none", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me", /*release_on_cancel=*/false);

  me.Run();

  CHECK(me.started == 1);
  CHECK(me.stopped == 1);
  CHECK(me.waits == 0);
  CHECK(me.leaders == std::vector<std::string>{"me"});
  CHECK(server.creates() == 1);
  const auto requests = me.transport.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].target == kLease);
  CHECK(requests[1].method == "POST");
  CHECK(requests[1].target == kLeases);
  CHECK(requests[1].content_type == "application/json");
  const LeaseSpec spec = *server.spec();
  CHECK(spec.holder == "me");
  CHECK(spec.duration_seconds == 15);
  CHECK(spec.transitions == 0);
  CHECK(spec.acquire_time == "2026-01-02T03:04:05.000000Z");
  CHECK(spec.renew_time == "2026-01-02T03:04:05.000000Z");
  CHECK_FALSE(me.elector->IsLeader());
  CHECK(me.elector->LeaderIdentity() == "me");
}

TEST_CASE("leader election stands by while another replica renews its lease", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  server.Set({"other", 15, "t0", "t0", 4});
  Candidate me(server, clock, "me");
  me.on_wait = [&] {
    // The other replica renews every time we look away.
    server.Set({"other", 15, "t0", client::FormatMicroTime(clock.Now()), 4});
    if (me.waits == 30) me.stop.request_stop();
  };

  me.Run();

  CHECK(me.started == 0);
  CHECK(me.stopped == 0);
  CHECK(clock.Now() - kStart > absl::Seconds(60));
  CHECK(server.puts() == 0);
  CHECK(me.leaders == std::vector<std::string>{"other"});
  CHECK(me.elector->LeaderIdentity() == "other");
  CHECK(server.spec()->holder == "other");
  CHECK(me.statuses == std::vector<bool>{false});  // a standby reports 0, never 1
}

TEST_CASE("leader election takes over once the lease expired by our own clock", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  // renewTime far in the past: a candidate trusting the server's timestamp would take over at
  // once. client-go counts from when it first saw this record, and so do we.
  server.Set({"other", 15, "2001-01-01T00:00:00.000000Z", "2001-01-01T00:00:00.000000Z", 4});
  Candidate me(server, clock, "me", /*release_on_cancel=*/false);

  me.Run();

  REQUIRE(me.started == 1);
  CHECK(me.started_at - kStart >= absl::Seconds(15));
  CHECK(me.started_at - kStart < absl::Seconds(15) + absl::Seconds(5));  // one jittered retry
  CHECK(server.puts() == 1);
  const LeaseSpec spec = *server.spec();
  CHECK(spec.holder == "me");
  CHECK(spec.transitions == 5);
  CHECK(spec.duration_seconds == 15);
  CHECK(spec.acquire_time == client::FormatMicroTime(me.started_at));
  CHECK(server.metadata_kept());
  CHECK(me.leaders == std::vector<std::string>{"other", "me"});
}

TEST_CASE("leader election retries after losing an update race (409)", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  server.Set({"", 1, "", "", 2});  // released by its last holder
  server.ConflictNextPuts(1);
  Candidate me(server, clock, "me", /*release_on_cancel=*/false);

  me.Run();

  CHECK(me.started == 1);
  CHECK(server.puts() == 2);
  CHECK(me.waits == 1);
  CHECK(server.spec()->holder == "me");
  CHECK(server.spec()->transitions == 3);
}

TEST_CASE("leader renewals keep acquireTime and advance renewTime", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me", /*release_on_cancel=*/false);
  me.stop_when_leading = false;
  me.on_wait = [&] {
    if (me.waits == 3) me.stop.request_stop();
  };

  me.Run();

  CHECK(me.started == 1);
  CHECK(me.stopped == 1);
  CHECK(server.puts() == 2);  // two renewals between the three waits
  const LeaseSpec spec = *server.spec();
  CHECK(spec.holder == "me");
  CHECK(spec.acquire_time == client::FormatMicroTime(kStart));
  CHECK(spec.renew_time == client::FormatMicroTime(kStart + absl::Seconds(4)));
  CHECK(spec.transitions == 0);
}

TEST_CASE("a leader that cannot renew within renewDeadline stops leading", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me");
  me.stop_when_leading = false;
  bool leader_during_outage = false;
  me.on_wait = [&] {
    if (me.waits == 3) server.FailEverything(true);
    if (me.waits > 3) leader_during_outage = leader_during_outage || me.elector->IsLeader();
  };

  me.Run();  // returns by itself

  CHECK(me.started == 1);
  CHECK(me.stopped == 1);
  CHECK_FALSE(me.stop.stop_requested());
  CHECK_FALSE(me.elector->IsLeader());
  CHECK(leader_during_outage);
  // Given up after renewDeadline, before the others may take over (leaseDuration).
  const absl::Duration since_last_renewal = clock.Now() - server.last_write();
  CHECK(since_last_renewal >= absl::Seconds(10));
  CHECK(since_last_renewal < absl::Seconds(15));
}

TEST_CASE("a leader whose lease was taken stops leading", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me");
  me.stop_when_leading = false;
  me.on_wait = [&] {
    if (me.waits >= 2) server.Set({"thief", 15, "x", client::FormatMicroTime(clock.Now()), 9});
  };

  me.Run();

  CHECK(me.started == 1);
  CHECK(me.stopped == 1);
  CHECK(me.leaders == std::vector<std::string>{"me", "thief"});
  CHECK(server.spec()->holder == "thief");  // releasing a lease we lost is a no-op
  // leader_election_master_status: 0 while campaigning, 1 while leading, 0 once it ended.
  CHECK(me.statuses == std::vector<bool>{false, true, false});
}

TEST_CASE("a leader that reads another holder gives up at once, not at its renew deadline",
          "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me");
  me.stop_when_leading = false;
  absl::Time taken_at;
  me.on_wait = [&] {
    if (me.waits == 2) {
      taken_at = clock.Now();
      server.Set({"thief", 15, "x", client::FormatMicroTime(clock.Now()), 9});
    }
  };

  me.Run();

  CHECK(me.stopped == 1);
  // The attempt that read the thief's lease was the last: no retries until renewDeadline.
  CHECK(me.waits == 2);
  CHECK(clock.Now() == taken_at);
  CHECK_FALSE(me.elector->RenewedWithin(absl::Hours(1)));
}

TEST_CASE("RenewedWithin closes as soon as the last renewal is older than the window", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me");
  me.stop_when_leading = false;
  std::vector<std::pair<absl::Duration, bool>> seen;  // since the last good renewal, open?
  absl::Time last_good;
  me.on_wait = [&] {
    if (me.waits == 3) {
      last_good = server.last_write();
      server.FailEverything(true);
    }
    if (me.waits >= 3 && me.elector->IsLeader()) {
      seen.emplace_back(clock.Now() - last_good, me.elector->RenewedWithin(absl::Seconds(10)));
    }
  };

  me.Run();

  REQUIRE(!seen.empty());
  for (const auto& [age, open] : seen) {
    INFO("renewed " << absl::FormatDuration(age) << " ago");
    CHECK(open == (age < absl::Seconds(10)));
  }
  CHECK(std::any_of(seen.begin(), seen.end(), [](const auto& s) { return s.second; }));
  // Still leader, not yet at its own deadline, but no longer fit to bind.
  CHECK(std::any_of(seen.begin(), seen.end(), [](const auto& s) { return !s.second; }));
}

TEST_CASE("stopping a leader releases the lease for an immediate successor", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  Candidate me(server, clock, "me");
  me.Run();
  REQUIRE(me.started == 1);
  CHECK(me.stopped == 1);

  LeaseSpec spec = *server.spec();
  CHECK(spec.holder == "");
  CHECK(spec.duration_seconds == 1);
  CHECK(spec.transitions == 0);
  CHECK(server.metadata_kept());

  Candidate successor(server, clock, "you");
  successor.Run();
  CHECK(successor.started == 1);
  CHECK(successor.waits == 0);  // no waiting out the old lease
  spec = *server.spec();
  CHECK(spec.transitions == 1);
}

TEST_CASE("Release is a no-op for a non-leader", "[writer]") {
  QuietLog quiet;
  util::FakeClock clock(kStart);
  FakeLeaseServer server(&clock);
  server.Set({"other", 15, "a", "r", 0});
  Candidate me(server, clock, "me");
  CHECK(me.elector->Release().ok());
  CHECK(server.puts() == 0);
}

TEST_CASE("leader election waits in real time are cut short by stop", "[writer]") {
  QuietLog quiet;
  util::RealClock clock;
  FakeLeaseServer server(&clock);
  server.Set({"other", 15, "a", "r", 0});
  testing::FakeTransport transport;
  server.Install(transport);
  LeaderElectionConfig config;
  config.identity = "me";
  LeaderElector elector(&transport, config);  // real clock, real waits of >= 2 s

  const absl::Time begin = absl::Now();
  std::jthread runner([&](std::stop_token stop) { elector.Run(stop, {}); });
  absl::SleepFor(absl::Milliseconds(50));
  runner.request_stop();
  runner.join();
  CHECK(absl::Now() - begin < absl::Seconds(1));
  CHECK_FALSE(elector.IsLeader());
}

TEST_CASE("leader election config is validated as client-go does", "[writer]") {
  LeaderElectionConfig config;
  CHECK(ValidateLeaderElectionConfig(config).ok());
  config.renew_deadline = absl::Seconds(15);
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(config)));
  config = {};
  config.retry_period = absl::Seconds(9);  // 9 * 1.2 > renewDeadline 10
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(config)));
  config = {};
  config.name = "a/b";
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(config)));
  config = {};
  config.retry_period = absl::ZeroDuration();
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(config)));
}

TEST_CASE("the default identity is hostname_uuid", "[writer]") {
  const std::string identity = DefaultLeaderIdentity();
  const size_t underscore = identity.rfind('_');
  REQUIRE(underscore != std::string::npos);
  CHECK(identity.size() - underscore - 1 == 36);
  CHECK(identity != DefaultLeaderIdentity());
}

}  // namespace
}  // namespace kubesched::scheduler
