#pragma once

// `kubesched simulate` and `kubesched explain`: their flags, --help, and the input they run on (a
// dump, or a live cluster read once).

#include <ostream>
#include <string>
#include <vector>

namespace kubesched::scheduler {

// args[0] is the command's name; each returns the exit code.
int Simulate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int Explain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kubesched::scheduler
