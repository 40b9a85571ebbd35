#pragma once

// Fluent builders of API objects for tests, in the spirit of upstream's st.MakePod()/MakeNode().
// Header-only so every test can use them without link order concerns.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/api/objects.h"
#include "scheduler/api/quantity.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"

namespace kubesched::testing {

inline api::ResourceList Resources(
    const std::vector<std::pair<std::string, std::string>>& quantities) {
  api::ResourceList list;
  for (const auto& [name, text] : quantities) {
    const auto id = api::InternResource(name);
    auto q = api::Quantity::Parse(text);
    list.Set(id, q.ok() ? api::CanonicalAmount(id, *q) : 0);
  }
  return list;
}

inline api::LabelSet Labels(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::pair<api::Symbol, api::Symbol>> symbols;
  for (const auto& [k, v] : pairs) symbols.emplace_back(api::Intern(k), api::Intern(v));
  return api::LabelSet::FromPairs(std::move(symbols));
}

class PodBuilder {
 public:
  PodBuilder(std::string name, std::string ns = "default") {
    pod_.meta.name = std::move(name);
    pod_.meta.namespace_name = std::move(ns);
    pod_.meta.namespace_symbol = api::Intern(pod_.meta.namespace_name);
    pod_.meta.uid = pod_.meta.namespace_name + "-" + pod_.meta.name + "-uid";
    pod_.spec.scheduler_name = "kubesched";
  }
  PodBuilder& Uid(std::string uid) {
    pod_.meta.uid = std::move(uid);
    return *this;
  }
  // Adds a container with these requests (cpu/memory flagged as listed when present).
  PodBuilder& Container(const std::vector<std::pair<std::string, std::string>>& requests) {
    api::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.requests = Resources(requests);
    for (const auto& [name, _] : requests) {
      if (name == "cpu") c.requests_cpu = true;
      if (name == "memory") c.requests_memory = true;
    }
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& InitContainer(const std::vector<std::pair<std::string, std::string>>& requests,
                            bool sidecar = false) {
    api::Container c;
    c.name = "init" + std::to_string(pod_.spec.init_containers.size());
    c.requests = Resources(requests);
    for (const auto& [name, _] : requests) {
      if (name == "cpu") c.requests_cpu = true;
      if (name == "memory") c.requests_memory = true;
    }
    if (sidecar) c.restart_policy = "Always";
    pod_.spec.init_containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& HostPort(int32_t port, std::string ip = "",
                       api::Protocol protocol = api::Protocol::kTCP) {
    if (pod_.spec.containers.empty()) Container({});
    pod_.spec.containers.back().ports.push_back({port, port, std::move(ip), protocol});
    return *this;
  }
  PodBuilder& Label(const std::string& key, const std::string& value) {
    pod_.meta.labels.Set(api::Intern(key), api::Intern(value));
    return *this;
  }
  PodBuilder& Annotation(const std::string& key, const std::string& value) {
    pod_.meta.annotations[key] = value;
    return *this;
  }
  PodBuilder& NodeSelector(const std::string& key, const std::string& value) {
    pod_.spec.node_selector.Set(api::Intern(key), api::Intern(value));
    return *this;
  }
  PodBuilder& NodeName(std::string node) {
    pod_.spec.node_name = std::move(node);
    return *this;
  }
  PodBuilder& Priority(int32_t priority) {
    pod_.spec.priority = priority;
    return *this;
  }
  PodBuilder& SchedulingGates(std::vector<std::string> gates) {
    pod_.spec.scheduling_gates = std::move(gates);
    return *this;
  }
  PodBuilder& SchedulerName(std::string name) {
    pod_.spec.scheduler_name = std::move(name);
    return *this;
  }
  PodBuilder& Toleration(std::string key, std::string value, api::TaintEffect effect,
                         api::TolerationOperator op = api::TolerationOperator::kEqual) {
    pod_.spec.tolerations.push_back({std::move(key), op, std::move(value), effect, {}});
    return *this;
  }
  PodBuilder& Affinity(api::Affinity affinity) {
    pod_.spec.affinity = std::move(affinity);
    return *this;
  }
  PodBuilder& Volume(api::Volume volume) {
    pod_.spec.volumes.push_back(std::move(volume));
    return *this;
  }
  PodBuilder& Phase(api::PodPhase phase) {
    pod_.status.phase = phase;
    return *this;
  }
  api::Pod Build() const { return pod_; }
  std::shared_ptr<const api::Pod> Ptr() const { return std::make_shared<const api::Pod>(pod_); }

 private:
  api::Pod pod_;
};

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) {
    node_.meta.name = std::move(name);
    node_.meta.uid = node_.meta.name + "-uid";
  }
  // Sets capacity and allocatable.
  NodeBuilder& Capacity(const std::vector<std::pair<std::string, std::string>>& quantities) {
    node_.status.capacity = Resources(quantities);
    node_.status.allocatable = node_.status.capacity;
    return *this;
  }
  NodeBuilder& Label(const std::string& key, const std::string& value) {
    node_.meta.labels.Set(api::Intern(key), api::Intern(value));
    return *this;
  }
  NodeBuilder& Taint(std::string key, std::string value, api::TaintEffect effect) {
    node_.spec.taints.push_back({std::move(key), std::move(value), effect});
    return *this;
  }
  NodeBuilder& Unschedulable(bool unschedulable = true) {
    node_.spec.unschedulable = unschedulable;
    return *this;
  }
  api::Node Build() const { return node_; }
  std::shared_ptr<const api::Node> Ptr() const { return std::make_shared<const api::Node>(node_); }

 private:
  api::Node node_;
};

}  // namespace kubesched::testing
