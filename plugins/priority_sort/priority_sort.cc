#include "plugins/priority_sort/priority_sort.h"

#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {

std::string_view PrioritySort::Name() const { return names::kPrioritySort; }

bool PrioritySort::Less(const framework::PodInfo& a, int64_t a_enqueued,
                        const framework::PodInfo& b, int64_t b_enqueued) const {
  if (a.priority != b.priority) return a.priority > b.priority;
  return a_enqueued < b_enqueued;
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewPrioritySort(const config::PluginArgs& args,
                                                                   const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kPrioritySort); !status.ok()) return status;
  return std::make_unique<PrioritySort>();
}

}  // namespace kubesched::plugins
