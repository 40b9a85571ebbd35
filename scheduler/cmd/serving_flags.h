#pragma once

// `kubesched run`'s secure-port flags, named as kube-scheduler names them.

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "scheduler/run/secure_serving.h"

namespace kubesched::scheduler {

// Reads the flags through `get` (the value of a flag, nullopt when absent) into `options`. False
// after printing an error naming the flag.
bool ParseServingFlags(const std::function<std::optional<std::string>(const std::string&)>& get,
                       SecureServingOptions* options, std::ostream& err);

}  // namespace kubesched::scheduler
