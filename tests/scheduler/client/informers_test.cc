#include "scheduler/client/informers.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "scheduler/util/log.h"
#include "tests/scheduler/client/scripted_api_server.h"
#include "tests/testing/wait.h"

namespace kubesched::client {
namespace {

using test::ClusterObjectJson;
using test::ListBody;
using test::NamespacedObjectJson;
using test::Ok;
using test::PodJson;
using test::PriorityClassJson;
using test::ScriptedApiServer;
using test::WatchLine;
using test::WatchScript;
using testing::WaitUntil;

constexpr char kPods[] = "/api/v1/pods";
constexpr char kNodes[] = "/api/v1/nodes";
constexpr char kNamespaces[] = "/api/v1/namespaces";
constexpr char kPriorityClasses[] = "/apis/scheduling.k8s.io/v1/priorityclasses";
constexpr char kPodDisruptionBudgets[] = "/apis/policy/v1/poddisruptionbudgets";
constexpr char kConfigMaps[] = "/api/v1/namespaces/kube-system/configmaps";
constexpr char kClaims[] = "/api/v1/persistentvolumeclaims";
constexpr char kStorageClasses[] = "/apis/storage.k8s.io/v1/storageclasses";
constexpr char kResourceClaims[] = "/apis/resource.k8s.io/v1/resourceclaims";

// Counts events per kind and checks that no two handler calls ever overlap.
class CountingHandler : public ClusterEventHandler {
 public:
  void OnPod(const Event<api::Pod>& event) override { Handle("Pod", event.object != nullptr); }
  void OnNode(const Event<api::Node>& event) override { Handle("Node", event.object != nullptr); }
  void OnNamespace(const Event<api::Namespace>& event) override {
    Handle("Namespace", event.object != nullptr);
  }
  void OnPriorityClass(const Event<api::PriorityClass>& event) override {
    Handle("PriorityClass", event.object != nullptr);
  }
  void OnConfigMap(const Event<api::ConfigMap>& event) override {
    Handle("ConfigMap", event.object != nullptr);
  }
  void OnPodDisruptionBudget(const Event<api::PodDisruptionBudget>& event) override {
    Handle("PodDisruptionBudget", event.object != nullptr);
  }
  void OnPersistentVolumeClaim(const Event<api::PersistentVolumeClaim>& event) override {
    Handle("PersistentVolumeClaim", event.object != nullptr);
  }
  void OnStorageClass(const Event<api::StorageClass>& event) override {
    Handle("StorageClass", event.object != nullptr);
  }
  void OnResourceClaim(const Event<api::ResourceClaim>& event) override {
    Handle("ResourceClaim", event.object != nullptr);
  }

  int Count(const std::string& kind) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = counts_.find(kind);
    return it == counts_.end() ? 0 : it->second;
  }
  int Total() const {
    std::lock_guard<std::mutex> lock(mu_);
    int total = 0;
    for (const auto& [kind, count] : counts_) total += count;
    return total;
  }
  int max_concurrent_calls() const { return max_concurrent_calls_.load(); }
  int calls_without_object() const { return calls_without_object_.load(); }

  // Makes each call last a little, so that overlapping calls would be caught.
  void set_dwell(absl::Duration dwell) { dwell_ = dwell; }

 private:
  void Handle(const std::string& kind, bool has_object) {
    const int concurrent = in_flight_.fetch_add(1) + 1;
    int seen = max_concurrent_calls_.load();
    while (concurrent > seen && !max_concurrent_calls_.compare_exchange_weak(seen, concurrent)) {
    }
    if (!has_object) calls_without_object_.fetch_add(1);
    if (dwell_ > absl::ZeroDuration()) absl::SleepFor(dwell_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_[kind];
    }
    in_flight_.fetch_sub(1);
  }

  absl::Duration dwell_ = absl::ZeroDuration();
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_concurrent_calls_{0};
  std::atomic<int> calls_without_object_{0};
  mutable std::mutex mu_;
  std::map<std::string, int> counts_;
};

InformerOptions FastOptions() {
  InformerOptions options;
  options.reflector.backoff_initial = absl::Milliseconds(1);
  options.reflector.backoff_max = absl::Milliseconds(4);
  return options;
}

void QueueOneOfEach(ScriptedApiServer& server) {
  server.QueueList(kNodes, Ok(ListBody("1", {ClusterObjectJson("n1", "1")})));
  server.QueueList(kNamespaces, Ok(ListBody("1", {ClusterObjectJson("default", "1")})));
  server.QueueList(kPriorityClasses, Ok(ListBody("1", {PriorityClassJson("high", "1")})));
  server.QueueList(kPodDisruptionBudgets, Ok(ListBody("1", {NamespacedObjectJson("pdb", "1")})));
  server.QueueList(kConfigMaps, Ok(ListBody("1", {NamespacedObjectJson("cm", "1")})));
  server.QueueList(kClaims, Ok(ListBody("1", {NamespacedObjectJson("claim", "1")})));
  server.QueueList(kStorageClasses, Ok(ListBody("1", {ClusterObjectJson("standard", "1")})));
  server.QueueList(kResourceClaims, Ok(ListBody("1", {NamespacedObjectJson("gpus", "1")})));
  server.QueueList(kPods, Ok(ListBody("1", {PodJson("p", "1")})));
}

TEST_CASE("informers sync only when every kind has listed, and pods list after the basics",
          "[reflector]") {
  ScriptedApiServer server;
  absl::Notification release_nodes;
  server.QueueListHandler(kNodes, [&] {
    release_nodes.WaitForNotification();
    return Ok(ListBody("1", {ClusterObjectJson("n1", "1")}));
  });
  QueueOneOfEach(server);  // its node list is served second, and never asked for
  CountingHandler handler;
  InformerOptions options = FastOptions();
  options.scheduler_namespace = "kube-system";
  options.pod_list_prerequisite_timeout = absl::Minutes(5);
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  REQUIRE(WaitUntil([&] { return server.WatchTargets(kNamespaces).size() == 1; }));
  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPriorityClasses).size() == 1; }));
  CHECK_FALSE(informers.HasSynced());
  CHECK_FALSE(informers.WaitForSync(absl::Milliseconds(20)));
  CHECK(server.ListTargets(kPods).empty());  // waits for the node list

  release_nodes.Notify();
  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  CHECK(handler.Count("Node") == 1);
  CHECK(handler.Count("Namespace") == 1);
  CHECK(handler.Count("PriorityClass") == 1);
  CHECK(handler.Count("PodDisruptionBudget") == 1);
  CHECK(handler.Count("ConfigMap") == 1);
  CHECK(handler.Count("PersistentVolumeClaim") == 1);
  CHECK(handler.Count("StorageClass") == 1);
  CHECK(handler.Count("ResourceClaim") == 1);
  CHECK(handler.Count("Pod") == 1);
  CHECK(handler.calls_without_object() == 0);

  const std::vector<ReflectorStats> stats = informers.Stats();
  std::vector<std::string> kinds;
  for (const ReflectorStats& entry : stats) kinds.push_back(entry.kind);
  CHECK(kinds == std::vector<std::string>{
                     "Node", "Namespace", "PriorityClass", "PodDisruptionBudget", "StorageClass",
                     "PersistentVolume", "PersistentVolumeClaim", "CSINode", "VolumeAttachment",
                     "PodGroup", "DeviceClass", "ResourceSlice", "ResourceClaim",
                     "ResourceClaimTemplate", "ConfigMap", "Pod"});
  for (const ReflectorStats& entry : stats) CHECK(entry.lists == 1);
  informers.Stop();
}

TEST_CASE("without a scheduler namespace no ConfigMaps are watched", "[reflector]") {
  ScriptedApiServer server;
  CountingHandler handler;
  Informers informers(server.transport(), &handler, FastOptions());
  informers.Start();
  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  CHECK(informers.Stats().size() == 15);
  for (const ReflectorStats& entry : informers.Stats()) CHECK(entry.kind != "ConfigMap");
  informers.Stop();
}

TEST_CASE("the pod list starts anyway when a basic kind cannot sync in time", "[reflector]") {
  util::SetLogSinkForTesting([](std::string_view, std::string_view) {});  // the node failures
  ScriptedApiServer server;
  for (int i = 0; i < 10; ++i) server.QueueList(kNodes, HttpResponse{403, ""});
  server.QueueList(kPods, Ok(ListBody("1", {PodJson("p", "1")})));
  CountingHandler handler;
  InformerOptions options = FastOptions();
  options.reflector.backoff_initial = absl::Seconds(2);  // nodes stay unsynced during the test
  options.reflector.backoff_max = absl::Seconds(2);
  options.pod_list_prerequisite_timeout = absl::Milliseconds(20);
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  REQUIRE(WaitUntil([&] { return handler.Count("Pod") == 1; }));
  CHECK_FALSE(informers.HasSynced());
  informers.Stop();
  util::SetLogSinkForTesting(nullptr);
}

TEST_CASE("handler calls from all reflectors never overlap", "[reflector]") {
  ScriptedApiServer server;
  constexpr int kObjectsPerKind = 15;
  const std::vector<std::pair<std::string, std::function<std::string(std::string, std::string)>>>
      kinds = {
          {kNodes, [](std::string n, std::string rv) { return ClusterObjectJson(n, rv); }},
          {kNamespaces, [](std::string n, std::string rv) { return ClusterObjectJson(n, rv); }},
          {kPriorityClasses,
           [](std::string n, std::string rv) { return PriorityClassJson(n, rv); }},
          {kPodDisruptionBudgets,
           [](std::string n, std::string rv) { return NamespacedObjectJson(n, rv); }},
          {kConfigMaps, [](std::string n, std::string rv) { return NamespacedObjectJson(n, rv); }},
          {kPods, [](std::string n, std::string rv) { return PodJson(n, rv); }},
      };
  for (const auto& [path, make] : kinds) {
    std::vector<std::string> items;
    WatchScript watch;
    for (int i = 0; i < kObjectsPerKind; ++i) {
      items.push_back(make("listed" + std::to_string(i), "1"));
      watch.lines.push_back(WatchLine("ADDED", make("watched" + std::to_string(i), "2")));
    }
    server.QueueList(path, Ok(ListBody("1", items)));
    server.QueueWatch(path, watch);
  }
  CountingHandler handler;
  handler.set_dwell(absl::Microseconds(50));
  InformerOptions options = FastOptions();
  options.scheduler_namespace = "kube-system";
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  const int expected = static_cast<int>(kinds.size()) * 2 * kObjectsPerKind;
  REQUIRE(WaitUntil([&] { return handler.Total() == expected; }));
  CHECK(handler.max_concurrent_calls() == 1);
  int64_t delivered = 0;
  for (const ReflectorStats& entry : informers.Stats()) delivered += entry.events;
  CHECK(delivered == expected);
  informers.Stop();
}

TEST_CASE("Stop returns promptly while every watch is open", "[reflector]") {
  ScriptedApiServer server;
  QueueOneOfEach(server);
  CountingHandler handler;
  InformerOptions options = FastOptions();
  options.scheduler_namespace = "kube-system";
  Informers informers(server.transport(), &handler, options);
  informers.Start();
  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 1; }));

  const absl::Time before = absl::Now();
  informers.Stop();
  CHECK(absl::Now() - before < absl::Seconds(1));
  informers.Stop();              // idempotent
  CHECK(informers.HasSynced());  // still synced after stopping
}

TEST_CASE("WaitForSync returns when the informers stop", "[reflector]") {
  util::SetLogSinkForTesting([](std::string_view, std::string_view) {});  // the pod list failure
  ScriptedApiServer server;
  server.QueueList(kPods, HttpResponse{500, ""});
  CountingHandler handler;
  InformerOptions options = FastOptions();
  options.reflector.backoff_initial = absl::Minutes(5);  // the pod list will not be retried
  options.reflector.backoff_max = absl::Minutes(5);
  Informers informers(server.transport(), &handler, options);
  informers.Start();
  REQUIRE(WaitUntil([&] { return server.ListTargets(kPods).size() == 1; }));

  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(20));
    informers.Stop();
  });
  const absl::Time before = absl::Now();
  CHECK_FALSE(informers.WaitForSync(absl::Seconds(30)));
  CHECK(absl::Now() - before < absl::Seconds(5));
  stopper.join();
  util::SetLogSinkForTesting(nullptr);
}

TEST_CASE("the pod field selector is URL-encoded in list and watch requests", "[reflector]") {
  ScriptedApiServer server;
  CountingHandler handler;
  Informers informers(server.transport(), &handler, FastOptions());
  informers.Start();
  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPods).size() == 1; }));
  const std::string encoded =
      "fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
  CHECK(server.ListTargets(kPods)[0] == std::string(kPods) + "?" + encoded + "&limit=500");
  CHECK(server.WatchTargets(kPods)[0].find(encoded) != std::string::npos);
  CHECK(server.ListTargets(kNodes)[0] == std::string(kNodes) + "?limit=500");
  informers.Stop();
}

TEST_CASE("a server without resource.k8s.io/v1 syncs, warning once for each DRA kind",
          "[reflector]") {
  // Collects warnings while it lives (also when a REQUIRE ends the test early).
  struct Warnings {
    Warnings() {
      util::SetLogSinkForTesting([this](std::string_view level, std::string_view message) {
        std::lock_guard<std::mutex> lock(mu);
        if (level == "W") lines.emplace_back(message);
      });
    }
    ~Warnings() { util::SetLogSinkForTesting(nullptr); }
    std::mutex mu;
    std::vector<std::string> lines;
  } collected;
  ScriptedApiServer server;
  const HttpResponse not_found{
      404, test::StatusJson(404, "NotFound", "the server could not find the requested resource")};
  for (const char* plural :
       {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"}) {
    server.QueueList(std::string("/apis/resource.k8s.io/v1/") + plural, not_found);
  }
  server.QueueList(kNodes, Ok(ListBody("1", {ClusterObjectJson("n1", "1")})));
  CountingHandler handler;
  InformerOptions options = FastOptions();
  options.reflector.absent_retry_interval = absl::Hours(1);  // no second list during the test
  Informers informers(server.transport(), &handler, options);
  informers.Start();
  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  CHECK(handler.Count("Node") == 1);
  CHECK(handler.Count("ResourceClaim") == 0);
  informers.Stop();
  const std::vector<std::string> warnings = collected.lines;
  int dra_warnings = 0;
  for (const std::string& warning : warnings) {
    if (warning.find("resource.k8s.io/v1 is not served (Kubernetes before 1.34") !=
        std::string::npos) {
      ++dra_warnings;
    }
  }
  CHECK(dra_warnings == 4);
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find(
                     "ResourceClaimTemplate reflector: the API server does not serve "
                     "/apis/resource.k8s.io/v1/resourceclaimtemplates (HTTP 404)") !=
                 std::string::npos;
        }) == 1);
}

}  // namespace
}  // namespace kubesched::client
