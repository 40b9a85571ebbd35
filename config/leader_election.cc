// leaderElection: upstream's validation (component-base's leader election configuration), shared
// by the file's block and the --leader-elect* flags that override it.

#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

// The flag that overrides each field, for errors about a value a flag gave.
struct FieldFlag {
  std::string_view field;
  std::string_view flag;
  bool given;
};

}  // namespace

std::optional<LeaderElectionProblem> CheckLeaderElection(const LeaderElection& election) {
  if (!election.leader_elect) return std::nullopt;
  // The lease outlives the renew deadline, which outlives a retry.
  if (election.retry_period <= absl::ZeroDuration()) {
    return LeaderElectionProblem{"retryPeriod", "must be greater than 0"};
  }
  if (election.renew_deadline <= election.retry_period * 1.2) {
    return LeaderElectionProblem{
        "renewDeadline", absl::StrCat("must be greater than retryPeriod*1.2 (",
                                      absl::FormatDuration(election.retry_period * 1.2), "), got ",
                                      absl::FormatDuration(election.renew_deadline))};
  }
  if (election.lease_duration <= election.renew_deadline) {
    return LeaderElectionProblem{
        "leaseDuration", absl::StrCat("must be greater than renewDeadline (",
                                      absl::FormatDuration(election.renew_deadline), "), got ",
                                      absl::FormatDuration(election.lease_duration))};
  }
  if (election.resource_lock != "leases") {
    return LeaderElectionProblem{
        "resourceLock",
        absl::StrCat("only \"leases\" is supported, got \"", election.resource_lock, "\"")};
  }
  if (election.resource_name.empty())
    return LeaderElectionProblem{"resourceName", "must not be empty"};
  if (election.resource_namespace.empty()) {
    return LeaderElectionProblem{"resourceNamespace", "must not be empty"};
  }
  return std::nullopt;
}

absl::Status ApplyLeaderElectionOverrides(const LeaderElectionOverrides& overrides,
                                          LeaderElection* election) {
  if (overrides.leader_elect) election->leader_elect = *overrides.leader_elect;
  if (overrides.lease_duration) election->lease_duration = *overrides.lease_duration;
  if (overrides.renew_deadline) election->renew_deadline = *overrides.renew_deadline;
  if (overrides.retry_period) election->retry_period = *overrides.retry_period;
  if (overrides.resource_lock) election->resource_lock = *overrides.resource_lock;
  if (overrides.resource_name) election->resource_name = *overrides.resource_name;
  if (overrides.resource_namespace) election->resource_namespace = *overrides.resource_namespace;
  const std::optional<LeaderElectionProblem> problem = CheckLeaderElection(*election);
  if (!problem.has_value()) return absl::OkStatus();
  const FieldFlag flags[] = {
      {"leaseDuration", "--leader-elect-lease-duration", overrides.lease_duration.has_value()},
      {"renewDeadline", "--leader-elect-renew-deadline", overrides.renew_deadline.has_value()},
      {"retryPeriod", "--leader-elect-retry-period", overrides.retry_period.has_value()},
      {"resourceLock", "--leader-elect-resource-lock", overrides.resource_lock.has_value()},
      {"resourceName", "--leader-elect-resource-name", overrides.resource_name.has_value()},
      {"resourceNamespace", "--leader-elect-resource-namespace",
       overrides.resource_namespace.has_value()},
  };
  for (const FieldFlag& flag : flags) {
    if (flag.field == problem->field && flag.given) {
      return absl::InvalidArgumentError(
          absl::StrCat(util::Absl(flag.flag), ": ", problem->message));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("leaderElection.", util::Absl(problem->field),
                   " (with the --leader-elect* flags applied): ", problem->message));
}

}  // namespace kubesched::config
