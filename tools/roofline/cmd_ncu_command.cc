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
  // What each group of metrics decides (docs/profiles.md, "Nsight Compute").
  // The architectures with fp8 tensor cores whose counter is not collected: Hopper and
  // data-centre Blackwell (Ada's and consumer Blackwell's are, the others have no fp8).
  const std::string& cc = line->compute_capability;
  const bool fp8_left_out = line->command.find("tensor_src_fp8") == std::string::npos &&
                            (cc == "9.0" || cc.rfind("10.", 0) == 0);
  *ctx.err << "# what decides a kernel's place and verdict:\n"
              "#   device: the compute capability, and device__attribute_multiprocessor_count "
              "where several parts share it\n"
              "#   time: gpu__time_duration.sum\n"
              "#   FLOPs: sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma} (an fma is 2) and "
              "the tensor cores' sm__ops_path_tensor_src_* (tensor-pipe instructions alone where "
              "no such counter is collected)\n"
              "#   bytes: dram__bytes_read/write.sum (DRAM), lts__t_bytes.sum (L2), "
              "l1tex__t_bytes.sum (L1)\n"
              "#   ceilings: the .peak_sustained metrics times their cycles per second; the "
              "verdict is the resource used most, if at least 50% of its ceiling\n";
  if (fp8_left_out) {
    *ctx.err << fmt::format(
        "#   not collected: an fp8 tensor counter (its name on compute capability {} is not "
        "confirmed by a public source, and one unknown name fails the whole ncu run); fp8 "
        "GEMMs are placed by their tensor-pipe instructions. `ncu --query-metrics | grep "
        "ops_path_tensor_src_fp8` lists it on your GPU: add it to --metrics\n",
        line->compute_capability);
  }
  return kExitOk;
}

}  // namespace roofline::cli
