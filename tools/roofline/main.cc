// roofline: is an inference workload limited by compute, memory bandwidth, capacity or the
// interconnect? See README.md.
#include <iostream>
#include <string>
#include <vector>

#include "tools/roofline/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return roofline::cli::Run(args, std::cout, std::cerr);
}
