// Parameter counts of LLMs: every weight tensor of the prefill graph once.
#include <set>

#include "roofline/llm.h"

namespace roofline {
namespace {

/// Sums weight tensors of a graph (each tensor once, times the repeat of its first consumer).
ParameterCount SumWeights(const Graph& g, bool with_scales) {
  ParameterCount p;
  std::set<int> seen;
  for (const Op& op : g.ops()) {
    const std::vector<Operand> operands = OperandsOf(op.spec);
    const auto* mm = std::get_if<MatmulSpec>(&op.spec);
    for (size_t j = 0; j < operands.size(); ++j) {
      if (operands[j].role != TensorRole::kWeight) continue;
      if (!with_scales && std::string_view(operands[j].name) == "scales") continue;
      const int id = op.operands[j];
      if (!seen.insert(id).second) continue;
      const double n = g.tensors()[id].elements * static_cast<double>(op.repeat);
      p.total += n;
      const bool routed = mm != nullptr && mm->experts > 0;
      p.active +=
          routed ? n * static_cast<double>(mm->expert_top_k) / static_cast<double>(mm->experts) : n;
    }
  }
  return p;
}

}  // namespace

ParameterCount CountParameters(const TransformerConfig& config) {
  Workload w;
  w.batch = 1;
  w.prompt = 1;
  w.dtype = DType::kBf16;
  w.mla = MlaForm::kNaive;  // kv_b_proj as one weight
  Result<LlmGraph> g = BuildLlmGraph(config, w, Phase::kPrefill);
  if (!g.ok()) return {};
  return SumWeights(g->graph, false);
}

}  // namespace roofline
