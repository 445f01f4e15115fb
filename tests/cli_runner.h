// Runs the command line in-process, as main() does, capturing what it prints.
#ifndef ROOFLINE_TESTS_CLI_RUNNER_H_
#define ROOFLINE_TESTS_CLI_RUNNER_H_

#include <sstream>
#include <string>
#include <vector>

#include "tools/roofline/commands.h"

namespace roofline::testing {

/// Exit status and the two streams of one command.
struct CliOutput {
  int status;
  std::string out;
  std::string err;
};

inline CliOutput RunCli(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = cli::Run(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace roofline::testing

#endif  // ROOFLINE_TESTS_CLI_RUNNER_H_
