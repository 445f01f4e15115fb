// Sweeps over workload variables, and the exact values where the binding resource changes.
#ifndef ROOFLINE_SWEEP_H_
#define ROOFLINE_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/kernel_class.h"
#include "roofline/model_analysis.h"

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

/// One phase at one point of a sweep.
struct PhasePoint {
  Phase phase = Phase::kPrefill;
  double time_s = 0;
  std::string bound;           ///< the phase's verdict (resource with the largest summed time)
  double tokens_per_s = 0;     ///< prefill: batch x prompt / time; decode: batch / time
  double compute_bound_s = 0;  ///< time of kernels bound by compute
  double memory_bound_s = 0;   ///< ... by memory
  double comm_bound_s = 0;     ///< ... by the interconnect
  double flops = 0;            ///< all kernels, repeats included
  double bytes = 0;            ///< device-memory bytes, repeats included
  double compute_s = 0;        ///< sum of every kernel's compute term
  double comm_s = 0;           ///< sum of every kernel's comm term
  std::array<std::string, kNumClasses> class_bound;  ///< verdict per class ("" when absent)
  std::array<double, kNumClasses> class_flops{};
  std::array<double, kNumClasses> class_bytes{};  ///< device-memory bytes
};

/// One point: the values of the axes and what they give.
struct SweepPoint {
  std::vector<size_t> index;  ///< grid position per axis
  std::vector<PhasePoint> phases;
  double footprint_bytes = 0;  ///< per device: weights + KV cache + decode workspace
  double capacity_bytes = 0;
  bool fits = true;
};

/// A value where something changes along one axis (the others held at `at`).
struct Crossover {
  std::string what;  ///< "decode matmul", "prefill phase", "capacity", "comm wall"
  std::string variable;
  std::string value;      ///< exact integer (as text) or the list element where it changes
  int64_t int_value = 0;  ///< for integer variables
  std::string from, to;
  std::string at;  ///< the other axes' values ("" for one-axis sweeps)
  std::string sentence;
};

/// A class or phase whose verdict never changes along an axis, and why.
struct NeverFlips {
  std::string what;
  std::string variable;
  std::string bound;
  double limit_intensity = 0;  ///< device-memory intensity far out along the axis
  double ridge = 0;            ///< of the class's dominant engine against device memory
  std::string at;
  std::string sentence;
};

struct SweepResult {
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;  ///< row-major: the last axis varies fastest
  std::vector<Crossover> crossovers;
  std::vector<NeverFlips> never;
  std::vector<std::string> notes;
  int64_t evaluations = 0;  ///< workload evaluations, bisection included
};

/// Runs the sweep (one or two axes) for the selected phases.
Result<SweepResult> RunSweep(const TransformerConfig& config, const Workload& base,
                             const CostModel& model, PhaseSelection phases,
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
