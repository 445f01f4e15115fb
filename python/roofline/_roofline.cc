// The extension module of the Python package: the CLI's subcommand table, run in-process on an
// argument list, with its output and its one-line error returned as strings. The Python layer
// (python/roofline/*.py) builds the argument lists, asks for JSON and turns it into result
// objects, so the package and the CLI compute and print the same numbers by construction.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "roofline/scenario.h"
#include "tools/roofline/commands.h"

namespace nb = nanobind;

namespace {

/// Runs `roofline ARGV...`; returns (exit status, stdout, stderr).
std::tuple<int, std::string, std::string> RunCli(const std::vector<std::string>& argv) {
  std::ostringstream out;
  std::ostringstream err;
  // The library keeps per-thread caches but no state shared between calls; the GIL stays held,
  // so calls from several Python threads run one at a time.
  const int status = roofline::cli::Run(argv, out, err);
  return {status, out.str(), err.str()};
}

/// The Scenario's field table: (name, flag, type, default, help, choices, scope) per field.
using FieldRow = std::tuple<std::string, std::string, std::string, std::string, std::string,
                            std::vector<std::string>, std::string>;
std::vector<FieldRow> Fields() {
  static constexpr const char* kTypes[] = {"text", "size", "count", "real",
                                           "dtype", "choice", "flag", "pairs"};
  std::vector<FieldRow> out;
  for (const roofline::Field& f : roofline::ScenarioFields()) {
    const std::string scope = f.scope == roofline::kScopeBoth  ? "both"
                              : f.scope == roofline::kScopeLlm ? "llm"
                                                               : "network";
    out.emplace_back(std::string(f.name), std::string(f.flag),
                     kTypes[static_cast<int>(f.type)], std::string(f.fallback),
                     std::string(f.help),
                     std::vector<std::string>(f.choices.begin(), f.choices.end()), scope);
  }
  return out;
}

}  // namespace

NB_MODULE(_roofline, m) {
  m.doc() = "roofline's C++ core: run(argv) -> (status, stdout, stderr), as the CLI would";
  m.def("run", &RunCli, nb::arg("argv"),
        "Runs one roofline subcommand in-process, e.g. run(['model', 'llama-3-8b', '--format', "
        "'json']). Returns (exit status, stdout, stderr): 0 on success, 2 with one 'error: ...' "
        "line on bad input, 1 when a check found a violation.");
  m.def("fields", &Fields,
        "The scenario's field table, one (name, flag, type, default, help, choices, scope) per "
        "option: the keywords model() and sweep() take.");
  m.attr("exit_ok") = roofline::cli::kExitOk;
  m.attr("exit_usage") = roofline::cli::kExitUsage;
  m.attr("exit_check_failed") = roofline::cli::kExitCheckFailed;
}
