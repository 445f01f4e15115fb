// `roofline profile ncu|nsys|torch FILE [--hw ID] [--model MODEL ...] [--plot out.svg]`.
#include <sstream>

#include "tools/roofline/cli_util.h"
#include "tools/roofline/profile_common.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {
namespace {

/// A profile's subcommand, with the scenario options of its --model.
std::unique_ptr<ScenarioOptions> AddProfileOptions(CLI::App* sub, ProfileOptions& o,
                                                   const char* file_help) {
  sub->add_option("FILE", o.file, file_help)->required();
  sub->add_option("--model", o.model.model,
                  "join with the prediction for this model (preset id or config.json), with the "
                  "workload options");
  // --phase: the predicted phase the profile ran (decode unless told).
  auto options = std::make_unique<ScenarioOptions>(
      *sub, Without(ScenarioFieldsOf(kScopeLlm), {FieldId::kModel}), o.model);
  sub->add_option("--plot", o.plot, "write measured (and predicted) kernels on one roofline, SVG");
  sub->add_option("--top", o.top, "kernels listed in the per-kernel tables (0: all)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  AddFormatOption(*sub, o.format, {"table", "json"});
  return options;
}

}  // namespace

int RunProfile(Context& ctx) {
  CLI::App app{
      "Profiler output on the roofline: each measured kernel placed against the device's "
      "ceilings and classified, and with --model set beside the predicted kernels.\n"
      "examples: roofline profile ncu gemm.csv --hw a100-sxm-80gb\n"
      "          roofline profile nsys kern_sum.csv\n"
      "          roofline profile torch trace.json.gz --model llama-3-8b --phase decode "
      "--batch 8 --plot decode.svg",
      "roofline profile"};
  app.require_subcommand(1, 1);
  ProfileOptions ncu, nsys, torch;
  for (ProfileOptions* o : {&ncu, &nsys, &torch}) {
    o->model.model.clear();
    o->model.hw.clear();
    o->model.phases = PhaseSelection::kDecode;
  }
  CLI::App* s_ncu = app.add_subcommand(
      "ncu",
      "Nsight Compute CSV (`ncu --csv`, details/--metrics or raw page): per kernel "
      "FLOPs by precision, bytes per level, intensity, achieved vs roof, verdict");
  const auto ncu_options = AddProfileOptions(s_ncu, ncu, "ncu CSV file");
  CLI::App* s_nsys = app.add_subcommand(
      "nsys",
      "Nsight Systems `nsys stats` CSV (cuda_gpu_kern_sum / gpukernsum / cuda_gpu_trace): "
      "time per kernel and op class");
  const auto nsys_options = AddProfileOptions(s_nsys, nsys, "nsys stats CSV file");
  CLI::App* s_torch = app.add_subcommand(
      "torch",
      "PyTorch profiler Chrome trace (.json or .json.gz): kernels joined to aten ops, "
      "FLOPs and bytes from recorded shapes");
  const auto torch_options = AddProfileOptions(s_torch, torch, "trace file (.json or .json.gz)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  ProfileOptions& o = s_ncu->parsed() ? ncu : (s_nsys->parsed() ? nsys : torch);
  const ScenarioOptions& options =
      *(s_ncu->parsed() ? ncu_options : (s_nsys->parsed() ? nsys_options : torch_options));
  if (Status st = options.Read(o.model); !st.ok()) return Fail(ctx, st);
  const CLI::App* sub = s_ncu->parsed() ? s_ncu : (s_nsys->parsed() ? s_nsys : s_torch);
  o.top_given = sub->count("--top") > 0;
  if (o.model.model.empty()) {
    // The workload describes the prediction the profile is joined to: nothing without one.
    for (const Field& f : ScenarioFields()) {
      if (f.id != FieldId::kHw && o.model.Given(f.id)) {
        return Fail(ctx, Status::Invalid(std::string(f.flag),
                                         "describes the prediction joined with --model MODEL; "
                                         "give --model or drop it"));
      }
    }
  }
  if (o.model.phases == PhaseSelection::kBoth) {
    return Fail(ctx, Status::Invalid("--phase", "a profile ran one phase: prefill or decode"));
  }
  // The report is held back until the command has succeeded: a failure late on (the plot file)
  // leaves only the one-line error, not half a report.
  std::ostringstream report;
  std::ostream* const out = ctx.out;
  ctx.out = &report;
  int status = kExitOk;
  if (s_ncu->parsed()) {
    status = RunProfileNcu(ctx, ncu);
  } else if (s_nsys->parsed()) {
    status = RunProfileNsys(ctx, nsys);
  } else {
    status = RunProfileTorch(ctx, torch);
  }
  ctx.out = out;
  if (status == kExitOk) *out << report.str();
  return status;
}

}  // namespace roofline::cli
