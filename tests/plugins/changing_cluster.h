#pragma once

// A snapshot changed the way the cache changes it between cycles: pods added to and removed from
// nodes and node objects replaced, in place, each update recorded (SnapshotBuilder::
// RecordChanges), so that plugins keeping results from one cycle to the next bring them up to
// date node by node. The kept-result tests compare such plugins with fresh ones on it.

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/framework/snapshot.h"
#include "tests/testing/builders.h"

namespace kubesched::plugin_testing {

// A small deterministic generator (the tests' sequences must be the same on every run).
class Draw {
 public:
  explicit Draw(uint64_t seed) : state_(seed) {}
  size_t Below(size_t n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state_ >> 33) % n);
  }

 private:
  uint64_t state_;
};

class ChangingCluster {
 public:
  // Adds a node before Start.
  ChangingCluster& Node(const testing::NodeBuilder& node) {
    auto ptr = node.Ptr();
    builder_.Upsert(ptr->meta.name)->SetNode(ptr, ++generation_);
    names_.push_back(ptr->meta.name);
    return *this;
  }
  ChangingCluster& Namespace(const std::string& name, const std::string& key,
                             const std::string& value) {
    builder_.SetNamespaceLabels(api::Intern(name), testing::Labels({{key, value}}));
    return *this;
  }
  // The nodes are all there: the first update, from which on changes are recorded.
  void Start() {
    ++generation_;
    Commit({});
  }

  // Binds a copy of `pod` to `node` (spec.nodeName) and counts it there.
  framework::PodInfoPtr AddPod(const std::string& node, const testing::PodBuilder& pod) {
    framework::PodInfoPtr info =
        framework::MakePodInfo(testing::PodBuilder(pod).NodeName(node).Ptr(), 0);
    framework::NodeInfo* target = builder_.Find(node);
    target->AddPod(info, ++generation_);
    Commit({target});
    return info;
  }
  void RemovePod(const std::string& node, const framework::PodInfo& pod) {
    framework::NodeInfo* target = builder_.Find(node);
    REQUIRE(target->RemovePod(pod, ++generation_).ok());
    Commit({target});
  }
  // Replaces the node object (its labels, taints), keeping its pods.
  void ReplaceNode(const testing::NodeBuilder& node) {
    auto ptr = node.Ptr();
    framework::NodeInfo* target = builder_.Find(ptr->meta.name);
    target->SetNode(ptr, ++generation_);
    Commit({target});
  }
  // Changes the labels of a namespace (the snapshot then cannot tell what changed).
  void Relabel(const std::string& name, const std::string& key, const std::string& value) {
    builder_.SetNamespaceLabels(api::Intern(name), testing::Labels({{key, value}}));
    ++generation_;
    Commit({});
  }

  const framework::Snapshot& snapshot() const { return snapshot_; }
  const std::vector<std::string>& node_names() const { return names_; }

 private:
  // What the cache's UpdateSnapshot does after copying the changed nodes.
  void Commit(const std::vector<framework::NodeInfo*>& changed) {
    builder_.RebuildLists();  // affinity lists; positions stay
    builder_.set_generation(generation_);
    builder_.RecordChanges(generation_, changed);
  }

  framework::Snapshot snapshot_;
  framework::SnapshotBuilder builder_{&snapshot_};
  int64_t generation_ = 0;
  std::vector<std::string> names_;
};

}  // namespace kubesched::plugin_testing
