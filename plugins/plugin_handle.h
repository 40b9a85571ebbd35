#pragma once

// What a plugin may be handed at construction besides its args: the services of the scheduler it
// runs in. Every plugin's factory takes one; most use none of it.

#include "scheduler/framework/claim_binding.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/volume_binding.h"
#include "scheduler/framework/waiting_pods.h"

namespace kubesched::metrics {
class SchedulerMetrics;
}  // namespace kubesched::metrics

namespace kubesched::util {
class WorkerPool;
}  // namespace kubesched::util

namespace kubesched::quota {
class QuotaTracker;
}  // namespace kubesched::quota

namespace kubesched::plugins {

struct PluginHandle {
  framework::PodBinder* binder = nullptr;  // DefaultBinder only
  quota::QuotaTracker* quota = nullptr;    // QueueQuota only
  // Where the framework runtime records extension-point and plugin timings; null = none.
  metrics::SchedulerMetrics* metrics = nullptr;
  // The scheduler's Filter/Score threads, for a PreFilter that counts across every node
  // (PodTopologySpread), as upstream's Parallelizer. PreFilter runs on the scheduling thread,
  // the pool's only caller, and never inside a pool job. Null: run inline.
  util::WorkerPool* pool = nullptr;
  // VolumeBinding only: the cache's assumed volumes (Reserve, Unreserve, PreBind's wait) and the
  // API writes of a binding (PreBind). Null while a configuration is only being checked.
  framework::VolumeAssumeCache* volume_cache = nullptr;
  framework::VolumeBinder* volume_binder = nullptr;
  // DynamicResources only: the cache's assumed claim allocations (Reserve, PreBind, Unreserve)
  // and the API write of a claim's allocation and reservation (PreBind). Null while a
  // configuration is only being checked.
  framework::ClaimAssumeCache* claim_cache = nullptr;
  framework::ClaimStatusWriter* claim_writer = nullptr;
  // The pods waiting at Permit, for a Permit plugin that lets them go together (gangs). Null
  // while a configuration is only being checked.
  framework::WaitingPods* waiting_pods = nullptr;
};

}  // namespace kubesched::plugins
