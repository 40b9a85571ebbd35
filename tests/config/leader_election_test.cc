// leaderElection's validation, for the file and for the --leader-elect* flags that override it.

#include <catch2/catch.hpp>

#include "absl/time/time.h"
#include "config/config.h"

namespace kubesched::config {
namespace {

TEST_CASE("upstream's leader election defaults pass validation", "[config][leader]") {
  CHECK_FALSE(CheckLeaderElection(LeaderElection{}).has_value());
}

TEST_CASE("overrides that break the lease's timing name the flag that did", "[config][leader]") {
  LeaderElection election;  // 15s lease, 10s renew deadline, 2s retry
  LeaderElectionOverrides overrides;
  overrides.renew_deadline = absl::Seconds(20);
  const absl::Status status = ApplyLeaderElectionOverrides(overrides, &election);
  CHECK(absl::IsInvalidArgument(status));
  CHECK(status.message() ==
        "leaderElection.leaseDuration (with the --leader-elect* flags applied): must be greater "
        "than renewDeadline (20s), got 15s");

  LeaderElection other;
  LeaderElectionOverrides short_lease;
  short_lease.lease_duration = absl::Seconds(5);
  CHECK(ApplyLeaderElectionOverrides(short_lease, &other).message() ==
        "--leader-elect-lease-duration: must be greater than renewDeadline (10s), got 5s");

  LeaderElection unnamed;
  LeaderElectionOverrides empty_name;
  empty_name.resource_name = "";
  CHECK(ApplyLeaderElectionOverrides(empty_name, &unnamed).message() ==
        "--leader-elect-resource-name: must not be empty");
}

TEST_CASE("with leader election off, its timings are not checked", "[config][leader]") {
  LeaderElection election;
  LeaderElectionOverrides overrides;
  overrides.leader_elect = false;
  overrides.retry_period = absl::ZeroDuration();
  CHECK(ApplyLeaderElectionOverrides(overrides, &election).ok());
  CHECK_FALSE(election.leader_elect);
  CHECK(election.retry_period == absl::ZeroDuration());
}

TEST_CASE("the file's leaderElection errors still name the field", "[config][leader]") {
  auto config = ParseConfiguration(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  resourceLock: endpoints
)");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message() ==
        "leaderElection.resourceLock: only \"leases\" is supported, got \"endpoints\"");
}

}  // namespace
}  // namespace kubesched::config
