#include "roofline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace roofline {

std::vector<int64_t> StageLayers(int64_t layers, int64_t stages) {
  if (stages < 1 || layers < stages) return {};
  std::vector<int64_t> out(static_cast<size_t>(stages), layers / stages);
  const int64_t rest = layers % stages;
  // The remainder from the last but one stage backwards (rest < stages: the last keeps its own).
  for (int64_t i = 2; i < rest + 2; ++i) ++out[static_cast<size_t>(stages - i)];
  return out;
}

Result<PipelineCycle> CycleOf(const PhaseResult& step, int64_t layers, int64_t stages,
                              const CostModel& model) {
  PipelineCycle p;
  p.stages = stages;
  p.layers = StageLayers(layers, stages);
  if (p.layers.empty()) {
    return Status::Invalid("--pp", fmt::format("{} pipeline stages cannot split {} decoder layers "
                                               "(one layer a stage at least)",
                                               stages, layers));
  }
  if (step.graph.layer_groups.empty()) {
    return Status::Invalid("--pp", "the step has no decoder layers to split over stages");
  }
  const auto n = static_cast<size_t>(stages);
  std::vector<int64_t> first(n);  // each stage's first layer
  for (size_t s = 1; s < n; ++s) first[s] = first[s - 1] + p.layers[s - 1];
  p.stage_bound_s.assign(n, 0);
  std::vector<double> gpu(n, 0), host(n, 0);
  bool expected = !step.costs.empty();
  bool after_layers = false;
  for (size_t i = 0; i < step.kernels.size(); ++i) {
    const Kernel& k = step.kernels[i];
    const KernelCost& c = step.costs[i];
    expected = expected && c.has_expected;
    // How many times each stage runs this kernel.
    std::vector<double> runs(n, 0);
    if (k.group.empty()) {
      runs[after_layers ? n - 1 : 0] = static_cast<double>(c.repeat);
    } else if (k.group == kPipelineGroup) {
      for (size_t s = 0; s + 1 < n; ++s) runs[s] = 1;  // each stage sends on to the next
    } else {
      const auto g = std::find_if(step.graph.layer_groups.begin(), step.graph.layer_groups.end(),
                                  [&](const LayerGroup& lg) { return lg.name == k.group; });
      if (g == step.graph.layer_groups.end()) {
        return Status::Invalid("--pp", "kernel " + k.name + " of group '" + k.group +
                                           "' is in no decoder layer group");
      }
      after_layers = true;
      for (int64_t layer : g->layers) {
        const auto at = std::upper_bound(first.begin(), first.end(), layer) - first.begin() - 1;
        runs[static_cast<size_t>(at)] += 1;
      }
    }
    for (size_t s = 0; s < n; ++s) {
      if (runs[s] == 0) continue;
      p.stage_bound_s[s] += c.time_s * runs[s];
      if (c.has_expected) {
        gpu[s] += c.expected.time_s * runs[s];
        host[s] += c.expected.host_s * runs[s];
      }
    }
  }
  p.busiest_bound = static_cast<int>(
      std::max_element(p.stage_bound_s.begin(), p.stage_bound_s.end()) - p.stage_bound_s.begin());
  const double stages_d = static_cast<double>(stages);
  p.bound_s = stages_d * p.stage_bound_s[static_cast<size_t>(p.busiest_bound)];
  p.has_expected = expected;
  if (expected) {
    p.stage_expected_s.assign(n, 0);
    for (size_t s = 0; s < n; ++s) {
      StepTime t;
      t.gpu_s = gpu[s];
      t.host_s = host[s];
      t.requests = step.step_requests;
      t.layers = p.layers[s];
      t.phase = step.step_phase;
      p.stage_expected_s[s] = ApplyStepTerms(t, model.options().step_terms).time_s;
    }
    p.busiest_expected =
        static_cast<int>(std::max_element(p.stage_expected_s.begin(), p.stage_expected_s.end()) -
                         p.stage_expected_s.begin());
    p.expected_s = stages_d * p.stage_expected_s[static_cast<size_t>(p.busiest_expected)];
  }
  return p;
}

}  // namespace roofline
