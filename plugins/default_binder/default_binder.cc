#include "plugins/default_binder/default_binder.h"

#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {

std::string_view DefaultBinder::Name() const { return names::kDefaultBinder; }

framework::Status DefaultBinder::Bind(framework::CycleState& /*state*/,
                                      const framework::PodInfo& pod, std::string_view node_name) {
  if (binder_ == nullptr) {
    return framework::Status(framework::Code::kError, "DefaultBinder: no binder configured");
  }
  return binder_->BindPod(pod.get(), node_name);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewDefaultBinder(const config::PluginArgs& args,
                                                                    const PluginHandle& handle) {
  if (auto status = helper::ExpectNoArgs(args, names::kDefaultBinder); !status.ok()) return status;
  return std::make_unique<DefaultBinder>(handle.binder);
}

}  // namespace kubesched::plugins
