// `roofline ncu-command --hw ID [--app CMD] [-o FILE]`: the Nsight Compute command line that
// collects what `roofline profile ncu` needs for a roofline on that device's architecture.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "roofline/profile.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {
namespace {

/// Options of `roofline ncu-command`.
struct NcuCommandOptions {
  std::string hw;                           ///< device id or JSON file (an NVIDIA GPU)
  std::string app = "python run.py";        ///< the program to profile, a shell command
  std::string output = "roofline-ncu.csv";  ///< CSV file ncu writes (--log-file)
  std::string kernel_regex;                 ///< only kernels whose name matches
  int64_t launch_count = 0;                 ///< kernels to profile, 0 = all
};

/// `s` quoted for a POSIX shell when it holds anything but safe characters.
std::string ShellQuote(const std::string& s) {
  const std::string safe = "+-./:=@%_,";
  bool plain = !s.empty();
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && safe.find(c) == std::string::npos) {
      plain = false;
    }
  }
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The device's compute capability as "9.0", or an error naming --hw.
Result<std::string> ComputeCapabilityOf(const Device& d, const std::string& hw) {
  if (d.vendor != "NVIDIA" || d.kind != "gpu") {
    return Status::Unsupported(
        "--hw", fmt::format("{} is not an NVIDIA GPU (vendor {}, kind {}): Nsight Compute "
                            "profiles NVIDIA GPUs only",
                            hw, d.vendor.empty() ? "unknown" : d.vendor, d.kind));
  }
  for (const auto& [key, q] : d.info) {
    if (key != "compute_capability") continue;
    if (!(q.value >= 1 && q.value < 100)) {
      return Status::Invalid("--hw", fmt::format("{}: info.compute_capability {} is not a "
                                                 "compute capability (e.g. 9.0)",
                                                 hw, q.value));
    }
    const int major = static_cast<int>(std::floor(q.value + 1e-6));
    const int minor = static_cast<int>(std::lround((q.value - major) * 10));
    return fmt::format("{}.{}", major, minor);
  }
  return Status::Invalid(
      "--hw", fmt::format("{} has no info.compute_capability: add it to the device file (e.g. "
                          "\"compute_capability\": {{ \"value\": 9.0, \"unit\": \"count\", ... }})",
                          hw));
}

}  // namespace

int RunNcuCommand(Context& ctx) {
  CLI::App app{
      "Print the Nsight Compute (ncu) command line that collects a roofline for --hw's "
      "architecture: time, FP32/FP64/FP16 instruction counts, tensor-pipe activity, DRAM / L2 / "
      "L1 bytes, cycles and peaks, as a CSV `roofline profile ncu` reads.\n"
      "example: roofline ncu-command --hw h100-sxm --app \"python run.py\" -o run.csv",
      "roofline ncu-command"};
  NcuCommandOptions o;
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
  if (o.launch_count < 0) {
    return Fail(ctx, Status::Invalid("--launch-count", "must be >= 0 (0: every kernel)"));
  }
  if (o.app.find_first_not_of(" \t") == std::string::npos) {
    return Fail(ctx, Status::Invalid("--app", "is empty: give the command to profile"));
  }
  if (o.output.empty()) return Fail(ctx, Status::Invalid("--output", "is empty"));
  Result<Device> device = ctx.ResolveHw(o.hw);
  if (!device.ok()) return Fail(ctx, device.status());
  Result<std::string> cc = ComputeCapabilityOf(*device, o.hw);
  if (!cc.ok()) return Fail(ctx, cc.status());
  const std::vector<std::string> metrics = NcuRooflineMetrics(*cc);
  if (metrics.empty()) {
    return Fail(ctx, Status::Unsupported("--hw",
                                         "no Nsight Compute metric list for compute "
                                         "capability " +
                                             *cc));
  }
  std::string list;
  for (const std::string& m : metrics) list += (list.empty() ? "" : ",") + m;
  std::string cmd = "ncu --target-processes all --metrics " + list +
                    " --csv --page raw --print-units base --clock-control none";
  if (!o.kernel_regex.empty()) cmd += " --kernel-name " + ShellQuote("regex:" + o.kernel_regex);
  if (o.launch_count > 0) cmd += fmt::format(" --launch-count {}", o.launch_count);
  cmd += " --log-file " + ShellQuote(o.output) + " " + o.app;
  *ctx.out << cmd << "\n";
  *ctx.err << fmt::format(
      "# {} (compute capability {}): {} metrics. Then: roofline profile ncu {} --hw {}\n",
      device->name, *cc, metrics.size(), ShellQuote(o.output), ShellQuote(o.hw));
  return kExitOk;
}

}  // namespace roofline::cli
