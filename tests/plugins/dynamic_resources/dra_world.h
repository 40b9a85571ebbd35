#pragma once

// A small cluster for DynamicResources' tests, written as Kubernetes YAML: nodes and DRA objects
// go into a real cache::Cache, whose snapshots (with their DraState) the plugin reads and which
// keeps the plugin's assumed claim allocations as in the scheduler; a fake writer stands in for
// the API server.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "scheduler/api/decode.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/util/clock.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugin_testing {

inline api::DecodedObjects DecodeDra(const std::string& yaml) {
  auto decoded = api::DecodeObjects(yaml, "test");
  INFO((decoded.ok() ? std::string("ok") : std::string(decoded.status().message())));
  REQUIRE(decoded.ok());
  INFO((decoded->problems.empty() ? std::string() : decoded->problems.front().ToString()));
  REQUIRE(decoded->problems.empty());
  return *std::move(decoded);
}

// --- Objects as YAML documents ------------------------------------------------------------------

inline std::string DraNode(const std::string& name, const std::string& zone = "z1") {
  return absl::StrCat("---\napiVersion: v1\nkind: Node\nmetadata: {name: ", name,
                      ", labels: {topology.kubernetes.io/zone: ", zone,
                      "}}\nstatus: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n");
}

// Class "gpu": the devices of driver gpu.example.com.
inline std::string GpuClass(const std::string& extra_selector = "") {
  std::string selectors = R"([{cel: {expression: 'device.driver == "gpu.example.com"'}})";
  if (!extra_selector.empty())
    absl::StrAppend(&selectors, ", {cel: {expression: '", extra_selector, "'}}");
  return absl::StrCat("---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\n",
                      "metadata: {name: gpu}\nspec: {selectors: ", selectors, "]}\n");
}

// A slice of gpu.example.com in pool `pool`: devices by name with their model, and where they
// are ("nodeName: n", "allNodes: true", "nodeSelector: {...}").
inline std::string GpuSlice(const std::string& name, const std::string& place,
                            const std::vector<std::pair<std::string, std::string>>& devices,
                            const std::string& pool = "", int generation = 1) {
  std::string list;
  for (const auto& [device, model] : devices) {
    absl::StrAppend(&list, list.empty() ? "" : ", ", "{name: ", device,
                    ", attributes: {model: {string: ", model, "}}}");
  }
  return absl::StrCat("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ",
                      name, "}\nspec:\n  driver: gpu.example.com\n  ", place,
                      "\n  pool: {name: ", pool.empty() ? name : pool, ", generation: ", generation,
                      ", resourceSliceCount: 1}\n  devices: [", list, "]\n");
}

// node-1 and node-2 (zones z1 and z2), each with two gpus: of `model_1` and of `model_2`.
inline std::string TwoGpuNodes(const std::string& model_1, const std::string& model_2) {
  return DraNode("node-1") + DraNode("node-2", "z2") + GpuClass() +
         GpuSlice("node-1", "nodeName: node-1", {{"gpu-0", model_1}, {"gpu-1", model_1}}) +
         GpuSlice("node-2", "nodeName: node-2", {{"gpu-0", model_2}, {"gpu-1", model_2}});
}

// A claim for `count` gpus whose model is `model` ("" for any); `status` is YAML for its status.
inline std::string GpuClaim(const std::string& name, int count = 1, const std::string& model = "",
                            const std::string& status = "", const std::string& extra_meta = "") {
  std::string selectors;
  if (!model.empty()) {
    selectors =
        absl::StrCat(", selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"]",
                     ".model == \"", model, "\"'}}]");
  }
  return absl::StrCat(
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ", name,
      ", namespace: default, uid: ", name, "-uid, resourceVersion: '5'",
      extra_meta.empty() ? "" : ", ", extra_meta,
      "}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, count: ", count,
      selectors, "}}]}}\n", status.empty() ? "" : absl::StrCat("status: ", status, "\n"));
}

// status.allocation of one device of node `node`, reserved for `consumers` (YAML list).
inline std::string AllocatedOn(const std::string& node, const std::string& device,
                               const std::string& consumers = "[]") {
  return absl::StrCat(
      "{allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: ", node,
      ", device: ", device, "}]}, nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: ",
      "metadata.name, operator: In, values: [", node, "]}]}]}}, reservedFor: ", consumers, "}");
}

// A pod with `claims`: entry name -> "claim:<name>", "template:<name>" or "" (neither);
// `statuses` is YAML for status.resourceClaimStatuses.
inline framework::PodInfoPtr ClaimPod(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& claims,
    const std::string& statuses = "") {
  std::string yaml = absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                                  ", namespace: default, uid: ", name,
                                  "-uid}\nspec:\n  containers: [{name: c, image: x}]\n");
  if (!claims.empty()) absl::StrAppend(&yaml, "  resourceClaims:\n");
  for (const auto& [entry, source] : claims) {
    if (source.empty()) {
      absl::StrAppend(&yaml, "  - {name: ", entry, "}\n");
      continue;
    }
    const bool from_template = source.rfind("template:", 0) == 0;
    absl::StrAppend(&yaml, "  - {name: ", entry,
                    from_template ? ", resourceClaimTemplateName: " : ", resourceClaimName: ",
                    source.substr(source.find(':') + 1), "}\n");
  }
  if (!statuses.empty())
    absl::StrAppend(&yaml, "status: {resourceClaimStatuses: ", statuses, "}\n");
  api::DecodedObjects decoded = DecodeDra(yaml);
  REQUIRE(decoded.objects.size() == 1);
  return framework::MakePodInfo(
      std::make_shared<const api::Pod>(std::get<api::Pod>(decoded.objects.front())), 0);
}

// --- The API side -------------------------------------------------------------------------------

// Records the writes and answers with the claim written, one resourceVersion later; fails every
// write with `fail_with` when set.
class FakeClaimWriter : public framework::ClaimStatusWriter {
 public:
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> WriteReservation(
      const api::ResourceClaim& claim, const api::AllocationResult* allocation,
      const api::ResourceClaimConsumer& consumer) override {
    absl::MutexLock lock(&mu_);
    writes_.push_back(absl::StrCat(claim.meta.name, allocation != nullptr ? " allocated" : "",
                                   " reserved for ", consumer.name));
    if (!fail_with_.ok()) return fail_with_;
    auto stored = Next(claim);
    if (allocation != nullptr) stored->allocation = *allocation;
    stored->reserved_for.push_back(consumer);
    return std::shared_ptr<const api::ResourceClaim>(stored);
  }

  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> RemoveReservation(
      const api::ResourceClaim& claim, std::string_view consumer_uid) override {
    absl::MutexLock lock(&mu_);
    writes_.push_back(
        absl::StrCat(claim.meta.name, " no longer reserved for ", util::Absl(consumer_uid)));
    if (!fail_with_.ok()) return fail_with_;
    auto stored = Next(claim);
    std::erase_if(stored->reserved_for, [consumer_uid](const api::ResourceClaimConsumer& consumer) {
      return consumer.uid == consumer_uid;
    });
    return std::shared_ptr<const api::ResourceClaim>(stored);
  }

  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> Deallocate(
      const api::ResourceClaim& claim) override {
    absl::MutexLock lock(&mu_);
    writes_.push_back(absl::StrCat(claim.meta.name, " deallocated"));
    if (!fail_with_.ok()) return fail_with_;
    auto stored = Next(claim);
    stored->allocation.reset();
    stored->reserved_for.clear();
    return std::shared_ptr<const api::ResourceClaim>(stored);
  }

  void FailWith(absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_with_ = std::move(status);
  }
  std::vector<std::string> writes() const {
    absl::MutexLock lock(&mu_);
    return writes_;
  }
  std::shared_ptr<const api::ResourceClaim> last() const {
    absl::MutexLock lock(&mu_);
    return last_;
  }

 private:
  // The claim as the server stores it after a write: the next resourceVersion, kept as last().
  std::shared_ptr<api::ResourceClaim> Next(const api::ResourceClaim& claim)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto stored = std::make_shared<api::ResourceClaim>(claim);
    stored->meta.resource_version = absl::StrCat(std::stoll(claim.meta.resource_version) + 1);
    last_ = stored;
    return stored;
  }

  mutable absl::Mutex mu_;
  std::vector<std::string> writes_ ABSL_GUARDED_BY(mu_);
  absl::Status fail_with_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const api::ResourceClaim> last_ ABSL_GUARDED_BY(mu_);
};

// --- The world ----------------------------------------------------------------------------------

class DraWorld {
 public:
  explicit DraWorld(const std::string& yaml = "", absl::Duration filter_timeout = absl::Seconds(10))
      : plugin_(filter_timeout, &cache_, &writer_) {
    if (!yaml.empty()) Add(yaml);
  }

  // Nodes and DRA objects, as the informers would deliver them (added or replaced).
  void Add(const std::string& yaml) {
    for (api::Object& object : DecodeDra(yaml).objects) {
      std::visit(
          [this](auto& typed) {
            using T = std::decay_t<decltype(typed)>;
            if constexpr (std::is_same_v<T, api::Node>) {
              cache_.AddNode(std::make_shared<const api::Node>(std::move(typed)));
            } else if constexpr (std::is_same_v<T, api::DeviceClass> ||
                                 std::is_same_v<T, api::ResourceSlice> ||
                                 std::is_same_v<T, api::ResourceClaim> ||
                                 std::is_same_v<T, api::ResourceClaimTemplate>) {
              cache_.SetDraObject(std::make_shared<const T>(std::move(typed)));
            }
          },
          object);
    }
  }

  // The cache's current state; valid until the next call.
  const framework::Snapshot& Snapshot() {
    cache_.UpdateSnapshot(&snapshot_);
    return snapshot_;
  }

  struct Verdicts {
    framework::Status pre_filter;
    // "pass" or the reasons, by node name; empty when PreFilter did not succeed.
    std::map<std::string, std::string> nodes;
  };
  // PreFilter, then Filter on every node, on a fresh snapshot with `state`.
  Verdicts Judge(const framework::PodInfo& pod, framework::CycleState& state) {
    const framework::Snapshot& snapshot = Snapshot();
    Verdicts verdicts;
    verdicts.pre_filter = plugin_.PreFilter(state, pod, snapshot).status;
    if (!verdicts.pre_filter.IsSuccess()) return verdicts;
    for (const framework::NodeInfo* node : snapshot.nodes()) {
      const framework::Status status = plugin_.Filter(state, pod, *node);
      verdicts.nodes[node->name()] = status.IsSuccess() ? "pass" : status.Message();
    }
    return verdicts;
  }
  Verdicts Judge(const framework::PodInfo& pod) {
    framework::CycleState state;
    return Judge(pod, state);
  }

  cache::Cache& cache() { return cache_; }
  FakeClaimWriter& writer() { return writer_; }
  plugins::DynamicResources& plugin() { return plugin_; }

 private:
  util::FakeClock clock_;
  cache::Cache cache_{&clock_};
  framework::Snapshot snapshot_;
  FakeClaimWriter writer_;
  plugins::DynamicResources plugin_;
};

}  // namespace kubesched::plugin_testing
