// The cost engine: FLOPs per engine, bytes per memory level and comm bytes of a kernel, and its
// roofline time bound against a device. Conventions: docs/cost-model.md.
#ifndef ROOFLINE_COST_H_
#define ROOFLINE_COST_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "roofline/device.h"
#include "roofline/dtype.h"
#include "roofline/efficiency.h"
#include "roofline/graph.h"
#include "roofline/kernel_class.h"
#include "roofline/step_term.h"

namespace roofline {

struct LevelModel;

inline constexpr int kMaxLevels = 6;       ///< memory levels a device may list
inline constexpr int kMaxEngineTerms = 4;  ///< distinct engines one kernel may use

/// An engine and dtype a rule asks for ("tensor.bf16").
struct EngineKey {
  bool tensor = true;  ///< true: matrix engine; false: vector/SIMT units
  DType dtype = DType::kBf16;

  std::string Name() const;
  bool operator==(const EngineKey& o) const { return tensor == o.tensor && dtype == o.dtype; }
};

/// FLOPs a kernel does on one engine, and the time they take at its peak.
struct EngineTerm {
  EngineKey requested;  ///< what the op rule asked for
  int ceiling = -1;     ///< index into Device::compute actually used; -1: the device has none
  double flops = 0;     ///< FLOP (2 per multiply-accumulate)
  double time_s = 0;    ///< flops / peak (0 without a ceiling)
};

/// Which term of the roofline binds.
enum class BoundKind { kCompute, kMemory, kComm, kOverhead };

/// The binding term: an engine (index into KernelCost::engines), a memory level (index into
/// Device::memory) or a link (index into Device::links).
struct Bound {
  BoundKind kind = BoundKind::kMemory;
  int index = 0;
};

/// The time a kernel is expected to take (docs/expected-time.md): its terms at the achievable
/// ceilings (or the spec ones, `--ceilings spec`), the compute term divided by the kernel's
/// efficiency, plus what launching it costs. Never below the kernel's time bound.
struct ExpectedCost {
  double compute_s = 0;  ///< FLOPs at the ceilings used, divided by `efficiency`
  std::array<double, kMaxLevels> memory_s{};  ///< bytes per level at the bandwidths used
  double comm_s = 0;      ///< comm bytes at the link's bandwidth used + steps * latency
  double efficiency = 1;  ///< of the compute term: matmul quantization, flash attention, override
  double roofline_s = 0;  ///< the largest term (+ wave_s + fixed_s + grouped_kv_copy_s)
  double wave_s = 0;      ///< fused attention: waves of thread blocks x fixed time per wave
  double fixed_s = 0;     ///< a --weight-kernel matmul's fixed time per launch
  /// A --weight-kernel matmul whose regime walks K in steps (k_step_cycles): the time of its
  /// steps, a floor under memory_s[0]; 0 otherwise.
  double k_steps_s = 0;
  int weight_kernel_regime = -1;  ///< the --weight-kernel regime it ran as, or -1
  int moe_kernel_regime = -1;     ///< the --moe-kernel regime it ran as, or -1
  /// `--modules`, a decode attention with grouped K/V heads: the time of the framework's
  /// copies of K and V to every query head, and the bytes attention reads of the copies (at the
  /// activation dtype) less the cache's own bytes (in memory_s[0]; negative where the cache's
  /// dtype is wider than the activations').
  double grouped_kv_copy_s = 0;
  double grouped_kv_read_bytes = 0;
  double overhead_s = 0;  ///< GPU gap between kernels + the --launch-overhead-us figure
  double host_s = 0;      ///< host time to launch it (hidden while the GPU is busy)
  int64_t launches = 1;   ///< kernels it runs as (`--modules`: a framework's module may be several)
  bool fp16_accumulate = false;  ///< a tensor-core term ran at the FP16-accumulate figure
  double time_s = 0;             ///< roofline_s + overhead_s
  Bound term;                    ///< the largest of the compute, memory and comm terms
  /// The verdict: `term`, or kOverhead when the launch overhead (GPU gap and
  /// --launch-overhead-us) exceeds the roofline term. Host time is judged per step.
  Bound bound;
};

/// The figures the cost engine derives for one kernel instance: what a kernel doing the same
/// work shares with it (KernelCost::AssignFigures copies them all at once).
struct KernelFigures {
  int num_engines = 0;
  std::array<EngineTerm, kMaxEngineTerms> engines{};
  double flops = 0;           ///< all engines together, FLOP
  double compute_time_s = 0;  ///< sum over engines (engines do not overlap)

  int num_levels = 0;                              ///< == device.memory.size()
  std::array<double, kMaxLevels> bytes{};          ///< bytes crossing each level
  std::array<double, kMaxLevels> memory_time_s{};  ///< bytes / bandwidth (0 without bandwidth)

  double comm_bytes = 0;   ///< bytes each device sends over the link
  int link = -1;           ///< index into Device::links, -1 when no communication
  int comm_steps = 0;      ///< latency-bound steps of the collective algorithm
  int comm_calls = 0;      ///< collective calls (each pays the link's per-call latency)
  double comm_time_s = 0;  ///< comm_bytes / bandwidth + steps * latency

  double overhead_s = 0;  ///< per-launch overhead added to the bound (option, default 0)
  double time_s = 0;      ///< max(compute, every memory term, comm) + overhead
  Bound bound;
  double attainable_flops_per_s = 0;  ///< flops / time_s
  bool has_expected = false;          ///< the model has efficiency data (CostOptions)
  ExpectedCost expected;              ///< when has_expected

  /// FLOP per byte at `level` (0 when no bytes cross it).
  double Intensity(int level) const { return bytes[level] > 0 ? flops / bytes[level] : 0.0; }
};

/// Everything the cost engine derives for one kernel (one instance; `repeat` says how many).
struct KernelCost : KernelFigures {
  std::string name;
  int64_t repeat = 1;

  /// Sets `name` unless it already holds `n` (compared inline: a sweep re-costs the same kernel
  /// at every point, and its name is short).
  void SetName(const std::string& n) {
    if (name.size() == n.size() && std::equal(n.begin(), n.end(), name.begin())) return;
    name.assign(n);
  }
  /// Takes every figure of `other` but its name and repeat (a kernel that does the same work),
  /// so the name's storage is neither copied nor freed.
  void AssignFigures(const KernelCost& other) { KernelFigures::operator=(other); }
};

/// Knobs of the evaluation. The one place the launch overhead lives: every command that costs
/// kernels takes it from here.
struct CostOptions {
  double launch_overhead_s = 0;  ///< added to every kernel's time bound
  /// Expected times next to the bounds: the efficiency data (null: bounds only) and the choices
  /// made for them.
  std::shared_ptr<const EfficiencyData> efficiency;
  ExpectedOptions expected;
  /// The terms of a whole step, applied in order to its kernels' expected times (Totals).
  std::vector<std::shared_ptr<const StepTerm>> step_terms = DefaultStepTerms();
};

/// A ceiling as expected times use it: its value and where it came from.
struct UsedCeiling {
  double value = 0;  ///< FLOP/s or B/s; 0 when the spec ceiling has none
  Quantity figure;   ///< the figure, with its provenance (published, measured, assumed, spec)
};

/// The options a prefill runs under: `options` with the engine's prefill runtime in place of
/// the runtime (ExpectedOptions::prefill_runtime); null when that changes nothing.
std::optional<CostOptions> PrefillOptions(const CostOptions& options);

/// Checks the options (a launch overhead between 0 and 1 s); errors name the flag.
Status Validate(const CostOptions& options);

/// Human-readable derivation steps (for --explain). Null in the fast path.
struct Trace {
  std::vector<std::string> lines;
  void Add(std::string line) { lines.push_back(std::move(line)); }
};

class KernelTerm;
struct KernelTermContext;
struct TermLines;

/// Evaluates kernels against one device. Cheap to copy; holds a pointer to the device, which
/// must outlive it.
class CostModel {
 public:
  explicit CostModel(const Device& device, CostOptions options = {});

  /// Whether expected times are modelled on `device`: they model GPU kernels launched by a host
  /// (efficiency data, launch overhead), so a compiler-scheduled machine that splits a model
  /// over SRAM chips, or streams weights from an external store, gets bounds only.
  static bool ExpectsTimesOn(const Device& device) {
    return !device.model_split && !(!device.memory.empty() && device.memory.front().weights_only);
  }

  /// Cost of a kernel (one or more fused ops of `graph`). `trace`, when given, receives the
  /// derivation of every FLOP and byte figure.
  KernelCost Evaluate(const Graph& graph, const Kernel& kernel, Trace* trace = nullptr) const;
  /// The same into `out` (no trace), for a kernel already classified as `cls`: what a sweep
  /// repeats per point, reusing `out`'s storage. `named`: out.name already holds the kernel's.
  void EvaluateInto(const Graph& graph, const Kernel& kernel, KernelClass cls, KernelCost& out,
                    bool named = false) const;

  /// The expected time of a kernel whose bound is `cost` (needs efficiency data; see
  /// CostOptions). `trace`, when given, receives its derivation.
  ExpectedCost Expect(const Graph& graph, const Kernel& kernel, KernelClass cls,
                      const KernelCost& cost, Trace* trace = nullptr) const;
  /// The same written into `out` (every field set): a sweep refills costs in place.
  void ExpectInto(const Graph& graph, const Kernel& kernel, KernelClass cls, const KernelCost& cost,
                  Trace* trace, ExpectedCost& out) const;
  bool has_expected() const { return options_.efficiency != nullptr; }
  /// The ceilings expected times use, parallel to Device::compute, ::memory and ::links.
  const std::vector<UsedCeiling>& used_compute() const { return used_compute_; }
  /// Parallel to used_compute(): under `--accumulate fp16`, the figure tensor-core matmuls use
  /// (value 0 where the device lists none and used_compute() serves).
  const std::vector<UsedCeiling>& used_compute_fp16_accumulate() const {
    return used_compute_fp16_accumulate_;
  }
  const std::vector<UsedCeiling>& used_memory() const { return used_memory_; }
  const std::vector<UsedCeiling>& used_links() const { return used_links_; }
  /// Per link: the latency of one collective step expected times use (s; provenance
  /// published, or assumed when measured on another device).
  const std::vector<UsedCeiling>& used_link_latency() const { return used_link_latency_; }
  /// Per link: the latency of one collective call (NCCL's base latency), beside its steps.
  const std::vector<UsedCeiling>& used_link_call() const { return used_link_call_; }
  /// Matmul efficiency from tile and wave quantization of an m x n output (reduction k, `batch`
  /// products) over the device's SMs; an output of fewer tiles than SMs is split along k (at
  /// least 256 deep per split) to fill them; fewer rows than a tile are not padded (GEMV and
  /// skinny-M kernels). Without an SM count, tile quantization only.
  /// `tile`, when given, receives the tile picked (the most efficient listed).
  double MatmulEfficiency(double m, double n, double k, double batch,
                          MatmulTile* tile = nullptr) const;
  /// Streaming multiprocessors (or compute units) the device lists, 0 when none.
  int64_t sm_count() const { return sm_count_; }
  /// The weight-only kernel of --weight-kernel on this device (null when none is chosen): its
  /// data, and its rates scaled to this device's SMs and clock.
  struct UsedWeightKernel {
    const EfficiencyData::WeightKernel* kernel = nullptr;
    double sm_cycles_per_s = 0;  ///< the device's SMs x boost clock, which scale the rates
    double clock_hz = 0;         ///< the device's boost clock, which scales cycles per step
    bool measured_here = false;  ///< this device is one it was measured on
    /// A regime's streaming rate on this device (before the bandwidth cap).
    double stream_bytes_per_s(const EfficiencyData::WeightKernelRegime& r) const {
      return r.stream_bytes_per_sm_cycle.value * sm_cycles_per_s;
    }
    /// A regime's matrix rate on this device; 0 where it has none of its own.
    double matrix_flops_per_s(const EfficiencyData::WeightKernelRegime& r) const {
      return r.matrix_flops_per_sm_cycle.value * sm_cycles_per_s;
    }
    /// A regime's time per step along K on this device; 0 where it walks K in no steps.
    double k_step_s(const EfficiencyData::WeightKernelRegime& r) const {
      return clock_hz > 0 ? r.k_step_cycles.value / clock_hz : 0;
    }
  };
  const UsedWeightKernel& used_weight_kernel() const { return weight_kernel_; }
  /// The `--moe-kernel` in use (a fused MoE call for routed-expert products), or none.
  const UsedWeightKernel& used_moe_kernel() const { return moe_kernel_; }
  /// The `--modules` launch counts in use, or nullptr (one launch per kernel).
  const EfficiencyData::ModuleLaunches* used_modules() const { return modules_; }
  /// The multiple of the runtime's host time every launch takes: the `--modules` framework's
  /// host_factor under `--runtime eager` (its Python runs every step), else 1.
  double host_factor() const {
    return modules_ != nullptr && options_.expected.runtime == Runtime::kEager
               ? modules_->host_factor.value
               : 1.0;
  }
  /// The launch costs of the runtime in use (data/efficiency.json `launch`; needs the
  /// efficiency data, as every expected time does).
  const LaunchCost& launch_cost() const {
    return options_.efficiency->launch[static_cast<size_t>(options_.expected.runtime)];
  }
  /// The host time of one launch: the runtime's, times host_factor().
  double host_per_launch_s() const { return launch_cost().host_s.value * host_factor(); }
  /// How many kernels `kernel` launches: one, or under `--modules` what the framework's module
  /// for its op launches (RMSNorm, rotary embedding, fused attention).
  int64_t LaunchesOf(const Graph& graph, const Kernel& kernel) const;

  /// The ceiling used for an engine request after fallbacks (index into Device::compute), or -1.
  int ResolveEngine(const EngineKey& key) const;

  /// "compute:tensor.bf16", "memory:hbm", "comm:nvlink", "overhead".
  std::string BoundName(const KernelCost& cost) const { return BoundName(cost, cost.bound); }
  /// The same for another verdict of the kernel (its expected one).
  std::string BoundName(const KernelCost& cost, Bound bound) const;
  /// Name of the ceiling an engine term ran on ("tensor.bf16"), or "none".
  std::string CeilingName(const EngineTerm& term) const;
  /// Ridge point (FLOP/byte) of the kernel's dominant engine against memory level `level`;
  /// 0 when that level has no bandwidth or the kernel has no FLOPs.
  double Ridge(const KernelCost& cost, int level) const;
  /// The engine term with the largest time (or most FLOPs when none has a ceiling), -1 if none.
  int DominantEngine(const KernelCost& cost) const;
  /// The memory level with the largest time term (0 when none has a bandwidth).
  int DominantLevel(const KernelCost& cost) const;

  const Device& device() const { return *device_; }
  const CostOptions& options() const { return options_; }

 private:
  const Device* device_;
  CostOptions options_;
  std::shared_ptr<const struct LevelModel> levels_;   ///< tiling view of device->memory
  std::array<std::array<int, 9>, 2> engine_table_{};  ///< [tensor?][dtype] -> ceiling index
  void SetUpExpected();  ///< fills the used ceilings from options_.efficiency
  /// Evaluate's work into `c` (reset first); `cls` null: classified here when needed.
  /// `named`: c.name already holds the kernel's name (a sweep re-costing the same kernel).
  void Fill(const Graph& graph, const Kernel& kernel, const KernelClass* cls, Trace* trace,
            KernelCost& c, bool named = false) const;

  std::vector<UsedCeiling> used_compute_, used_memory_, used_links_, used_link_latency_,
      used_link_call_;
  /// Parallel to used_compute_: the FP16-accumulate figure matmuls use under
  /// `--accumulate fp16`, value 0 where there is none (the FP32 one then serves).
  std::vector<UsedCeiling> used_compute_fp16_accumulate_;
  int64_t sm_count_ = 0;
  /// The efficiency data's matmul tiles as MatmulEfficiency divides by them: a side that is a
  /// power of two is divided by as a multiply by its reciprocal (exact: the same bits).
  struct TileSides {
    double m, n, inv_m, inv_n;
    bool exact_m, exact_n;
  };
  std::vector<TileSides> tile_sides_;
  double smallest_tile_m_ = 0;
  UsedWeightKernel weight_kernel_;
  UsedWeightKernel moe_kernel_;
  const EfficiencyData::ModuleLaunches* modules_ = nullptr;  ///< into options_.efficiency
  /// The kernel terms of expected times in use, by phase (src/cost/kernel_term.h).
  std::array<std::vector<std::shared_ptr<const KernelTerm>>, 4> kernel_terms_;
  /// weight_kernel_ and moe_kernel_ from --weight-kernel and --moe-kernel (after sm_count_)
  void SetUpWeightKernel();
  void SetUpMatmulTiles();   ///< tile_sides_ from the efficiency data
  /// ExpectInto's derivation, from what its terms wrote.
  void Explain(const KernelTermContext& k, const TermLines& lines, const ExpectedCost& e,
               bool launch_bound, Trace& trace) const;
};

/// Whether `name` is a weight kernel of `data` (--weight-kernel) that `device` can run under
/// `runtime`: the kernel must list the runtime (or none), and the device must list an SM or CU
/// count and a boost clock (the kernels were measured on GPUs; rates per SM-cycle scale by
/// them). Errors name `where`. A CostModel given an unchecked name ignores a kernel the device
/// or the runtime cannot run.
/// With `experts`, the same for a fused MoE call (--moe-kernel): the kernel must be one
/// (`experts` true), and a --weight-kernel must not be one.
Status CheckWeightKernel(const EfficiencyData& data, std::string_view name, const Device& device,
                         Runtime runtime, const std::string& where, bool experts = false);

/// FLOPs (each kernel's times its repeat) the device lists no ceiling for, by the requested
/// engine ("vector.fp32"), in first-seen order: their compute is not timed, only their bytes.
std::vector<std::pair<std::string, double>> UntimedFlops(const std::vector<KernelCost>& costs);

/// Tensor-core FLOPs (each kernel's times its repeat) that run at another ceiling than the one
/// requested because the device lists none of theirs ("tensor.bf16" on a T4 runs at
/// "tensor.fp16"), by requested and used engine, in first-seen order. Requests whose first
/// choice is another engine by design (fp32 products on vector.fp32, int4 on tensor.int8) are
/// not listed.
struct FallbackFlops {
  std::string requested, used;
  double flops = 0;
};
std::vector<FallbackFlops> FallbackTensorFlops(const std::vector<KernelCost>& costs,
                                               const Device& device);

}  // namespace roofline

#endif  // ROOFLINE_COST_H_
