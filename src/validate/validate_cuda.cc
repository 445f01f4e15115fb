// `validate --device cuda`: the GPU's timings of every op beside the predicted bounds.
#include "roofline/cuda_measure.h"
#include "roofline/validate.h"

namespace roofline {

Result<Validation> ValidateOnCuda(const Graph& graph, const CostModel& model,
                                  const CudaRunOptions& options) {
  Result<std::vector<OpTiming>> timings = RunGraphOnCuda(graph, options);
  if (!timings.ok()) return timings.status();
  return ValidationFromTimings(graph, model, *timings);
}

}  // namespace roofline
