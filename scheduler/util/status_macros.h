#pragma once

#include "absl/status/status.h"

// The project's one early-return macro: evaluates `expr` (an absl::Status) and returns it from
// the enclosing function if it is not OK.
#define KUBESCHED_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    absl::Status kubesched_status_ = (expr);               \
    if (!kubesched_status_.ok()) return kubesched_status_; \
  } while (0)
