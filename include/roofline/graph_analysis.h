// The one analysis every command builds on: a graph's kernels, fused, classified and costed on
// a device, with their sums.
#ifndef ROOFLINE_GRAPH_ANALYSIS_H_
#define ROOFLINE_GRAPH_ANALYSIS_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/graph.h"
#include "roofline/kernel_class.h"
#include "roofline/verdict.h"

namespace roofline {

/// Sums over the kernels of an analysis, each times its repeat.
struct Totals {
  double flops = 0;
  double time_s = 0;                       ///< sum of kernel time bounds
  double compute_time_s = 0;               ///< sum of compute terms
  std::array<double, kMaxLevels> bytes{};  ///< per level
  std::array<double, kMaxLevels> memory_time_s{};
  double comm_bytes = 0;
  double comm_time_s = 0;
  Verdict verdict;  ///< the resource with the largest summed time (ResourceTimes::Classify)

  // Expected times (docs/expected-time.md), when the cost model has efficiency data.
  bool has_expected = false;
  double expected_gpu_s = 0;       ///< sum of kernel expected times: the GPU's busy time
  double expected_roofline_s = 0;  ///< sum of their largest roofline terms
  double expected_host_s = 0;      ///< sum of host launch times
  /// The step: the GPU's busy time with the cost model's step terms applied (today: the host's
  /// launching when that is longer, the GPU then waiting for kernels).
  double expected_s = 0;
  /// The host sets the step's pace (StepTime::host_bound).
  bool host_bound = false;
  /// The serving engine's host work in the step (--engine; EngineHost), serial and overlapped,
  /// what it added to the step, and whether its overlapped part set the pace.
  double engine_host_s = 0;
  double engine_exposed_s = 0;
  bool engine_bound = false;
  /// Expected time of the kernels by verdict (index: BoundKind).
  std::array<double, 4> expected_by_bound{};
  /// The share of the step that is launch overhead (GPU gaps and host launch time not
  /// hidden; an engine's host work is not a launch overhead).
  double overhead_share() const {
    return expected_s > 0 ? (expected_s - engine_exposed_s - expected_roofline_s) / expected_s : 0;
  }
};

/// A graph's kernels costed on a device. `op`, `model`, `sweep`, `validate` and the network
/// commands each take theirs from AnalyzeGraph (the sweep re-costs one in place).
struct GraphCosts {
  std::vector<Kernel> kernels;       ///< fused from the graph, in execution order
  std::vector<KernelClass> classes;  ///< parallel to kernels: ClassOf, the one classifier
  std::vector<KernelCost> costs;     ///< parallel to kernels: one instance; `repeat` per step
  std::vector<std::vector<std::string>> traces;  ///< per kernel, when asked for
  /// Per kernel, an earlier kernel found doing the same work (its cost is copied), or -1: kept
  /// between costings of one graph as it is re-sized (CostKernels checks it each time).
  std::vector<int> twins;
  /// Per kernel, set when its twin holds at every point of the line the graph is re-sized along
  /// (the two ops change alike: AffineGraph::SameForms), so CostKernels copies without checking;
  /// empty off a line. Set by the sweep's graph cache.
  std::vector<char> twins_fixed;
  /// The kernels (their storage and count) whose names `costs` last took: costing the same
  /// kernels again leaves the names as they are.
  const Kernel* named_kernels = nullptr;
  size_t named_count = 0;
  Totals totals;                                 ///< repeats included
  /// What an engine's per-request and per-layer host work counts (StepTime::requests, layers):
  /// set by the caller that knows the step's batch and the model's layers; 0 otherwise.
  int64_t step_requests = 0;
  int64_t step_layers = 0;
  std::optional<Phase> step_phase;

  // Time of the kernels bound by each kind of resource, repeats included.
  double compute_bound_s = 0;
  double memory_bound_s = 0;
  double comm_bound_s = 0;

  // Per kernel class, repeats included: time per resource (its verdict: Classify()), FLOPs and
  // device-memory bytes; `class_present` says which classes have kernels.
  std::array<ResourceTimes, kNumClasses> class_times{};
  std::array<bool, kNumClasses> class_present{};
  std::array<double, kNumClasses> class_flops{};
  std::array<double, kNumClasses> class_bytes{};
  /// Per kernel class, repeats included: the kernels' time bounds without their launch
  /// overhead, which is summed apart in `overhead_s` (so the classes and it add up to the step).
  std::array<double, kNumClasses> class_time_s{};
  double overhead_s = 0;
};

/// Fuses `graph` under `fusion`, classifies each kernel and costs it on the model's device.
/// `with_trace` fills `traces` with each kernel's derivation; `step_requests` and `step_layers`
/// are what an engine's host work counts (GraphCosts).
GraphCosts AnalyzeGraph(const Graph& graph, const CostModel& model, FusionMode fusion,
                        bool with_trace = false, int64_t step_requests = 0,
                        int64_t step_layers = 0, std::optional<Phase> step_phase = std::nullopt);

/// Costs `out.kernels` (fused from a graph of the same structure) again on `graph` as it is now,
/// reusing `out`'s storage: a sweep re-sizes one graph from point to point. `out.classes` is
/// kept when it has one class per kernel, else computed. The kernels must not change between
/// costings of one `out` (twins, classes and the costs' names are kept for them); give new
/// kernels a fresh GraphCosts.
void CostKernels(const Graph& graph, const CostModel& model, GraphCosts& out,
                 bool with_trace = false);

}  // namespace roofline

#endif  // ROOFLINE_GRAPH_ANALYSIS_H_
