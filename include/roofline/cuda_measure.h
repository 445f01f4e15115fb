// Measured ceilings of an NVIDIA GPU and its kernels timed beside their predictions (CUDA).
//
// The CUDA backend is compiled when CMake finds nvcc (option ROOFLINE_CUDA); otherwise every
// entry point that needs a GPU returns a Status saying so. The planning helpers (buffer sizes,
// theoretical peaks, dtype availability, GEMM shapes) and ToDevice are plain host code, always
// compiled, so they are tested without a GPU.
#ifndef ROOFLINE_CUDA_MEASURE_H_
#define ROOFLINE_CUDA_MEASURE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/cost.h"
#include "roofline/device.h"
#include "roofline/graph.h"
#include "roofline/kernel_runner.h"
#include "roofline/measure.h"
#include "roofline/status.h"

namespace roofline {

/// What the CUDA runtime says about one GPU (cudaGetDeviceProperties, cudaDeviceGetAttribute).
struct CudaDeviceInfo {
  int index = 0;
  std::string name;  ///< "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_hz = 0;      ///< peak SM clock (cudaDevAttrClockRate), 0 when unknown
  double memory_clock_hz = 0;  ///< peak memory clock (cudaDevAttrMemoryClockRate)
  int memory_bus_width_bits = 0;
  double global_memory_bytes = 0;         ///< totalGlobalMem
  double l2_bytes = 0;                    ///< l2CacheSize
  double smem_per_sm_bytes = 0;           ///< sharedMemPerMultiprocessor
  double smem_per_block_optin_bytes = 0;  ///< sharedMemPerBlockOptin
  int max_threads_per_sm = 0;
  int driver_version = 0;   ///< cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  ///< cudaRuntimeGetVersion

  /// "9.0".
  std::string ComputeCapability() const;
  /// cc_major * 10 + cc_minor, e.g. 90.
  int Sm() const { return cc_major * 10 + cc_minor; }
};

/// One bandwidth kernel run.
struct CudaBandwidth {
  std::string level;   ///< "dram", "l2", "smem"
  std::string kernel;  ///< "read", "write", "copy"
  double working_set_bytes = 0;
  Sample bytes_per_s;  ///< bytes read + bytes written per second
};

/// One shape and layout of a tensor ceiling's measurement: its fastest library call.
struct CudaGemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = true;  ///< TN (A^T B) or NN (A B)
  std::string library;      ///< "cuBLASLt", "cublasGemmEx", ...
  Sample flops_per_s;
};

/// The fastest of cuBLASLt (and cuBLAS) GEMMs at a few large shapes and layouts.
struct CudaGemm {
  std::string dtype;            ///< "tf32", "bf16", "fp16", "fp8", "int8"
  int64_t m = 0, n = 0, k = 0;  ///< the fastest shape
  int shapes_tried = 0;         ///< shape and layout pairs compared
  std::string layout;  ///< e.g. "cuBLASLt, A^T B (TN), bf16 in/out, fp32 accumulate"
  Sample flops_per_s;  ///< FLOP/s (OP/s for int8)
  bool skipped = false;
  std::string why_skipped;
  std::vector<CudaGemmShape> shapes;  ///< every shape and layout timed, in the order run
};

/// Everything `roofline measure --device cuda` measured.
struct CudaMeasurement {
  CudaDeviceInfo info;
  std::string date;  ///< YYYY-MM-DD
  bool quick = false;
  std::vector<MeasuredCeiling> ceilings;  ///< vector.fp32, vector.fp64 (CUDA-core FMA loops)
  std::vector<CudaBandwidth> bandwidths;
  std::vector<CudaGemm> gemms;  ///< cuBLASLt; the tensor.<dtype> ceilings come from these
  std::string cublas;           ///< "cuBLASLt 13.0.0"
};

/// Knobs of a CUDA measurement.
struct CudaMeasureOptions {
  int device = 0;      ///< CUDA device index
  bool quick = false;  ///< smaller GEMMs, fewer repetitions (under ~20 s)
  /// Called with a fraction in [0, 1] and what is running.
  std::function<void(double, const std::string&)> progress;
};

/// How `validate --device cuda` times kernels.
struct CudaRunOptions {
  int device = 0;
  int repetitions = 20;  ///< timed runs after the warm-up; the median is reported
  int warmup = 3;
  /// Before every timed run, write a buffer twice the L2 size so each run starts with its data
  /// in device memory, as the roofline bound assumes.
  bool flush_l2 = true;
  /// Ops whose device buffers would exceed this fraction of the free device memory are skipped.
  double max_memory_fraction = 0.8;
};

/// True when this build contains the CUDA backend (nvcc found at configure time).
bool CudaBackendCompiled();

/// Why there is no CUDA backend in this build ("" when there is one).
std::string CudaBackendMissingReason();

/// Number of CUDA devices; an error (the runtime's message) when the driver or a GPU is missing.
Result<int> CudaDeviceCount();

/// Runs every measurement on one GPU.
Result<CudaMeasurement> MeasureCuda(const CudaMeasureOptions& options);

/// The ceiling a measured sample of launches gives: the fastest launch. A ceiling bounds every
/// kernel timed later; on an H100 SXM5 (2026-11-24 and -25) the median of the best GEMM call in
/// `measure` read 1-2% under the median of the same cuBLAS call timed alone by `validate`
/// (4096x2048x14336 bf16: 812-816 against 826-830 TFLOP/s, the SM clock at 1980 MHz in both)
/// while single launches spread by 2-20%: the medians of two runs are not ordered, the fastest
/// launch bounds them.
double CudaCeilingOf(const Sample& launches);

/// The measurement as a device in the database schema, every ceiling with `measured` provenance.
Device ToDevice(const CudaMeasurement& m);

/// Times every op of `graph` on the GPU in its own dtype (bf16/fp16/fp32; other dtypes run as
/// bf16, said in the implementation note): matmuls through cuBLAS, fused attention through a
/// tiled (flash-style) kernel, eager attention as its three ops, softmax, norms, elementwise and
/// embedding through simple kernels. Conv2d and collectives are skipped.
Result<std::vector<OpTiming>> RunGraphOnCuda(const Graph& graph, const CudaRunOptions& options);

/// One kernel of `validate --device cuda` run on random inputs and compared with a float64 host
/// computation of the same function.
struct CudaKernelCheck {
  std::string kernel;  ///< "softmax", "rmsnorm", "layernorm", "attention"
  std::string shape;   ///< e.g. "b2 h8/2 d128 q1 kv1029 causal"
  std::string dtype;   ///< storage: "fp32" or "bf16" (arithmetic is fp32)
  int64_t elements = 0;
  int64_t unwritten = 0;      ///< outputs still NaN (poisoned before the launch)
  double relative_error = 0;  ///< ||out - ref|| / ||ref|| over the written outputs
  double tolerance = 0;       ///< 1e-4 for fp32, 1e-2 for bf16
  bool ok() const { return unwritten == 0 && relative_error <= tolerance; }
};

/// Runs the softmax, norm and both attention kernels on fresh random inputs (decode with grouped
/// queries, causal prefill, sliding and bidirectional windows, value width unlike key width) in
/// fp32 and bf16, each against a float64 reference.
Result<std::vector<CudaKernelCheck>> CheckCudaKernels(int device);

// ---------------------------------------------------------------------------------------------
// Planning helpers: pure host code, used by the backend and tested without a GPU.
namespace cuda_plan {

/// Parses `--device cuda` or `cuda:N` into N (0 for plain "cuda").
Result<int> ParseCudaDevice(std::string_view spec);

/// Working set of the device-memory bandwidth kernels: at least 8x L2 and 256 MiB, at most a
/// quarter of device memory (rounded down to 2 MiB), 1 GiB at most in quick mode, 4 GiB in full.
double DramWorkingSetBytes(const CudaDeviceInfo& info, bool quick);
/// Working set of the L2 bandwidth kernels: 40% of L2 (the L2 of big GPUs is two partitions and
/// set-associative: a working set close to the size misses), rounded down to 64 KiB.
double L2WorkingSetBytes(const CudaDeviceInfo& info);

/// FP32 and FP64 FMA lanes per SM for a compute capability (0 when unknown).
int Fp32LanesPerSm(int sm);
int Fp64LanesPerSm(int sm);
/// Dense tensor-core FLOP (OP for int8) per clock per SM for "tf32", "bf16", "fp16", "fp8",
/// "int8"; 0 when unknown or unsupported.
double TensorFlopsPerClockPerSm(int sm, std::string_view dtype);

/// Theoretical peak = SMs x per-SM rate x clock, with the formula as text.
struct Peak {
  double value = 0;  ///< FLOP/s, 0 when unknown
  std::string formula;
};
/// fp32, fp64, fp16, bf16 on the CUDA cores.
Peak TheoreticalVectorPeak(const CudaDeviceInfo& info, std::string_view dtype);
Peak TheoreticalTensorPeak(const CudaDeviceInfo& info, std::string_view dtype);
/// 2 x memory clock x bus width / 8 (double data rate).
Peak TheoreticalDramBandwidth(const CudaDeviceInfo& info);
/// SMs x 128 B per clock (32 banks x 4 B) x clock.
Peak TheoreticalSmemBandwidth(const CudaDeviceInfo& info);

/// Tensor dtypes cuBLASLt can run on the compute capability, in measurement order.
std::vector<std::string> TensorDtypes(int sm);
/// Why a tensor dtype is not measured on this compute capability ("" when it is).
std::string TensorDtypeUnavailable(int sm, std::string_view dtype);

/// The square GEMM edge used for the tensor peak of a dtype: 8192 (4096 in quick mode), smaller
/// when the three matrices would not fit a quarter of device memory.
int64_t GemmEdge(const CudaDeviceInfo& info, std::string_view dtype, bool quick);

/// Name of device memory in the device file: "hbm" for buses of 1024 bits and wider (HBM stacks),
/// else "gddr".
std::string DeviceMemoryName(const CudaDeviceInfo& info);

/// A device id for a GPU name: "nvidia-h100-80gb-hbm3-measured".
std::string MeasuredDeviceId(const std::string& name);

/// Median / spread of repeated times of `work` units (bytes or FLOP): rates = work / seconds.
Sample RatesFromSeconds(const std::vector<double>& seconds, double work);

/// Median of times, and spread = (max - min) / median; 0 for an empty list.
void MedianAndSpread(std::vector<double> seconds, double* median, double* spread);

/// Iterations of a loop so that one launch takes about `target_s`, from a trial of
/// `trial_iterations` that took `trial_s`; at least 1, at most `max_iterations`.
int64_t ScaleIterations(int64_t trial_iterations, double trial_s, double target_s,
                        int64_t max_iterations);

}  // namespace cuda_plan

}  // namespace roofline

#endif  // ROOFLINE_CUDA_MEASURE_H_
