#include "scheduler/core/fit_error.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {

namespace {

// Collects, in one pass over the node statuses, the reason histogram and/or the plugins that
// rejected nodes (first seen first). A preemptor's FitError lists every node.
class Scan {
 public:
  Scan(const FitError& error, bool histogram, bool plugins) {
    if (plugins) AddPlugin(error.pre_filter_status.plugin());
    const bool count = histogram && error.pre_filter_status.IsSuccess();
    // Nodes rejected alike come in runs (a preemptor's thousands of "Insufficient cpu"): a run
    // is counted once, when it ends.
    const framework::Status* run = nullptr;
    size_t run_length = 0;
    for (const auto& node_status : error.node_statuses) {
      const framework::Status& status = node_status.status;
      if (count) {
        if (run != nullptr && SameReasons(*run, status)) {
          ++run_length;
        } else {
          AddRun(run, run_length);
          run = &status;
          run_length = 1;
        }
      }
      if (plugins) AddPlugin(status.plugin());
    }
    AddRun(run, run_length);
  }

  std::string Message(const FitError& error) const {
    std::string message = absl::StrCat("0/", error.num_all_nodes, " nodes are available");
    if (!error.pre_filter_status.IsSuccess()) {
      absl::StrAppend(&message, ": ", error.pre_filter_status.Message(), ".");
    } else {
      absl::StrAppend(&message, ": ", util::Join(histogram_.SortedParts(), ", "), ".");
    }
    if (!error.post_filter_message.empty()) {
      absl::StrAppend(&message, " ", error.post_filter_message, ".");
    }
    return message;
  }
  std::vector<std::string> TakePlugins() { return std::move(plugins_); }

 private:
  // The same characters at the same address: reasons and plugin names are stable texts, so a
  // repeated one nearly always is.
  static bool SameText(std::string_view a, std::string_view b) {
    return a.data() == b.data() && a.size() == b.size();
  }
  static bool SameReasons(const framework::Status& a, const framework::Status& b) {
    const auto x = a.reasons();
    const auto y = b.reasons();
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), SameText);
  }
  void AddRun(const framework::Status* run, size_t length) {
    if (run == nullptr) return;
    for (const std::string_view reason : run->reasons()) histogram_.Add(reason, length);
  }

  void AddPlugin(std::string_view plugin) {
    if (plugin.empty()) return;
    // Most nodes repeat the plugin added or found last: compare its address first.
    if (SameText(plugin, last_)) return;
    last_ = plugin;
    if (std::find(plugins_.begin(), plugins_.end(), plugin) == plugins_.end()) {
      plugins_.emplace_back(plugin);
    }
  }

  framework::ReasonCounts histogram_;
  std::vector<std::string> plugins_;
  std::string_view last_;
};

}  // namespace

std::string FitError::Message() const { return Scan(*this, true, false).Message(*this); }

std::vector<std::string> FitError::RejectingPlugins() const {
  return Scan(*this, false, true).TakePlugins();
}

FitError::Summary FitError::Summarize() const {
  Scan scan(*this, true, true);
  return {scan.Message(*this), scan.TakePlugins()};
}

}  // namespace kubesched::scheduler
