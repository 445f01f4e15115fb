// `roofline model MODEL ...` and `roofline models list`.
#include <ostream>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/report.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {
namespace {

/// Options of `roofline model`; defaults are the tool's defaults.
struct ModelOptions {
  std::string model;            ///< preset id, config.json path or directory
  std::string hw = "h100-sxm";  ///< device id or device JSON path
  std::string phase = "both";   ///< prefill | decode | both
  int64_t batch = 1;
  int64_t prompt = 2048;
  int64_t context = 0;       ///< 0: = prompt
  std::string dtype;         ///< default: the config's torch_dtype
  std::string weight_dtype;  ///< default: --dtype
  std::string kv_dtype;      ///< default: --dtype
  int64_t group_size = 128;
  int64_t tp = 1;
  std::string attention = "flash";
  std::string fusion = "eager";
  std::string mla = "auto";
  bool all_logits = false;
  double launch_overhead_us = 0;
  std::string format = "table";
};

Result<std::optional<DType>> OptionalDType(const std::string& text, const std::string& flag) {
  if (text.empty()) return std::optional<DType>();
  Result<DType> d = ParseDType(text, flag);
  if (!d.ok()) return d.status();
  if (*d == DType::kTf32)
    return Status::Invalid(flag, "tf32 is a compute mode, not a storage dtype");
  return std::optional<DType>(*d);
}

}  // namespace

/// Adds the workload options shared by `model` (and later `sweep`, `plan`).
void AddWorkloadOptions(CLI::App& app, ModelOptions& o) {
  app.add_option("--hw", o.hw, "device id (`roofline hw list`) or path to a device JSON")
      ->capture_default_str();
  app.add_option("--batch", o.batch, "sequences per step")->capture_default_str();
  app.add_option("--prompt", o.prompt, "prefill: prompt tokens per sequence")
      ->capture_default_str();
  app.add_option("--context", o.context,
                 "decode: keys each new token attends to (default: --prompt)");
  app.add_option("--dtype", o.dtype, "activations (default: the config's torch_dtype)");
  app.add_option("--weight-dtype", o.weight_dtype,
                 "decoder linear weights: bf16|fp16|fp8|int8|int4 (default: --dtype)");
  app.add_option("--kv-dtype", o.kv_dtype, "KV cache: bf16|fp16|fp8|int8 (default: --dtype)");
  app.add_option("--group-size", o.group_size, "scale group of 4-bit weights")
      ->capture_default_str();
  app.add_option("--tp", o.tp, "tensor-parallel degree")->capture_default_str();
  app.add_option("--attention", o.attention, "flash or eager")
      ->check(CLI::IsMember({"flash", "eager"}))
      ->capture_default_str();
  app.add_option("--fusion", o.fusion,
                 "eager (PyTorch eager: one kernel per op) or fused (epilogues and norms folded "
                 "into matmuls)")
      ->check(CLI::IsMember({"eager", "fused"}))
      ->capture_default_str();
  app.add_option("--mla", o.mla,
                 "DeepSeek MLA form: auto (naive prefill, absorbed decode), "
                 "naive, absorbed")
      ->check(CLI::IsMember({"auto", "naive", "absorbed"}))
      ->capture_default_str();
  app.add_flag("--all-logits", o.all_logits, "prefill computes logits for every position");
  app.add_option("--launch-overhead-us", o.launch_overhead_us,
                 "added to every kernel's bound, microseconds")
      ->capture_default_str();
}

Result<Workload> MakeWorkload(const ModelOptions& o) {
  Workload w;
  w.batch = o.batch;
  w.prompt = o.prompt;
  w.context = o.context;
  w.group_size = o.group_size;
  w.tp = o.tp;
  w.attention = o.attention == "eager" ? AttentionImpl::kEager : AttentionImpl::kFlash;
  w.fusion = o.fusion == "fused" ? FusionMode::kFused : FusionMode::kEager;
  w.mla = o.mla == "naive" ? MlaForm::kNaive
                           : (o.mla == "absorbed" ? MlaForm::kAbsorbed : MlaForm::kAuto);
  w.all_logits = o.all_logits;
  w.launch_overhead_s = o.launch_overhead_us * 1e-6;
  auto d = OptionalDType(o.dtype, "--dtype");
  if (!d.ok()) return d.status();
  auto wd = OptionalDType(o.weight_dtype, "--weight-dtype");
  if (!wd.ok()) return wd.status();
  auto kv = OptionalDType(o.kv_dtype, "--kv-dtype");
  if (!kv.ok()) return kv.status();
  w.dtype = *d;
  w.weight_dtype = *wd;
  w.kv_dtype = *kv;
  if (o.context < 0) return Status::Invalid("--context", "must be positive");
  Status s = Validate(w);
  if (!s.ok()) return s;
  return w;
}

int RunModel(Context& ctx) {
  CLI::App app{
      "An LLM (HF config.json) on a device: per-kernel FLOPs, bytes, time bound and what "
      "binds it, for prefill and decode; latency and memory footprint.\n"
      "example: roofline model llama-3-8b --hw h100-sxm --batch 8 --prompt 2048",
      "roofline model"};
  ModelOptions o;
  app.add_option("MODEL", o.model,
                 "preset id (`roofline models list`), config.json, or a "
                 "directory holding one")
      ->required();
  app.add_option("--phase", o.phase, "prefill, decode or both")
      ->check(CLI::IsMember({"prefill", "decode", "both"}))
      ->capture_default_str();
  AddWorkloadOptions(app, o);
  AddFormatOption(app, o.format, {"table", "json", "csv"});
  if (auto done = ParseArgs(app, ctx)) return *done;

  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return Fail(ctx, registry.status());
  Result<TransformerConfig> config = ResolveModel(o.model, *registry);
  if (!config.ok()) return Fail(ctx, config.status());
  Result<Workload> workload = MakeWorkload(o);
  if (!workload.ok()) return Fail(ctx, workload.status());
  Result<Device> device = ctx.ResolveHw(o.hw);
  if (!device.ok()) return Fail(ctx, device.status());
  CostOptions options;
  options.launch_overhead_s = workload->launch_overhead_s;
  const CostModel model(*device, options);
  const PhaseSelection phases = o.phase == "prefill"  ? PhaseSelection::kPrefill
                                : o.phase == "decode" ? PhaseSelection::kDecode
                                                      : PhaseSelection::kBoth;
  Result<ModelAnalysis> a = AnalyzeModel(*config, *workload, model, phases);
  if (!a.ok()) return Fail(ctx, a.status());
  if (o.format == "json") {
    *ctx.out << RenderModelJson(*a, model);
  } else if (o.format == "csv") {
    *ctx.out << RenderModelCsv(*a, model);
  } else {
    *ctx.out << RenderModelTable(*a, model);
  }
  return kExitOk;
}

int RunModels(Context& ctx) {
  CLI::App app{"Model presets: data/models/*.json (HF config.json files with their source).",
               "roofline models"};
  app.require_subcommand(1, 1);
  app.add_subcommand("list", "ids, architectures, shapes and parameter counts");
  if (auto done = ParseArgs(app, ctx)) return *done;
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return Fail(ctx, registry.status());
  *ctx.out << RenderModelsList(*registry);
  return kExitOk;
}

}  // namespace roofline::cli
