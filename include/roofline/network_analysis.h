// A general network (graph file or ONNX model) on a device: every node lowered to the operator
// IR and costed like an LLM kernel, totals, parameters, the nodes that could not be costed, and
// sweeps over a symbolic dimension.
#ifndef ROOFLINE_NETWORK_ANALYSIS_H_
#define ROOFLINE_NETWORK_ANALYSIS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/network.h"
#include "roofline/op_analysis.h"
#include "roofline/sweep.h"

namespace roofline {

/// Everything `roofline model GRAPH.json` reports: the lowered network (one op per costed node,
/// in node order; `info` parallel to its kernels, eager fusion keeping one kernel per op) and
/// its costs.
struct NetworkAnalysis : LoweredNetwork, GraphCosts {};

/// Binds the graph's dims (`bindings` over defaults; errors name the dimension), lowers every
/// node and costs it on the model's device. Errors name the file and the node.
Result<NetworkAnalysis> AnalyzeNetwork(const NetworkGraph& graph, const DimBindings& bindings,
                                       const CostModel& model);

/// One point of a sweep over a symbolic dimension.
struct NetSweepPoint {
  int64_t value = 0;
  double time_s = 0;
  double flops = 0;
  double matrix_flops = 0;
  double bytes = 0;  ///< device memory
  Verdict bound;     ///< the network's verdict (resource with the largest summed time)
  std::optional<Verdict> matrix_bound;  ///< verdict of the matrix kernels alone (none: no such)
  std::optional<Verdict> other_bound;   ///< verdict of the other kernels alone
  double compute_bound_s = 0;
  double memory_bound_s = 0;
};

/// `roofline sweep GRAPH.json --vary DIM=...`.
struct NetSweepResult {
  std::string name;
  std::string variable;  ///< the dimension swept
  std::vector<NetSweepPoint> points;
  std::vector<Crossover> crossovers;  ///< exact values (bisected) where a verdict changes
  std::vector<NeverFlips> never;      ///< verdicts that never change over the range
  int64_t evaluations = 0;
  ResourceNames names;  ///< the device's, for printing verdicts
};

/// Sweeps one symbolic dimension over `axis_values` (ascending). Other dims come from
/// `bindings` and defaults.
Result<NetSweepResult> SweepNetwork(const NetworkGraph& graph, const DimBindings& bindings,
                                    const CostModel& model, const std::string& variable,
                                    const std::vector<int64_t>& axis_values);
/// The graph at one value of the swept dimension, for inputs whose shapes are fixed while
/// loading (ONNX models: symbolic dimensions are bound before shape inference, so each value is
/// a new load).
using NetworkAtValue = std::function<Result<NetworkGraph>(int64_t value)>;
/// Sweeps over graphs that `graph_at` gives per value (bound further with `bindings` and the
/// value). The caller checks that the dimension exists (loading fails otherwise).
Result<NetSweepResult> SweepNetwork(const NetworkAtValue& graph_at, const DimBindings& bindings,
                                    const CostModel& model, const std::string& variable,
                                    const std::vector<int64_t>& axis_values);
/// Parses "DIM=FROM:TO[:xF|+S]" or "DIM=A,B,C" for a graph dimension (the grid syntax of
/// `roofline sweep`).
Result<std::pair<std::string, std::vector<int64_t>>> ParseDimAxis(const std::string& spec);

}  // namespace roofline

#endif  // ROOFLINE_NETWORK_ANALYSIS_H_
