#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "scheduler/util/exit_codes.h"

namespace kubesched::scheduler {

// Runs the command line `args` (without the program name); returns the exit code.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kubesched::scheduler
