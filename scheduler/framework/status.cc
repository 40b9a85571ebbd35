#include "scheduler/framework/status.h"

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

}  // namespace kubesched::framework
