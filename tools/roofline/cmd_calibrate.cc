// `roofline calibrate RUNS... -o engine.json [--engine BASE] [--model M --hw H ...]`.
#include <ostream>

#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

int RunCalibrate(Context& ctx) {
  CLI::App app{
      "Fit an engine's host work per step and per request to your own measured runs (never a "
      "kernel figure), report the fit's errors (on the runs, leaving one run out, leaving one "
      "setting out) and write an engine file for --engine. Runs: rows of scenario fields with "
      "ttft_s / tpot_s (JSON or CSV), published runs, or the result files of vllm bench serve, "
      "sglang.bench_serving and genai-perf, whose model, device and layout come from the "
      "options.\nexample: roofline calibrate runs.csv -o my-vllm.json --engine vllm@0.6.3",
      "roofline calibrate"};
  CalibrateViewOptions v;
  app.add_option("RUNS", v.files, "files of measured runs")->required();
  app.add_option("-o,--output", v.output, "the engine file to write")->required();
  app.add_option("--check", v.check,
                 "files of runs to predict with the fit, not fitted on (repeatable)");
  FieldSet fields = Without(ScenarioFieldsOf(kScopeLlm), {FieldId::kPhase});
  fields.set(static_cast<size_t>(FieldId::kModel));
  const ScenarioOptions options(app, fields);
  OutputFormat format = OutputFormat::kTable;
  AddFormatOption(app, format, {"table", "json"});
  if (auto done = ParseArgs(app, ctx)) return *done;
  Scenario s;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  ViewRequest request;
  request.format = format;
  Result<Views> views = CalibrateViews(s, v, request, [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

}  // namespace roofline::cli
