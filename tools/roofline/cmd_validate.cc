// `roofline validate (op KIND ... | MODEL ...) --device cpu --hw profile.json
// [--save-calibration]`.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <memory>
#include <ostream>

#include "roofline/device_db.h"
#include "roofline/published.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "roofline/validate.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/op_options.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {
namespace {

/// Options `validate` adds to the op or model flags.
struct ValidateOptions {
  ValidateRequest request;
  bool save = false;
};

void AddValidateOptions(CLI::App* app, ValidateOptions& v) {
  app->add_option("--device", v.request.device,
                  "where to run the kernels: cpu (in fp32), or cuda[:N] (in the op's dtype; needs "
                  "the CUDA backend and a GPU)")
      ->capture_default_str();
  app->add_option("--threads", v.request.threads, "threads (0: every online CPU)")
      ->capture_default_str();
  app->add_option("--repetitions", v.request.repetitions, "timed runs per kernel (median reported)")
      ->capture_default_str();
  app->add_flag("--save-calibration", v.save,
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

/// Today in UTC, YYYY-MM-DD.
std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
  return buf;
}

bool IsFile(const std::string& hw) {
  return hw.find('/') != std::string::npos || hw.find(".json") != std::string::npos;
}

/// Saves the calibration when asked, then prints the report.
int Report(Context& ctx, const ValidationReport& r, const Device& device, const std::string& hw,
           const ValidateOptions& v, OutputFormat format) {
  if (v.save) {
    Device d = device;
    d.calibration = r.fit.calibration;
    d.calibration->method = "roofline validate --device " + v.request.device + ": " + r.title;
    d.calibration->date = Today();
    Status s = WriteFileAtomically(hw, DeviceToJson(d) + "\n");
    if (!s.ok()) return Fail(ctx, s);
  }
  if (format == OutputFormat::kJson) {
    *ctx.out << RenderValidationJson(r);
    return kExitOk;
  }
  *ctx.out << RenderValidationTable(r);
  if (v.save) *ctx.out << "saved the calibration in " << hw << "\n";
  return kExitOk;
}

/// The request's checks, and --save-calibration's.
Status CheckDevice(const ValidateOptions& v, const std::string& hw) {
  if (v.save && !IsFile(hw)) {
    return Status::Invalid("--save-calibration",
                           "--hw must be a device JSON file to store the calibration in (e.g. "
                           "one written by `roofline measure`)");
  }
  return Check(v.request);
}

}  // namespace

int RunValidatePublished(Context& ctx) {
  CLI::App app{
      "Check the bound and the expected time against published end-to-end runs (each with "
      "its source): the validation table of docs/validation.md.\nexample: roofline validate "
      "published",
      "roofline validate published"};
  std::string file;
  OutputFormat format = OutputFormat::kTable;
  app.add_option("FILE", file,
                 "runs to check (default: the embedded data/validation/published_runs.json)");
  AddFormatOption(app, format, {"table", "json"});
  if (auto done = ParseArgs(app, ctx)) return *done;
  Result<std::vector<PublishedRun>> runs =
      file.empty() ? LoadDefaultPublishedRuns() : LoadPublishedRunsFile(file);
  if (!runs.ok()) return Fail(ctx, runs.status());
  Result<PublishedValidation> v = ValidatePublished(*runs);
  if (!v.ok()) return Fail(ctx, v.status());
  *ctx.out << (format == OutputFormat::kJson ? RenderPublishedJson(*v) : RenderPublishedTable(*v));
  // A bound above a real run is a counting error: the check fails (status 1).
  return v->bounds_above == 0 ? kExitOk : kExitCheckFailed;
}

int RunValidate(Context& ctx) {
  ValidateOptions v;
  if (!ctx.args.empty() && ctx.args[0] == "published") {
    ctx.args.erase(ctx.args.begin());
    return RunValidatePublished(ctx);
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
    Status s = CheckDevice(v, cmd.common.hw);
    if (!s.ok()) return Fail(ctx, s);
    Result<Device> device = ctx.ResolveHw(cmd.common.hw);
    if (!device.ok()) return Fail(ctx, device.status());
    const CostModel model(*device);
    Result<OpAnalysis> a = AnalyzeOp(*cmd.request, model);
    if (!a.ok()) return Fail(ctx, a.status());
    Result<ValidationReport> r =
        ValidateGraph(a->graph, model, v.request, DescribeOp(*cmd.request));
    if (!r.ok()) return Fail(ctx, r.status());
    return Report(ctx, *r, *device, cmd.common.hw, v, cmd.common.format);
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
  Status s = CheckDevice(v, sc.hw);
  if (!s.ok()) return Fail(ctx, s);
  // The host computes in fp32.
  if (!sc.Given(FieldId::kDtype) && !v.request.IsCuda()) sc.workload.dtype = DType::kFp32;
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<Setup> setup = Resolve(sc, **db);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device);
  Result<ValidationReport> r = ValidateModel(
      setup->config, setup->workload, model, sc.phases, v.request,
      fmt::format("{} (batch {}, prompt {}, context {})", sc.model, setup->workload.batch,
                  setup->workload.prompt, setup->workload.DecodeContext()));
  if (!r.ok()) return Fail(ctx, r.status());
  return Report(ctx, *r, setup->device, sc.hw, v, format);
}

}  // namespace roofline::cli
