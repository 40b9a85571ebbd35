#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's PrioritySort: higher priority first, then earlier arrival in the queue.
// Stateless; safe to call from any thread.
class PrioritySort final : public framework::QueueSortPlugin {
 public:
  std::string_view Name() const override;
  bool Less(const framework::PodInfo& a, int64_t a_enqueued, const framework::PodInfo& b,
            int64_t b_enqueued) const override;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewPrioritySort(const config::PluginArgs& args,
                                                                   const PluginHandle& handle);

}  // namespace kubesched::plugins
