// `roofline measure --device cuda`: device properties, bandwidth per memory level, CUDA-core FMA
// peaks and cuBLASLt tensor-core peaks. Compiled only with the CUDA backend.
#include "roofline/cuda_measure.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "src/measure/cpu/timing.h"
#include "src/measure/cuda/cuda_plugin_api.h"
#include "src/measure/cuda/cuda_util.h"
#include "src/measure/cuda/kernels.h"

namespace roofline {
namespace cuda_plugin {

Result<int> CudaDeviceCount() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::Unsupported("--device cuda",
                               fmt::format("no CUDA device found (cudaGetDeviceCount: {}: {})",
                                           cudaGetErrorName(e), cudaGetErrorString(e)));
  }
  if (count == 0) {
    return Status::Unsupported("--device cuda",
                               "no CUDA device found (cudaGetDeviceCount returned 0 devices)");
  }
  return count;
}

}  // namespace cuda_plugin

namespace cuda_internal {

Status SelectDevice(int index, CudaDeviceInfo* info) {
  Result<int> count = cuda_plugin::CudaDeviceCount();
  if (!count.ok()) return count.status();
  if (index < 0 || index >= *count) {
    return Status::Invalid("--device", fmt::format("cuda:{} does not exist: this machine has {} "
                                                   "CUDA device(s), cuda:0 to cuda:{}",
                                                   index, *count, *count - 1));
  }
  ROOFLINE_CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp p{};
  ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  int clock_khz = 0, mem_clock_khz = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, index));
  info->index = index;
  info->name = p.name;
  info->cc_major = p.major;
  info->cc_minor = p.minor;
  info->sm_count = p.multiProcessorCount;
  info->sm_clock_hz = clock_khz * 1e3;
  info->memory_clock_hz = mem_clock_khz * 1e3;
  info->memory_bus_width_bits = p.memoryBusWidth;
  info->global_memory_bytes = static_cast<double>(p.totalGlobalMem);
  info->l2_bytes = p.l2CacheSize;
  info->smem_per_sm_bytes = static_cast<double>(p.sharedMemPerMultiprocessor);
  info->smem_per_block_optin_bytes = static_cast<double>(p.sharedMemPerBlockOptin);
  info->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  ROOFLINE_CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
  ROOFLINE_CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
  return Status::Ok();
}

}  // namespace cuda_internal

namespace {

using cuda_internal::DeviceBuffer;
using cuda_internal::Timer;
namespace k = cuda_kernels;

constexpr int kThreads = 256;

struct Run {
  const CudaMeasureOptions& options;
  CudaMeasurement& m;
  Timer& timer;
  /// Written before every timed GEMM launch (twice the L2 size), as `validate` does.
  DeviceBuffer* flush = nullptr;
  /// cuBLAS (the library PyTorch and `validate` call) beside cuBLASLt; null when not created.
  cublasHandle_t blas = nullptr;
  int warmup() const { return 2; }
  int repetitions() const { return options.quick ? 5 : 20; }
  /// Blocks of kThreads that fill every SM.
  int Blocks() const {
    const int per_sm = std::max(1, m.info.max_threads_per_sm / kThreads);
    return std::max(1, m.info.sm_count) * per_sm;
  }
};

/// Grows the loop count of `launch(n)` from `n` until one launch takes about `target_s`.
Result<int64_t> Calibrate(Timer& timer, const std::function<cudaError_t(int64_t)>& launch,
                          int64_t n, double target_s, int64_t max_n) {
  for (int round = 0; round < 8; ++round) {
    Result<std::vector<double>> t = timer.Time([&] { return launch(n); }, 1, 1);
    if (!t.ok()) return t.status();
    const double s = t->front();
    const int64_t next = cuda_plan::ScaleIterations(n, s, target_s, max_n);
    if (s >= 0.5 * target_s || next <= n || n >= max_n) return next;
    n = std::min(next, n * 64);
  }
  return n;
}

Status MeasureBandwidth(Run& r) {
  const CudaDeviceInfo& info = r.m.info;
  size_t free_bytes = 0, total_bytes = 0;
  ROOFLINE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  double ws = cuda_plan::DramWorkingSetBytes(info, r.options.quick);
  while (2 * ws > 0.8 * static_cast<double>(free_bytes) && ws > 64 * 1024.0 * 1024.0) ws /= 2;
  DeviceBuffer a, b, sink;
  Status s = a.Allocate(static_cast<size_t>(ws));
  if (s.ok()) s = b.Allocate(static_cast<size_t>(ws));
  if (s.ok()) s = sink.Allocate(64);
  if (!s.ok()) return s;
  cudaStream_t st = r.timer.stream();
  ROOFLINE_CUDA_CHECK(k::FillRandom(a.get(), static_cast<int64_t>(ws / 4), k::Elem::kF32, 1, st));
  ROOFLINE_CUDA_CHECK(k::FillRandom(b.get(), static_cast<int64_t>(ws / 4), k::Elem::kF32, 2, st));
  const int blocks = r.Blocks();
  auto record = [&](const std::string& level, const std::string& kernel, double working_set,
                    double bytes_per_launch, const std::vector<double>& seconds) {
    CudaBandwidth bw;
    bw.level = level;
    bw.kernel = kernel;
    bw.working_set_bytes = working_set;
    bw.bytes_per_s = cuda_plan::RatesFromSeconds(seconds, bytes_per_launch);
    r.m.bandwidths.push_back(bw);
  };
  auto report = [&](double f, const std::string& what) {
    if (r.options.progress) r.options.progress(f, what);
  };

  // Device memory: one pass over buffers far larger than L2.
  const auto n4 = static_cast<int64_t>(ws / 16);
  const auto* src = a.as<const float4>();
  auto* dst = b.as<float4>();
  float* snk = sink.as<float>();
  report(0.02, "device memory: read");
  Result<std::vector<double>> t =
      r.timer.Time([&] { return k::ReadKernel(src, n4, 1, snk, blocks, kThreads, st); }, r.warmup(),
                   r.repetitions());
  if (!t.ok()) return t.status();
  record("dram", "read", ws, ws, *t);
  report(0.06, "device memory: write");
  t = r.timer.Time([&] { return k::WriteKernel(dst, n4, 1, blocks, kThreads, st); }, r.warmup(),
                   r.repetitions());
  if (!t.ok()) return t.status();
  record("dram", "write", ws, ws, *t);
  report(0.10, "device memory: copy");
  t = r.timer.Time([&] { return k::CopyKernel(src, dst, n4, 1, blocks, kThreads, st); }, r.warmup(),
                   r.repetitions());
  if (!t.ok()) return t.status();
  record("dram", "copy", 2 * ws, 2 * ws, *t);

  // L2: a working set well inside L2, many passes per launch.
  const double l2ws = cuda_plan::L2WorkingSetBytes(info);
  const auto l2n4 = static_cast<int64_t>(l2ws / 16);
  const int64_t max_passes = 1 << 20;
  report(0.14, "L2: read");
  Result<int64_t> passes = Calibrate(
      r.timer,
      [&](int64_t p) {
        return k::ReadKernel(src, l2n4, static_cast<int>(p), snk, blocks, kThreads, st);
      },
      4, 2e-3, max_passes);
  if (!passes.ok()) return passes.status();
  const int pr = static_cast<int>(*passes);
  t = r.timer.Time([&] { return k::ReadKernel(src, l2n4, pr, snk, blocks, kThreads, st); },
                   r.warmup(), r.repetitions());
  if (!t.ok()) return t.status();
  record("l2", "read", l2ws, l2ws * pr, *t);
  report(0.18, "L2: write");
  t = r.timer.Time([&] { return k::WriteKernel(dst, l2n4, pr, blocks, kThreads, st); }, r.warmup(),
                   r.repetitions());
  if (!t.ok()) return t.status();
  record("l2", "write", l2ws, l2ws * pr, *t);
  report(0.22, "L2: copy");
  const int64_t half = l2n4 / 2;  // src and dst together fill the same working set
  t = r.timer.Time([&] { return k::CopyKernel(src, dst, half, pr, blocks, kThreads, st); },
                   r.warmup(), r.repetitions());
  if (!t.ok()) return t.status();
  record("l2", "copy", 2.0 * half * 16, 2.0 * half * 16 * pr, *t);

  // Shared memory: 16-byte conflict-free loads from a 32 KiB array per block.
  report(0.26, "shared memory");
  const int smem_blocks = std::max(1, info.sm_count) *
                          std::max(1, std::min(info.max_threads_per_sm / kThreads,
                                               static_cast<int>(info.smem_per_sm_bytes / 33792)));
  Result<int64_t> iters = Calibrate(
      r.timer, [&](int64_t n) { return k::SharedMemoryKernel(n, snk, smem_blocks, kThreads, st); },
      1024, 2e-3, int64_t{1} << 30);
  if (!iters.ok()) return iters.status();
  const int64_t it = (*iters + 7) / 8 * 8;
  t = r.timer.Time([&] { return k::SharedMemoryKernel(it, snk, smem_blocks, kThreads, st); },
                   r.warmup(), r.repetitions());
  if (!t.ok()) return t.status();
  record("smem", "read", smem_blocks * 32768.0,
         static_cast<double>(smem_blocks) * kThreads * static_cast<double>(it) * 16, *t);
  return Status::Ok();
}

Status MeasureFma(Run& r) {
  DeviceBuffer sink;
  Status s = sink.Allocate(64);
  if (!s.ok()) return s;
  cudaStream_t st = r.timer.stream();
  const int blocks = r.Blocks();
  // Packed 16-bit FMA (HFMA2) where the CUDA cores have it: fp16 from sm_60, bf16 from sm_80.
  std::vector<std::string> dtypes = {"fp32", "fp64"};
  if (r.m.info.Sm() >= 60) dtypes.emplace_back("fp16");
  if (r.m.info.Sm() >= 80) dtypes.emplace_back("bf16");
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const std::string& dtype = dtypes[i];
    if (r.options.progress) {
      r.options.progress(0.30 + 0.1 * static_cast<double>(i) / dtypes.size(),
                         "CUDA-core FMA " + dtype);
    }
    const bool packed = dtype == "fp16" || dtype == "bf16";
    auto launch = [&](int64_t n) {
      if (dtype == "fp64") return k::FmaF64Kernel(n, sink.as<double>(), blocks, kThreads, st);
      if (dtype == "fp16") return k::FmaF16x2Kernel(n, sink.as<float>(), blocks, kThreads, st);
      if (dtype == "bf16") return k::FmaBf16x2Kernel(n, sink.as<float>(), blocks, kThreads, st);
      return k::FmaF32Kernel(n, sink.as<float>(), blocks, kThreads, st);
    };
    Result<int64_t> iters = Calibrate(r.timer, launch, 256, 5e-3, int64_t{1} << 32);
    if (!iters.ok()) return iters.status();
    const int64_t n = *iters;
    Result<std::vector<double>> t =
        r.timer.Time([&] { return launch(n); }, r.warmup(), r.repetitions());
    if (!t.ok()) return t.status();
    MeasuredCeiling c;
    c.engine = "vector." + dtype;
    c.method = fmt::format(
        "{} independent {} {} chains per thread, {} blocks x {} threads, {} iterations",
        k::kFmaChains, packed ? dtype + "x2" : dtype, packed ? "HFMA2 (2 FMA each)" : "FMA",
        blocks, kThreads, n);
    const double flops = (packed ? 4.0 : 2.0) * k::kFmaChains * static_cast<double>(n) *
                         static_cast<double>(blocks) * kThreads;
    c.flops_per_s = cuda_plan::RatesFromSeconds(*t, flops);
    const cuda_plan::Peak p = cuda_plan::TheoreticalVectorPeak(r.m.info, dtype);
    c.theoretical = p.value;
    c.theoretical_formula = p.formula;
    r.m.ceilings.push_back(c);
  }
  return Status::Ok();
}

#define ROOFLINE_LT_CHECK(call)                                                               \
  do {                                                                                        \
    const cublasStatus_t roofline_lt_status_ = (call);                                        \
    if (roofline_lt_status_ != CUBLAS_STATUS_SUCCESS) {                                       \
      return Status::Unsupported(                                                             \
          "--device cuda",                                                                    \
          fmt::format("{}: cuBLAS status {}", #call, static_cast<int>(roofline_lt_status_))); \
    }                                                                                         \
  } while (0)

/// cuBLASLt objects of one GEMM, destroyed with it.
struct LtGemm {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtGemm() {
    if (pref != nullptr) (void)cublasLtMatmulPreferenceDestroy(pref);
    if (c != nullptr) (void)cublasLtMatrixLayoutDestroy(c);
    if (b != nullptr) (void)cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) (void)cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) (void)cublasLtMatmulDescDestroy(desc);
  }
};

/// Types of one tensor-core GEMM: inputs, output, compute, scale.
struct GemmTypes {
  cudaDataType_t in, out;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  k::Elem in_elem, out_elem;
  const char* layout;
};

GemmTypes TypesOf(const std::string& dtype) {
  if (dtype == "tf32") {
    return {CUDA_R_32F,
            CUDA_R_32F,
            CUBLAS_COMPUTE_32F_FAST_TF32,
            CUDA_R_32F,
            k::Elem::kF32,
            k::Elem::kF32,
            "A^T B (TN), fp32 in/out, tf32 tensor cores, fp32 accumulate"};
  }
  if (dtype == "fp16") {
    return {CUDA_R_16F,
            CUDA_R_16F,
            CUBLAS_COMPUTE_32F,
            CUDA_R_32F,
            k::Elem::kF16,
            k::Elem::kF16,
            "A^T B (TN), fp16 in/out, fp32 accumulate"};
  }
  if (dtype == "fp8") {
    return {CUDA_R_8F_E4M3,
            CUDA_R_16BF,
            CUBLAS_COMPUTE_32F,
            CUDA_R_32F,
            k::Elem::kFp8E4M3,
            k::Elem::kBf16,
            "A^T B (TN), fp8 e4m3 in, bf16 out, fp32 accumulate"};
  }
  if (dtype == "int8") {
    return {CUDA_R_8I,
            CUDA_R_32I,
            CUBLAS_COMPUTE_32I,
            CUDA_R_32I,
            k::Elem::kI8,
            k::Elem::kI32,
            "A^T B (TN), int8 in, int32 out and accumulate"};
  }
  return {CUDA_R_16BF,
          CUDA_R_16BF,
          CUBLAS_COMPUTE_32F,
          CUDA_R_32F,
          k::Elem::kBf16,
          k::Elem::kBf16,
          "A^T B (TN), bf16 in/out, fp32 accumulate"};
}

/// Rates of `launch` doing `flops`, each timed launch after the L2-sized write (when there is one).
Result<Sample> TimeGemm(Run& r, const std::function<cudaError_t()>& launch, double flops) {
  std::function<cudaError_t()> before;
  if (r.flush != nullptr && r.flush->get() != nullptr) {
    before = [&r] {
      return cudaMemsetAsync(r.flush->get(), 0x5a, r.flush->bytes(), r.timer.stream());
    };
  }
  Result<std::vector<double>> t = r.timer.Time(launch, 3, r.repetitions(), before);
  if (!t.ok()) return t.status();
  return cuda_plan::RatesFromSeconds(*t, flops);
}

/// One GEMM of m x n x k timed, A transposed (TN) or not (NN), through each of cuBLASLt's first
/// heuristic algorithms and, for NN, through cuBLAS; the best rate goes to g->flops_per_s (g->m,
/// n, k and the library and layout set).
Status MeasureGemmShape(Run& r, cublasLtHandle_t lt, const std::string& dtype, int64_t m, int64_t n,
                        int64_t kk, bool transpose_a, CudaGemm* g) {
  g->dtype = dtype;
  g->m = m;
  g->n = n;
  g->k = kk;
  const GemmTypes ty = TypesOf(dtype);
  g->layout = ty.layout;
  const std::string tn = "A^T B (TN)";
  if (!transpose_a && g->layout.compare(0, tn.size(), tn) == 0) {
    g->layout = "A B (NN)" + g->layout.substr(tn.size());
  }
  const auto a_elems = static_cast<size_t>(kk * m);
  const auto b_elems = static_cast<size_t>(kk * n);
  const auto c_elems = static_cast<size_t>(m * n);
  const size_t workspace_bytes = size_t{64} << 20;
  DeviceBuffer a, b, d, ws;
  Status s = a.Allocate(a_elems * k::SizeOf(ty.in_elem));
  if (s.ok()) s = b.Allocate(b_elems * k::SizeOf(ty.in_elem));
  if (s.ok()) s = d.Allocate(c_elems * k::SizeOf(ty.out_elem));
  if (s.ok()) s = ws.Allocate(workspace_bytes);
  if (!s.ok()) return s;
  cudaStream_t st = r.timer.stream();
  ROOFLINE_CUDA_CHECK(k::FillRandom(a.get(), static_cast<int64_t>(a_elems), ty.in_elem, 11, st));
  ROOFLINE_CUDA_CHECK(k::FillRandom(b.get(), static_cast<int64_t>(b_elems), ty.in_elem, 12, st));
  ROOFLINE_CUDA_CHECK(k::FillRandom(d.get(), static_cast<int64_t>(c_elems), ty.out_elem, 13, st));

  LtGemm lg;
  ROOFLINE_LT_CHECK(cublasLtMatmulDescCreate(&lg.desc, ty.compute, ty.scale));
  const cublasOperation_t trans = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, no_trans = CUBLAS_OP_N;
  ROOFLINE_LT_CHECK(
      cublasLtMatmulDescSetAttribute(lg.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  ROOFLINE_LT_CHECK(cublasLtMatmulDescSetAttribute(lg.desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans,
                                                   sizeof(no_trans)));
  // Column-major: A stored k x m (TN: used transposed) or m x k (NN), B k x n, C = D m x n.
  const auto um = static_cast<uint64_t>(m), un = static_cast<uint64_t>(n),
             uk = static_cast<uint64_t>(kk);
  if (transpose_a) {
    ROOFLINE_LT_CHECK(cublasLtMatrixLayoutCreate(&lg.a, ty.in, uk, um, kk));
  } else {
    ROOFLINE_LT_CHECK(cublasLtMatrixLayoutCreate(&lg.a, ty.in, um, uk, m));
  }
  ROOFLINE_LT_CHECK(cublasLtMatrixLayoutCreate(&lg.b, ty.in, uk, un, kk));
  ROOFLINE_LT_CHECK(cublasLtMatrixLayoutCreate(&lg.c, ty.out, um, un, m));
  ROOFLINE_LT_CHECK(cublasLtMatmulPreferenceCreate(&lg.pref));
  ROOFLINE_LT_CHECK(
      cublasLtMatmulPreferenceSetAttribute(lg.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_bytes, sizeof(workspace_bytes)));
  // The first algorithms of cuBLASLt's heuristic, each timed: the first alone is not always the
  // fastest (on an H100, 2026-11-24, it ran 4096x2048x14336 at ~796 TFLOP/s where PyTorch's
  // cuBLAS call reached 846).
  constexpr int kAlgorithms = 8;
  cublasLtMatmulHeuristicResult_t heuristics[kAlgorithms] = {};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(
      lt, lg.desc, lg.a, lg.b, lg.c, lg.c, lg.pref, kAlgorithms, heuristics, &found);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    g->skipped = true;
    g->why_skipped = fmt::format("cuBLASLt has no algorithm for it on this GPU (status {})",
                                 static_cast<int>(hs));
    return Status::Ok();
  }
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  const bool integer = ty.scale == CUDA_R_32I;
  const void* alpha = integer ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = integer ? static_cast<const void*>(&beta_i) : &beta_f;
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(kk);
  std::string library = "cuBLASLt";
  for (int i = 0; i < found; ++i) {
    if (heuristics[i].state != CUBLAS_STATUS_SUCCESS) continue;
    auto launch = [&]() -> cudaError_t {
      const cublasStatus_t st2 =
          cublasLtMatmul(lt, lg.desc, alpha, a.get(), lg.a, b.get(), lg.b, beta, d.get(), lg.c,
                         d.get(), lg.c, &heuristics[i].algo, ws.get(), workspace_bytes, st);
      if (st2 != CUBLAS_STATUS_SUCCESS) return cudaErrorLaunchFailure;
      return cudaGetLastError();
    };
    Result<Sample> rate = TimeGemm(r, launch, flops);
    if (!rate.ok()) return rate.status();
    if (rate->max > g->flops_per_s.max) g->flops_per_s = *rate;
  }
  // cuBLAS with its default algorithm, NN as `validate` and PyTorch call it, through cublasGemmEx
  // and cublasGemmStridedBatchedEx with one product (validate's call; cuBLAS chooses its kernel
  // per entry point). On an H100 (2026-11-24) validate's call ran 2048 tokens x 4096 x 14336 bf16
  // at 832-835 TFLOP/s and PyTorch at 846, above the best cuBLASLt algorithm here (782-823).
  const bool blas_dtype = ty.out == ty.in && !integer;
  if (r.blas != nullptr && !transpose_a && blas_dtype &&
      cublasSetStream(r.blas, st) == CUBLAS_STATUS_SUCCESS) {
    const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(kk);
    for (const bool batched : {false, true}) {
      auto launch = [&]() -> cudaError_t {
        const cublasStatus_t st2 =
            batched ? cublasGemmStridedBatchedEx(
                          r.blas, CUBLAS_OP_N, CUBLAS_OP_N, im, in, ik, &alpha_f, a.get(), ty.in,
                          im, static_cast<long long>(m) * kk, b.get(), ty.in, ik,
                          static_cast<long long>(kk) * n, &beta_f, d.get(), ty.out, im,
                          static_cast<long long>(m) * n, 1, ty.compute, CUBLAS_GEMM_DEFAULT)
                    : cublasGemmEx(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, im, in, ik, &alpha_f, a.get(),
                                   ty.in, im, b.get(), ty.in, ik, &beta_f, d.get(), ty.out, im,
                                   ty.compute, CUBLAS_GEMM_DEFAULT);
        if (st2 != CUBLAS_STATUS_SUCCESS) return cudaErrorLaunchFailure;
        return cudaGetLastError();
      };
      Result<Sample> rate = TimeGemm(r, launch, flops);
      if (!rate.ok()) return rate.status();
      if (rate->max > g->flops_per_s.max) {
        g->flops_per_s = *rate;
        library = batched ? "cublasGemmStridedBatchedEx (1 product)" : "cublasGemmEx";
      }
    }
  }
  g->layout = library + ", " + g->layout;
  return Status::Ok();
}

/// The tensor ceiling of a dtype: the fastest launch (MeasureGemmShape) over seven large shapes
/// m x n x k for edge e: e^3, (e/2)^3, and Llama-like projections of m output features over
/// n = e/4 or e/2 tokens with a wide output (7e/4 x n x e/2) or a long reduction (e/2 x n x 7e/4,
/// and n = e: a prefill of 8192 tokens through down_proj);
/// each TN and, where cuBLASLt runs it (not fp8 or int8 on Hopper), NN. One square shape alone
/// under-reads the ceiling: on an H100 (2026-11-24) cuBLAS ran 2048 tokens x 4096 x 14336 at
/// 832-846 TFLOP/s while 8192^3 through cuBLASLt gave 772-794, so `validate` kernels beat it.
Status MeasureGemm(Run& r, cublasLtHandle_t lt, const std::string& dtype, CudaGemm* g) {
  const int64_t e = cuda_plan::GemmEdge(r.m.info, dtype, r.options.quick);
  const int64_t shapes[][3] = {{e, e, e},
                               {e / 2, e / 2, e / 2},
                               {7 * e / 4, e / 4, e / 2},
                               {7 * e / 4, e / 2, e / 2},
                               {e / 2, e / 4, 7 * e / 4},
                               {e / 2, e / 2, 7 * e / 4},
                               {e / 2, e, 7 * e / 4}};
  const bool nn = dtype != "fp8" && dtype != "int8";
  int tried = 0;
  std::vector<CudaGemmShape> runs;
  for (const auto& shape : shapes) {
    for (const bool transpose_a : {true, false}) {
      if (!transpose_a && !nn) continue;
      CudaGemm one;
      Status s = MeasureGemmShape(r, lt, dtype, shape[0], shape[1], shape[2], transpose_a, &one);
      if (!s.ok()) return s;
      if (one.skipped) {
        if (tried == 0 && transpose_a) {
          *g = one;
          return Status::Ok();
        }
        continue;
      }
      ++tried;
      runs.push_back({shape[0], shape[1], shape[2], transpose_a,
                      one.layout.substr(0, one.layout.find(", ")), one.flops_per_s});
      if (one.flops_per_s.max > g->flops_per_s.max) *g = one;
    }
  }
  g->shapes_tried = tried;
  g->shapes = std::move(runs);
  return Status::Ok();
}

Status MeasureGemms(Run& r) {
  cublasLtHandle_t lt = nullptr;
  ROOFLINE_LT_CHECK(cublasLtCreate(&lt));
  struct Destroy {
    cublasLtHandle_t h;
    ~Destroy() { (void)cublasLtDestroy(h); }
  } destroy{lt};
  const size_t v = cublasLtGetVersion();
  r.m.cublas = fmt::format("cuBLASLt {}.{}.{}", v / 10000, v / 100 % 100, v % 100);
  // Each timed GEMM starts like a kernel of `validate`: after a write of twice the L2 size. On an
  // H100 (2026-11-24) GEMMs timed back to back ran 5-8% slower than the same GEMM timed after an
  // idle or memory-bound gap (PyTorch: 4096x2048x14336 at 846 TFLOP/s after a 1 ms sleep, 8192^3
  // at 754-785 back to back), so without the gap the ceiling read below isolated kernels.
  DeviceBuffer flush;
  if (r.m.info.l2_bytes > 0 && flush.Allocate(static_cast<size_t>(2 * r.m.info.l2_bytes)).ok()) {
    r.flush = &flush;
  }
  cublasHandle_t blas = nullptr;
  if (cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS) r.blas = blas;
  struct DestroyBlas {
    Run& r;
    ~DestroyBlas() {
      if (r.blas != nullptr) (void)cublasDestroy(r.blas);
      r.blas = nullptr;
      r.flush = nullptr;
    }
  } destroy_blas{r};
  const int sm = r.m.info.Sm();
  const std::vector<std::string> dtypes = cuda_plan::TensorDtypes(sm);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (r.options.progress) {
      r.options.progress(0.4 + 0.6 * static_cast<double>(i) / dtypes.size(),
                         "cuBLASLt GEMM " + dtypes[i]);
    }
    CudaGemm g;
    Status s = MeasureGemm(r, lt, dtypes[i], &g);
    if (!s.ok()) return s.WithPrefix("GEMM " + dtypes[i]);
    r.m.gemms.push_back(g);
  }
  for (const char* d : {"tf32", "bf16", "fp16", "fp8", "int8"}) {
    const std::string why = cuda_plan::TensorDtypeUnavailable(sm, d);
    if (why.empty()) continue;
    CudaGemm g;
    g.dtype = d;
    g.skipped = true;
    g.why_skipped = why;
    r.m.gemms.push_back(g);
  }
  return Status::Ok();
}

}  // namespace

Result<CudaMeasurement> cuda_plugin::MeasureCuda(const CudaMeasureOptions& options) {
  CudaMeasurement m;
  Status s = cuda_internal::SelectDevice(options.device, &m.info);
  if (!s.ok()) return s;
  m.date = measure_internal::TodayUtc();
  m.quick = options.quick;
  Timer timer;
  s = timer.Init();
  if (!s.ok()) return s;
  timer.SetLeadCycles(cuda_internal::LeadCyclesOf(m.info));
  Run r{options, m, timer};
  s = MeasureBandwidth(r);
  if (s.ok()) s = MeasureFma(r);
  if (s.ok()) s = MeasureGemms(r);
  if (!s.ok()) return s;
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  if (options.progress) options.progress(1, "done");
  return m;
}

}  // namespace roofline
