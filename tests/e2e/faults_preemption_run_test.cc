// The fault suite, part two: preemption evicts what the preemptors need and no more (issue 24,
// item 6). Nodes full of low-priority pods, then high-priority pods that each need two of them
// gone. A preemptor whose victims are still terminating waits for them rather than preempting
// again elsewhere, so the victims number exactly what the preemptors need, with and without
// failed deletions and bindings. The victims carry a finalizer that the test removes once it sees
// them terminating, as a kubelet confirms a graceful deletion: they stay terminating for a while.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/fault_suite.h"

namespace kubesched::faults {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::RequireEventually;
using testing::StartKubeschedRun;

constexpr char kPods[] = "/api/v1/namespaces/default/pods";
constexpr int kNodes = 10;
constexpr int kLowPerNode = 8;   // of 1 cpu each: every node full
constexpr int kPreemptors = 20;  // of 2 cpu each
constexpr int kNeeded = 2 * kPreemptors;

void CreatePriorityClass(FaultApi& api, const std::string& name, int value) {
  api.Create("/apis/scheduling.k8s.io/v1/priorityclasses",
             absl::StrCat(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)",
                          R"("metadata":{"name":")", name, R"("},"value":)", value, "}"));
}

// `finalizer`: deleting the pod leaves it terminating until the finalizer is removed.
void CreatePod(FaultApi& api, const std::string& name, const std::string& priority_class,
               const std::string& cpu, bool finalizer) {
  api.Create(kPods, absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                                 R"(","namespace":"default")",
                                 finalizer ? R"(,"finalizers":["kubesched.test/kubelet"])" : "",
                                 R"(},"spec":{"schedulerName":"kubesched","priorityClassName":")",
                                 priority_class, R"(","containers":[{"name":"c",)",
                                 R"("image":"busybox","resources":{"requests":{"cpu":")", cpu,
                                 R"(","memory":"100Mi"}}}]}})"));
}

int CountWithPrefix(const std::vector<api::Pod>& pods, const std::string& prefix, bool bound) {
  int count = 0;
  for (const api::Pod& pod : pods) {
    count += absl::StartsWith(pod.meta.name, prefix) && (!bound || !pod.spec.node_name.empty());
  }
  return count;
}

// The kubelet's part of a graceful deletion: a terminating pod is confirmed gone.
void ConfirmTerminated(FaultApi& api, const std::vector<api::Pod>& pods) {
  for (const api::Pod& pod : pods) {
    if (!pod.meta.deletion_timestamp.has_value()) continue;
    (void)api.Send("PATCH", absl::StrCat(kPods, "/", pod.meta.name),
                   R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
  }
}

// Full nodes, then the preemptors (with `faults` set once the low pods run); every preemptor binds
// and exactly the pods they need were evicted.
void RequireExactEvictions(const std::string& faults) {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  FaultApi api(**server);
  CreatePriorityClass(api, "low", 0);
  CreatePriorityClass(api, "high", 1000);
  for (int i = 0; i < kNodes; ++i) api.CreateNode(absl::StrCat("node-", i), kLowPerNode);
  auto scheduler = StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(), .verbosity = 1});
  for (int i = 0; i < kNodes * kLowPerNode; ++i) {
    CreatePod(api, absl::StrCat("low-", i), "low", "1", /*finalizer=*/true);
  }
  WaitForBound(api, kNodes * kLowPerNode, *scheduler);

  if (!faults.empty()) api.SetFaults(faults);
  for (int i = 0; i < kPreemptors; ++i) {
    CreatePod(api, absl::StrCat("high-", i), "high", "2", /*finalizer=*/false);
  }
  std::vector<api::Pod> pods;
  RequireEventually("every preemptor is bound", *scheduler, [&] {
    pods = api.Pods();
    ConfirmTerminated(api, pods);
    return CountWithPrefix(pods, "high-", /*bound=*/true) == kPreemptors;
  });
  api.SetFaults("{}");
  // Victims that were still terminating when the last preemptor bound go now.
  RequireEventually("no pod is terminating", *scheduler, [&] {
    pods = api.Pods();
    ConfirmTerminated(api, pods);
    for (const api::Pod& pod : pods) {
      if (pod.meta.deletion_timestamp.has_value()) return false;
    }
    return true;
  });
  INFO("kubesched log:\n" << scheduler->ReadStderr());
  CHECK(kNodes * kLowPerNode - CountWithPrefix(pods, "low-", /*bound=*/false) == kNeeded);
  RequirePromisesKept(api, *scheduler);
}

TEST_CASE("faults: preemption evicts exactly what the preemptors need while victims terminate",
          "[e2e][faults]") {
  RequireExactEvictions("");
}

TEST_CASE("faults: preemption evicts exactly what the preemptors need when deletes and binds fail",
          "[e2e][faults]") {
  const uint64_t seed = SuiteSeed("preemption with failed deletes and binds");
  RequireExactEvictions(absl::StrCat(R"({"seed": )", seed, R"(,
      "errors": [{"verb": "delete", "resource": "pods", "code": 500, "probability": 0.3},
                 {"verb": "create", "resource": "pods/binding", "code": 500,
                  "probability": 0.3}]})"));
}

}  // namespace
}  // namespace kubesched::faults
