#include "scheduler/api/objects.h"

namespace kubesched::api {

// Upstream's ToleratesTaint, except that an empty key is a wildcard only together with Exists:
// the API server rejects an empty key with Equal, so such a toleration matches nothing here.
bool Toleration::Tolerates(const Taint& taint) const {
  if (effect != TaintEffect::kNone && effect != taint.effect) return false;
  if (op == TolerationOperator::kExists) return key.empty() || key == taint.key;
  return key == taint.key && value == taint.value;
}

}  // namespace kubesched::api
