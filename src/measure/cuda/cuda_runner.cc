// `roofline validate --device cuda`: every op of a graph run on the GPU and timed with CUDA
// events. Compiled only with the CUDA backend.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "roofline/cuda_measure.h"
#include "src/measure/cuda/cuda_plugin_api.h"
#include "src/measure/cuda/cuda_util.h"
#include "src/measure/cuda/kernels.h"

namespace roofline {
namespace {

using cuda_internal::DeviceBuffer;
using cuda_internal::Timer;
namespace k = cuda_kernels;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

#define ROOFLINE_CUBLAS_CHECK(call)                                                      \
  do {                                                                                   \
    const cublasStatus_t roofline_cublas_status_ = (call);                               \
    if (roofline_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                              \
      return Status::Unsupported(                                                        \
          "--device cuda",                                                               \
          fmt::format("{}: {}", #call, cublasGetStatusString(roofline_cublas_status_))); \
    }                                                                                    \
  } while (0)

/// The storage the GPU uses for a dtype: fp32, fp16 or bf16 (anything else runs as bf16).
k::Elem ElemOf(DType d, std::string* note) {
  switch (d) {
    case DType::kFp32:
    case DType::kTf32:
      return k::Elem::kF32;
    case DType::kFp16:
      return k::Elem::kF16;
    case DType::kBf16:
      return k::Elem::kBf16;
    default:
      if (note != nullptr && note->find("as bf16") == std::string::npos) {
        *note += fmt::format(" ({} run as bf16)", NameOf(d));
      }
      return k::Elem::kBf16;
  }
}

cudaDataType_t CudaTypeOf(k::Elem e) {
  switch (e) {
    case k::Elem::kF32:
      return CUDA_R_32F;
    case k::Elem::kF16:
      return CUDA_R_16F;
    default:
      return CUDA_R_16BF;
  }
}

/// Elementwise function from the op's name (the CPU runner's rules).
k::EwFn Classify(const std::string& function, int inputs) {
  if (inputs == 0) return k::EwFn::kGeneric;
  std::string f = function;
  for (char& ch : f) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto has = [&](const char* w) { return f.find(w) != std::string::npos; };
  auto ends = [&](const char* w) {
    const size_t n = std::strlen(w);
    return f.size() >= n && f.compare(f.size() - n, n, w) == 0;
  };
  if (has("rope") || has("rotary")) return k::EwFn::kRope;
  if (has("softcap")) return k::EwFn::kSoftcap;
  if (has("gelu")) return k::EwFn::kGelu;
  if (has("silu") || has("swish") || has("swiglu") || ends("act")) return k::EwFn::kSilu;
  if (has("mul")) return inputs >= 2 ? k::EwFn::kMul : k::EwFn::kScale;
  if (has("scale")) return k::EwFn::kScale;
  if (has("add") || has("residual") || has("combine") || has("sum")) return k::EwFn::kAdd;
  return k::EwFn::kGeneric;
}

/// Shared state of one run.
struct Ctx {
  const CudaRunOptions& options;
  CudaDeviceInfo info;
  Timer& timer;
  cublasHandle_t blas = nullptr;
  uint64_t seed = 1;
};

/// An op ready to run: its buffers and one launch.
struct Prepared {
  std::vector<DeviceBuffer> buffers;
  std::function<cudaError_t()> run;
  std::string implementation;
  std::string skipped;
};

/// Allocates one device buffer per operand (storage `elem`, ids as int64) and fills inputs with
/// random values (outputs too: a kernel that skips an element leaves noise, never zeros).
Result<std::vector<void*>> Allocate(const std::vector<Operand>& operands, k::Elem elem,
                                    int64_t ids_range, Prepared& p, Ctx& c) {
  std::vector<void*> ptrs(operands.size(), nullptr);
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    const auto n = static_cast<int64_t>(std::ceil(std::max(0.0, o.elements)));
    if (n <= 0) continue;
    const bool ids = o.role == TensorRole::kIndex;
    DeviceBuffer buf;
    Status s = buf.Allocate(static_cast<size_t>(n) * (ids ? 8 : k::SizeOf(elem)));
    if (!s.ok()) return s;
    const uint64_t seed = c.seed * 131 + i;
    if (ids) {
      ROOFLINE_CUDA_CHECK(k::FillIds(buf.as<int64_t>(), n, std::max<int64_t>(ids_range, 1), seed,
                                     c.timer.stream()));
    } else {
      ROOFLINE_CUDA_CHECK(k::FillRandom(buf.get(), n, elem, seed, c.timer.stream()));
    }
    ptrs[i] = buf.get();
    p.buffers.push_back(std::move(buf));
  }
  return ptrs;
}

int IndexOf(const std::vector<Operand>& operands, const char* name) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (std::strcmp(operands[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

void* Ptr(const std::vector<void*>& ptrs, const std::vector<Operand>& operands, const char* name) {
  const int i = IndexOf(operands, name);
  return i < 0 ? nullptr : ptrs[static_cast<size_t>(i)];
}

double Elements(const std::vector<Operand>& operands, const char* name) {
  const int i = IndexOf(operands, name);
  return i < 0 ? 0 : std::ceil(operands[static_cast<size_t>(i)].elements);
}

/// Device bytes the op's buffers need.
double BufferBytes(const std::vector<Operand>& operands, k::Elem elem) {
  double bytes = 0;
  for (const Operand& o : operands) {
    bytes +=
        std::ceil(std::max(0.0, o.elements)) * (o.role == TensorRole::kIndex ? 8 : k::SizeOf(elem));
  }
  return bytes;
}

Status CheckBudget(const std::vector<Operand>& operands, k::Elem elem, Prepared& p, const Ctx& c) {
  size_t free_bytes = 0, total = 0;
  ROOFLINE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const double need = BufferBytes(operands, elem);
  const double limit = c.options.max_memory_fraction * static_cast<double>(free_bytes);
  if (need > limit) {
    p.skipped = fmt::format("needs {:.3g} GB of device buffers, over {:.0f}% of the {:.3g} GB free",
                            need / 1e9, 100 * c.options.max_memory_fraction, free_bytes / 1e9);
  }
  return Status::Ok();
}

Status PrepareMatmul(const MatmulSpec& s, Ctx& c, Prepared& p) {
  std::string note;
  const k::Elem elem = ElemOf(s.a_dtype, &note);
  if (s.b_dtype != s.a_dtype) {
    note += fmt::format(" ({} weights run as {}: no dequantization)", NameOf(s.b_dtype),
                        NameOf(s.a_dtype));
  }
  std::vector<Operand> operands = OperandsOf(s);
  for (const char* unused : {"scales", "zeros"}) {  // no dequantization
    const int i = IndexOf(operands, unused);
    if (i >= 0) operands[static_cast<size_t>(i)].elements = 0;
  }
  const int bias = IndexOf(operands, "bias");
  if (bias >= 0) {
    operands[static_cast<size_t>(bias)].elements = 0;
    note += " (bias not added)";
  }
  for (const auto& [name, v] :
       {std::pair<const char*, int64_t>{"m", s.m}, {"n", s.n}, {"k", s.k}}) {
    if (v > INT_MAX / 4) {
      p.skipped = fmt::format("{} = {} exceeds cuBLAS's 32-bit int", name, v);
      return Status::Ok();
    }
  }
  Status st = CheckBudget(operands, elem, p, c);
  if (!st.ok() || !p.skipped.empty()) return st;
  Result<std::vector<void*>> ptrs = Allocate(operands, elem, 0, p, c);
  if (!ptrs.ok()) return ptrs.status();
  const void* a = Ptr(*ptrs, operands, "A");
  const void* b = Ptr(*ptrs, operands, "B");
  void* out = Ptr(*ptrs, operands, "C");
  const double b_elements = Elements(operands, "B");
  const cudaDataType_t type = CudaTypeOf(elem);
  // fp32 products are CUDA-core fp32 (the cost model's vector.fp32); tf32 uses tensor cores.
  const cublasComputeType_t compute =
      s.a_dtype == DType::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const auto es = static_cast<int64_t>(k::SizeOf(elem));
  cublasHandle_t h = c.blas;
  static const float kOne = 1.0f, kZero = 0.0f;
  const int n = static_cast<int>(s.n), kk = static_cast<int>(s.k);
  if (s.experts > 0) {
    // Tokens x top-k rows split evenly over the experts the batch touches (the CPU's rule).
    const int64_t touched =
        std::clamp<int64_t>(std::llround(s.ExpertsTouched()), 1, std::min(s.experts, s.m));
    const bool all_b = b_elements >= static_cast<double>(s.experts) * s.k * s.n;
    p.implementation =
        fmt::format("cublasGemmEx (one per touched expert: {} of {}){}", touched, s.experts, note);
    p.run = [=]() -> cudaError_t {
      int64_t row = 0;
      for (int64_t e = 0; e < touched; ++e) {
        const int64_t rows = s.m / touched + (e < s.m % touched ? 1 : 0);
        const int64_t expert = all_b ? e * s.experts / touched : 0;
        // Row-major C = A B is column-major C^T = B^T A^T.
        const cublasStatus_t r = cublasGemmEx(
            h, CUBLAS_OP_N, CUBLAS_OP_N, n, static_cast<int>(rows), kk, &kOne,
            static_cast<const char*>(b) + expert * s.k * s.n * es, type, n,
            static_cast<const char*>(a) + row * s.k * es, type, kk, &kZero,
            static_cast<char*>(out) + row * s.n * es, type, n, compute, CUBLAS_GEMM_DEFAULT);
        if (r != CUBLAS_STATUS_SUCCESS) return cudaErrorLaunchFailure;
        row += rows;
      }
      return cudaGetLastError();
    };
    return Status::Ok();
  }
  // Entries sharing one B (GQA groups) are consecutive: fold them into the rows of one product.
  const int64_t share = s.b_broadcast > 1 && s.batch % s.b_broadcast == 0 ? s.b_broadcast : 1;
  const int64_t groups = s.batch / share;
  const int64_t rows = share * s.m;
  if (rows > INT_MAX / 4) {
    p.skipped = fmt::format("{} rows per product exceed cuBLAS's 32-bit int", rows);
    return Status::Ok();
  }
  const long long stride_b = b_elements >= static_cast<double>(groups) * s.k * s.n ? s.k * s.n : 0;
  p.implementation = groups == 1
                         ? "cublasGemmEx" + note
                         : fmt::format("cublasGemmStridedBatchedEx ({} products){}", groups, note);
  p.run = [=]() -> cudaError_t {
    const cublasStatus_t r = cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, n, static_cast<int>(rows), kk, &kOne, b, type, n, stride_b, a,
        type, kk, static_cast<long long>(rows) * s.k, &kZero, out, type, n,
        static_cast<long long>(rows) * s.n, static_cast<int>(groups), compute, CUBLAS_GEMM_DEFAULT);
    return r == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorLaunchFailure;
  };
  return Status::Ok();
}

Status PrepareAttention(const AttentionSpec& s, Ctx& c, Prepared& p) {
  std::string note;
  const k::Elem elem = ElemOf(s.dtype, &note);
  if (s.kv_dtype != s.dtype) {
    note += fmt::format(" ({} KV cache run as {})", NameOf(s.kv_dtype), NameOf(s.dtype));
  }
  std::vector<Operand> operands = OperandsOf(s);
  const bool v_in_k = s.v_in_k && s.v_dim() <= s.head_dim;
  if (v_in_k) operands[static_cast<size_t>(IndexOf(operands, "V"))].elements = 0;
  k::AttentionArgs a;
  a.batch = s.batch;
  a.heads = s.heads;
  a.kv_heads = s.kv_heads;
  a.head_dim = s.head_dim;
  a.v_dim = s.v_dim();
  a.v_ld = v_in_k ? s.head_dim : s.v_dim();
  a.q_len = s.q_len;
  a.kv_len = s.kv_len;
  a.causal = s.causal;
  a.window = s.window;
  const auto max_smem = static_cast<size_t>(c.info.smem_per_block_optin_bytes);
  const size_t smem = k::FlashAttentionSmemBytes(a, max_smem);
  if (smem == 0) {
    p.skipped = fmt::format(
        "head dims {}/{} need more shared memory than the {} bytes a block "
        "may use",
        s.head_dim, s.v_dim(), max_smem);
    return Status::Ok();
  }
  if (s.batch > 65535 || s.heads > 65535 || (s.q_len + 3) / 4 > INT_MAX) {
    p.skipped = "batch or heads over 65535 (grid limit of the tiled kernel)";
    return Status::Ok();
  }
  Status st = CheckBudget(operands, elem, p, c);
  if (!st.ok() || !p.skipped.empty()) return st;
  Result<std::vector<void*>> ptrs = Allocate(operands, elem, 0, p, c);
  if (!ptrs.ok()) return ptrs.status();
  a.q = Ptr(*ptrs, operands, "Q");
  a.k = Ptr(*ptrs, operands, "K");
  a.v = v_in_k ? a.k : Ptr(*ptrs, operands, "V");
  a.o = Ptr(*ptrs, operands, "O");
  p.implementation =
      k::UsesDecodeAttention(a)
          ? fmt::format("split-key decode attention (own kernels, CUDA cores, fp32 accumulate){}",
                        note)
          : fmt::format(
                "tiled attention (own kernel, CUDA cores, fp32 accumulate, {} KiB shared memory){}",
                smem / 1024, note);
  cudaStream_t stream = c.timer.stream();
  p.run = [=] { return k::FlashAttention(elem, a, max_smem, stream); };
  return Status::Ok();
}

Status PrepareElementwise(const ElementwiseSpec& s, Ctx& c, Prepared& p) {
  std::string note;
  const k::Elem elem = ElemOf(s.dtype, &note);
  const std::vector<Operand> operands = OperandsOf(s);
  if (s.inputs > k::kMaxEwInputs) {
    p.skipped = fmt::format("{} inputs (the kernel takes at most {})", s.inputs, k::kMaxEwInputs);
    return Status::Ok();
  }
  // A merged gate-up's gated activation (act_mul, act_mul:gelu) reads both halves of its one
  // input; any other op reading more than its output's elements has no kernel of that shape here.
  const bool gated = s.input_per_output == 2 && s.inputs == 1 &&
                     (s.function == "act_mul" || s.function == "act_mul:gelu");
  if (gated && s.elements != std::floor(s.elements)) {
    p.skipped = "a gated activation over a fractional number of elements";
    return Status::Ok();
  }
  if (s.input_per_output != 1 && !gated) {
    p.skipped = fmt::format("reads {} input elements per output element: no CUDA kernel",
                            s.input_per_output);
    return Status::Ok();
  }
  Status st = CheckBudget(operands, elem, p, c);
  if (!st.ok() || !p.skipped.empty()) return st;
  Result<std::vector<void*>> ptrs = Allocate(operands, elem, 0, p, c);
  if (!ptrs.ok()) return ptrs.status();
  const k::EwFn fn = !gated                         ? Classify(s.function, s.inputs)
                     : s.function == "act_mul:gelu" ? k::EwFn::kGeluMul
                                                    : k::EwFn::kSiluMul;
  k::EwArgs args;
  args.inputs = static_cast<int>(operands.size()) - 1;
  for (int i = 0; i < args.inputs; ++i) args.in[i] = (*ptrs)[static_cast<size_t>(i)];
  args.out = ptrs->back();
  args.n = static_cast<int64_t>(std::ceil(s.elements));
  const double combine = std::max(0, s.inputs - 1);
  args.fmas = static_cast<int>(std::ceil(std::max(0.0, s.flops_per_element - combine) / 2));
  if (args.out == nullptr || (fn == k::EwFn::kRope && args.inputs < 1)) {
    p.skipped = "no output elements";
    return Status::Ok();
  }
  static const char* kNames[] = {"add",
                                 "mul",
                                 "scale",
                                 "silu",
                                 "gelu (tanh)",
                                 "softcap (tanh)",
                                 "rope (pair rotation)",
                                 "silu(gate) x up, both halves of one input",
                                 "gelu(gate) x up, both halves of one input",
                                 "generic"};
  p.implementation = fmt::format("elementwise kernel ({}){}", kNames[static_cast<int>(fn)], note);
  cudaStream_t stream = c.timer.stream();
  p.run = [=] { return k::Elementwise(fn, elem, args, stream); };
  return Status::Ok();
}

Status PrepareNorm(const NormSpec& s, Ctx& c, Prepared& p) {
  std::string note;
  const k::Elem elem = ElemOf(s.dtype, &note);
  const std::vector<Operand> operands = OperandsOf(s);
  Status st = CheckBudget(operands, elem, p, c);
  if (!st.ok() || !p.skipped.empty()) return st;
  Result<std::vector<void*>> ptrs = Allocate(operands, elem, 0, p, c);
  if (!ptrs.ok()) return ptrs.status();
  const void* x = Ptr(*ptrs, operands, "x");
  const void* w = Ptr(*ptrs, operands, "weight");
  const void* b = Ptr(*ptrs, operands, "bias");
  void* y = Ptr(*ptrs, operands, "y");
  const bool rms = s.kind == NormKind::kRms;
  p.implementation = std::string(rms ? "rmsnorm kernel" : "layernorm kernel") + note;
  cudaStream_t stream = c.timer.stream();
  const int64_t rows = s.rows, cols = s.cols;
  p.run = [=] { return k::Norm(elem, rms, x, w, b, y, rows, cols, stream); };
  return Status::Ok();
}

Status PrepareSoftmax(const SoftmaxSpec& s, Ctx& c, Prepared& p) {
  std::string note;
  const k::Elem elem = ElemOf(s.dtype, &note);
  const std::vector<Operand> operands = OperandsOf(s);
  Status st = CheckBudget(operands, elem, p, c);
  if (!st.ok() || !p.skipped.empty()) return st;
  Result<std::vector<void*>> ptrs = Allocate(operands, elem, 0, p, c);
  if (!ptrs.ok()) return ptrs.status();
  const void* x = Ptr(*ptrs, operands, "x");
  void* y = Ptr(*ptrs, operands, "y");
  const auto rows = static_cast<int64_t>(std::ceil(s.rows));
  const int64_t cols = s.cols;
  p.implementation = "softmax kernel (block per row)" + note;
  cudaStream_t stream = c.timer.stream();
  p.run = [=] { return k::Softmax(elem, x, y, rows, cols, stream); };
  return Status::Ok();
}

Status PrepareEmbedding(const EmbeddingSpec& s, Ctx& c, Prepared& p) {
  std::string note;
  const k::Elem elem = ElemOf(s.dtype, &note);
  const std::vector<Operand> operands = OperandsOf(s);
  Status st = CheckBudget(operands, elem, p, c);
  if (!st.ok() || !p.skipped.empty()) return st;
  Result<std::vector<void*>> ptrs = Allocate(operands, elem, s.vocab, p, c);
  if (!ptrs.ok()) return ptrs.status();
  const auto* ids = static_cast<const int64_t*>(Ptr(*ptrs, operands, "ids"));
  const void* table = Ptr(*ptrs, operands, "table");
  void* y = Ptr(*ptrs, operands, "y");
  const int64_t tokens = s.tokens, dim = s.dim;
  p.implementation = "row gather kernel" + note;
  cudaStream_t stream = c.timer.stream();
  p.run = [=] { return k::Embedding(elem, ids, table, y, tokens, dim, stream); };
  return Status::Ok();
}

Status Prepare(const OpSpec& spec, Ctx& c, Prepared& p) {
  return std::visit(Overloaded{
                        [&](const MatmulSpec& s) { return PrepareMatmul(s, c, p); },
                        [&](const AttentionSpec& s) { return PrepareAttention(s, c, p); },
                        [&](const ElementwiseSpec& s) { return PrepareElementwise(s, c, p); },
                        [&](const NormSpec& s) { return PrepareNorm(s, c, p); },
                        [&](const SoftmaxSpec& s) { return PrepareSoftmax(s, c, p); },
                        [&](const EmbeddingSpec& s) { return PrepareEmbedding(s, c, p); },
                        [&](const Conv2dSpec&) {
                          p.skipped = "conv2d: not run on the CUDA backend";
                          return Status::Ok();
                        },
                        [&](const CollectiveSpec&) {
                          p.skipped = "collective: not measured on a single GPU";
                          return Status::Ok();
                        },
                    },
                    spec);
}

}  // namespace

Result<std::vector<OpTiming>> cuda_plugin::RunGraphOnCuda(const Graph& graph,
                                                          const CudaRunOptions& options) {
  if (options.repetitions < 1) {
    return Status::Invalid("repetitions",
                           fmt::format("must be at least 1, got {}", options.repetitions));
  }
  if (options.warmup < 0) {
    return Status::Invalid("warmup", fmt::format("must be >= 0, got {}", options.warmup));
  }
  CudaDeviceInfo info;
  Status s = cuda_internal::SelectDevice(options.device, &info);
  if (!s.ok()) return s;
  Timer timer;
  s = timer.Init();
  if (!s.ok()) return s;
  timer.SetLeadCycles(cuda_internal::LeadCyclesOf(info));
  cublasHandle_t blas = nullptr;
  ROOFLINE_CUBLAS_CHECK(cublasCreate(&blas));
  struct DestroyBlas {
    cublasHandle_t h;
    ~DestroyBlas() { (void)cublasDestroy(h); }
  } destroy_blas{blas};
  ROOFLINE_CUBLAS_CHECK(cublasSetStream(blas, timer.stream()));
  Ctx ctx{options, info, timer, blas, 1};

  // Writing a buffer twice the L2 size evicts the previous run's data.
  DeviceBuffer flush;
  std::function<cudaError_t()> before;
  if (options.flush_l2 && info.l2_bytes > 0) {
    s = flush.Allocate(static_cast<size_t>(2 * info.l2_bytes));
    if (!s.ok()) return s;
    before = [&flush, &timer] {
      return cudaMemsetAsync(flush.get(), 0x5a, flush.bytes(), timer.stream());
    };
  }

  std::vector<OpTiming> out;
  out.reserve(graph.ops().size());
  for (size_t i = 0; i < graph.ops().size(); ++i) {
    const Op& op = graph.ops()[i];
    OpTiming t;
    t.op = static_cast<int>(i);
    t.name = op.name;
    const Status valid = Validate(op.spec);
    if (!valid.ok()) {
      t.skipped = true;
      t.why_skipped = "invalid op: " + valid.ToString();
      out.push_back(std::move(t));
      continue;
    }
    ctx.seed = i + 1;
    Prepared p;
    s = Prepare(op.spec, ctx, p);
    if (!s.ok()) return s.WithPrefix(op.name);
    t.implementation = p.implementation;
    if (!p.skipped.empty()) {
      t.skipped = true;
      t.why_skipped = p.skipped;
      out.push_back(std::move(t));
      continue;
    }
    Result<std::vector<double>> seconds =
        timer.Time(p.run, options.warmup, options.repetitions, before);
    if (!seconds.ok()) return seconds.status().WithPrefix(op.name);
    cuda_plan::MedianAndSpread(*seconds, &t.seconds, &t.spread);
    t.repetitions = static_cast<int>(seconds->size());
    out.push_back(std::move(t));
    // p's buffers are freed here; cudaFree synchronizes, so the next op starts clean.
  }
  return out;
}

}  // namespace roofline
