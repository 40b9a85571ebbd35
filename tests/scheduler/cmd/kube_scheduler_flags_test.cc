// kube-scheduler's flags on `kubesched run`: the --leader-elect* flags override the
// configuration's leaderElection, --feature-gates warns about what kubesched does not do, flags
// without meaning here are accepted with a warning naming them, and the rest are clear errors.

#include "scheduler/cmd/kube_scheduler_flags.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "absl/time/time.h"
#include "config/config.h"

namespace kubesched::scheduler {
namespace {

struct Read {
  bool ok = false;
  RunOptions options;
  KubeSchedulerSettings settings;
  std::string err;
};

Read ReadFlags(std::vector<std::string> args) {
  Read r;
  std::ostringstream err;
  auto flags = ParseFlags(args, 0, {}, err, KubeSchedulerFlags());
  r.ok = flags.has_value() && ReadKubeSchedulerFlags(*flags, &r.options, &r.settings, err);
  r.err = err.str();
  return r;
}

constexpr std::string_view kConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 4s
  resourceName: from-file
  resourceNamespace: file-ns
)";

// The file's leaderElection with the flags applied.
config::LeaderElection Effective(const Read& r) {
  auto config = config::ParseConfiguration(kConfig);
  REQUIRE(config.ok());
  if (r.options.leader_elect) config->leader_election.leader_elect = *r.options.leader_elect;
  REQUIRE(config::ApplyLeaderElectionOverrides(r.options.leader_election, &config->leader_election)
              .ok());
  return config->leader_election;
}

TEST_CASE("without --leader-elect* flags the file's leaderElection stands", "[cli][flags]") {
  const Read r = ReadFlags({});
  REQUIRE(r.ok);
  const config::LeaderElection election = Effective(r);
  CHECK_FALSE(election.leader_elect);
  CHECK(election.lease_duration == absl::Seconds(30));
  CHECK(election.resource_name == "from-file");
}

TEST_CASE("each --leader-elect* flag overrides its leaderElection field", "[cli][flags]") {
  const Read r = ReadFlags(
      {"--leader-elect", "--leader-elect-lease-duration", "1m", "--leader-elect-renew-deadline=40s",
       "--leader-elect-retry-period", "5s", "--leader-elect-resource-lock", "leases",
       "--leader-elect-resource-name", "my-scheduler", "--leader-elect-resource-namespace=sched"});
  INFO(r.err);
  REQUIRE(r.ok);
  const config::LeaderElection election = Effective(r);
  CHECK(election.leader_elect);
  CHECK(election.lease_duration == absl::Minutes(1));
  CHECK(election.renew_deadline == absl::Seconds(40));
  CHECK(election.retry_period == absl::Seconds(5));
  CHECK(election.resource_lock == "leases");
  CHECK(election.resource_name == "my-scheduler");
  CHECK(election.resource_namespace == "sched");
  CHECK(r.settings.warnings.empty());
}

TEST_CASE("leader election is off with --leader-elect=false", "[cli][flags]") {
  const Read r = ReadFlags({"--leader-elect=false", "--leader-elect-resource-name", "x"});
  REQUIRE(r.ok);
  CHECK(r.options.leader_elect == false);
  CHECK_FALSE(Effective(r).leader_elect);
}

TEST_CASE("bad --leader-elect* values are errors naming the flag", "[cli][flags]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--leader-elect=maybe"}, "error: --leader-elect must be true or false, got \"maybe\""},
      {{"--leader-elect-lease-duration", "long"},
       "error: --leader-elect-lease-duration must be a duration such as 15s, got \"long\""},
      {{"--leader-elect-resource-lock", "endpointsleases"},
       "error: --leader-elect-resource-lock: only \"leases\" is supported"},
      {{"--logging-format", "xml"}, "error: --logging-format must be text or json, got \"xml\""},
      {{"--master", "ftp://api"}, "error: --master: "},
      {{"--write-config-to", "/tmp/c.yaml"}, "error: --write-config-to is not supported"},
      {{"--feature-gates", "Foo"}, "error: --feature-gates: \"Foo\" is not Name=true"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    const Read r = ReadFlags(c.args);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.err, Catch::StartsWith(c.message));
  }
}

TEST_CASE("the flags --logging-format and --master are read", "[cli][flags]") {
  const Read r = ReadFlags({"--logging-format=json", "--master", "https://10.0.0.1:6443"});
  REQUIRE(r.ok);
  CHECK(r.settings.log_format == util::LogFormat::kJson);
  CHECK(r.options.master == "https://10.0.0.1:6443");
  CHECK(ReadFlags({}).settings.log_format == util::LogFormat::kText);
}

TEST_CASE("feature gates: known ones kubesched follows pass silently, the rest are warned once",
          "[cli][flags]") {
  std::vector<std::string> warnings;
  REQUIRE(ParseFeatureGates(" SidecarContainers=true, DynamicResourceAllocation=true,", &warnings)
              .ok());
  CHECK(warnings.empty());
  REQUIRE(ParseFeatureGates("NoSuchGate=true,DynamicResourceAllocation=false,NoSuchGate=false",
                            &warnings)
              .ok());
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] == "--feature-gates: unknown feature gate \"NoSuchGate\"; ignored");
  CHECK(warnings[1] ==
        "--feature-gates: kubesched always behaves as with DynamicResourceAllocation=true; "
        "DynamicResourceAllocation=false is ignored");
}

TEST_CASE("a malformed feature gate list is an error", "[cli][flags]") {
  std::vector<std::string> warnings;
  for (std::string_view bad : {"Foo", "Foo=yes", "=true,", "A=true,B"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(ParseFeatureGates(bad, &warnings)));
  }
  CHECK(ParseFeatureGates("", &warnings).ok());
}

TEST_CASE("flags kubesched has no use for are accepted with a warning naming each",
          "[cli][flags]") {
  const Read r = ReadFlags({"--profiling", "--contention-profiling=false",
                            "--kube-api-content-type", "application/vnd.kubernetes.protobuf",
                            "--vmodule=x=2", "--requestheader-group-headers", "X-Remote-Group",
                            "--feature-gates=NoSuchGate=true"});
  INFO(r.err);
  REQUIRE(r.ok);
  const std::vector<std::string>& w = r.settings.warnings;
  // --contention-profiling=false is what kubesched does anyway: no warning.
  REQUIRE(w.size() == 5);
  CHECK_THAT(w[0], Catch::Contains("unknown feature gate \"NoSuchGate\""));
  CHECK_THAT(w[1], Catch::StartsWith("--profiling=true is accepted for kube-scheduler "
                                     "compatibility and ignored"));
  CHECK_THAT(w[2], Catch::StartsWith("--kube-api-content-type=application/vnd.kubernetes.protobuf "
                                     "is accepted"));
  CHECK_THAT(w[3], Catch::StartsWith("--vmodule=x=2 is accepted"));
  CHECK_THAT(w[4], Catch::StartsWith("--requestheader-group-headers is accepted"));
}

}  // namespace
}  // namespace kubesched::scheduler
