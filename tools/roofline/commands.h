// The subcommand table and what every subcommand shares.
#ifndef ROOFLINE_TOOLS_ROOFLINE_COMMANDS_H_
#define ROOFLINE_TOOLS_ROOFLINE_COMMANDS_H_

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/status.h"

namespace roofline::cli {

/// Exit statuses of the tool.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;  ///< bad input of any kind
inline constexpr int kExitCheckFailed = 1;  ///< a check found a violation (validate published)

/// What a subcommand gets: its arguments (after the subcommand name) and the streams.
struct Context {
  std::vector<std::string> args;
  std::ostream* out;
  std::ostream* err;

  /// The device database (embedded, or $ROOFLINE_DATA_DIR/hardware), loaded on first use.
  Result<const DeviceDatabase*> Database();
  /// `--hw` resolution: a database id or a path to a device JSON file.
  Result<Device> ResolveHw(const std::string& spec);

 private:
  std::unique_ptr<DeviceDatabase> db_;
};

/// Prints `error: <where>: <what>` on one line and returns kExitUsage.
int Fail(Context& ctx, const Status& status);

using CommandFn = int (*)(Context& ctx);

/// One row of the subcommand table.
struct Command {
  const char* name;
  const char* help;  ///< one line
  CommandFn run;
};

/// All subcommands, in the order `roofline help` lists them.
const std::vector<Command>& Commands();

/// Entry point shared by main() and the CLI tests.
int Run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

// Subcommands (one file each).
int RunDefault(Context& ctx);
int RunHw(Context& ctx);
int RunEngines(Context& ctx);
int RunCalibrate(Context& ctx);
int RunOp(Context& ctx);
int RunModel(Context& ctx);
int RunModels(Context& ctx);
int RunSweepCommand(Context& ctx);
int RunPlan(Context& ctx);
int RunMeasure(Context& ctx);
int RunValidate(Context& ctx);
int RunProfile(Context& ctx);
int RunNcuCommand(Context& ctx);

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_COMMANDS_H_
