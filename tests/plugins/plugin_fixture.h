#pragma once

// A small real cluster (Snapshot + NodeInfos filled through SetNode/AddPod) and helpers that run
// one plugin's extension points the way the framework does, for the basic plugins' tests.

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/snapshot.h"
#include "tests/testing/builders.h"

namespace kubesched::plugin_testing {

using testing::NodeBuilder;
using testing::PodBuilder;

inline framework::PodInfoPtr Info(const PodBuilder& pod, int32_t priority = 0) {
  return framework::MakePodInfo(pod.Ptr(), priority);
}

class Cluster {
 public:
  Cluster& Node(const NodeBuilder& node) {
    auto ptr = node.Ptr();
    builder_.Upsert(ptr->meta.name)->SetNode(ptr, ++generation_);
    return *this;
  }
  // Binds `pod` to `node` (spec.nodeName) and counts it there.
  Cluster& Pod(const std::string& node, const PodBuilder& pod) {
    builder_.Upsert(node)->AddPod(Info(PodBuilder(pod).NodeName(node)), ++generation_);
    return *this;
  }
  // The volume objects the snapshot publishes (volume plugins).
  Cluster& Storage(std::shared_ptr<const framework::StorageState> storage) {
    builder_.SetStorage(std::move(storage));
    return *this;
  }
  const framework::Snapshot& Build() {
    builder_.RebuildLists();
    builder_.RecomputeClusterTotals();  // the cache keeps these incrementally; here: recompute
    return snapshot_;
  }

 private:
  framework::Snapshot snapshot_;
  framework::SnapshotBuilder builder_{&snapshot_};
  int64_t generation_ = 0;
};

// Unwraps a factory result into the concrete plugin type.
template <typename T>
std::unique_ptr<T> Unwrap(absl::StatusOr<std::unique_ptr<framework::Plugin>> made) {
  INFO((made.ok() ? std::string("ok") : std::string(made.status().message())));
  REQUIRE(made.ok());
  auto* typed = dynamic_cast<T*>(made->get());
  REQUIRE(typed != nullptr);
  made->release();
  return std::unique_ptr<T>(typed);
}

// "pass", or the reasons of a failing status.
inline std::vector<std::string> Verdict(const framework::Status& status) {
  if (status.IsSuccess()) return {"pass"};
  std::vector<std::string> reasons;
  for (const auto reason : status.reasons()) reasons.emplace_back(reason);
  return reasons;
}

// PreScore over every node of `snapshot`, then Score and, when the plugin has one, the
// normalizer: the final scores by node name; nullopt when PreScore says Skip.
template <typename P>
std::optional<std::map<std::string, int64_t>> ScoreAll(P& plugin,
                                                       const framework::Snapshot& snapshot,
                                                       const framework::PodInfo& pod) {
  framework::CycleState state;
  const framework::Status status = plugin.PreScore(state, pod, snapshot, snapshot.nodes());
  if (status.IsSkip()) return std::nullopt;
  REQUIRE(status.IsSuccess());
  std::vector<int64_t> scores;
  for (const auto* node : snapshot.nodes()) scores.push_back(plugin.Score(state, pod, *node));
  if (const auto* normalizer = plugin.normalizer(); normalizer != nullptr) {
    normalizer->NormalizeScore(state, pod, absl::MakeSpan(scores));
  }
  std::map<std::string, int64_t> by_node;
  for (size_t i = 0; i < scores.size(); ++i) by_node[snapshot.nodes()[i]->name()] = scores[i];
  return by_node;
}

}  // namespace kubesched::plugin_testing
