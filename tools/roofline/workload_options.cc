#include "tools/roofline/workload_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roofline/model_registry.h"

namespace roofline::cli {
namespace {

Result<std::optional<DType>> OptionalDType(const std::string& text, const std::string& flag) {
  if (text.empty()) return std::optional<DType>();
  Result<DType> d = ParseDType(text, flag);
  if (!d.ok()) return d.status();
  if (*d == DType::kTf32)
    return Status::Invalid(flag, "tf32 is a compute mode, not a storage dtype");
  return std::optional<DType>(*d);
}

}  // namespace

void AddExpectedOptions(CLI::App& app, ExpectedFlags& f) {
  app.add_option("--ceilings", f.ceilings,
                 "expected times at the achievable ceilings (published or measured, else an "
                 "assumed fraction) or at the spec ones")
      ->check(CLI::IsMember({"spec", "achievable"}))
      ->capture_default_str();
  app.add_option("--runtime", f.runtime,
                 "expected times: how kernels are launched (eager: PyTorch eager, cuda-graph, "
                 "compiled: torch.compile with CUDA graphs)")
      ->check(CLI::IsMember({"eager", "cuda-graph", "compiled"}))
      ->capture_default_str();
  app.add_option("--efficiency", f.efficiency,
                 "expected times: CLASS=F: kernels of a class (matmul, attention, vector, comm) "
                 "reach F of every ceiling, F in [0.001, 1]; repeatable");
  app.add_option("--weight-kernel", f.weight_kernel,
                 "expected times: matmuls with quantized weights run as this measured kernel "
                 "(tinygemm: PyTorch's int4 torch._weight_int4pack_mm, as gpt-fast and torchao "
                 "run it; inductor-int8 and inductor-fp8: the kernels torch.compile generates "
                 "for an int8 (1 to 16 rows) or float8 (1 row) weight-only linear; "
                 "scaled-mm-rowwise: torchao's float8 linear with dynamic per-row activation "
                 "scales, torch._scaled_mm's row-wise kernel, 1 to 128 rows); default: weights "
                 "streamed at the achievable bandwidth");
  app.add_option("--accumulate", f.accumulate,
                 "expected times: what tensor-core matmuls accumulate in; fp16 takes the "
                 "device's FP16-accumulate figures (GeForce cards run those at twice the FP32 "
                 "rate; TinyChat 2.0's W4A16 GEMM accumulates in FP16); fp32 is PyTorch's and "
                 "cuBLAS's default")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->capture_default_str();
  app.add_option(
      "--modules", f.modules,
      "expected times: the model's norms, rotary embeddings and attention launch as "
      "many kernels as this framework's modules do (hf-transformers: HuggingFace "
      "transformers run eagerly, RMSNorm 8 kernels, rotary embedding 10, attention 10-12; "
      "LLM configs, with --fusion eager and flash attention); default: one kernel each");
}

Status ApplyExpectedFlags(const ExpectedFlags& f, const Device& d, CostOptions& c) {
  if (!CostModel::ExpectsTimesOn(d)) {
    const ExpectedFlags defaults;
    const char* given = !f.efficiency.empty()                 ? "--efficiency"
                        : !f.weight_kernel.empty()            ? "--weight-kernel"
                        : f.accumulate != defaults.accumulate ? "--accumulate"
                        : !f.modules.empty()                  ? "--modules"
                        : f.runtime != defaults.runtime       ? "--runtime"
                        : f.ceilings != defaults.ceilings     ? "--ceilings"
                                                              : nullptr;
    if (given != nullptr) {
      return Status::Invalid(
          given, "device '" + d.id +
                     "' has no expected times (it splits models over SRAM chips or streams "
                     "weights: no published kernel efficiencies), only the bound; drop the flag");
    }
  }
  Result<CeilingSet> ceilings = ParseCeilingSet(f.ceilings);
  if (!ceilings.ok()) return ceilings.status();
  Result<Runtime> runtime = ParseRuntime(f.runtime);
  if (!runtime.ok()) return runtime.status();
  c.expected.ceilings = *ceilings;
  c.expected.runtime = *runtime;
  c.expected.fp16_accumulate = f.accumulate == "fp16";
  for (const std::string& e : f.efficiency) {
    if (Status s = ParseEfficiencyOverride(e, c.expected); !s.ok()) return s;
  }
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  if (!data.ok()) return data.status();
  if (!f.weight_kernel.empty()) {
    if (Status s = CheckWeightKernel(*data, f.weight_kernel, d, *runtime, "--weight-kernel");
        !s.ok()) {
      return s;
    }
    c.expected.weight_kernel = f.weight_kernel;
  }
  if (!f.modules.empty()) {
    Result<const EfficiencyData::ModuleLaunches*> m =
        FindModuleLaunches(*data, f.modules, "--modules");
    if (!m.ok()) return m.status();
    c.expected.modules = f.modules;
  }
  c.efficiency = std::make_shared<const EfficiencyData>(std::move(data).value());
  return Status::Ok();
}

/// Adds the workload options shared by `model` (and later `sweep`, `plan`).
void AddWorkloadOptions(CLI::App& app, ModelOptions& o) {
  app.add_option("--hw", o.hw, "device id (`roofline hw list`) or path to a device JSON")
      ->capture_default_str();
  app.add_option("--batch", o.batch, "sequences per step")->capture_default_str();
  app.add_option("--prompt", o.prompt, "prefill: prompt tokens per sequence")
      ->capture_default_str();
  app.add_option("--context", o.context,
                 "decode: keys each new token attends to (default: --prompt)");
  app.add_option("--dtype", o.dtype,
                 "activations (default: the config's torch_dtype); graph files and ONNX models: "
                 "every floating-point tensor re-typed to fp32|bf16|fp16|fp8");
  app.add_flag("--tf32", o.tf32,
               "graph files and ONNX models: fp32 matmuls, convolutions and attention on TF32 "
               "tensor cores (PyTorch's default for cuDNN convolutions; matmuls need "
               "allow_tf32)");
  app.add_option("--weight-dtype", o.weight_dtype,
                 "decoder linear weights: bf16|fp16|fp8|int8|int4 (default: --dtype)");
  app.add_flag("--quantize-lm-head", o.quantize_lm_head,
               "the output layer (lm_head) in --weight-dtype too, as gpt-fast's and torchao's "
               "quantizers leave it (default: it stays in --dtype)");
  app.add_option("--zero-dtype", o.zero_dtype,
                 "int4 or int8 weights: a zero point beside each scale, in this dtype (bf16: "
                 "tinygemm's and HQQ's format; fp16: TinyChat's; int4: GPTQ's and AWQ's packed "
                 "qzeros); default: "
                 "none (symmetric)");
  app.add_option("--kv-dtype", o.kv_dtype, "KV cache: bf16|fp16|fp8|int8 (default: --dtype)");
  app.add_option("--group-size", o.group_size, "scale group of 4-bit weights")
      ->capture_default_str();
  app.add_option("--tp", o.tp, "tensor-parallel degree")->capture_default_str();
  app.add_option("--pp", o.pp,
                 "pipeline stages (layers split over chips in sequence); default: 1, or on "
                 "SRAM-only devices the fewest chips that hold the model");
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
  AddExpectedOptions(app, o.expected);
}

Result<Workload> MakeWorkload(const ModelOptions& o) {
  if (o.tf32) {
    return Status::Invalid("--tf32",
                           "applies to graph files and ONNX models (an LLM config's "
                           "products run in --dtype)");
  }
  Workload w;
  w.batch = o.batch;
  w.prompt = o.prompt;
  if (o.context != kNotGiven && o.context < 1) {
    return Status::Invalid("--context", fmt::format("must be at least 1, got {} (leave it out to "
                                                    "attend to the whole prompt)",
                                                    o.context));
  }
  w.context = o.context == kNotGiven ? 0 : o.context;
  w.group_size = o.group_size;
  w.tp = o.tp;
  if (o.pp < 0) return Status::Invalid("--pp", "must be positive");
  w.pp = o.pp;
  w.attention = o.attention == "eager" ? AttentionImpl::kEager : AttentionImpl::kFlash;
  w.fusion = o.fusion == "fused" ? FusionMode::kFused : FusionMode::kEager;
  w.mla = o.mla == "naive" ? MlaForm::kNaive
                           : (o.mla == "absorbed" ? MlaForm::kAbsorbed : MlaForm::kAuto);
  w.all_logits = o.all_logits;
  w.quantize_lm_head = o.quantize_lm_head;
  auto d = OptionalDType(o.dtype, "--dtype");
  if (!d.ok()) return d.status();
  auto wd = OptionalDType(o.weight_dtype, "--weight-dtype");
  if (!wd.ok()) return wd.status();
  auto kv = OptionalDType(o.kv_dtype, "--kv-dtype");
  if (!kv.ok()) return kv.status();
  auto zd = OptionalDType(o.zero_dtype, "--zero-dtype");
  if (!zd.ok()) return zd.status();
  w.dtype = *d;
  w.weight_dtype = *wd;
  w.zero_dtype = *zd;
  w.kv_dtype = *kv;
  Status s = Validate(w);
  if (!s.ok()) return s;
  return w;
}

Result<Setup> Prepare(Context& ctx, const ModelOptions& o) {
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return registry.status();
  Result<TransformerConfig> config = ResolveModel(o.model, *registry);
  if (!config.ok()) return config.status();
  Result<Workload> workload = MakeWorkload(o);
  if (!workload.ok()) return workload.status();
  Result<Device> device = ctx.ResolveHw(o.hw);
  if (!device.ok()) return device.status();
  Result<CostOptions> cost = MakeCostOptions(o, *device);
  if (!cost.ok()) return cost.status();
  return Setup{std::move(config).value(), std::move(workload).value(), std::move(device).value(),
               *cost};
}

CostModel BoundOnly(const CostOptions& cost, const Device& device) {
  CostOptions bound_only;
  bound_only.launch_overhead_s = cost.launch_overhead_s;
  return CostModel(device, bound_only);
}

Result<CostOptions> MakeCostOptions(const ModelOptions& o, const Device& d) {
  CostOptions c;
  c.launch_overhead_s = o.launch_overhead_us * 1e-6;
  if (Status s = Validate(c); !s.ok()) return s;
  if (Status s = ApplyExpectedFlags(o.expected, d, c); !s.ok()) return s;
  if (!o.expected.modules.empty()) {
    // The counts are of modules run op by op around one fused attention call.
    const char* conflict =
        o.fusion == "fused"      ? "runs its modules op by op: use --fusion eager"
        : o.attention == "eager" ? "counts a fused attention call: use --attention flash"
        : o.expected.runtime == "compiled"
            ? "runs its modules op by op, not compiled: use --runtime eager or cuda-graph"
            : nullptr;
    if (conflict != nullptr) {
      return Status::Invalid("--modules", "'" + o.expected.modules + "' " + conflict);
    }
  }
  return c;
}

std::string DescribeWorkload(const Workload& w, const TransformerConfig& c,
                             const std::vector<SweepVariable>& varied) {
  auto swept = [&](SweepVariable v) {
    return std::find(varied.begin(), varied.end(), v) != varied.end();
  };
  std::vector<std::string> parts;
  if (!swept(SweepVariable::kBatch)) parts.push_back(fmt::format("batch {}", w.batch));
  if (!swept(SweepVariable::kPrompt)) parts.push_back(fmt::format("prompt {}", w.prompt));
  if (!swept(SweepVariable::kContext) && w.context > 0) {
    parts.push_back(fmt::format("context {}", w.context));
  }
  if (!swept(SweepVariable::kTp)) parts.push_back(fmt::format("tp {}", w.tp));
  const DType act = w.dtype.value_or(c.torch_dtype);
  if (!swept(SweepVariable::kDtype)) parts.emplace_back(NameOf(act));
  // How quantized weights are stored, said even when the weight dtype is swept.
  std::string stored;
  if (w.zero_dtype.has_value()) stored = fmt::format("zeros {}", NameOf(*w.zero_dtype));
  if (w.quantize_lm_head) stored += stored.empty() ? "lm_head too" : ", lm_head too";
  if (!swept(SweepVariable::kWeightDtype) && w.weight_dtype.value_or(act) != act) {
    parts.push_back(fmt::format("weights {}{}", NameOf(*w.weight_dtype),
                                stored.empty() ? "" : " (" + stored + ")"));
  } else if (swept(SweepVariable::kWeightDtype) && !stored.empty()) {
    parts.push_back("quantized weights: " + stored);
  }
  if (!swept(SweepVariable::kKvDtype) && w.kv_dtype.value_or(act) != act) {
    parts.push_back(fmt::format("kv {}", NameOf(*w.kv_dtype)));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

PhaseSelection Phases(const std::string& phase) {
  return phase == "prefill"  ? PhaseSelection::kPrefill
         : phase == "decode" ? PhaseSelection::kDecode
                             : PhaseSelection::kBoth;
}

}  // namespace roofline::cli
