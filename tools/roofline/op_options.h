// The `op` command's options and parser, shared with `validate op`.
#ifndef ROOFLINE_TOOLS_ROOFLINE_OP_OPTIONS_H_
#define ROOFLINE_TOOLS_ROOFLINE_OP_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>

#include "roofline/scenario.h"
#include "roofline/op_analysis.h"
#include "tools/roofline/scenario_options.h"
#include "roofline/output_format.h"
#include "tools/roofline/commands.h"

namespace roofline::cli {

/// Options every `op` subcommand shares.
struct CommonOptions {
  std::string hw = kDefaultDeviceId;  ///< device id or device JSON path
  OutputFormat format = OutputFormat::kTable;
  bool explain = false;        ///< print the derivation and the flip point
  std::string dtype = "bf16";  ///< activation dtype
  /// --ceilings, --runtime, --efficiency, --weight-kernel, --accumulate, --modules (the
  /// scenario fields of expected times).
  Scenario expected;
};

/// The scenario fields an op takes: the expected-time choices.
FieldSet OpFields();

/// A parsed `op <kind> ...` command line.
struct OpCommand {
  CommonOptions common;
  Result<OpRequest> request = Status::Invalid("op", "no operator given");
};

/// Parses ctx.args as `<kind> [options]` (matmul, attention, ...); `extra` adds options to every
/// kind's subcommand. Returns an exit status when done (help or error printed).
std::optional<int> ParseOpCommand(Context& ctx, OpCommand* cmd,
                                  const std::function<void(CLI::App*)>& extra);

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_OP_OPTIONS_H_
