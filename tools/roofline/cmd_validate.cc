// `roofline validate (op KIND ... | MODEL ...) --device cpu --hw profile.json
// [--save-calibration]`.
#include <algorithm>
#include <string>
#include <vector>

#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/op_options.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {
namespace {

/// Options `validate` adds to the op or model flags.
void AddValidateOptions(CLI::App* app, ValidateViewOptions& v) {
  app->add_option("--device", v.run.device,
                  "where to run the kernels: cpu (in fp32), or cuda[:N] (in the op's dtype; needs "
                  "the CUDA backend and a GPU)")
      ->capture_default_str();
  app->add_option("--threads", v.run.threads, "threads (0: every online CPU)")
      ->capture_default_str();
  app->add_option("--repetitions", v.run.repetitions, "timed runs per kernel (median reported)")
      ->capture_default_str();
  app->add_flag("--save-calibration", v.save_calibration,
                "store the fitted efficiencies in the --hw profile file");
}

/// True when the arguments ask for `--device cuda...` (checked before parsing, to pick defaults).
bool ArgsWantCuda(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--device" && i + 1 < args.size() && args[i + 1].rfind("cuda", 0) == 0) {
      return true;
    }
    if (args[i].rfind("--device=cuda", 0) == 0) return true;
  }
  return false;
}

}  // namespace

/// `validate published|serving [FILE]`: a file of runs (default: the embedded one) checked
/// against the model; a bound that does not hold fails the check (status 1).
int RunRunsCheck(Context& ctx, const std::string& what, const std::string& file_name,
                 std::vector<std::string> formats,
                 Result<Views> (*views_of)(const std::string&, const ViewRequest&),
                 const std::string& description) {
  CLI::App app{description + "\nexample: roofline validate " + what, "roofline validate " + what};
  std::string file;
  OutputFormat format = OutputFormat::kTable;
  app.add_option("FILE", file,
                 "runs to check (default: the embedded data/validation/" + file_name + ")");
  AddFormatOption(app, format, std::move(formats));
  if (auto done = ParseArgs(app, ctx)) return *done;
  ViewRequest request;
  request.format = format;
  Result<Views> views = views_of(file, request);
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

int RunValidatePublished(Context& ctx) {
  return RunRunsCheck(ctx, "published", "published_runs.json", {"table", "json", "csv", "npy"},
                      PublishedViews,
                      "Check the bound and the expected time against published end-to-end runs "
                      "(each with its source): the validation table of docs/validation.md.");
}

int RunValidateServing(Context& ctx) {
  return RunRunsCheck(ctx, "serving", "serving_runs.json", {"table", "json"}, ServingViews,
                      "Check the plan's continuous-batching point against published serving "
                      "runs at their load (requests in flight, prompt and output tokens): the "
                      "serving validation of docs/validation.md.");
}

int RunValidate(Context& ctx) {
  ValidateViewOptions v;
  if (!ctx.args.empty() && ctx.args[0] == "published") {
    ctx.args.erase(ctx.args.begin());
    return RunValidatePublished(ctx);
  }
  if (!ctx.args.empty() && ctx.args[0] == "serving") {
    ctx.args.erase(ctx.args.begin());
    return RunValidateServing(ctx);
  }
  if (!ctx.args.empty() && ctx.args[0] == "op") {
    ctx.args.erase(ctx.args.begin());
    // The host computes in fp32: predict in fp32 too unless the user chose a dtype (a GPU runs
    // the op's own dtype).
    if (std::find(ctx.args.begin(), ctx.args.end(), "--dtype") == ctx.args.end() &&
        !ctx.args.empty() && !ArgsWantCuda(ctx.args)) {
      ctx.args.push_back("--dtype");
      ctx.args.push_back("fp32");
    }
    OpCommand cmd;
    if (auto done = ParseOpCommand(ctx, &cmd, [&](CLI::App* a) { AddValidateOptions(a, v); })) {
      return *done;
    }
    ViewRequest request;
    request.format = cmd.common.format;
    Result<Views> views =
        ValidateOpViews(*cmd.request, cmd.common.hw, v, request, [&ctx] { return ctx.Database(); });
    if (!views.ok()) return Fail(ctx, views.status());
    return Emit(ctx, *views, request);
  }
  CLI::App app{
      "Run a model's kernels (or one op: `validate op matmul ...`) for real on this "
      "machine and compare each with its predicted bound; fit one efficiency per kernel "
      "class.\nexample: roofline validate llama-3.2-1b --hw cpu.json --phase decode",
      "roofline validate"};
  Scenario sc;
  app.add_option("MODEL", sc.model, "preset id, config.json, or a directory holding one")
      ->required();
  const ScenarioOptions options(app, ScenarioFieldsOf(kScopeLlm));
  OutputFormat format = OutputFormat::kTable;
  AddFormatOption(app, format, {"table", "json"});
  AddValidateOptions(&app, v);
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = options.Read(sc); !st.ok()) return Fail(ctx, st);
  ViewRequest request;
  request.format = format;
  Result<Views> views = ValidateModelViews(sc, v, request, [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

}  // namespace roofline::cli
