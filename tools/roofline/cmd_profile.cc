// `roofline profile ncu|nsys|torch FILE [--hw ID] [--model MODEL ...] [--plot out.svg]`.
#include <array>

#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

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
  struct Kind {
    ProfileKind kind;
    const char *name, *help, *file_help;
  };
  static constexpr std::array<Kind, 3> kKinds = {{
      {ProfileKind::kNcu, "ncu",
       "Nsight Compute CSV (`ncu --csv`, details/--metrics or raw page): per kernel FLOPs by "
       "precision, bytes per level, intensity, achieved vs roof, verdict",
       "ncu CSV file"},
      {ProfileKind::kNsys, "nsys",
       "Nsight Systems `nsys stats` CSV (cuda_gpu_kern_sum / gpukernsum / cuda_gpu_trace): time "
       "per kernel and op class",
       "nsys stats CSV file"},
      {ProfileKind::kTorch, "torch",
       "PyTorch profiler Chrome trace (.json or .json.gz): kernels joined to aten ops, FLOPs and "
       "bytes from recorded shapes",
       "trace file (.json or .json.gz)"},
  }};
  std::array<ProfileViewOptions, 3> options;
  std::array<ViewRequest, 3> requests;
  std::array<CLI::App*, 3> subs{};
  std::array<std::unique_ptr<ScenarioOptions>, 3> scenario;
  for (size_t i = 0; i < kKinds.size(); ++i) {
    ProfileViewOptions& o = options[i];
    o.kind = kKinds[i].kind;  // no --model, no --hw, the decode phase (ProfileViewOptions)
    CLI::App* sub = subs[i] = app.add_subcommand(kKinds[i].name, kKinds[i].help);
    sub->add_option("FILE", o.file, kKinds[i].file_help)->required();
    sub->add_option("--model", o.model.model,
                    "join with the prediction for this model (preset id or config.json), with "
                    "the workload options");
    scenario[i] = std::make_unique<ScenarioOptions>(
        *sub, Without(ScenarioFieldsOf(kScopeLlm), {FieldId::kModel}), o.model);
    sub->add_option("--plot", requests[i].plot,
                    "write measured (and predicted) kernels on one roofline, SVG");
    sub->add_option("--top", o.top, "kernels listed in the per-kernel tables (0: all)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    AddFormatOption(*sub, requests[i].format, {"table", "json"});
  }
  if (auto done = ParseArgs(app, ctx)) return *done;
  size_t k = 0;
  while (!subs[k]->parsed()) ++k;
  ProfileViewOptions& o = options[k];
  if (Status st = scenario[k]->Read(o.model); !st.ok()) return Fail(ctx, st);
  o.top_given = subs[k]->count("--top") > 0;
  Result<Views> views = ProfileViews(o, requests[k], [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, requests[k]);
}

}  // namespace roofline::cli
