#pragma once

#include <string>
#include <vector>

#include "scheduler/framework/plugin.h"

namespace kubesched::scheduler {

// Why a pod fits no node, in the shape of upstream's FitError, so that the FailedScheduling
// message reads exactly like kube-scheduler's:
//   "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint(s)."
struct FitError {
  int num_all_nodes = 0;
  // Set when a PreFilter plugin rejected the pod: then no per-node reasons are listed.
  framework::Status pre_filter_status;
  // Every node that was filtered out, with its verdict (PostFilter plugins read these).
  std::vector<framework::NodeStatus> node_statuses;
  // Appended as " <message>." (preemption's own diagnosis).
  std::string post_filter_message;

  std::string Message() const;
  // Names of the plugins that rejected nodes (queue hints use them).
  std::vector<std::string> RejectingPlugins() const;
  // Both from one pass over the node statuses.
  struct Summary {
    std::string message;
    std::vector<std::string> rejecting_plugins;
  };
  Summary Summarize() const;
};

}  // namespace kubesched::scheduler
