#include <iostream>
#include <string>
#include <vector>

#include "scheduler/cmd/cli.h"
#include "scheduler/util/process_setup.h"

int main(int argc, char** argv) {
  kubesched::util::SetUpProcess();
  std::vector<std::string> args(argv + 1, argv + argc);
  return kubesched::scheduler::RunCli(args, std::cout, std::cerr);
}
