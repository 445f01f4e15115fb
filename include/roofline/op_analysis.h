// Analysis of a single operator request (what `roofline op` prints).
#ifndef ROOFLINE_OP_ANALYSIS_H_
#define ROOFLINE_OP_ANALYSIS_H_

#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/flip.h"
#include "roofline/graph.h"
#include "roofline/graph_analysis.h"
#include "roofline/status.h"
#include "roofline/verdict.h"

namespace roofline {

/// One operator as the user asked for it.
struct OpRequest {
  OpSpec spec;
  AttentionImpl attention_impl = AttentionImpl::kFlash;  ///< for AttentionSpec
};

/// The op's graph, its kernels (one, or three for eager attention) and their costs.
struct OpAnalysis : GraphCosts {
  OpRequest request;
  Graph graph;
};

/// Builds and evaluates the op. `with_trace` fills `traces` with the derivation.
Result<OpAnalysis> AnalyzeOp(const OpRequest& request, const CostModel& model,
                             bool with_trace = false);

/// The variable `--explain` varies to find where the verdict flips.
struct FlipAnalysis {
  std::string variable;  ///< "m", "q-len", "batch", "elements"
  int64_t current = 0;
  FlipPoint up;                ///< searching from current upwards
  FlipPoint down;              ///< searching from 1 up to current: the first change above 1
  int64_t hi = 0;              ///< top of the searched range (2^40, or kv-len for causal q-len)
  double limit_intensity = 0;  ///< intensity at device memory at `hi`
  double ridge = 0;            ///< ridge of the dominant engine against device memory
};

/// Finds where the op's verdict changes as its natural size variable grows or shrinks
/// (matmul: m; attention: q-len (and kv-len with it in causal prefill); conv2d: batch;
/// other ops: their element/row count).
Result<FlipAnalysis> AnalyzeFlip(const OpRequest& request, const CostModel& model);

}  // namespace roofline

#endif  // ROOFLINE_OP_ANALYSIS_H_
