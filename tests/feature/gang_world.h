#pragma once

// The scheduler on the embedded cluster with a virtual clock, and pods that form groups: what the
// gang feature tests drive.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"
#include "tests/testing/scheduler_world.h"

namespace kubesched::scheduler::gang_testing {

using testing::NodeBuilder;
using testing::PodBuilder;

// What the tests read: the last FailedScheduling message, the nodes pods were bound to and
// the pods deleted (preemption victims).
class Observer : public SchedulingObserver {
 public:
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    messages[pod.key] = message;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.key] = node;
  }
  void OnEvicted(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                 const std::string&) override {
    evicted[victim.key] = preemptor.key;
  }
  std::map<std::string, std::string> messages, bound, evicted;
};

inline config::Configuration ParseConfig(const std::string& extra = "") {
  auto parsed = config::ParseConfiguration(absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", extra));
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

struct World : testing::SchedulerWorld {
  Observer observer;

  explicit World(const config::Configuration& config = ParseConfig()) {
    SchedulerDeps deps;
    deps.observer = &observer;
    deps.threads = 1;
    deps.deleter = &cluster;
    deps.pod_group_status = &cluster;
    Start(config, deps);
  }
  void Nodes(int count, const std::string& cpu) {
    for (int i = 0; i < count; ++i) {
      Add(NodeBuilder(absl::StrCat("n", i)).Capacity({{"cpu", cpu}, {"pods", "110"}}).Build());
    }
  }
  // As Run, but the clock stands still: pods waiting at Permit keep waiting.
  void RunWithoutTimers() {
    for (;;) {
      cluster.DeliverEvents();
      scheduler->queue().FlushBackoffCompleted();
      if (scheduler->ScheduleOne()) {
        binds.RunPending();
        continue;
      }
      if (binds.RunPending() == 0 && !cluster.HasPendingEvents()) return;
    }
  }
  int Bound(const std::string& prefix) const {
    int n = 0;
    for (const auto& [key, node] : observer.bound) n += key.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }
  std::string Message(const std::string& key) { return observer.messages[key]; }
};

// A member of the implicit group `group` (annotations) asking for `cpu`.
// A configuration whose one queue, root.ml, has `max` (a YAML flow mapping's body: cpu: "4").
inline config::Configuration MlQueue(const std::string& max) {
  return ParseConfig(absl::StrCat("queues:\n  tree:\n  - name: ml\n    max: {", max, "}\n"));
}

// `pod`, labelled for `queue`.
inline api::Pod InQueue(api::Pod pod, const std::string& queue) {
  pod.meta.labels.Set(api::Intern(quota::kQueueLabel), api::Intern(queue));
  return pod;
}

inline api::Pod Member(const std::string& name, const std::string& group, int min_member,
                       const std::string& cpu = "1") {
  return PodBuilder(name)
      .Container({{"cpu", cpu}})
      .Annotation(framework::kPodGroupAnnotation, group)
      .Annotation(framework::kPodGroupMinMemberAnnotation, std::to_string(min_member))
      .Build();
}

inline api::PodGroup Group(const std::string& name, int min_member) {
  api::PodGroup group;
  group.meta.name = name;
  group.meta.namespace_name = "default";
  group.meta.namespace_symbol = api::Intern("default");
  group.min_member = min_member;
  return group;
}

}  // namespace kubesched::scheduler::gang_testing
