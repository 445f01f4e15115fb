// Pipeline parallelism with micro-batches: a step's kernels split over stages in sequence, and
// the cycle of a pipeline that keeps one micro-batch in flight per stage.
#ifndef ROOFLINE_PIPELINE_H_
#define ROOFLINE_PIPELINE_H_

#include <cstdint>
#include <vector>

#include "roofline/cost.h"
#include "roofline/model_analysis.h"

namespace roofline {

/// Decoder layers per pipeline stage as vLLM splits them (get_pp_indices in
/// vllm/distributed/utils.py, without VLLM_PP_LAYER_PARTITION): layers / stages each, and the
/// remainder one more each on the stages before the last, from the last but one backwards (the
/// last stage also runs the final norm and the output layer). Empty unless 1 <= stages <= layers.
std::vector<int64_t> StageLayers(int64_t layers, int64_t stages);

/// A step split over pipeline stages, and the cycle of a pipeline with as many micro-batches in
/// flight as stages (vLLM's virtual engines, TensorRT-LLM's in-flight micro-batches): every
/// stage works on the micro-batches in turn, so each micro-batch takes its next step once per
/// cycle, stages x the busiest stage's time (which is at least the step's sum over the stages:
/// an uneven split costs what its busiest stage idles the others).
struct PipelineCycle {
  int64_t stages = 1;
  std::vector<int64_t> layers;  ///< decoder layers per stage (StageLayers)
  /// Per stage: the time bound of its kernels, and (has_expected) its expected time, its
  /// kernels' expected times with the cost model's step terms applied to the stage (its own
  /// host launching; an engine's host work at the step's requests and the stage's layers).
  std::vector<double> stage_bound_s, stage_expected_s;
  bool has_expected = false;
  int busiest_bound = 0, busiest_expected = 0;  ///< stage indices
  double bound_s = 0;                           ///< stages x the largest stage_bound_s
  double expected_s = 0;  ///< stages x the largest stage_expected_s (0 without expected times)
};

/// The cycle of `step`, a step costed on a graph built with `stages` pipeline stages
/// (Workload::pp; its layer groups in step.graph): the embedding's kernels run on the first
/// stage, the final norm's and output layer's on the last, each stage but the last sends its
/// activations once (the graph's kPipelineGroup op), and each layer group's kernels run on the
/// stages holding its layers, once per layer. `layers` is the model's decoder layers. `model`
/// applies its step terms to each stage (the one the step was costed with). An error when the
/// stages do not split the layers (fewer layers than stages) or the step has no layer groups.
Result<PipelineCycle> CycleOf(const PhaseResult& step, int64_t layers, int64_t stages,
                              const CostModel& model);

}  // namespace roofline

#endif  // ROOFLINE_PIPELINE_H_
