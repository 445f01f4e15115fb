// Sweeps over workload variables, and the exact values where the binding resource changes.
#ifndef ROOFLINE_SWEEP_H_
#define ROOFLINE_SWEEP_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/graph_analysis.h"
#include "roofline/kernel_class.h"
#include "roofline/model_analysis.h"
#include "roofline/setup.h"
#include "roofline/verdict.h"

namespace roofline {

/// What a sweep varies.
enum class SweepVariable { kBatch, kPrompt, kContext, kTp, kDtype, kWeightDtype, kKvDtype };

std::string_view NameOf(SweepVariable v);
/// True for integer variables (crossovers are bisected to the exact integer).
bool IsInteger(SweepVariable v);

/// One axis: the variable and its grid.
struct SweepAxis {
  SweepVariable variable = SweepVariable::kBatch;
  std::vector<int64_t> values;  ///< integer variables: the grid, ascending
  std::vector<DType> dtypes;    ///< dtype variables: the list, in the given order

  size_t size() const { return IsInteger(variable) ? values.size() : dtypes.size(); }
  /// "batch=8" / "dtype=fp8" for grid position i.
  std::string Label(size_t i) const;
};

/// Parses "batch=1:512" (doubling), "batch=1:512:x4", "prompt=128:4096:+128", "batch=1,8,64",
/// "dtype=bf16,fp8,int8". Errors name the spec and say what is expected.
Result<SweepAxis> ParseSweepAxis(const std::string& spec);

/// The scenario field a sweep variable sets (kBatch for SweepVariable::kBatch, ...).
FieldId FieldOf(SweepVariable v);

/// What `--vary` asks for: the devices of `hw=A,B,...` (in the order given), and the other
/// specs as given.
struct SweepRequest {
  std::vector<std::string> devices;
  std::vector<std::string> specs;
};
/// Splits `--vary` specs; errors name `--vary hw` (given twice, an empty or repeated id).
Result<SweepRequest> ParseSweepRequest(const std::vector<std::string>& vary);
/// The LLM axes of `specs` (ParseSweepAxis), at most two, checked against the scenario: no
/// point with a context shorter than its prompt (swept, given or the default), errors naming
/// `--vary context` or `--vary prompt`.
Result<std::vector<SweepAxis>> ParseSweepAxes(const Scenario& s,
                                              const std::vector<std::string>& specs);
/// A sweep's title: "<prefix> batch context (tp 1, bf16)" (the workload less what is swept).
std::string SweepTitle(const std::string& prefix, const std::vector<SweepAxis>& axes,
                       const Setup& setup);

/// One phase at one point of a sweep.
struct PhasePoint {
  Phase phase = Phase::kPrefill;
  double time_s = 0;
  Verdict bound;               ///< the phase's verdict (resource with the largest summed time)
  double tokens_per_s = 0;     ///< prefill: batch x prompt / time; decode: batch / time
  double compute_bound_s = 0;  ///< time of kernels bound by compute
  double memory_bound_s = 0;   ///< ... by memory
  double comm_bound_s = 0;     ///< ... by the interconnect
  double flops = 0;            ///< all kernels, repeats included
  double bytes = 0;            ///< device-memory bytes, repeats included
  double compute_s = 0;        ///< sum of every kernel's compute term
  double comm_s = 0;           ///< sum of every kernel's comm term
  std::array<std::optional<Verdict>, kNumClasses> class_bound;  ///< per class (none: absent)
  std::array<double, kNumClasses> class_flops{};
  std::array<double, kNumClasses> class_bytes{};  ///< device-memory bytes
  /// Expected time of the step and its tokens/s, when the cost model has efficiency data.
  bool has_expected = false;
  double expected_time_s = 0;
  double expected_tokens_per_s = 0;
  /// The host takes longer to launch the step's kernels than the GPU to run them: the expected
  /// time is the host's, whatever the device.
  bool host_bound = false;
  /// Where the step's time bound goes: per kernel class (0 where absent) and launch overhead
  /// (--launch-overhead-us per kernel); together they are `time_s`.
  std::array<double, kNumClasses> class_time_s{};
  double overhead_s = 0;

  /// The kernel class with the largest share of the step's time, or kOverheadShare when the
  /// launch overhead is larger than every class; ties go to the first class.
  int LargestShare() const;
};

/// LargestShare() when launch overhead takes the largest share.
inline constexpr int kOverheadShare = kNumClasses;

/// One point: the values of the axes and what they give.
struct SweepPoint {
  std::vector<size_t> index;  ///< grid position per axis
  std::vector<PhasePoint> phases;
  double footprint_bytes = 0;  ///< per device: weights + KV cache + decode workspace
  double capacity_bytes = 0;
  bool fits = true;
  int64_t chips = 1;   ///< chips per replica: tp x pipeline stages (ResolveStages)
  int64_t stages = 1;  ///< pipeline stages
};

/// What a sweep watches for changes.
enum class SignalKind {
  kStep,            ///< a phase's verdict (LLM sweeps)
  kClass,           ///< the verdict of one kernel class within a phase (LLM sweeps)
  kCommWall,        ///< whether a phase's all-reduce time exceeds its compute time (LLM sweeps)
  kCapacity,        ///< whether weights + KV cache + workspace fit (LLM sweeps)
  kChips,           ///< the chips that hold the model (devices with a model split)
  kNetwork,         ///< a network's verdict (network sweeps)
  kMatrixKernels,   ///< the verdict of a network's matrix kernels
  kOtherKernels,    ///< ... of its other kernels
  kAttentionShare,  ///< whether a network's fused attention takes more time than its other
                    ///< matrix kernels (convolutions, matmuls)
  kLargestShare,    ///< the kernel class taking most of a phase's time (LLM sweeps; `count`)
};

/// One watched signal.
struct SignalId {
  SignalKind kind = SignalKind::kStep;
  Phase phase = Phase::kPrefill;           ///< kStep, kClass, kCommWall
  KernelClass cls = KernelClass::kMatmul;  ///< kClass

  friend bool operator==(const SignalId&, const SignalId&) = default;
};

/// A signal's value: a verdict (kStep, kClass, the network signals) or a yes/no (kCommWall:
/// comm time > compute time; kCapacity: fits).
struct SignalValue {
  Verdict verdict;
  bool yes = false;
  int64_t count = 0;  ///< kChips; kLargestShare: the class (KernelClass or kOverheadShare)

  friend bool operator==(const SignalValue&, const SignalValue&) = default;
};

/// A value where a signal changes along one axis (the others held at `at`).
struct Crossover {
  SignalId signal;
  size_t axis = 0;        ///< index into the sweep's axes
  std::string variable;   ///< the axis' variable ("batch", or a network dimension)
  int64_t int_value = 0;  ///< integer variables: the first value with the new verdict
  size_t grid = 0;        ///< grid position after the change (list variables: the element)
  bool exact = false;     ///< int_value was bisected between grid points
  SignalValue from, to;
  std::optional<size_t> at;  ///< two-axis sweeps: the other axis' grid position
};

/// A signal that never changes along an axis, how far that was checked, and why.
struct NeverFlips {
  /// How far past the grid the signal was followed.
  enum class Reach {
    kSweptRange,  ///< only the grid
    kLookFailed,  ///< further out, but evaluating there failed
    kAnyValue,    ///< far out, without a change
    kBeyond,      ///< it changes beyond the grid, at `beyond_value`
  };
  SignalId signal;
  size_t axis = 0;
  std::string variable;
  SignalValue value;
  std::optional<size_t> at;
  Reach reach = Reach::kSweptRange;
  int64_t beyond_value = 0;
  SignalValue beyond_to;
  double limit_intensity = 0;  ///< device-memory intensity far out along the axis
  double ridge = 0;            ///< of the class's dominant engine against device memory
  int ridge_ceiling = -1;      ///< that engine (index into Device::compute)
  int64_t heads_per_kv = 0;    ///< decode attention: query heads sharing each K/V head
};

struct SweepResult {
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;  ///< row-major: the last axis varies fastest
  std::vector<Crossover> crossovers;
  std::vector<NeverFlips> never;
  bool chips_tracked = false;  ///< the device chooses the chip count per point (kChips)
  /// Some grid point has pipeline stages: communication is all-reduces and pipeline sends.
  bool pipelined = false;
  std::vector<std::string> notes;
  int64_t evaluations = 0;  ///< workload evaluations, bisection included
  ResourceNames names;      ///< the device's, for printing verdicts
  int64_t tp = 1;           ///< the base workload's tensor parallelism
  /// The expected-time columns, when the cost model has efficiency data: their choices.
  bool has_expected = false;
  ExpectedOptions expected;
  /// How far to trust the expected times (roofline/trust.h AttachBands), per phase (prefill,
  /// decode) and layout (one chip, several: tensor or pipeline parallel); none: not attached.
  std::array<std::array<std::optional<TrustBand>, 2>, 2> bands;
  /// The band of a phase of point `p`, or null.
  const TrustBand* BandOf(const SweepPoint& p, Phase phase) const {
    const auto& b = bands[phase == Phase::kPrefill ? 0 : 1][p.chips > 1 ? 1 : 0];
    return b.has_value() ? &*b : nullptr;
  }
};

/// Runs the sweep (one or two axes) for the selected phases.
Result<SweepResult> RunSweep(const TransformerConfig& config, const Workload& base,
                             const CostModel& model, PhaseSelection phases,
                             const std::vector<SweepAxis>& axes);

/// The workload at grid position `index` (one entry per axis) of a sweep from `base`.
Workload WorkloadAt(const Workload& base, const std::vector<SweepAxis>& axes,
                    const std::vector<size_t>& index);
/// `base` with an integer variable set to `value` (other variables: unchanged).
Workload WorkloadWith(const Workload& base, SweepVariable variable, int64_t value);

/// `--vary hw=A,B,...`: the same workload and axes swept on each device, each with its own cost
/// model (its own ceilings and efficiency figures). Without axes, each device is one point (the
/// workload as given, on a one-value batch axis).
struct DeviceSweep {
  std::vector<std::string> devices;  ///< ids, in the order given
  std::vector<SweepResult> sweeps;   ///< parallel to devices
  bool fixed = false;                ///< no other axis: one point per device
};
Result<DeviceSweep> RunDeviceSweep(const TransformerConfig& config, const Workload& base,
                                   const std::vector<CostModel>& models, PhaseSelection phases,
                                   const std::vector<SweepAxis>& axes);

/// Evaluates one workload (no sweep): the per-phase figures a sweep point holds.
/// With `footprint`, also the memory footprint at the workload's batch and the longer of prompt
/// and context (from the decode graph, which is built for it when decode is not selected).
Result<std::vector<PhasePoint>> EvaluatePhases(const TransformerConfig& config,
                                               const Workload& workload, const CostModel& model,
                                               PhaseSelection phases,
                                               MemoryFootprint* footprint = nullptr);

}  // namespace roofline

#endif  // ROOFLINE_SWEEP_H_
