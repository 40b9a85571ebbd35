#include "scheduler/api/cordon.h"

#include <string>

namespace kubesched::api {

bool ToleratesCordon(const std::vector<Toleration>& tolerations) {
  static const Taint* const cordon =
      new Taint{std::string(kUnschedulableTaintKey), "", TaintEffect::kNoSchedule};
  for (const Toleration& toleration : tolerations) {
    if (toleration.Tolerates(*cordon)) return true;
  }
  return false;
}

}  // namespace kubesched::api
