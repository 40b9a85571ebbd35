#include "plugins/scheduling_gates/scheduling_gates.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {

std::string_view SchedulingGates::Name() const { return names::kSchedulingGates; }

framework::Status SchedulingGates::PreEnqueue(const framework::PodInfo& pod) const {
  const std::vector<std::string>& gates = pod.get().spec.scheduling_gates;
  if (gates.empty()) return framework::Status::Success();
  // Interned, as a Status carries views: controllers use a few fixed gate names, so the distinct
  // messages stay few, and only gated pods build one.
  const std::string message =
      absl::StrCat(util::Absl(kReasonPrefix), "[", absl::StrJoin(gates, " "), "]");
  return framework::Status::Unresolvable(api::StableText(message));
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewSchedulingGates(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kSchedulingGates); !status.ok()) {
    return status;
  }
  return std::make_unique<SchedulingGates>();
}

}  // namespace kubesched::plugins
