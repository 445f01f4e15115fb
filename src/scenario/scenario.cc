// The field table of a Scenario, reading a field's text, and the rules between fields.
#include "roofline/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "roofline/suggest.h"

namespace roofline {
namespace {

constexpr std::string_view kPhases[] = {"prefill", "decode", "both"};
constexpr std::string_view kAttention[] = {"flash", "eager"};
constexpr std::string_view kFusion[] = {"eager", "fused"};
constexpr std::span<const std::string_view> kFusedLinears{kLinearMergeNames};
constexpr std::string_view kMla[] = {"auto", "naive", "absorbed"};
constexpr std::string_view kCeilings[] = {"spec", "achievable"};
constexpr std::string_view kRuntimes[] = {"eager", "cuda-graph", "compiled"};
constexpr std::string_view kAccumulate[] = {"fp32", "fp16"};

constexpr std::span<const std::string_view> kNone{};

// The field table. `published`: a run of data/validation/published_runs.json may set it.
// Help text says what the value is and does; --help appends the default.
constexpr Field kFields[] = {
    {FieldId::kModel, "model", "--model", "MODEL", FieldType::kText, kScenarioDefaultModel,
     "preset id (`roofline models list`), config.json, or a directory holding one; or a graph "
     "file (.json), an ONNX model (.onnx) or a network preset",
     kNone, kScopeBoth, true},
    {FieldId::kHw, "hw", "--hw", "ID", FieldType::kText, kDefaultDeviceId,
     "device id (`roofline hw list`) or path to a device JSON", kNone, kScopeBoth, true},
    {FieldId::kPhase, "phase", "--phase", "PHASE", FieldType::kChoice, "both",
     "prefill, decode or both", kPhases, kScopeLlm, true},
    {FieldId::kBatch, "batch", "--batch", "N", FieldType::kSize, "1", "sequences per step",
     kNone, kScopeLlm, true},
    {FieldId::kPrompt, "prompt", "--prompt", "N", FieldType::kSize, "2048",
     "prefill: prompt tokens per sequence (without it, a shorter --context sets it too)", kNone,
     kScopeLlm, true},
    {FieldId::kContext, "context", "--context", "N", FieldType::kSize, "",
     "decode: keys each new token attends to, at least the prompt (default: --prompt)", kNone,
     kScopeLlm, true},
    {FieldId::kDtype, "dtype", "--dtype", "DTYPE", FieldType::kDType, "",
     "activations (default: the config's torch_dtype); graph files and ONNX models: every "
     "floating-point tensor re-typed to fp32|bf16|fp16|fp8",
     kNone, kScopeBoth, true},
    {FieldId::kWeightDtype, "weight_dtype", "--weight-dtype", "DTYPE", FieldType::kDType, "",
     "decoder linear weights: bf16|fp16|fp8|int8|int4 (default: --dtype)", kNone, kScopeLlm,
     true},
    {FieldId::kQuantizeLmHead, "quantize_lm_head", "--quantize-lm-head", "", FieldType::kFlag,
     "",
     "the output layer (lm_head) in --weight-dtype too, as gpt-fast's and torchao's quantizers "
     "leave it (default: it stays in --dtype)",
     kNone, kScopeLlm, true},
    {FieldId::kZeroDtype, "zero_dtype", "--zero-dtype", "DTYPE", FieldType::kDType, "",
     "int4 or int8 weights: a zero point beside each scale, in this dtype (bf16: tinygemm's and "
     "HQQ's format; fp16: TinyChat's; int4: GPTQ's and AWQ's packed qzeros); default: none "
     "(symmetric)",
     kNone, kScopeLlm, true},
    {FieldId::kKvDtype, "kv_dtype", "--kv-dtype", "DTYPE", FieldType::kDType, "",
     "KV cache: bf16|fp16|fp8|int8 (default: --dtype)", kNone, kScopeLlm, true},
    {FieldId::kGroupSize, "group_size", "--group-size", "N", FieldType::kSize, "128",
     "scale group of 4-bit weights", kNone, kScopeLlm, true},
    {FieldId::kTp, "tp", "--tp", "N", FieldType::kCount, "1", "tensor-parallel degree", kNone,
     kScopeLlm, true},
    {FieldId::kPp, "pp", "--pp", "N", FieldType::kCount, "",
     "pipeline stages (layers split over chips in sequence); default: 1, or on SRAM-only "
     "devices the fewest chips that hold the model",
     kNone, kScopeLlm, true},
    {FieldId::kAttention, "attention", "--attention", "IMPL", FieldType::kChoice, "flash",
     "flash or eager", kAttention, kScopeLlm, true},
    {FieldId::kFusion, "fusion", "--fusion", "MODE", FieldType::kChoice, "eager",
     "eager (PyTorch eager: one kernel per op) or fused (elementwise epilogues folded into "
     "matmuls; norms stay kernels of their own; see --fused-linears)",
     kFusion, kScopeLlm, true},
    {FieldId::kFusedLinears, "fused_linears", "--fused-linears", "SET", FieldType::kChoice,
     "auto",
     "linear layers that read the same input run as one matmul, their weights concatenated: "
     "qkv (q, k and v: one product), gate-up (a gated MLP's gate and up: one product), "
     "qkv,gate-up, or none; auto: qkv,gate-up under --fusion fused (what vLLM, SGLang, "
     "TensorRT-LLM, TGI and MLC load for attention and dense MLPs), none under eager (PyTorch "
     "eager, HF transformers); configs whose checkpoint holds them fused stay fused; MLA's "
     "projections and routed experts are not merged (the fused-MoE fits time gate and up as "
     "two products)",
     kFusedLinears, kScopeLlm, true},
    {FieldId::kMla, "mla", "--mla", "FORM", FieldType::kChoice, "auto",
     "DeepSeek MLA form: auto (naive prefill, absorbed decode), naive, absorbed", kMla,
     kScopeLlm, true},
    {FieldId::kAllLogits, "all_logits", "--all-logits", "", FieldType::kFlag, "",
     "prefill computes logits for every position", kNone, kScopeLlm, true},
    {FieldId::kMemoryFraction, "memory_fraction", "--memory-fraction", "F", FieldType::kReal,
     "", "the fraction of each device's memory an engine may fill with weights, KV cache and "
     "workspace, in (0, 1] (vLLM's gpu_memory_utilization, 0.9 by default there; SGLang's "
     "mem_fraction_static); default: all of it, no engine reserve",
     kNone, kScopeLlm, true},
    {FieldId::kTf32, "tf32", "--tf32", "", FieldType::kFlag, "",
     "graph files and ONNX models: fp32 matmuls, convolutions and attention on TF32 tensor "
     "cores (matmuls need torch's allow_tf32); --tf32=false: all in FP32; default: what "
     "PyTorch does, fp32 convolutions on TF32 (cudnn.allow_tf32) and the rest in FP32",
     kNone, kScopeNetwork, false},
    {FieldId::kDims, "dims", "--dim", "NAME=N", FieldType::kPairs, "",
     "graph files and ONNX models: bind a symbolic dimension (repeatable)", kNone,
     kScopeNetwork, false},
    {FieldId::kSteps, "steps", "--steps", "N", FieldType::kCount, "",
     "graph files and presets of a diffusion denoiser: N passes per image (seconds per image, "
     "images/s)",
     kNone, kScopeNetwork, false},
    {FieldId::kCfg, "cfg", "--cfg", "", FieldType::kFlag, "",
     "with --steps: classifier-free guidance, each pass at twice the batch of images (--dim "
     "batch = images per batch)",
     kNone, kScopeNetwork, false},
    {FieldId::kLaunchOverheadUs, "launch_overhead_us", "--launch-overhead-us", "US",
     FieldType::kReal, "0", "added to every kernel's bound, microseconds", kNone, kScopeBoth,
     false},
    {FieldId::kCeilings, "ceilings", "--ceilings", "SET", FieldType::kChoice, "achievable",
     "expected times at the achievable ceilings (published or measured, else an assumed "
     "fraction) or at the spec ones",
     kCeilings, kScopeBoth, false},
    {FieldId::kRuntime, "runtime", "--runtime", "RUNTIME", FieldType::kChoice, "eager",
     "expected times: how kernels are launched (eager: PyTorch eager, cuda-graph, compiled: "
     "torch.compile with CUDA graphs, launched as cuda-graph is; what compiling changes besides "
     "is given apart: --fusion fused for the fused epilogues and norms, --weight-kernel "
     "inductor-int8|inductor-fp8 for its quantized matmuls)",
     kRuntimes, kScopeBoth, true},
    {FieldId::kEfficiency, "efficiency", "--efficiency", "CLASS=F", FieldType::kPairs, "",
     "expected times: kernels of a class (matmul, attention, vector, comm) reach F of every "
     "ceiling, F in [0.001, 1]; repeatable",
     kNone, kScopeBoth, false},
    {FieldId::kWeightKernel, "weight_kernel", "--weight-kernel", "NAME", FieldType::kText, "",
     "expected times: matmuls with quantized weights run as this measured kernel (tinygemm: "
     "PyTorch's int4 torch._weight_int4pack_mm, as gpt-fast and torchao run it; inductor-int8 "
     "and inductor-fp8: the kernels torch.compile generates for an int8 (1 to 16 rows) or "
     "float8 (1 row) weight-only linear; scaled-mm-rowwise: torchao's float8 linear with "
     "dynamic per-row activation scales, torch._scaled_mm's row-wise kernel, 1 to 128 rows; "
     "vllm-cutlass-fp8: vLLM's CUTLASS FP8 product with its per-token activation scaling, "
     "timed on an H100, 1 to 64 rows; aiter-ck-fp8-rowwise: AMD aiter's CK FP8 row-wise "
     "product, timed on an MI300X, 1 to 64 rows); default: weights streamed at the achievable "
     "bandwidth",
     kNone, kScopeBoth, true},
    {FieldId::kMoeKernel, "moe_kernel", "--moe-kernel", "NAME", FieldType::kText, "",
     "expected times: a mixture-of-experts layer's routed-expert products run as this measured "
     "fused MoE call (vllm-fused-moe-fp8, vllm-fused-moe-bf16: the Triton fused_moe of vLLM "
     "and SGLang for fp8 or bf16 experts, timed on an H100: its fixed time per call shared by "
     "the layer's three expert products, the touched experts' weights at its measured rate); "
     "default: the touched experts' weights streamed at the achievable bandwidth",
     kNone, kScopeLlm, true},
    {FieldId::kAccumulate, "accumulate", "--accumulate", "TYPE", FieldType::kChoice, "fp32",
     "expected times: what tensor-core matmuls accumulate in; fp16 takes the device's "
     "FP16-accumulate figures (GeForce cards run those at twice the FP32 rate; TinyChat 2.0's "
     "W4A16 GEMM accumulates in FP16); fp32 is PyTorch's and cuBLAS's default",
     kAccumulate, kScopeBoth, true},
    {FieldId::kModules, "modules", "--modules", "NAME", FieldType::kText, "",
     "expected times: the model's norms, rotary embeddings and attention launch as many kernels "
     "as this framework's modules do (hf-transformers: HuggingFace transformers run eagerly, "
     "RMSNorm 8 kernels, rotary embedding 10, attention 10-12; LLM configs, with --fusion eager "
     "and flash attention); default: one kernel each",
     kNone, kScopeLlm, true},
    {FieldId::kEngine, "engine", "--engine", "NAME[@VERSION]", FieldType::kText, "",
     "the serving engine that runs the model (vllm, sglang, tensorrt-llm, tensorrt-llm-pytorch, "
     "tgi, llama.cpp, transformers, gpt-fast, mlc; `roofline engines list`), optionally at a "
     "version (vllm@0.6.3), or an engine file: its runtime per phase, fusion, modules, "
     "weight kernels and fused MoE calls (those that run on the device) fill the options not "
     "given, and its host work per step, request and "
     "layer is added to each step (serial, or overlapped with the GPU's work); default: none, "
     "kernels and their launches only",
     kNone, kScopeLlm, true},
};
static_assert(std::size(kFields) == kNumFields);

constexpr bool TableInOrder() {
  for (size_t i = 0; i < std::size(kFields); ++i) {
    if (static_cast<size_t>(kFields[i].id) != i) return false;
  }
  return true;
}
static_assert(TableInOrder(), "kFields is in FieldId order");

std::string ChoiceList(std::span<const std::string_view> choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ");
    out += choices[i];
  }
  return out;
}

/// A plain integer (optional sign, digits only); nothing when `text` is not one.
std::optional<int64_t> Integer(std::string_view text) {
  int64_t v = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  const auto [p, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || p != end || begin == end) return std::nullopt;
  return v;
}

Result<std::optional<DType>> StorageDType(std::string_view text, const std::string& where) {
  Result<DType> d = ParseDType(text, where);
  if (!d.ok()) return d.status();
  if (*d == DType::kTf32) return Status::Invalid(where, "tf32 is a compute mode, not a storage dtype");
  return std::optional<DType>(*d);
}

Result<bool> Boolean(std::string_view text, const std::string& where) {
  if (text == "true" || text == "1" || text.empty()) return true;
  if (text == "false" || text == "0") return false;
  return Status::Invalid(where, "expected true or false, got '" + std::string(text) + "'");
}

}  // namespace

std::span<const Field> ScenarioFields() { return kFields; }

const Field& FieldOf(FieldId id) { return kFields[static_cast<size_t>(id)]; }

const Field* FindField(std::string_view key) {
  for (const Field& f : kFields) {
    if (key == f.flag || key == f.name) return &f;
    // "kv-dtype" (a --vary name) is the flag without its dashes.
    if (key.size() + 2 == f.flag.size() && f.flag.substr(2) == key) return &f;
  }
  return nullptr;
}

FieldSet WorkloadFields() {
  FieldSet s;
  s.set();
  s.reset(static_cast<size_t>(FieldId::kModel));
  return s;
}

FieldSet ScenarioFieldsOf(FieldScope scope) {
  FieldSet s;
  for (const Field& f : kFields) {
    if ((f.scope & scope) != 0 && f.id != FieldId::kModel) s.set(static_cast<size_t>(f.id));
  }
  return s;
}

FieldSet Without(FieldSet fields, std::initializer_list<FieldId> ids) {
  for (FieldId id : ids) fields.reset(static_cast<size_t>(id));
  return fields;
}

Result<int64_t> ParseSize(std::string_view text, const std::string& where, int64_t max) {
  int64_t scale = 1;
  std::string_view digits = text;
  if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) {
    scale = int64_t{1} << 10;
    digits.remove_suffix(1);
  } else if (!digits.empty() && digits.back() == 'M') {
    scale = int64_t{1} << 20;
    digits.remove_suffix(1);
  }
  // A number too long for 64 bits is an integer all the same: out of range, as a large one is.
  std::string_view unsigned_digits = digits;
  if (!unsigned_digits.empty() && (unsigned_digits[0] == '+' || unsigned_digits[0] == '-')) {
    unsigned_digits.remove_prefix(1);
  }
  const bool all_digits =
      !unsigned_digits.empty() &&
      unsigned_digits.find_first_not_of("0123456789") == std::string_view::npos;
  const std::optional<int64_t> v = Integer(digits);
  // The bound is on the value, suffix applied: what reads as 4k must also read as 4096.
  if ((v.has_value() && (*v > max / scale || *v < -(max / scale))) ||
      (!v.has_value() && all_digits)) {
    return Status::Invalid(
        where, fmt::format("'{}' is out of range (at most {} in size)", std::string(text),
                           max == int64_t{1} << 40 ? "2^40 = 1099511627776" : std::to_string(max)));
  }
  if (!v.has_value()) {
    return Status::Invalid(where, "'" + std::string(text) +
                                      "' is not a size: an integer, with k (x1024) or M "
                                      "(x1024^2) for thousands of tokens, e.g. 32k");
  }
  return *v * scale;
}

Status SetField(Scenario& s, FieldId id, std::string_view text) {
  return SetField(s, id, text, std::string(FieldOf(id).flag));
}

Status SetField(Scenario& s, FieldId id, std::string_view text, const std::string& where) {
  const Field& f = FieldOf(id);
  const std::string value(text);
  Workload& w = s.workload;
  // Typed reading first: a choice must be one of its names, a number a number.
  if (f.type == FieldType::kChoice &&
      std::find(f.choices.begin(), f.choices.end(), text) == f.choices.end()) {
    std::vector<std::string> names(f.choices.begin(), f.choices.end());
    std::string what(f.name);
    std::replace(what.begin(), what.end(), '_', ' ');
    return Status::Invalid(where, "unknown " + what + " '" + value + "': expected " +
                                      ChoiceList(f.choices) + DidYouMean(value, names));
  }
  int64_t n = 0;
  if (f.type == FieldType::kSize) {
    Result<int64_t> v = ParseSize(text, where);
    if (!v.ok()) return v.status();
    n = *v;
  } else if (f.type == FieldType::kCount) {
    const std::optional<int64_t> v = Integer(text);
    if (!v.has_value() || *v > (int64_t{1} << 40) || *v < -(int64_t{1} << 40)) {
      return Status::Invalid(where, "'" + value + "' is not an integer");
    }
    n = *v;
  }
  bool flag = false;
  if (f.type == FieldType::kFlag) {
    Result<bool> b = Boolean(text, where);
    if (!b.ok()) return b.status();
    flag = *b;
  }
  std::optional<DType> dtype;
  if (f.type == FieldType::kDType) {
    Result<std::optional<DType>> d = StorageDType(text, where);
    if (!d.ok()) return d.status();
    dtype = *d;
  }

  switch (id) {
    case FieldId::kModel:
      if (value.empty()) return Status::Invalid(where, "expected a model (a preset id or a path)");
      s.model = value;
      break;
    case FieldId::kHw:
      if (value.empty()) return Status::Invalid(where, "expected a device id or a device JSON path");
      s.hw = value;
      break;
    case FieldId::kPhase:
      s.phases = text == "prefill"  ? PhaseSelection::kPrefill
                 : text == "decode" ? PhaseSelection::kDecode
                                    : PhaseSelection::kBoth;
      break;
    case FieldId::kBatch:
      w.batch = n;
      break;
    case FieldId::kPrompt:
      w.prompt = n;
      break;
    case FieldId::kContext:
      if (n < 1) {
        return Status::Invalid(
            where, fmt::format("must be at least 1, got {} (leave it out to attend to the whole "
                               "prompt)",
                               n));
      }
      w.context = n;
      break;
    case FieldId::kDtype:
      w.dtype = dtype;
      break;
    case FieldId::kWeightDtype:
      w.weight_dtype = dtype;
      break;
    case FieldId::kQuantizeLmHead:
      w.quantize_lm_head = flag;
      break;
    case FieldId::kZeroDtype:
      w.zero_dtype = dtype;
      break;
    case FieldId::kKvDtype:
      w.kv_dtype = dtype;
      break;
    case FieldId::kGroupSize:
      w.group_size = n;
      break;
    case FieldId::kTp:
      w.tp = n;
      break;
    case FieldId::kPp:
      if (n < 1) return Status::Invalid(where, fmt::format("must be positive, got {}", n));
      w.pp = n;
      break;
    case FieldId::kAttention:
      w.attention = text == "eager" ? AttentionImpl::kEager : AttentionImpl::kFlash;
      break;
    case FieldId::kFusion:
      w.fusion = text == "fused" ? FusionMode::kFused : FusionMode::kEager;
      break;
    case FieldId::kFusedLinears:
      w.fused_linears = ParseLinearMerge(text).value_or(LinearMerge::kAuto);
      break;
    case FieldId::kMla:
      w.mla = text == "naive" ? MlaForm::kNaive
                              : (text == "absorbed" ? MlaForm::kAbsorbed : MlaForm::kAuto);
      break;
    case FieldId::kAllLogits:
      w.all_logits = flag;
      break;
    case FieldId::kTf32:
      s.tf32 = flag;
      break;
    case FieldId::kDims: {
      const size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Status::Invalid(where + " " + value, "expected NAME=VALUE (e.g. batch=8)");
      }
      const std::string name = value.substr(0, eq);
      Result<int64_t> v = ParseSize(std::string_view(value).substr(eq + 1), where + " " + value);
      if (!v.ok()) return v.status();
      if (*v < 1 || *v > (int64_t{1} << 40)) {
        return Status::Invalid(where + " " + value,
                               fmt::format("{} must be between 1 and 2^40, got {}", name, *v));
      }
      auto it = std::find_if(s.dims.begin(), s.dims.end(),
                             [&](const auto& d) { return d.first == name; });
      if (it != s.dims.end()) {
        it->second = *v;
      } else {
        s.dims.emplace_back(name, *v);
      }
      break;
    }
    case FieldId::kSteps:
      if (n < 1 || n > 100000) {
        return Status::Invalid(where, fmt::format("must be in 1..100000, got {}", n));
      }
      s.steps = n;
      break;
    case FieldId::kCfg:
      s.cfg = flag;
      break;
    case FieldId::kMemoryFraction: {
      double f = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), f);
      if (ec != std::errc() || p != value.data() + value.size() || value.empty()) {
        return Status::Invalid(where, "'" + value + "' is not a number");
      }
      if (!(f > 0 && f <= 1)) {
        return Status::Invalid(where, fmt::format("must be in (0, 1], got {}", value));
      }
      s.workload.memory_fraction = f;
      break;
    }
    case FieldId::kLaunchOverheadUs: {
      double us = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), us);
      if (ec != std::errc() || p != value.data() + value.size() || value.empty()) {
        return Status::Invalid(where, "'" + value + "' is not a number of microseconds");
      }
      if (!(us >= 0 && us <= 1e6)) {
        return Status::Invalid(where, "must be between 0 and 1e6 microseconds");
      }
      s.launch_overhead_s = us * 1e-6;
      break;
    }
    case FieldId::kCeilings: {
      Result<CeilingSet> c = ParseCeilingSet(text);
      if (!c.ok()) return c.status();
      s.expected.ceilings = *c;
      break;
    }
    case FieldId::kRuntime: {
      Result<Runtime> r = ParseRuntime(text);
      if (!r.ok()) return r.status();
      s.expected.runtime = *r;
      break;
    }
    case FieldId::kEfficiency:
      if (Status st = ParseEfficiencyOverride(text, s.expected); !st.ok()) return st;
      s.efficiency_text.push_back(value);
      break;
    case FieldId::kWeightKernel:
      s.expected.weight_kernel = value;
      break;
    case FieldId::kMoeKernel:
      s.expected.moe_kernel = value;
      break;
    case FieldId::kAccumulate:
      s.expected.fp16_accumulate = text == "fp16";
      break;
    case FieldId::kModules:
      s.expected.modules = value;
      break;
    case FieldId::kEngine:
      if (value.empty()) return Status::Invalid(where, "empty engine name");
      s.expected.engine = value;
      break;
  }
  s.given.set(static_cast<size_t>(id));
  return Status::Ok();
}

std::string FieldText(const Scenario& s, FieldId id) {
  const Workload& w = s.workload;
  auto dtype = [](const std::optional<DType>& d) {
    return d.has_value() ? std::string(NameOf(*d)) : std::string();
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  switch (id) {
    case FieldId::kModel:
      return s.model;
    case FieldId::kHw:
      return s.hw;
    case FieldId::kPhase:
      return std::string(kPhases[static_cast<int>(s.phases)]);
    case FieldId::kBatch:
      return std::to_string(w.batch);
    case FieldId::kPrompt:
      return std::to_string(w.prompt);
    case FieldId::kContext:
      return w.context > 0 ? std::to_string(w.context) : std::string();
    case FieldId::kDtype:
      return dtype(w.dtype);
    case FieldId::kWeightDtype:
      return dtype(w.weight_dtype);
    case FieldId::kQuantizeLmHead:
      return flag(w.quantize_lm_head);
    case FieldId::kZeroDtype:
      return dtype(w.zero_dtype);
    case FieldId::kKvDtype:
      return dtype(w.kv_dtype);
    case FieldId::kGroupSize:
      return std::to_string(w.group_size);
    case FieldId::kTp:
      return std::to_string(w.tp);
    case FieldId::kPp:
      return w.pp > 0 ? std::to_string(w.pp) : std::string();
    case FieldId::kAttention:
      return w.attention == AttentionImpl::kEager ? "eager" : "flash";
    case FieldId::kFusion:
      return w.fusion == FusionMode::kFused ? "fused" : "eager";
    case FieldId::kFusedLinears:
      return std::string(kFusedLinears[static_cast<int>(w.fused_linears)]);
    case FieldId::kMla:
      return std::string(kMla[static_cast<int>(w.mla)]);
    case FieldId::kAllLogits:
      return flag(w.all_logits);
    case FieldId::kMemoryFraction:
      return w.memory_fraction < 1 ? fmt::format("{}", w.memory_fraction) : std::string();
    case FieldId::kTf32:
      return flag(s.tf32);
    case FieldId::kDims: {
      std::string out;
      for (const auto& [name, v] : s.dims) {
        out += (out.empty() ? "" : ",") + name + "=" + std::to_string(v);
      }
      return out;
    }
    case FieldId::kSteps:
      return s.steps > 0 ? std::to_string(s.steps) : std::string();
    case FieldId::kCfg:
      return flag(s.cfg);
    case FieldId::kLaunchOverheadUs:
      return fmt::format("{}", s.launch_overhead_s * 1e6);
    case FieldId::kCeilings:
      return std::string(NameOf(s.expected.ceilings));
    case FieldId::kRuntime:
      return std::string(NameOf(s.expected.runtime));
    case FieldId::kEfficiency: {
      std::string out;
      for (const std::string& e : s.efficiency_text) out += (out.empty() ? "" : ",") + e;
      return out;
    }
    case FieldId::kWeightKernel:
      return s.expected.weight_kernel;
    case FieldId::kMoeKernel:
      return s.expected.moe_kernel;
    case FieldId::kAccumulate:
      return s.expected.fp16_accumulate ? "fp16" : "fp32";
    case FieldId::kModules:
      return s.expected.modules;
    case FieldId::kEngine:
      return s.expected.engine;
  }
  return {};
}

void ApplyDerivedDefaults(Scenario& s) {
  Workload& w = s.workload;
  if (s.Given(FieldId::kContext) && !s.Given(FieldId::kPrompt) && w.context > 0 &&
      w.context < w.prompt) {
    w.prompt = w.context;
  }
}

namespace {

// `what` with each field's flag ("use --fusion eager") spelled as its key ("use fusion eager"):
// a file has keys, not options.
std::string KeysForFlags(std::string what) {
  for (size_t at = what.find("--"); at != std::string::npos; at = what.find("--", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(what[at - 1])) || what[at - 1] == '-')) {
      continue;
    }
    size_t end = at + 2;
    while (end < what.size() &&
           (std::isalnum(static_cast<unsigned char>(what[end])) || what[end] == '-')) {
      ++end;
    }
    const Field* f = FindField(std::string_view(what).substr(at, end - at));
    if (f == nullptr || !f->published) continue;  // a file sets only its published fields
    what.replace(at, end - at, f->name);
  }
  return what;
}

}  // namespace

Status InFile(const Status& status, const std::string& prefix) {
  if (status.ok()) return status;
  const std::string& where = status.where();
  const std::string what = KeysForFlags(status.what());
  // "--dim batch=x" and "--vary ..." keep their text after the flag.
  const size_t space = where.find(' ');
  const Field* f = FindField(std::string_view(where).substr(0, space));
  if (f == nullptr || where.rfind("--", 0) != 0) {
    return Status::Invalid(prefix + (where.empty() ? "" : "." + where), what);
  }
  return Status::Invalid(prefix + "." + std::string(f->name), what);
}

Status Validate(const Scenario& s, bool is_network) {
  // Fields of the other kind of model, in table order.
  for (const Field& f : kFields) {
    if (!s.Given(f.id)) continue;
    if (is_network && !(f.scope & kScopeNetwork)) {
      return Status::Invalid(std::string(f.flag),
                             "applies to LLM configs; graph files and ONNX models take --dim "
                             "NAME=VALUE (e.g. --dim batch=8)");
    }
    if (!is_network && !(f.scope & kScopeLlm)) {
      if (f.id == FieldId::kTf32 && !s.tf32) continue;  // --tf32=false: nothing to move
      if (f.id == FieldId::kTf32) {
        return Status::Invalid("--tf32",
                               "applies to graph files and ONNX models (an LLM config's products "
                               "run in --dtype)");
      }
      if (f.id == FieldId::kDims) {
        return Status::Invalid("--dim", "applies to graph files and ONNX models, not to the LLM "
                                        "config '" +
                                            s.model + "'");
      }
      return Status::Invalid(std::string(f.flag),
                             "applies to graph files, ONNX models and network presets (a "
                             "diffusion denoiser), not to the LLM '" +
                                 s.model + "'");
    }
  }
  if (s.cfg && !s.Given(FieldId::kSteps)) {
    return Status::Invalid("--cfg", "goes with --steps N (the denoising steps)");
  }
  if (is_network) return Status::Ok();

  const Workload& w = s.workload;
  if (Status st = Validate(w); !st.ok()) return st;
  if (w.context > 0 && w.context < w.prompt) {
    return Status::Invalid(
        "--context", fmt::format("{} keys is shorter than the prompt ({} tokens, {}): a decode "
                                 "step attends to at least the prompt; give a longer "
                                 "--context or a shorter --prompt",
                                 w.context, w.prompt,
                                 s.Given(FieldId::kPrompt) ? "--prompt" : "the default"));
  }
  if (!s.expected.modules.empty()) {
    // The counts are of modules run op by op around one fused attention call.
    const char* conflict =
        w.fusion == FusionMode::kFused ? "runs its modules op by op: use --fusion eager"
        : w.attention == AttentionImpl::kEager
            ? "counts a fused attention call: use --attention flash"
        : s.expected.runtime == Runtime::kCompiled
            ? "runs its modules op by op, not compiled: use --runtime eager or cuda-graph"
            : nullptr;
    if (conflict != nullptr) {
      return Status::Invalid("--modules", "'" + s.expected.modules + "' " + conflict);
    }
  }
  return Status::Ok();
}

std::string FieldNames(FieldSet fields) {
  std::string out;
  for (const Field& f : kFields) {
    if (fields[static_cast<size_t>(f.id)]) out += (out.empty() ? "" : ", ") + std::string(f.name);
  }
  return out;
}

}  // namespace roofline
