// `roofline sweep MODEL --vary NAME=FROM:TO[:xF|+S] [--vary ...]`.
#include <string>

#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

int RunSweepCommand(Context& ctx) {
  CLI::App app{
      "Vary one or two workload variables; find exactly where the binding resource "
      "changes, where memory runs out and where communication overtakes compute.\n"
      "example: roofline sweep llama-3-8b --hw h100-sxm --vary batch=1:1024 --phase "
      "decode\n"
      "example: roofline sweep resnet50.json --hw h100-sxm --vary batch=1:64:x2 (a graph "
      "file or ONNX model: NAME is any of its symbolic dimensions)",
      "roofline sweep"};
  Scenario s;
  SweepViewOptions so;
  ViewRequest request;
  app.add_option("MODEL", s.model, std::string(FieldOf(FieldId::kModel).help))->required();
  app.add_option("--vary", so.vary,
                 "NAME=FROM:TO (doubling), NAME=FROM:TO:xF, NAME=FROM:TO:+S or NAME=A,B,C; NAME "
                 "is batch, prompt, context, tp, dtype, weight-dtype or kv-dtype; once or twice; "
                 "integers take k and M (x1024, x1024^2): context=1k:128k; hw=ID,ID,... sweeps "
                 "the devices (with at most one other variable)")
      ->required();
  const ScenarioOptions options(app, WorkloadFields());
  AddFormatOption(app, request.format, {"table", "json", "csv", "npy"});
  std::string layout = "columns";
  app.add_option("--json-layout", layout,
                 "--format json: columns (\"schema\": 2, one array per column; default) or rows "
                 "(one object per point)")
      ->check(CLI::IsMember({"columns", "rows"}));
  app.add_option("--plot", request.plot, "write an SVG of time against the first variable");
  app.add_option("--report", request.report, "write a self-contained HTML report");
  app.add_option("--explain", so.explain,
                 "LLM configs: derive every figure of the kernel named KERNEL on both sides of "
                 "each crossover of its class (else at the first and last grid points)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  request.layout = layout == "rows" ? JsonLayout::kRows : JsonLayout::kColumns;
  if (app.count("--json-layout") > 0 && request.format != OutputFormat::kJson) {
    return Fail(ctx, Status::Invalid("--json-layout", "goes with --format json"));
  }
  Result<Views> views = SweepViews(s, so, request, [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

}  // namespace roofline::cli
