// The data behind expected times: how close real kernels come to a device's ceilings, and what
// each kernel launch costs, every figure with its source (data/efficiency.json,
// docs/expected-time.md).
#ifndef ROOFLINE_EFFICIENCY_H_
#define ROOFLINE_EFFICIENCY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/dtype.h"
#include "roofline/kernel_class.h"
#include "roofline/status.h"

namespace roofline {

/// A dimensionless factor or a time, with where it came from.
struct Figure {
  double value = 0;
  std::string source;  ///< who measured or documented it, and where
};

/// Which ceilings expected times use.
enum class CeilingSet {
  kSpec,        ///< the datasheet peaks (efficiencies and overhead still apply)
  kAchievable,  ///< what real kernels reach: published or measured, else an assumed fraction
};
std::string_view NameOf(CeilingSet c);

/// How kernels are launched.
enum class Runtime {
  kEager,      ///< PyTorch eager: the host launches every kernel, op by op
  kCudaGraph,  ///< a captured CUDA graph replayed: one host launch per step
  kCompiled,   ///< torch.compile with CUDA graphs (mode="reduce-overhead")
};
inline constexpr int kNumRuntimes = 3;
std::string_view NameOf(Runtime r);

/// A matmul tile shape a GEMM library may pick (output rows x columns per thread block).
struct MatmulTile {
  int64_t m = 128;
  int64_t n = 128;
};

/// What one kernel launch costs under a runtime.
struct LaunchCost {
  Figure host_s;  ///< host time to issue one kernel; the GPU idles when its kernel is shorter
  Figure gap_s;   ///< GPU time between two dependent kernels (drain, launch latency)
};

/// The contents of data/efficiency.json.
struct EfficiencyData {
  /// Fractions of the spec ceiling assumed when a device lists no achievable figure.
  Figure assumed_compute;
  Figure assumed_memory;
  Figure assumed_link;
  /// Tile shapes of the GEMM library; the one with the best quantization is taken.
  std::vector<MatmulTile> matmul_tiles;
  std::string matmul_tiles_source;
  /// Fused (flash) attention's achieved FLOP rate as a fraction of the device's achievable
  /// dense matmul rate, per device it was measured on; a device not listed takes the first
  /// entry's (printed as assumed).
  struct DeviceFigure {
    std::string device;
    Figure figure;
  };
  std::vector<DeviceFigure> flash_attention;
  /// Fused attention's fixed GPU time per wave of thread blocks (optional): each block loads its
  /// query tile and the first K/V tiles before any overlap, and reduces and writes its output
  /// after the last, a cost the achieved FLOP rate of long sequences hides but short ones show.
  /// A kernel over `b` sequences runs b x heads x ceil(q_len / q_block) blocks (decode with
  /// grouped queries: b x kv_heads x ceil(group / q_block), the queries of a group in one tile)
  /// in ceil(blocks / SMs) waves, at least one (and at most max_waves). A device not listed takes
  /// the first entry's (printed as assumed); none listed: no such term.
  struct AttentionWaves {
    std::string device;
    int64_t q_block = 128;  ///< query rows per thread block
    Figure wave_s;          ///< seconds per wave
    /// Waves beyond this many add nothing (optional; 0: no cap): a kernel of many waves runs
    /// block after block on each SM and overlaps one block's fixed work with the next's.
    int64_t max_waves = 0;
    std::string max_waves_source;
  };
  std::vector<AttentionWaves> attention_waves;
  /// Latency of a collective on a device's link: `call_s` once per collective call plus
  /// `step_s` per step of its ring (2(n-1) for an all-reduce over n devices), from published
  /// small-message NCCL times; a device or link not listed takes the first entry's (printed as
  /// assumed).
  struct LinkLatency {
    std::string device;
    std::string link;
    Figure call_s;  ///< per collective call (NCCL's base latency)
    Figure step_s;  ///< per ring step
  };
  std::vector<LinkLatency> collective_latency;
  std::array<LaunchCost, kNumRuntimes> launch{};  ///< by Runtime
  /// A weight-only quantized matmul kernel timed on its own (optional; a run names one with
  /// `--weight-kernel NAME`). Its matmuls with one `weight_dtype` weight matrix (scales per
  /// group along K, or per output column), `activation_dtype` activations and a row count one
  /// of its regimes covers take
  ///   fixed + max(memory, matrix FLOPs / matrix rate)
  /// in place of the roofline terms (its dequantization is inside the measured figures); other
  /// row counts keep the model. The memory term is either the bytes at min(stream rate,
  /// bandwidth), the stream rate per SM and clock cycle (a kernel limited by the work its SMs
  /// issue: a device scales it by its SM count and boost clock), or the bytes times
  /// `memory_traffic` at the device's bandwidth (a kernel limited by device memory that moves
  /// that many bytes per byte it reads). Measured on the devices of `measured_on`, assumed
  /// elsewhere.
  struct WeightKernelRegime {
    int64_t min_rows = 1;
    int64_t max_rows = 0;              ///< 0: no upper limit
    Figure fixed_s;                    ///< seconds per launch beyond the launch gap
    Figure stream_bytes_per_sm_cycle;  ///< bytes streamed per SM per clock cycle; 0: none
    Figure memory_traffic;  ///< device-memory bytes moved per byte read; 0: the stream rate
    Figure matrix_flops_per_sm_cycle;  ///< matrix FLOPs per SM-cycle; 0: no rate of its own
    /// A kernel whose thread blocks walk K one `k_tile` at a time, each step taking
    /// `k_step_cycles` clock cycles whatever its bytes (a pipeline limited by latency, not by
    /// bandwidth): its output's ceil(n / n_tile) column tiles run in waves over the SMs, and
    /// the memory term is at least waves x ceil(k / k_tile) x k_step_cycles / clock. 0: none.
    int64_t k_tile = 0;
    int64_t n_tile = 0;
    Figure k_step_cycles;
    bool Covers(int64_t rows) const {
      return rows >= min_rows && (max_rows == 0 || rows <= max_rows);
    }
  };
  struct WeightKernel {
    std::string name;
    DType weight_dtype = DType::kInt4;
    DType activation_dtype = DType::kBf16;  ///< the activations it takes
    bool zero_points = false;     ///< reads a zero point beside each scale (bytes of the scales)
    bool channel_scales = false;  ///< one scale per output column, not per group along K
    std::string description;      ///< which library call it is, who runs it
    std::vector<std::string> measured_on;     ///< device ids
    std::string vendor;                       ///< the GPUs' vendor it runs on ("NVIDIA"); empty: any
    /// A fused MoE call (`--moe-kernel`): it runs a layer's routed-expert products, whose
    /// weights may be unquantized; otherwise a linear's one weight matrix (`--weight-kernel`).
    bool experts = false;
    std::vector<Runtime> runtimes;            ///< the runtimes that run it; empty: any
    std::string source;                       ///< the measurements and the fit
    std::vector<WeightKernelRegime> regimes;  ///< by rows: ascending, disjoint
    /// The index of the regime covering `rows`, or -1.
    int RegimeOf(int64_t rows) const {
      for (size_t i = 0; i < regimes.size(); ++i) {
        if (regimes[i].Covers(rows)) return static_cast<int>(i);
      }
      return -1;
    }
  };
  std::vector<WeightKernel> weight_kernels;
  /// A framework whose modules run op by op (optional; a run names one with `--modules NAME`):
  /// how many kernels it launches for each RMSNorm, rotary embedding and fused attention op of
  /// the model's graph, counted in a profiler trace of it. Every launch pays the runtime's host
  /// time and gap (LaunchCost); the FLOPs stay the op's. In a decode step whose K/V heads serve
  /// query groups, the framework copies them to every query head before attention
  /// (transformers' repeat_kv): the copies read the cache and write `heads / kv_heads` times it
  /// at `grouped_kv_copy` of the device memory ceiling used, and attention reads the copies
  /// (all at the activation dtype: a quantized cache is dequantized before it is repeated).
  struct ModuleLaunches {
    std::string name;         ///< what --modules takes ("hf-transformers")
    std::string description;  ///< which framework, which modules
    std::string source;       ///< the trace the counts come from
    int64_t rms_norm = 1;     ///< kernels per RMSNorm (LayerNorm stays one)
    int64_t rope = 1;         ///< kernels per rotary embedding
    int64_t attention = 1;    ///< kernels per fused attention call, its KV-cache writes included
    int64_t grouped_kv = 0;   ///< more per decode attention call whose K/V heads are grouped
    /// The rate of those copies: a fraction of the device memory ceiling used (measured;
    /// required when grouped_kv > 0, else 0: nothing is copied).
    Figure grouped_kv_copy;
    /// Host time per kernel launch under `--runtime eager`, as a multiple of the runtime's
    /// (optional; 1 when absent): the Python the framework runs around each kernel (module
    /// calls, argument handling, views, the cache's bookkeeping), from one of its layers timed
    /// on its own against a bare op in the same process. It applies to every kernel of the
    /// step. A replayed CUDA graph runs no Python: cuda-graph and compiled keep their figure.
    Figure host_factor{1, ""};
  };
  std::vector<ModuleLaunches> module_launches;
  std::string origin;  ///< the file it came from
};

/// The rows a --weight-kernel regime covers: "1 row", "2-16 rows", "from 1 row on".
std::string RowsPhrase(const EfficiencyData::WeightKernelRegime& r);

/// The weight kernel named `name` (`--weight-kernel`), or an error naming `where` with the
/// names there are.
Result<const EfficiencyData::WeightKernel*> FindWeightKernel(const EfficiencyData& data,
                                                             std::string_view name,
                                                             const std::string& where);

/// The module launches named `name` (`--modules`), or an error naming `where` with the names
/// there are.
Result<const EfficiencyData::ModuleLaunches*> FindModuleLaunches(const EfficiencyData& data,
                                                                 std::string_view name,
                                                                 const std::string& where);

/// Parses efficiency data; errors name `origin` and the field.
Result<EfficiencyData> ParseEfficiencyData(std::string_view json_text, const std::string& origin);
/// `$ROOFLINE_DATA_DIR/efficiency.json` when that variable is set, else the embedded copy.
Result<EfficiencyData> LoadDefaultEfficiencyData();

/// The choices of an expected-time evaluation.
struct ExpectedOptions {
  CeilingSet ceilings = CeilingSet::kAchievable;
  Runtime runtime = Runtime::kEager;
  /// A prefill launched otherwise than `runtime` (an engine that replays graphs in decode only:
  /// Engine::runtime); absent: `runtime` in both phases.
  std::optional<Runtime> prefill_runtime;
  /// `--engine SPEC` as given ("vllm@0.6.3", a path); the engine's host work is a step term
  /// (CostOptions::step_terms) and its runtime choices fill the fields not given.
  std::string engine;
  /// `--efficiency CLASS=F`: kernels of the class reach F (in [0.001, 1]) of every ceiling used,
  /// in place of the model's efficiency; 0 = the model's own.
  std::array<double, kNumClasses> class_efficiency{};
  /// `--weight-kernel NAME`: weight-only quantized matmuls run as this kernel of
  /// EfficiencyData::weight_kernels; empty: the weights stream at the achievable bandwidth and
  /// their dequantization runs at the vector ceiling.
  std::string weight_kernel;
  /// `--moe-kernel NAME`: the routed-expert products of a mixture-of-experts layer run as this
  /// kernel of EfficiencyData::weight_kernels (one whose `experts` is true: a fused MoE call);
  /// empty: the touched experts' weights stream at the achievable bandwidth.
  std::string moe_kernel;
  /// `--accumulate fp16`: tensor-core matmuls accumulate in FP16, at the device's
  /// achievable.compute_fp16_accumulate figures where it lists them (GeForce cards run FP16
  /// accumulation at twice the FP32 rate); attention and the bound are unchanged.
  bool fp16_accumulate = false;
  /// `--modules NAME`: the model's norms, rotary embeddings and attention launch as many kernels
  /// as EfficiencyData::module_launches says this framework's modules do; empty: one each.
  std::string modules;
};

/// The name `--efficiency CLASS=F` gives a kernel class ("matmul", "attention", ...).
std::string_view EfficiencyClassName(KernelClass c);

/// The choices an expected time was made under, for a note: "achievable ceilings, runtime
/// eager", then the --modules, --weight-kernel, --accumulate and --efficiency flags given.
std::string DescribeExpectedOptions(const ExpectedOptions& options);

/// Parses "--ceilings" ("spec" or "achievable").
Result<CeilingSet> ParseCeilingSet(std::string_view text);
/// Parses "--runtime" ("eager", "cuda-graph" or "compiled").
Result<Runtime> ParseRuntime(std::string_view text);
/// Applies one "--efficiency CLASS=F" (class: matmul, attention, vector, comm; F in
/// [0.001, 1]).
Status ParseEfficiencyOverride(std::string_view text, ExpectedOptions& options);

}  // namespace roofline

#endif  // ROOFLINE_EFFICIENCY_H_
