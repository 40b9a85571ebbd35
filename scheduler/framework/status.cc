#include "scheduler/framework/status.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::framework {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
  }
  return "Unknown";
}

Status Status::Error(std::string_view message) {
  return Status(Code::kError, api::StableText(message));
}

std::string Status::Message() const { return util::Join(reasons_, ", "); }

void ReasonCounts::Add(std::string_view reason, size_t count) {
  // Reasons are stable texts, so the same reason is nearly always the same characters: compare
  // addresses first (this runs for every failed node), and the text only when none matches.
  for (auto& [seen, n] : counts_) {
    if (seen.data() == reason.data() && seen.size() == reason.size()) {
      n += count;
      return;
    }
  }
  for (auto& [seen, n] : counts_) {
    if (seen == reason) {
      n += count;
      return;
    }
  }
  counts_.emplace_back(reason, count);
}

std::vector<std::string> ReasonCounts::SortedParts() const {
  std::vector<std::string> parts;
  parts.reserve(counts_.size());
  for (const auto& [reason, count] : counts_) {
    parts.push_back(absl::StrCat(count, " ", util::Absl(reason)));
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

}  // namespace kubesched::framework
