// `roofline ncu-command --hw ID [--app CMD] [-o FILE]`: the Nsight Compute command line that
// collects what `roofline profile ncu` needs for a roofline on that device's architecture.
#include <fmt/format.h>

#include <ostream>
#include <string>

#include "roofline/profile.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

int RunNcuCommand(Context& ctx) {
  CLI::App app{
      "Print the Nsight Compute (ncu) command line that collects a roofline for --hw's "
      "architecture: time, FP32/FP64/FP16 instruction counts, tensor-pipe activity, DRAM / L2 / "
      "L1 bytes, cycles and peaks, as a CSV `roofline profile ncu` reads.\n"
      "example: roofline ncu-command --hw h100-sxm --app \"python run.py\" -o run.csv",
      "roofline ncu-command"};
  NcuCommandRequest o;
  app.add_option("--hw", o.hw, "device id or device JSON file (an NVIDIA GPU)")->required();
  app.add_option("--app", o.app, "the program to profile, as a shell command")
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "CSV file ncu writes (its --log-file)")
      ->capture_default_str();
  app.add_option("--kernel-regex", o.kernel_regex,
                 "profile only kernels whose name matches (ncu --kernel-name regex:...)");
  app.add_option("--launch-count", o.launch_count, "profile this many kernels (0: all)")
      ->capture_default_str();
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = CheckNcuCommandRequest(o); !st.ok()) return Fail(ctx, st);  // before --hw
  Result<Device> device = ctx.ResolveHw(o.hw);
  if (!device.ok()) return Fail(ctx, device.status());
  Result<NcuCommandLine> line = MakeNcuCommand(*device, o);
  if (!line.ok()) return Fail(ctx, line.status());
  *ctx.out << line->command << "\n";
  *ctx.err << fmt::format(
      "# {} (compute capability {}): {} metrics. Then: roofline profile ncu {} --hw {}\n",
      device->name, line->compute_capability, line->metrics, ShellQuote(o.output),
      ShellQuote(o.hw));
  return kExitOk;
}

}  // namespace roofline::cli
