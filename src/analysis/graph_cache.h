// The sweep's graph cache: graphs and kernels kept between evaluations and re-sized for the
// next workload (by replaying the builder or by affine forms fitted along a row). Internal to
// the analysis layer (and its tests and benchmarks): the public API evaluates without it.
#ifndef ROOFLINE_SRC_ANALYSIS_GRAPH_CACHE_H_
#define ROOFLINE_SRC_ANALYSIS_GRAPH_CACHE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "src/graph/affine_graph.h"
#include "roofline/sweep.h"

namespace roofline {

/// The graphs and kernels of the last evaluation, kept so that the next one re-sizes them
/// (ReplayLlmGraph) instead of building and fusing them anew when its workload keeps their
/// structure, as a sweep's batch, prompt and context do. The figures are the same with or
/// without it. Not thread-safe: one per thread.
class GraphCache {
 public:
  /// The graph of `phase` for the workload, and its analysis: kernels and classes fixed while
  /// the structure holds, costs as the last CostKernels on it left them. `slot` keeps the
  /// graphs of different uses apart (0: the phase itself, 1: the footprint's decode graph).
  struct Entry {
    bool built = false;
    LlmGraph graph;
    FusionMode fusion = FusionMode::kEager;
    GraphCosts analysis;
    /// The line the graph was fitted on (PlanLine): its workload, and the forms when the fit
    /// and its checks held (none: re-sized by replay on this line).
    bool line_tried = false;
    Workload line_base;
    std::optional<AffineGraph> affine;
    int64_t tokens_at_lo = 0, tokens_slope = 0;  ///< LlmGraph::tokens along the line
    /// The line's first costing is still to mark the twins that hold along it
    /// (GraphCosts::twins_fixed; FixTwins).
    bool twins_pending = false;
    /// The graph's weight uses for the footprint (WeightUsesOf), kept while its structure is:
    /// along a row; made again after a build or a replay.
    std::optional<WeightUses> weight_uses;
  };
  Result<Entry*> Get(const TransformerConfig& config, const Workload& workload, Phase phase,
                     int slot);

  /// The coming workloads form lines along `variable` (batch, prompt or context) over
  /// [lo, hi]: the first workload of a line fits each graph's sizes as affine in the variable
  /// (AffineGraph, from builds at lo and hi), checks the forms against builds at `checks`
  /// (values inside the range, e.g. the second and the middle one), and re-sizes the graph by
  /// them for every other point of the line. A line whose fit or check fails is replayed.
  void PlanLine(SweepVariable variable, int64_t lo, int64_t hi, std::vector<int64_t> checks);
  /// Back to replaying every workload (no line planned).
  void EndLines() { line_ = false; }

  /// After a costing of entry `e` on its line (twins checked at that point): marks the twins
  /// whose ops change alike along it, so later points copy them unchecked. Once per line.
  static void FixTwins(Entry& e);

  int64_t builds() const { return builds_; }    ///< graphs built from scratch
  int64_t replays() const { return replays_; }  ///< graphs re-sized by replaying the builder
  int64_t affine() const { return affine_; }    ///< graphs re-sized by their affine forms

 private:
  /// Fits entry `e` on the line through `w`; false when it does not hold.
  bool FitLine(const TransformerConfig& config, const Workload& w, Phase phase, Entry& e);
  /// Fuses and classifies the entry's graph (just built) under `fusion`.
  static void FuseEntry(Entry& e, FusionMode fusion);

  std::array<Entry, 4> entries_;  ///< [slot * 2 + phase]
  int64_t builds_ = 0, replays_ = 0, affine_ = 0;
  bool line_ = false;
  SweepVariable line_variable_ = SweepVariable::kBatch;
  int64_t line_lo_ = 0, line_hi_ = 0;
  std::vector<int64_t> line_checks_;
};

/// EvaluatePhases with `cache`: graphs are kept and re-sized between calls (null: none kept).
Result<std::vector<PhasePoint>> EvaluatePhases(const TransformerConfig& config,
                                               const Workload& workload, const CostModel& model,
                                               PhaseSelection phases, MemoryFootprint* footprint,
                                               GraphCache* cache);

}  // namespace roofline

#endif  // ROOFLINE_SRC_ANALYSIS_GRAPH_CACHE_H_
