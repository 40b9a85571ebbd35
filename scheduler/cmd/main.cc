#include <iostream>
#include <string>
#include <vector>

#include "scheduler/cmd/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return kubesched::scheduler::RunCli(args, std::cout, std::cerr);
}
