// Profiler output on the roofline: Nsight Compute, Nsight Systems and PyTorch profiler readers,
// kernel classification, and the placement of measured kernels against a device's ceilings.
// Formats: docs/profiles.md.
#ifndef ROOFLINE_PROFILE_H_
#define ROOFLINE_PROFILE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roofline/device.h"
#include "roofline/status.h"

namespace roofline {

struct PhaseResult;
class CostModel;

// ---------------------------------------------------------------------------------------------
// Op classes of measured kernels.

/// What a GPU kernel (or an aten op) does, as far as its name tells.
enum class OpClass {
  kGemm,         ///< GEMM / GEMV / batched GEMM (cuBLAS, cuBLASLt, CUTLASS, Triton matmul)
  kAttention,    ///< fused attention (flash, memory-efficient, cuDNN fMHA)
  kConv,         ///< convolution (cuDNN, implicit GEMM)
  kElementwise,  ///< pointwise arithmetic and activations
  kNorm,         ///< layer / RMS / batch / group norm
  kSoftmax,      ///< softmax (outside a fused attention)
  kReduction,    ///< sums, means, arg-max, top-k, sort
  kCopy,         ///< copies, casts, concatenation, transposes, memcpy / memset
  kComm,         ///< NCCL collectives
  kOther,        ///< none of the above
};
inline constexpr int kNumOpClasses = 10;
std::string_view NameOf(OpClass c);

/// Classifies a kernel by its (demangled) name with the documented, ordered pattern list
/// (docs/profiles.md): the first rule that matches wins.
OpClass ClassifyKernel(std::string_view kernel_name);
/// A short display name for a long C++ kernel name: return type, parameters and most template
/// arguments dropped ("void at::native::vectorized_elementwise_kernel<4, ...silu_kernel...>(...)"
/// becomes "vectorized_elementwise_kernel<silu_kernel>"), at most `width` characters.
std::string ShortKernelName(std::string_view name, size_t width = 56);

/// ShortKernelName of each name, told apart: different names that shorten to the same text get
/// " [1]", " [2]" ... in order of first appearance (one mark per full name, however many rows
/// it has; within `width` with the mark when `width` leaves four characters beside it), and
/// `legend` one line for each, "[n] <the full name>" (cut after 240 characters), so that a
/// table never shows two kernels under one name.
std::vector<std::string> DistinctShortKernelNames(const std::vector<std::string>& names,
                                                  size_t width, std::vector<std::string>& legend);
/// Classifies an aten op by its name ("aten::addmm" is kGemm).
OpClass ClassifyAtenOp(std::string_view op_name);

// ---------------------------------------------------------------------------------------------
// Nsight Compute.

/// One kernel launch in an ncu CSV: identity columns and its metrics in base units.
struct NcuKernel {
  int64_t id = 0;      ///< the ID column (launch index in the report)
  std::string name;    ///< kernel name as printed (demangled)
  std::string block;   ///< "(32, 4, 1)", empty when the column is absent
  std::string grid;    ///< "(224, 1, 1)"
  std::string device;  ///< Device column (an index) or the device name when the file has it
  std::string cc;      ///< compute capability "8.0", empty when absent
  std::string stream;  ///< Stream column
  int64_t line = 0;    ///< 1-based line of the kernel's first row in the file
  /// Metric name -> value in base units (bytes, seconds, FLOP-neutral counts, per-second rates,
  /// percent as a fraction of 100). Metrics printed as n/a are not here (see `na`).
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::string> na;  ///< metrics printed as n/a (or empty)

  /// The metric's value in base units, or nullptr.
  const double* Find(std::string_view metric) const;
};

/// An ncu CSV file.
struct NcuReport {
  std::string layout;  ///< "long (details / --metrics)", "long (old columns)", "wide (raw page)"
  std::vector<NcuKernel> kernels;  ///< in file order, one per launch
  std::vector<std::string> notes;  ///< skipped noise lines, unit conversions worth stating, ...
};

/// Parses ncu CSV text (long or wide layout, noise lines around it). `origin` names the file in
/// errors ("<origin>:<line>: ...").
Result<NcuReport> ParseNcuCsv(std::string_view text, const std::string& origin);
Result<NcuReport> LoadNcuCsv(const std::string& path);

/// The roofline figures of one ncu kernel, derived from its metrics.
struct NcuFigures {
  std::optional<double> duration_s;
  std::optional<double> fp64_flops;    ///< dadd + dmul + 2 dfma
  std::optional<double> fp32_flops;    ///< fadd + fmul + 2 ffma
  std::optional<double> fp16_flops;    ///< 2 hadd + 2 hmul + 4 hfma (paired half2 counted)
  std::optional<double> tensor_flops;  ///< tensor-pipe work converted to FLOP
  std::string tensor_dtype;            ///< "fp16", "bf16", "tf32", "fp8", "int8", "fp64" or ""
  std::optional<double> dram_bytes, l2_bytes, l1_bytes;
  /// The SM clock while the kernel ran (sm__ or smsp__cycles_elapsed.avg.per_second, or the
  /// details page's "SM Frequency"), Hz.
  std::optional<double> sm_clock_hz;
  /// Device peaks measured with the kernel (`.peak_sustained` per cycle x cycles per second), in
  /// the same FLOP conventions as the counts above; absent when the file lacks them.
  std::optional<double> peak_fp64_flops_per_s, peak_fp32_flops_per_s, peak_fp16_flops_per_s;
  std::optional<double> peak_tensor_flops_per_s;  ///< of `tensor_dtype`'s path
  std::optional<double> peak_dram_bytes_per_s, peak_l2_bytes_per_s, peak_l1_bytes_per_s;
  /// Metrics a figure needed but the file lacks (each listed once).
  std::vector<std::string> missing;
  /// How a figure was obtained when it is not a plain sum (the per-architecture tensor factor,
  /// rate x elapsed cycles, read + write, ...).
  std::vector<std::string> notes;

  /// Every FLOP counted (vector + tensor), 0 when none.
  double TotalFlops() const;
};

/// Derives the figures of one kernel. The compute capability selects the tensor-pipe conversion.
NcuFigures DeriveNcuFigures(const NcuKernel& kernel);

/// The metrics `ncu --metrics` needs for a roofline on an architecture (compute capability
/// "8.0", "9.0", ...; an unknown one gets the portable set): time, FP instruction counts,
/// tensor-pipe metrics, DRAM / L2 / L1 bytes, cycles and peaks.
std::vector<std::string> NcuRooflineMetrics(std::string_view cc);

/// What `roofline ncu-command` is asked for.
struct NcuCommandRequest {
  std::string hw;                           ///< as given (device id or file), for messages
  std::string app = "python run.py";        ///< the program to profile, a shell command
  std::string output = "roofline-ncu.csv";  ///< CSV file ncu writes (--log-file)
  std::string kernel_regex;                 ///< only kernels whose name matches
  int64_t launch_count = 0;                 ///< kernels to profile, 0 = all
};

/// The Nsight Compute command line that collects NcuRooflineMetrics on `device`, and what the
/// user is told beside it.
struct NcuCommandLine {
  std::string command;             ///< one shell line
  std::string compute_capability;  ///< "9.0"
  size_t metrics = 0;              ///< how many metrics it collects
};

/// The request's own checks (--launch-count, --app, --output), before any device is read.
Status CheckNcuCommandRequest(const NcuCommandRequest& request);
/// Errors name the option: those of CheckNcuCommandRequest, then --hw (not an NVIDIA GPU, no
/// or a bad compute capability).
Result<NcuCommandLine> MakeNcuCommand(const Device& device, const NcuCommandRequest& request);

/// `s` quoted for a POSIX shell when it holds anything but safe characters.
std::string ShellQuote(const std::string& s);

// ---------------------------------------------------------------------------------------------
// Nsight Systems.

/// One kernel (by name) of a cuda_gpu_kern_sum / gpukernsum report, or aggregated from a trace.
struct NsysKernel {
  std::string name;
  OpClass op_class = OpClass::kOther;
  int64_t instances = 0;
  double total_s = 0, avg_s = 0, median_s = 0, min_s = 0, max_s = 0;
  int64_t line = 0;  ///< first line it appears on
};

/// One row of a cuda_gpu_trace report (kernel or memory operation).
struct NsysLaunch {
  double start_s = 0, duration_s = 0;
  std::string name;
  OpClass op_class = OpClass::kOther;
  bool memory_op = false;  ///< memcpy / memset rows (no grid)
  double bytes = 0;        ///< memory operations: bytes moved
  int64_t line = 0;
};

struct NsysReport {
  std::string report;                ///< "cuda_gpu_kern_sum", "gpukernsum" or "cuda_gpu_trace"
  std::vector<NsysKernel> kernels;   ///< by total time, largest first
  std::vector<NsysLaunch> launches;  ///< trace only, in start order
};

Result<NsysReport> ParseNsysCsv(std::string_view text, const std::string& origin);
Result<NsysReport> LoadNsysCsv(const std::string& path);

// ---------------------------------------------------------------------------------------------
// PyTorch profiler traces.

/// A GPU kernel of a trace.
struct TorchKernel {
  std::string name;
  OpClass op_class = OpClass::kOther;
  double start_s = 0, duration_s = 0;
  int64_t external_id = -1;  ///< links to the cpu_op that launched it (-1: none)
  int64_t correlation = -1;
  int op = -1;  ///< index into TorchTrace::ops of the op it was joined to (-1: none)
};

/// A cpu-side aten op that launched GPU work, with its shapes when they were recorded.
struct TorchOp {
  std::string name;  ///< "aten::addmm"
  OpClass op_class = OpClass::kOther;
  int64_t external_id = -1;
  double start_s = 0, cpu_duration_s = 0;
  std::vector<std::vector<int64_t>> input_dims;  ///< "Input Dims" (empty without shapes)
  std::vector<std::string> input_types;          ///< "Input type" ("float", "c10::BFloat16")
  double gpu_time_s = 0;                         ///< sum of its kernels' durations
  int kernels = 0;
  std::optional<double> flops;      ///< from the shapes (2 per multiply-accumulate)
  std::optional<double> min_bytes;  ///< inputs read once + output written once, from the shapes
  std::string cost_note;            ///< the formula used, or why there is none
};

struct TorchTrace {
  std::string format;  ///< "kineto (cpu_op / kernel)" or "legacy (Operator / Kernel)"
  std::string device_name;
  std::string cc;  ///< "8.0" from deviceProperties, empty when absent
  int64_t events = 0;
  int64_t schema_version = -1;     ///< top-level schemaVersion (-1: absent)
  int64_t num_sms = 0;             ///< deviceProperties numSms of the device (0: absent)
  double device_memory_bytes = 0;  ///< deviceProperties totalGlobalMem (0: absent)
  double time_origin_us = 0;       ///< trace timestamp (us) that every start_s counts from
  bool has_shapes = false;
  std::vector<TorchOp> ops;          ///< ops that launched at least one kernel, in start order
  std::vector<TorchKernel> kernels;  ///< in start order
  std::vector<std::string> notes;
};

/// Streams a trace (plain or gzip; detected from the content) with bounded memory: only cpu ops
/// with GPU work and kernels are kept.
Result<TorchTrace> LoadTorchTrace(const std::string& path);

// ---------------------------------------------------------------------------------------------
// Measured kernels against a model's predicted kernels.

/// A measured kernel (or, from a summary without launch order, all launches of one kernel).
struct MeasuredKernel {
  std::string name;
  OpClass op_class = OpClass::kOther;
  double time_s = 0;  ///< total over `count` launches
  int64_t count = 1;  ///< launches
  double flops = -1;  ///< of one launch (torch: from the op's shapes; ncu: counters); -1: unknown
  /// `flops` follows from the op's recorded shapes (torch traces), not from hardware counters
  /// (which count whole padded tensor-core tiles): only these are checked against a prediction.
  bool flops_from_shapes = false;
};

/// A predicted kernel of one step, in execution order; `repeat` copies run per step.
struct PredictedKernel {
  std::string name;
  std::string group;  ///< layers it stands for ("layers 0-31"), empty: model-level
  OpClass op_class = OpClass::kOther;
  int64_t repeat = 1;
  double bound_s = 0;       ///< roofline bound of one instance
  std::string bound;        ///< binding resource
  double flops = 0;         ///< one instance
  double device_bytes = 0;  ///< one instance, at device memory
  double expected_s = 0;    ///< expected time of one instance (0: no efficiency data)
  /// `--modules`: the expected time of the copy kernels the framework runs beside it (repeated
  /// K/V heads), which a profile shows as copies; not in `expected_s`.
  double expected_copies_s = 0;
};

/// One predicted kernel and the measured kernels mapped onto it.
struct JoinRow {
  PredictedKernel predicted;
  int64_t matched = 0;     ///< measured launches mapped to it (all steps, all repeats)
  double measured_s = 0;   ///< mean measured time of one instance
  double efficiency = 0;   ///< bound / measured (1 = at the roofline), 0 when unmatched
  double of_expected = 0;  ///< expected / measured ("of achievable"), 0 when unmatched or none
  std::string example;     ///< the measured kernel name seen most often
};

/// Per op class: what the prediction expects per step against what was measured.
struct ClassJoin {
  OpClass op_class = OpClass::kOther;
  int64_t predicted_per_step = 0;  ///< kernels per step
  double predicted_s_per_step = 0;
  double expected_s_per_step = 0;  ///< 0 without efficiency data
  int64_t measured = 0;            ///< launches in the profile
  double measured_s = 0;           ///< total
  double steps = 0;                ///< measured / predicted_per_step (0 when none predicted)
};

/// Signs that a profile is not a run of the model and workload it was joined with.
struct JoinMismatch {
  /// Kernels measured faster than their ideal bound (efficiency above 105%): a bound is never
  /// above a real kernel's time, so the mapped kernel is another one.
  int64_t faster_than_bound = 0;
  double max_efficiency = 0;
  /// Measured GEMM launches whose FLOPs are known from their shapes (torch traces), and of those
  /// the ones whose FLOPs differ from their predicted kernel's by more than 2x either way.
  int64_t shapes_checked = 0;
  int64_t shapes_off = 0;
  /// The structural classes (gemm, attention, norm) with kernels on both sides hold different
  /// step counts: the fewest and the most (their ratio above 1.5 is a disagreement).
  OpClass fewest_class = OpClass::kOther, most_class = OpClass::kOther;
  double fewest_steps = 0, most_steps = 0;

  /// Only once every structural class holds at least one whole step: a profile shorter than a
  /// step (a window cut mid-step) is not a disagreement.
  bool steps_disagree() const { return fewest_steps >= 1 && most_steps > 1.5 * fewest_steps; }
  /// More than a quarter of the checked launches are off.
  bool shapes_disagree() const { return shapes_off > 0 && 4 * shapes_off > shapes_checked; }
  bool any() const { return faster_than_bound > 0 || shapes_disagree() || steps_disagree(); }
};

struct ProfileJoin {
  JoinMismatch mismatch;           ///< checked on every join
  std::vector<JoinRow> rows;       ///< one per predicted kernel (ordered input only)
  std::vector<ClassJoin> classes;  ///< every class predicted or measured
  double steps = 0;                ///< steps found (from the gemm class, else the largest)
  bool ordered = false;            ///< kernel-level mapping was possible
  std::vector<std::string> notes;  ///< the mapping rule, leftovers, implausible rows
};

/// The kernels of a predicted phase, in execution order, with their op classes (a fused kernel
/// takes the class of its attention or matmul op, else of its first op).
std::vector<PredictedKernel> PredictedKernelsOf(const PhaseResult& phase, const CostModel& model);

/// Maps measured kernels onto predicted ones. With `ordered` (launch order known): within each
/// op class, the i-th measured launch is the (i mod n)-th predicted kernel of that class in the
/// step's execution order (n per step). Without order, only per-class totals.
ProfileJoin JoinWithPrediction(const std::vector<PredictedKernel>& predicted,
                               const std::vector<MeasuredKernel>& measured, bool ordered);

// ---------------------------------------------------------------------------------------------
// Placement on the device roofline.

/// Bytes a kernel moved at one memory level.
struct LevelBytes {
  std::string level;  ///< a level of the device ("hbm", "l2", "smem"), or "dram"/"l1" aliases
  double bytes = 0;
};

/// Where a measured kernel sits against the device's ceilings.
struct Placement {
  double time_s = 0;
  double flops = 0;
  double achieved_flops_per_s = 0;
  std::string engine;  ///< the ceiling compared against ("tensor.bf16"), empty: no FLOPs
  double peak_flops_per_s = 0;
  struct Level {
    std::string level;  ///< the device's level name
    double bytes = 0;
    double intensity = 0;  ///< FLOP/B (0 without FLOPs)
    double achieved_bytes_per_s = 0;
    double peak_bytes_per_s = 0;  ///< 0 when the device has no bandwidth for the level
    double roof_flops_per_s = 0;  ///< min(peak, intensity x bandwidth) at this level
  };
  std::vector<Level> levels;
  double roof_flops_per_s = 0;  ///< the binding roof at the kernel's intensities
  double percent_of_roof = 0;   ///< achieved / roof x 100 (FLOP/s, or bandwidth without FLOPs)
  std::string verdict;  ///< "compute-bound (tensor.bf16)", "memory-bound (hbm)", "latency / ..."
  std::vector<std::string> warnings;  ///< achieved above a ceiling: which input is implausible
};

/// Places a kernel on the device roofline. `engine` names the ceiling to compare FLOPs against;
/// bytes at levels the device lacks are ignored with a warning.
Placement PlaceKernel(const Device& device, const std::string& engine, double flops,
                      const std::vector<LevelBytes>& bytes, double time_s);

/// One kernel of an Nsight Compute report: its launches with the same name, grid and block.
struct NcuKernelSummary {
  std::string name, grid, block;
  int launches = 0;
  NcuFigures sum;  ///< figures summed over the launches (absent when any launch lacks one)
  std::vector<std::string> missing, notes;
  // Per launch:
  double flops = 0;
  std::optional<double> time_s;
  std::string engine;   ///< the ceiling compared against: the precision with the most FLOPs
  Placement placement;  ///< on the device's roofline (empty without a device)
};

/// An Nsight Compute report summarized kernel by kernel.
struct NcuSummary {
  size_t launches = 0;
  std::vector<NcuKernelSummary> kernels;  ///< in order of first launch
  std::vector<MeasuredKernel> measured;   ///< every timed launch, for the join with a prediction
  std::set<std::string> missing;          ///< metrics some figure needed
  std::set<std::string> warnings;         ///< "#i kernel: why its placement is implausible"
  /// The SM clock the kernels ran at: their clocks weighted by duration (plain mean when some
  /// launch has no duration); absent when the file has no clock.
  std::optional<double> sm_clock_hz;
  /// The device's boost clock (its info `boost_clock`), 0 when unknown or no device.
  double boost_clock_hz = 0;
  /// Below 90% of boost: a locked (Nsight Compute's default `--clock-control base`) or
  /// throttled clock, under which compute-bound kernels run slower than the boost-clock peaks.
  bool low_clock() const {
    return sm_clock_hz && boost_clock_hz > 0 && *sm_clock_hz < 0.9 * boost_clock_hz;
  }
  std::vector<std::pair<std::string, std::string>> notes;  ///< note, the kernels it applies to
};

/// Groups the launches, derives their figures and, with a device, places each kernel.
NcuSummary SummarizeNcu(const NcuReport& report, const Device* device);

/// A device from the `.peak_sustained` figures of the report (the largest over its kernels):
/// CUDA-core and tensor FLOP/s, DRAM / L2 / L1 bandwidth; none without DRAM and one compute
/// peak. `name` names it (else "CC x.y GPU").
std::optional<Device> DeviceFromNcuPeaks(const NcuReport& report, const std::string& name);

/// Launches and GPU time of one op class in a profile.
struct ClassTotal {
  int64_t launches = 0;
  double time_s = 0;
  /// Of a copy class: the copies between host and device (CUDA memcpy activities named by their
  /// direction: torch's "Memcpy HtoD (Pageable -> Device)", nsys's "[CUDA memcpy
  /// Host-to-Device]"); the rest ran on the device.
  int64_t to_device = 0, to_host = 0;
  double to_device_s = 0, to_host_s = 0;
};

/// The direction of a host-device copy named as CUDA's activity records name it: +1 host to
/// device, -1 device to host, 0 neither (a kernel, a device-to-device copy, a memset).
int CopyDirection(std::string_view name);
/// Adds one kernel (or memory activity) of `name` to `total`.
void AddToClass(ClassTotal& total, std::string_view name, int64_t launches, double time_s);
using ClassTotals = std::map<OpClass, ClassTotal>;

/// Host time eager PyTorch spends to issue one op, at the low end: 5-7 us per op measured
/// (data/efficiency.json's sources: FlagGems issue 4812, pytorch/pytorch issue 41383). A stream of
/// kernels shorter than this on average finishes faster than the host can issue it.
inline constexpr double kEagerLaunchS = 5e-6;

/// Whether a run is launch-bound: its kernels against the host's cost of issuing them, and (a
/// trace) the time the GPU sat idle between kernels.
struct LaunchCheck {
  int64_t kernels = 0;         ///< kernel launches (memory operations apart)
  double kernel_s = 0;         ///< their GPU time
  int64_t short_launches = 0;  ///< launches under kEagerLaunchS (a summary: by each name's mean)
  double short_s = 0;          ///< their GPU time
  bool traced = false;         ///< start times known: `span_s` and `idle_s` are measured
  double span_s = 0;           ///< first kernel start to last kernel end
  double idle_s = 0;           ///< time in the span with no kernel running

  double mean_s() const { return kernels > 0 ? kernel_s / static_cast<double>(kernels) : 0; }
  /// A trace (idle time measured): the GPU idles half the span or more while half the launches
  /// or more are short. A summary (no idle time): the mean kernel is shorter than kEagerLaunchS,
  /// so the run is likely launch-bound under eager PyTorch.
  bool launch_bound() const {
    if (kernels == 0) return false;
    if (traced) return 2 * idle_s >= span_s && 2 * short_launches >= kernels;
    return mean_s() < kEagerLaunchS;
  }
};

/// An Nsight Systems report summarized: time per op class, and the kernels for the join with a
/// prediction (each launch in start order from a trace report, else one entry per kernel name).
struct NsysSummary {
  LaunchCheck launch;
  double gpu_time_s = 0;
  int64_t launches = 0;
  ClassTotals classes;
  bool ordered = false;  ///< launch order known (cuda_gpu_trace)
  std::vector<MeasuredKernel> measured;
};
NsysSummary SummarizeNsys(const NsysReport& report);

/// The calls of one aten op with the same input shapes.
struct TorchOpGroup {
  std::string name;
  std::string shapes;  ///< "[8,4096] [4096,4096]"
  OpClass op_class = OpClass::kOther;
  int calls = 0, kernels = 0;
  double gpu_time_s = 0;
  double flops = 0, min_bytes = 0;  ///< summed over the calls
  bool costed = false;              ///< every call has FLOPs and bytes, some non-zero, and GPU time
  std::string cost_note;
  std::string engine;  ///< with a device: the ceiling its FLOPs compare against ("tensor.bf16")
  std::optional<Placement> placement;  ///< with a device, when costed
};

/// A PyTorch profiler trace summarized: time per op class, ops grouped by name and shapes.
struct TorchSummary {
  double gpu_time_s = 0;
  ClassTotals classes;
  std::vector<TorchOpGroup> groups;      ///< by GPU time, largest first (stable)
  std::vector<MeasuredKernel> measured;  ///< one per op call (its kernels summed), in start order
  std::set<std::string> warnings;        ///< "op shapes: why its placement is implausible"
};

/// Groups the trace's ops and, with a device and recorded shapes, places each group on the
/// device's roofline: matrix ops (gemm, attention, conv) against the tensor engine of their first
/// input's dtype (fp32 as tf32), the rest against the vector engine.
TorchSummary SummarizeTorch(const TorchTrace& trace, const Device* device);

/// What a profile says about its GPU besides the name (0: not said). PyTorch traces carry both
/// (deviceProperties numSms, totalGlobalMem).
struct DeviceHints {
  int64_t sms = 0;
  double memory_bytes = 0;
};

/// Finds the device of a profile in the database from its name and/or compute capability.
/// Variants the name does not tell apart ("NVIDIA H100 80GB HBM3": the SXM5 or the PCIe card)
/// are told apart by the SM count, then by the memory size, when `hints` give them.
/// `how` says which rule matched (and the alternatives when several devices remain).
Result<const Device*> MatchDevice(const std::vector<Device>& devices, std::string_view name,
                                  std::string_view cc, std::string* how,
                                  const DeviceHints& hints = {});

}  // namespace roofline

#endif  // ROOFLINE_PROFILE_H_
