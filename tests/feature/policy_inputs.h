#pragma once

// What the per-pod policy feature tests share: two policies that differ only in
// NodeResourcesFit's strategy, a configuration from YAML, and an update of the watched policy
// ConfigMap.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/api/objects.h"
#include "scheduler/client/event_handler.h"

namespace kubesched::scheduler::policy_inputs {

// Only NodeResourcesFit scores under these policies, so the strategy alone decides.
inline constexpr char kSpreadAndStack[] = R"(
policies:
  - name: spread
    plugins:
      score:
        disabled: [{name: "*"}]
        enabled: [{name: NodeResourcesFit, weight: 1}]
    pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: LeastAllocated}}
  - name: stack
    plugins:
      score:
        disabled: [{name: "*"}]
        enabled: [{name: NodeResourcesFit, weight: 1}]
    pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated}}
policyConfigMap: {namespace: kube-system, name: kubesched-policies}
)";

// A KubeSchedulerConfiguration with `yaml` after its header; the test fails if it does not parse.
inline config::Configuration Config(const std::string& yaml) {
  auto parsed = config::ParseConfiguration(absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", yaml));
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

// The policy ConfigMap kube-system/kubesched-policies holding `data`, as the informer delivers it.
inline client::Event<api::ConfigMap> PolicyConfigMap(
    std::map<std::string, std::string> data,
    client::EventType type = client::EventType::kModified) {
  auto map = std::make_shared<api::ConfigMap>();
  map->meta.namespace_name = "kube-system";
  map->meta.name = "kubesched-policies";
  map->data.insert(data.begin(), data.end());
  return client::Event<api::ConfigMap>{type, nullptr, map};
}

}  // namespace kubesched::scheduler::policy_inputs
