#pragma once

// The fault suite's shared parts: a client for the test API server's objects, faults and stats,
// a random seed per run (printed, and taken from KUBESCHED_FAULT_SEED when set, so that a failure
// can be replayed), and the promises every case checks at its end:
//   - every pod of kubesched bound at most once (the server's per-pod bind count);
//   - no node holds more than its allocatable of any resource, nor more pods than it allows;
//   - every pending pod of kubesched says why (PodScheduled=False with a reason);
//   - no queue holds more than its max (RequireQueuesWithinMax, in the cases with queues).

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/framework/pod_info.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"
#include "tests/testing/wait.h"

namespace kubesched::faults {

class FaultApi : public testing::TestApiClient {
 public:
  using TestApiClient::TestApiClient;

  std::vector<api::Pod> Pods() { return List<api::Pod>("/api/v1/pods", "Pod"); }
  std::vector<api::Node> Nodes() { return List<api::Node>("/api/v1/nodes", "Node"); }

  template <typename T>
  std::vector<T> List(const std::string& target, std::string_view kind) {
    rapidjson::Document list = GetOk(target);
    std::vector<T> items;
    for (const rapidjson::Value& item : list["items"].GetArray()) {
      auto object = api::DecodeObjectValue(item, kind);
      REQUIRE(object.ok());
      items.push_back(std::get<T>(*std::move(object)));
    }
    return items;
  }

  void SetFaults(const std::string& json) {
    client::HttpResponse response = Send("POST", "/testapi/faults", json);
    INFO(response.body);
    REQUIRE(response.status == 200);
  }

  rapidjson::Document Stats() { return GetOk("/testapi/stats"); }

  void CreateNode(const std::string& name, int cpu, int max_pods = 110) {
    Create("/api/v1/nodes", absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")",
                                         name, R"(","labels":{"kubernetes.io/hostname":")", name,
                                         R"("}},"status":{"allocatable":{"cpu":")", cpu,
                                         R"(","memory":"64Gi","pods":")", max_pods, R"("}}})"));
  }

  // `queue` non-empty: the pod asks for that queue (label kubesched.io/queue).
  void CreatePod(const std::string& name, const std::string& cpu, const std::string& queue = "") {
    const std::string labels =
        queue.empty() ? "" : absl::StrCat(R"(,"labels":{"kubesched.io/queue":")", queue, R"("})");
    Create("/api/v1/namespaces/default/pods",
           absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                        R"(","namespace":"default")", labels,
                        R"(},"spec":{"schedulerName":"kubesched",)",
                        R"("containers":[{"name":"c","image":"busybox","resources":)",
                        R"({"requests":{"cpu":")", cpu, R"(","memory":"100Mi"}}}]}})"));
  }

  void CreatePods(const std::string& prefix, int count, const std::string& cpu,
                  const std::string& queue = "") {
    for (int i = 0; i < count; ++i) CreatePod(absl::StrCat(prefix, i), cpu, queue);
  }
};

// This run's seed: KUBESCHED_FAULT_SEED when set, else random; printed either way.
inline uint64_t SuiteSeed(std::string_view test) {
  uint64_t seed = 0;
  const char* fixed = std::getenv("KUBESCHED_FAULT_SEED");
  if (fixed == nullptr || !absl::SimpleAtoi(fixed, &seed)) seed = std::random_device{}();
  std::cerr << test << ": seed " << seed << " (replay with KUBESCHED_FAULT_SEED=" << seed << ")\n";
  return seed;
}

inline int CountBound(const std::vector<api::Pod>& pods) {
  int bound = 0;
  for (const api::Pod& pod : pods) {
    bound += pod.spec.scheduler_name == "kubesched" && !pod.spec.node_name.empty() ? 1 : 0;
  }
  return bound;
}

// Waits until at least `count` pods of kubesched are bound; the pods at the end.
inline std::vector<api::Pod> WaitForBound(FaultApi& api, int count, testing::ChildProcess& process,
                                          absl::Duration timeout = absl::Seconds(60)) {
  std::vector<api::Pod> pods;
  testing::RequireEventually(
      absl::StrCat(count, " pods of kubesched are bound"), process,
      [&] { return CountBound(pods = api.Pods()) >= count; }, timeout);
  return pods;
}

// No node holds more than its allocatable of any resource, or more pods than it allows.
inline void RequireNoOverCommit(const std::vector<api::Pod>& pods,
                                const std::vector<api::Node>& nodes) {
  std::map<std::string, api::ResourceList> used;
  std::map<std::string, int64_t> pod_counts;
  for (const api::Pod& pod : pods) {
    if (pod.spec.node_name.empty() || pod.IsTerminal()) continue;
    used[pod.spec.node_name].Add(framework::PodRequests(pod.spec, /*non_zero=*/false));
    ++pod_counts[pod.spec.node_name];
  }
  for (const api::Node& node : nodes) {
    const api::ResourceList& allocatable = node.status.allocatable;
    used[node.meta.name].ForEachNonZero([&](api::ResourceId id, int64_t amount) {
      INFO("node " << node.meta.name << ": " << api::ResourceName(id) << " " << amount << " of "
                   << allocatable.Get(id));
      CHECK(amount <= allocatable.Get(id));
    });
    INFO("node " << node.meta.name << " runs " << pod_counts[node.meta.name] << " pods");
    CHECK(pod_counts[node.meta.name] <= allocatable.Get(api::kPods));
  }
}

// The server bound no pod twice, and the pods bound now were bound once each.
inline void RequireBoundOnce(FaultApi& api, const std::vector<api::Pod>& pods) {
  rapidjson::Document stats = api.Stats();
  CHECK(stats["podsBoundMoreThanOnce"].GetInt64() == 0);
  const rapidjson::Value& by_uid = stats["bindsByPodUid"];
  for (const api::Pod& pod : pods) {
    if (pod.spec.node_name.empty() || !by_uid.HasMember(pod.meta.uid.c_str())) continue;
    INFO("pod " << pod.Key());
    CHECK(by_uid[pod.meta.uid.c_str()].GetInt64() == 1);
  }
}

// Every pending pod of kubesched has PodScheduled=False with a reason (status writes are
// asynchronous: waits up to 30 s).
inline void RequirePendingSayWhy(FaultApi& api, testing::ChildProcess& process) {
  std::string silent;
  testing::RequireEventually("every pending pod says why", process, [&] {
    silent.clear();
    for (const api::Pod& pod : api.Pods()) {
      if (pod.spec.scheduler_name != "kubesched" || !pod.spec.node_name.empty()) continue;
      bool says_why = false;
      for (const api::PodCondition& condition : pod.status.conditions) {
        says_why = says_why || (condition.type == "PodScheduled" && condition.status == "False" &&
                                !condition.reason.empty());
      }
      if (!says_why) absl::StrAppend(&silent, " ", pod.Key());
    }
    return silent.empty();
  });
}

// No queue holds more than its max: `max_by_queue` maps a queue's label value (kubesched.io/queue)
// to its max, as the test configured it. Pods bound and not finished count.
inline void RequireQueuesWithinMax(const std::vector<api::Pod>& pods,
                                   const std::map<std::string, api::ResourceList>& max_by_queue) {
  std::map<std::string, api::ResourceList> used;
  for (const api::Pod& pod : pods) {
    const std::optional<api::Symbol> queue = pod.meta.labels.Get(api::Intern("kubesched.io/queue"));
    if (pod.spec.node_name.empty() || pod.IsTerminal() || !queue) continue;
    used[std::string(api::SymbolText(*queue))].Add(
        framework::PodRequests(pod.spec, /*non_zero=*/false));
  }
  for (const auto& [queue, max] : max_by_queue) {
    const api::ResourceList& queue_used = used[queue];
    const std::string& queue_name = queue;  // clang 14 lambdas cannot capture a binding
    max.ForEachNonZero([&](api::ResourceId id, int64_t limit) {
      INFO("queue " << queue_name << ": " << api::ResourceName(id) << " " << queue_used.Get(id)
                    << " of max " << limit);
      CHECK(queue_used.Get(id) <= limit);
    });
  }
}

// All three promises, on the cluster as it is now.
inline void RequirePromisesKept(FaultApi& api, testing::ChildProcess& process) {
  const std::vector<api::Pod> pods = api.Pods();
  RequireNoOverCommit(pods, api.Nodes());
  RequireBoundOnce(api, pods);
  RequirePendingSayWhy(api, process);
}

// A configuration with a short lease in kube-system (3 s; renewDeadline 2 s), so that takeovers
// fit in a test.
inline std::string WriteShortLeaseConfig(const testapi::TestApiProcess& server) {
  const std::string path = server.dir() + "/short-lease.yaml";
  std::ofstream(path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\n"
                         "leaderElection:\n  leaderElect: true\n  leaseDuration: 3s\n"
                         "  renewDeadline: 2s\n  retryPeriod: 250ms\n"
                         "  resourceNamespace: kube-system\n  resourceName: kubesched\n";
  return path;
}

// A kubeconfig for `server` that authenticates with `token` (the server must accept it: start it
// with --token), so that the server's bind log tells replicas apart.
inline std::string WriteTokenKubeconfig(const testapi::TestApiProcess& server,
                                        const std::string& token) {
  const std::string path = server.dir() + "/kubeconfig-" + token;
  std::ofstream(path) << absl::StrCat(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ", server.url(),
      "\n    certificate-authority: ", server.ca_file(),
      "\nusers:\n- name: u\n  user:\n    token: ", token,
      "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n");
  return path;
}

// Every Binding the server handled (taken or refused), in order.
struct BindRecord {
  std::string by;
  int64_t at_micros = 0;
};

inline std::vector<BindRecord> BindLog(FaultApi& api) {
  rapidjson::Document stats = api.Stats();
  std::vector<BindRecord> log;
  for (const rapidjson::Value& bind : stats["bindLog"].GetArray()) {
    log.push_back({bind["by"].GetString(), bind["atMicros"].GetInt64()});
  }
  return log;
}

}  // namespace kubesched::faults
