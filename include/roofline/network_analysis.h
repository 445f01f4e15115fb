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
struct NetworkAnalysis : LoweredNetwork, GraphCosts {
  double activation_bytes = 0;  ///< PeakActivationBytes at `dims`
};

/// Binds the graph's dims (`bindings` over defaults; errors name the dimension), lowers every
/// node and costs it on the model's device. Errors name the file and the node.
Result<NetworkAnalysis> AnalyzeNetwork(const NetworkGraph& graph, const DimBindings& bindings,
                                       const CostModel& model);

/// A denoiser run for whole images (`--steps N [--cfg]`): `steps` passes of the network per batch
/// of images; with classifier-free guidance each pass evaluates the conditional and the
/// unconditional input together, at twice the batch of images.
struct DiffusionRun {
  int64_t steps = 0;
  bool cfg = false;
  int64_t images = 0;          ///< images per batch
  int64_t pass_batch = 0;      ///< the network's batch dimension in each pass (2 x images with cfg)
  bool batchless = false;      ///< the graph has no symbolic batch: each pass taken as one image
  double time_s = 0;           ///< bound: steps x the pass's bound
  double expected_time_s = 0;  ///< steps x the pass's expected time (0: no efficiency data)
  double seconds_per_image() const { return time_s / static_cast<double>(images); }
  double images_per_s() const { return time_s > 0 ? static_cast<double>(images) / time_s : 0; }
  double expected_seconds_per_image() const {
    return expected_time_s / static_cast<double>(images);
  }
  double expected_images_per_s() const {
    return expected_time_s > 0 ? static_cast<double>(images) / expected_time_s : 0;
  }
};

/// The run of `steps` passes of an analysed pass. Its batch is the dimension `batch` (1 image
/// when the graph has none and no `cfg`); with `cfg` that batch holds 2 inputs per image, so it
/// must exist and be even. Errors name --steps or --cfg.
Result<DiffusionRun> DiffuseImages(const NetworkAnalysis& pass, int64_t steps, bool cfg);

/// One point of a sweep over a symbolic dimension.
struct NetSweepPoint {
  int64_t value = 0;
  double time_s = 0;
  bool has_expected = false;   ///< the cost model has efficiency data
  double expected_time_s = 0;  ///< the pass's expected time
  int64_t pass_batch = 0;      ///< the network's batch in the pass (0: it has no batch)
  double flops = 0;
  double matrix_flops = 0;
  double bytes = 0;  ///< device memory
  Verdict bound;     ///< the network's verdict (resource with the largest summed time)
  std::optional<Verdict> matrix_bound;  ///< verdict of the matrix kernels alone (none: no such)
  std::optional<Verdict> other_bound;   ///< verdict of the other kernels alone
  double compute_bound_s = 0;
  double memory_bound_s = 0;
  double attention_s = 0;       ///< time of the fused attention kernels
  double conv_matmul_s = 0;     ///< time of the other matrix kernels (convolutions, matmuls)
  double weight_bytes = 0;      ///< weights and buffers
  double activation_bytes = 0;  ///< PeakActivationBytes
  double capacity_bytes = 0;    ///< the device memory's capacity (0: none listed)
  double memory_bytes() const { return weight_bytes + activation_bytes; }
  bool fits() const { return capacity_bytes <= 0 || memory_bytes() <= capacity_bytes; }
};

/// The line a network sweep follows.
struct NetSweepAxis {
  std::string variable;         ///< the dimension swept
  std::vector<int64_t> values;  ///< ascending, multiples of `multiple`
  /// Dimensions set to the swept value at every point: `width` follows `height` (and the other
  /// way round) unless bound with --dim.
  std::vector<std::string> follow;
  /// The values (grid and bisection) are multiples of this: the lcm of the dims.<name>.multiple
  /// of the variable and its followers.
  int64_t multiple = 1;
  /// Classifier-free guidance: every pass runs at twice the batch of images (the swept batch,
  /// or the bound one) on a graph with a symbolic `batch`.
  bool double_batch = false;
};

/// The axis for sweeping `variable` of `graph` over `values`: errors name --vary (a dimension the
/// graph lacks, a value that is not a multiple of its step). `given`: the dims bound with --dim,
/// which do not follow.
Result<NetSweepAxis> MakeNetSweepAxis(const NetworkGraph& graph, const std::string& variable,
                                      std::vector<int64_t> values, const DimBindings& given);

/// `roofline sweep GRAPH.json --vary DIM=...`.
struct NetSweepResult {
  std::string name;
  std::string variable;             ///< the dimension swept
  std::vector<std::string> follow;  ///< dimensions that take the same value
  int64_t multiple = 1;             ///< the values' step
  std::vector<NetSweepPoint> points;
  /// Exact values (bisected) where a verdict changes, where fused attention overtakes the other
  /// matrix kernels (kAttentionShare) and where weights + activations stop fitting (kCapacity).
  std::vector<Crossover> crossovers;
  std::vector<NeverFlips> never;  ///< signals that never change over the range
  int64_t evaluations = 0;
  ResourceNames names;  ///< the device's, for printing verdicts
  /// A denoiser run for whole images (`--steps N [--cfg]`): each point's images per batch,
  /// seconds per image and images/s follow from its pass (0: one pass per point).
  int64_t steps = 0;
  bool cfg = false;
  /// Images in a batch at point `p` (a pass of batch 2B holds B under cfg; 1 without a batch).
  int64_t Images(const NetSweepPoint& p) const {
    return p.pass_batch <= 0 ? 1 : (cfg ? p.pass_batch / 2 : p.pass_batch);
  }
};

/// Sweeps one symbolic dimension of `graph` along `axis` (MakeNetSweepAxis). Other dims come
/// from `bindings` and defaults.
Result<NetSweepResult> SweepNetwork(const NetworkGraph& graph, const DimBindings& bindings,
                                    const CostModel& model, const NetSweepAxis& axis);
/// The graph at one value of the swept dimension, for inputs whose shapes are fixed while
/// loading (ONNX models: symbolic dimensions are bound before shape inference, so each value is
/// a new load).
using NetworkAtValue = std::function<Result<NetworkGraph>(int64_t value)>;
/// Sweeps over graphs that `graph_at` gives per value (bound further with `bindings` and the
/// value). The caller checks that the dimension exists (loading fails otherwise).
Result<NetSweepResult> SweepNetwork(const NetworkAtValue& graph_at, const DimBindings& bindings,
                                    const CostModel& model, const NetSweepAxis& axis);
/// Parses "DIM=FROM:TO[:xF|+S]" or "DIM=A,B,C" for a graph dimension (the grid syntax of
/// `roofline sweep`).
Result<std::pair<std::string, std::vector<int64_t>>> ParseDimAxis(const std::string& spec);

}  // namespace roofline

#endif  // ROOFLINE_NETWORK_ANALYSIS_H_
