// The command line of a Scenario: each row of the field table (roofline/scenario.h) as a CLI11
// option of the commands that take it, read back through SetField after parsing.
#ifndef ROOFLINE_TOOLS_ROOFLINE_SCENARIO_OPTIONS_H_
#define ROOFLINE_TOOLS_ROOFLINE_SCENARIO_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <array>
#include <string>
#include <vector>

#include "roofline/scenario.h"

namespace roofline::cli {

/// The options of the fields in `fields` on `app`. Values are kept as given and read into a
/// Scenario by Read (so every message comes from the field table, not from CLI11).
class ScenarioOptions {
 public:
  /// Adds one option per field of `fields` (kModel as `--model`; commands that take the model
  /// as their argument leave it out). `defaults` supplies the defaults --help shows.
  ScenarioOptions(CLI::App& app, FieldSet fields, const Scenario& defaults = {});
  ScenarioOptions(const ScenarioOptions&) = delete;
  ScenarioOptions& operator=(const ScenarioOptions&) = delete;

  /// Reads every option given (in table order; repeatable ones in the order given) into `s`.
  /// Errors name the flag.
  Status Read(Scenario& s) const;

 private:
  CLI::App* app_;
  FieldSet fields_;
  std::array<std::string, kNumFields> text_;
  std::array<std::vector<std::string>, kNumFields> list_;
  std::array<bool, kNumFields> flag_{};
};

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_SCENARIO_OPTIONS_H_
