#include "scheduler/framework/node_groups.h"

#include <algorithm>

namespace kubesched::framework {

bool ToleratesGroup(const std::vector<api::Toleration>& tolerations, const NodeGroup& group) {
  return std::all_of(group.taints.begin(), group.taints.end(), [&](const api::Taint& taint) {
    return std::any_of(tolerations.begin(), tolerations.end(),
                       [&](const api::Toleration& t) { return t.Tolerates(taint); });
  });
}

}  // namespace kubesched::framework
