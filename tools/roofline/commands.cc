#include "tools/roofline/commands.h"

#include <fmt/format.h>

#include <iostream>

#include "roofline/suggest.h"

namespace roofline::cli {

Result<const DeviceDatabase*> Context::Database() {
  if (!db_) {
    Result<DeviceDatabase> db = DeviceDatabase::LoadDefault();
    if (!db.ok()) return db.status();
    db_ = std::make_unique<DeviceDatabase>(std::move(db).value());
  }
  return db_.get();
}

Result<Device> Context::ResolveHw(const std::string& spec) {
  Result<const DeviceDatabase*> db = Database();
  if (!db.ok()) return db.status();
  return ResolveDevice(spec, **db);
}

int Fail(Context& ctx, const Status& status) {
  std::string line = status.ToString();
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  *ctx.err << "error: " << line << "\n";
  return kExitUsage;
}

namespace {

int RunHelp(Context& ctx) {
  std::ostream& out = *ctx.out;
  out << "roofline: is an inference workload limited by arithmetic, memory bandwidth, memory\n"
         "capacity or the interconnect - per kernel, with every number traced to its source.\n\n"
         "usage: roofline                      the main job on embedded defaults\n"
         "       roofline [--model M] [options] the main job with `roofline model`'s options\n"
         "       roofline <command> [options]  (roofline <command> --help for its options)\n\n"
         "commands:\n";
  for (const Command& c : Commands()) out << fmt::format("  {:<11} {}\n", c.name, c.help);
  out << "\nConventions: 1 FLOP = one multiply or one add (a multiply-accumulate is 2 FLOP);\n"
         "decimal prefixes (GB = 1e9 B, TFLOP/s = 1e12 FLOP/s). Errors: one line on stderr,\n"
         "exit status 2. Set ROOFLINE_DATA_DIR to use another data/ directory.\n";
  return kExitOk;
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"model", "an LLM (preset or HF config.json) on a device: prefill and decode, per kernel",
       RunModel},
      {"models", "model presets: `models list`", RunModels},
      {"measure", "measure this machine's ceilings (CPU) into a device profile", RunMeasure},
      {"validate", "run a model's (or an op's) kernels for real: predicted bound vs measured",
       RunValidate},
      {"profile",
       "profiler output on the roofline: `profile ncu|nsys|torch FILE` (with --model: against "
       "the prediction)",
       RunProfile},
      {"ncu-command", "the Nsight Compute command line that collects a roofline for --hw ID",
       RunNcuCommand},
      {"sweep", "vary batch/prompt/context/tp/dtype: exact crossovers, capacity and comm walls",
       RunSweepCommand},
      {"plan", "serving estimate for a fleet: batch, latency, throughput, cost per token", RunPlan},
      {"hw", "the device database: `hw list`, `hw show ID`", RunHw},
      {"op",
       "one operator on one device: matmul, attention, elementwise, conv2d, norm, softmax, "
       "embedding",
       RunOp},
      {"help", "this list", RunHelp},
  };
  return kCommands;
}

int Run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  if (argv.empty()) return RunDefault(ctx);
  const std::string& name = argv[0];
  if (name == "--help" || name == "-h") return RunHelp(ctx);
  if (name == "--version") {
    out << "roofline 0.1.0\n";
    return kExitOk;
  }
  if (name.size() > 1 && name[0] == '-') {
    // Options without a command: the main job with them.
    ctx.args.assign(argv.begin(), argv.end());
    return RunDefault(ctx);
  }
  ctx.args.assign(argv.begin() + 1, argv.end());
  for (const Command& c : Commands()) {
    if (name == c.name) return c.run(ctx);
  }
  std::vector<std::string> names;
  for (const Command& c : Commands()) names.emplace_back(c.name);
  return Fail(
      ctx, Status::Invalid("roofline", "unknown command '" + name + "'" + DidYouMean(name, names) +
                                           " (see `roofline help`)"));
}

}  // namespace roofline::cli
