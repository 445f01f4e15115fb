// `roofline validate (op KIND ... | MODEL ...) --device cpu --hw profile.json
// [--save-calibration]`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>

#include "roofline/cuda_measure.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "roofline/validate.h"
#include "src/report/table.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/op_options.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {
namespace {

/// Options `validate` adds to the op or model flags.
struct ValidateOptions {
  std::string device = "cpu";
  int threads = 0;
  int repetitions = 5;
  bool save = false;
};

void AddValidateOptions(CLI::App* app, ValidateOptions& v) {
  app->add_option("--device", v.device,
                  "where to run the kernels: cpu (in fp32), or cuda[:N] (in the op's dtype; needs "
                  "the CUDA backend and a GPU)")
      ->capture_default_str();
  app->add_option("--threads", v.threads, "threads (0: every online CPU)")->capture_default_str();
  app->add_option("--repetitions", v.repetitions, "timed runs per kernel (median reported)")
      ->capture_default_str();
  app->add_flag("--save-calibration", v.save,
                "store the fitted efficiencies in the --hw profile file");
}

bool IsCuda(const ValidateOptions& v) { return v.device.rfind("cuda", 0) == 0; }

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

/// Runs the graph's kernels where --device says and fits the calibration.
Result<Validation> RunValidation(const Graph& graph, const CostModel& model,
                                 const ValidateOptions& v) {
  if (IsCuda(v)) {
    CudaRunOptions co;
    co.device = *cuda_plan::ParseCudaDevice(v.device);  // checked by CheckDevice
    co.repetitions = v.repetitions;
    return ValidateOnCuda(graph, model, co);
  }
  RunOptions ro;
  ro.threads = v.threads;
  ro.repetitions = v.repetitions;
  return ValidateOnCpu(graph, model, ro);
}

std::string ClassName(KernelClass k) { return std::string(NameOf(k)); }

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

int Report(Context& ctx, const std::vector<ValidationRow>& rows, const CalibrationFit& fit,
           const Device& device, const std::string& hw, const ValidateOptions& v,
           const std::string& format, const std::string& title) {
  if (v.save) {
    Device d = device;
    d.calibration = fit.calibration;
    d.calibration->method = "roofline validate --device " + v.device + ": " + title;
    d.calibration->date = Today();
    Status s = WriteFileAtomically(hw, DeviceToJson(d) + "\n");
    if (!s.ok()) return Fail(ctx, s);
  }
  if (format == "json") {
    nlohmann::json j;
    j["device"] = device.id;
    j["title"] = title;
    nlohmann::json jr = nlohmann::json::array();
    for (const ValidationRow& r : rows) {
      nlohmann::json x;
      x["name"] = r.name;
      x["group"] = r.group;
      x["class"] = ClassName(r.kernel_class);
      x["bound"] = r.bound;
      x["predicted_s"] = r.predicted_s;
      x["measured_s"] = r.measured_s;
      x["efficiency"] = r.efficiency;
      x["skipped"] = r.skipped;
      x["note"] = r.note;
      jr.push_back(x);
    }
    j["kernels"] = jr;
    j["calibration"] = {{"matmul", fit.calibration.matmul},
                        {"attention", fit.calibration.attention},
                        {"vector", fit.calibration.vector},
                        {"kernels", fit.calibration.kernels},
                        {"median_abs_log_error_before", fit.median_abs_log_before},
                        {"median_abs_log_error_after", fit.median_abs_log_after}};
    *ctx.out << j.dump(2) << "\n";
    return kExitOk;
  }
  std::ostream& out = *ctx.out;
  out << title << "\non " << device.name << " (" << device.origin << ")\n\n";
  TextTable t({"kernel", "group", "class", "predicted", "bound", "measured", "efficiency", "ran"},
              {false, false, false, true, false, true, true, false});
  for (const ValidationRow& r : rows) {
    t.AddRow({r.name, r.group, ClassName(r.kernel_class), Seconds(r.predicted_s), r.bound,
              r.skipped ? "skipped" : Seconds(r.measured_s),
              r.skipped ? "-" : fmt::format("{:.0f}%", 100 * r.efficiency), r.note});
  }
  out << t.Render();
  out << fmt::format(
      "\nefficiency per class (least squares on log time): matmul {:.3f}, attention {:.3f}, "
      "norms/elementwise {:.3f} ({} kernels)\n",
      fit.calibration.matmul, fit.calibration.attention, fit.calibration.vector,
      fit.calibration.kernels);
  out << fmt::format(
      "median |log(expected / measured)|: {:.3f} with the bound alone, {:.3f} "
      "calibrated\n",
      fit.median_abs_log_before, fit.median_abs_log_after);
  out << "efficiency = predicted bound / measured time; above 100% the kernel beat its bound "
         "(e.g. data still in cache). ";
  if (IsCuda(v)) {
    out << "Kernels ran on " << v.device
        << " in their own dtype, timed with CUDA events (median), L2 flushed before each run.\n";
  } else {
    out << "Kernels run in fp32 on the host.\n";
  }
  if (v.save) out << "saved the calibration in " << hw << "\n";
  return kExitOk;
}

Status CheckDevice(const ValidateOptions& v, const std::string& hw) {
  if (v.save && !IsFile(hw)) {
    return Status::Invalid("--save-calibration",
                           "--hw must be a device JSON file to store the calibration in (e.g. "
                           "one written by `roofline measure`)");
  }
  if (IsCuda(v)) {
    Result<int> index = cuda_plan::ParseCudaDevice(v.device);
    if (!index.ok()) return index.status();
    if (!CudaBackendCompiled()) {
      return Status::Unsupported("--device " + v.device, CudaBackendMissingReason());
    }
    Result<int> count = CudaDeviceCount();
    if (!count.ok()) return Status::Unsupported("--device " + v.device, count.status().what());
    if (*index >= *count) {
      return Status::Invalid("--device", v.device + " does not exist: this machine has " +
                                             std::to_string(*count) + " CUDA device(s)");
    }
  } else if (v.device != "cpu") {
    return Status::Invalid("--device", "expected cpu or cuda[:N], got '" + v.device + "'");
  }
  if (v.repetitions < 1 || v.repetitions > 1000) {
    return Status::Invalid("--repetitions", "must be between 1 and 1000");
  }
  if (v.threads < 0 || v.threads > 4096) {
    return Status::Invalid("--threads", "must be between 0 and 4096");
  }
  return Status::Ok();
}

}  // namespace

int RunValidate(Context& ctx) {
  ValidateOptions v;
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
    Result<Validation> val = RunValidation(a->graph, model, v);
    if (!val.ok()) return Fail(ctx, val.status());
    return Report(ctx, val->rows, val->fit, *device, cmd.common.hw, v, cmd.common.format,
                  DescribeOp(*cmd.request));
  }
  CLI::App app{
      "Run a model's kernels (or one op: `validate op matmul ...`) for real on this "
      "machine and compare each with its predicted bound; fit one efficiency per kernel "
      "class.\nexample: roofline validate llama-3.2-1b --hw cpu.json --phase decode",
      "roofline validate"};
  ModelOptions o;
  app.add_option("MODEL", o.model, "preset id, config.json, or a directory holding one")
      ->required();
  app.add_option("--phase", o.phase, "prefill, decode or both")
      ->check(CLI::IsMember({"prefill", "decode", "both"}))
      ->capture_default_str();
  AddWorkloadOptions(app, o);
  AddFormatOption(app, o.format, {"table", "json"});
  AddValidateOptions(&app, v);
  if (auto done = ParseArgs(app, ctx)) return *done;
  Status s = CheckDevice(v, o.hw);
  if (!s.ok()) return Fail(ctx, s);
  if (o.dtype.empty() && !IsCuda(v)) o.dtype = "fp32";  // the host computes in fp32
  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device);
  std::vector<ValidationRow> rows;
  for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
    if (o.phase == "prefill" && p != Phase::kPrefill) continue;
    if (o.phase == "decode" && p != Phase::kDecode) continue;
    Result<LlmGraph> g = BuildLlmGraph(setup->config, setup->workload, p);
    if (!g.ok()) return Fail(ctx, g.status());
    Result<Validation> val = RunValidation(g->graph, model, v);
    if (!val.ok()) return Fail(ctx, val.status());
    for (ValidationRow& r : val->rows) {
      r.group = std::string(NameOf(p)) + (r.group.empty() ? "" : " " + r.group);
      rows.push_back(std::move(r));
    }
  }
  const CalibrationFit fit = FitCalibration(rows);
  return Report(ctx, rows, fit, setup->device, o.hw, v, o.format,
                fmt::format("{} (batch {}, prompt {}, context {})", o.model, setup->workload.batch,
                            setup->workload.prompt, setup->workload.DecodeContext()));
}

}  // namespace roofline::cli
