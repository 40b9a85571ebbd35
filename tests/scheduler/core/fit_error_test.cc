#include "scheduler/core/fit_error.h"

#include <catch2/catch.hpp>

namespace kubesched::scheduler {
namespace {

using framework::Status;

Status Stamped(Status status, std::string_view plugin) {
  status.set_plugin(plugin);
  return status;
}

TEST_CASE("the message counts each reason over nodes and sorts the parts as text", "[scheduler]") {
  FitError error;
  error.num_all_nodes = 5;
  for (int i = 0; i < 3; ++i)
    error.node_statuses.push_back({nullptr, Status::Unschedulable("Insufficient cpu")});
  for (int i = 0; i < 2; ++i) {
    error.node_statuses.push_back(
        {nullptr, Status::Unresolvable("node(s) had untolerated taint(s)")});
  }
  CHECK(error.Message() ==
        "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu.");
}

TEST_CASE("a node with several reasons counts once per reason", "[scheduler]") {
  FitError error;
  error.num_all_nodes = 1;
  Status status = Status::Unschedulable("Insufficient cpu");
  status.AddReason("Insufficient memory");
  error.node_statuses.push_back({nullptr, status});
  CHECK(error.Message() == "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.");
}

TEST_CASE("a PreFilter rejection replaces the per-node reasons", "[scheduler]") {
  FitError error;
  error.num_all_nodes = 3;
  error.pre_filter_status = Stamped(Status::Unresolvable("pod affinity terms conflict"), "X");
  error.node_statuses.push_back({nullptr, Status::Unschedulable("Insufficient cpu")});
  CHECK(error.Message() == "0/3 nodes are available: pod affinity terms conflict.");
}

TEST_CASE("the post-filter message follows with its own period", "[scheduler]") {
  FitError error;
  error.num_all_nodes = 1;
  error.node_statuses.push_back({nullptr, Status::Unschedulable("Insufficient cpu")});
  error.post_filter_message =
      "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.";
  CHECK(error.Message() ==
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No "
        "preemption victims found for incoming pod..");
}

TEST_CASE("rejecting plugins are listed once each", "[scheduler]") {
  FitError error;
  error.node_statuses.push_back({nullptr, Stamped(Status::Unschedulable("a"), "NodeResourcesFit")});
  error.node_statuses.push_back({nullptr, Stamped(Status::Unschedulable("b"), "TaintToleration")});
  error.node_statuses.push_back({nullptr, Stamped(Status::Unschedulable("a"), "NodeResourcesFit")});
  CHECK(error.RejectingPlugins() ==
        std::vector<std::string>{"NodeResourcesFit", "TaintToleration"});
}

TEST_CASE("Summarize gives the message and the rejecting plugins from one pass", "[scheduler]") {
  FitError error;
  error.num_all_nodes = 4;
  error.node_statuses.push_back({nullptr, Stamped(Status::Unschedulable("a"), "NodeResourcesFit")});
  error.node_statuses.push_back({nullptr, Stamped(Status::Unresolvable("b"), "TaintToleration")});
  error.node_statuses.push_back({nullptr, Stamped(Status::Unschedulable("a"), "NodeResourcesFit")});
  error.post_filter_message = "preemption: none";
  const FitError::Summary summary = error.Summarize();
  CHECK(summary.message == error.Message());
  CHECK(summary.message == "0/4 nodes are available: 1 b, 2 a. preemption: none.");
  CHECK(summary.rejecting_plugins == error.RejectingPlugins());

  // A PreFilter rejection: its plugin comes first, and its message replaces the histogram.
  error.pre_filter_status = Stamped(Status::Unresolvable("conflict"), "InterPodAffinity");
  const FitError::Summary pre = error.Summarize();
  CHECK(pre.message == "0/4 nodes are available: conflict. preemption: none.");
  CHECK(pre.rejecting_plugins ==
        std::vector<std::string>{"InterPodAffinity", "NodeResourcesFit", "TaintToleration"});
}

TEST_CASE("reasons repeated over a run of nodes count as node by node", "[scheduler]") {
  // The same texts at other addresses: a run ends where the address changes, and the counts join.
  const std::string cpu_copy = "Insufficient cpu";
  const std::string taint_copy = "node(s) had untolerated taint(s)";
  Status both = Status::Unschedulable("Insufficient cpu");
  both.AddReason("node(s) had untolerated taint(s)");
  Status both_copied = Status::Unschedulable(cpu_copy);
  both_copied.AddReason(taint_copy);
  const std::vector<Status> statuses = {Status::Unschedulable("Insufficient cpu"),
                                        Status::Unschedulable("Insufficient cpu"),
                                        Status(),  // a node that fits ends a run and counts nothing
                                        Status::Unschedulable("Insufficient cpu"),
                                        Status::Unschedulable(cpu_copy),
                                        Status::Unschedulable(cpu_copy),
                                        both,
                                        both,
                                        both_copied,
                                        Status::Unresolvable(taint_copy),
                                        Status::Unschedulable("Insufficient cpu")};
  FitError error;
  error.num_all_nodes = static_cast<int>(statuses.size());
  for (const Status& status : statuses) error.node_statuses.push_back({nullptr, status});
  CHECK(error.Message() ==
        "0/11 nodes are available: 4 node(s) had untolerated taint(s), 9 Insufficient cpu.");
  CHECK(error.Summarize().message == error.Message());
}

}  // namespace
}  // namespace kubesched::scheduler
