#include "roofline/op_analysis.h"

#include <fmt/format.h>

#include <array>

namespace roofline {

Result<OpAnalysis> AnalyzeOp(const OpRequest& request, const CostModel& model, bool with_trace) {
  OpAnalysis a;
  a.request = request;
  if (const auto* att = std::get_if<AttentionSpec>(&request.spec)) {
    Result<int> r = AppendAttention(a.graph, *att, request.attention_impl);
    if (!r.ok()) return r.status();
  } else {
    Result<int> r = a.graph.AddOp(std::string(NameOf(KindOf(request.spec))), request.spec);
    if (!r.ok()) return r.status();
  }
  static_cast<GraphCosts&>(a) = AnalyzeGraph(a.graph, model, FusionMode::kEager, with_trace);
  return a;
}

Result<FlipAnalysis> AnalyzeFlip(const OpRequest& request, const CostModel& model) {
  FlipAnalysis f;
  std::function<OpRequest(int64_t)> with;
  int64_t hi = kMaxDim;
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, MatmulSpec>) {
          f.variable = "m";
          f.current = s.m;
          with = [request](int64_t v) {
            OpRequest r = request;
            std::get<MatmulSpec>(r.spec).m = v;
            return r;
          };
        } else if constexpr (std::is_same_v<T, AttentionSpec>) {
          const bool prefill = s.causal && s.q_len == s.kv_len;
          f.variable = prefill ? "q-len (= kv-len)" : "q-len";
          f.current = s.q_len;
          if (s.causal && !prefill) hi = s.kv_len;
          with = [request, prefill](int64_t v) {
            OpRequest r = request;
            auto& a = std::get<AttentionSpec>(r.spec);
            a.q_len = v;
            if (prefill) a.kv_len = v;
            return r;
          };
        } else if constexpr (std::is_same_v<T, Conv2dSpec>) {
          f.variable = "batch";
          f.current = s.batch;
          with = [request](int64_t v) {
            OpRequest r = request;
            std::get<Conv2dSpec>(r.spec).batch = v;
            return r;
          };
        } else if constexpr (std::is_same_v<T, ElementwiseSpec>) {
          f.variable = "elements";
          f.current = static_cast<int64_t>(s.elements);
          with = [request](int64_t v) {
            OpRequest r = request;
            std::get<ElementwiseSpec>(r.spec).elements = static_cast<double>(v);
            return r;
          };
        } else if constexpr (std::is_same_v<T, NormSpec>) {
          f.variable = "rows";
          f.current = s.rows;
          with = [request](int64_t v) {
            OpRequest r = request;
            std::get<NormSpec>(r.spec).rows = v;
            return r;
          };
        } else if constexpr (std::is_same_v<T, SoftmaxSpec>) {
          f.variable = "rows";
          f.current = static_cast<int64_t>(s.rows);
          with = [request](int64_t v) {
            OpRequest r = request;
            std::get<SoftmaxSpec>(r.spec).rows = static_cast<double>(v);
            return r;
          };
        } else if constexpr (std::is_same_v<T, EmbeddingSpec>) {
          f.variable = "tokens";
          f.current = s.tokens;
          with = [request](int64_t v) {
            OpRequest r = request;
            std::get<EmbeddingSpec>(r.spec).tokens = v;
            return r;
          };
        }
      },
      request.spec);
  if (!with) return Status::Unsupported("explain", "no size variable to vary for this op");
  Status bad;
  auto verdict = [&](int64_t v) -> std::string {
    Result<OpAnalysis> a = AnalyzeOp(with(v), model);
    if (!a.ok()) {
      bad = a.status();
      return "error";
    }
    return NameOf(a->totals.verdict, model.device());
  };
  f.current = std::clamp<int64_t>(f.current, 1, hi);
  f.hi = hi;
  f.up = FindFlipUp(verdict, f.current, hi);
  f.down = FindFlipUp(verdict, 1, f.current);
  if (!bad.ok()) return bad;
  Result<OpAnalysis> top = AnalyzeOp(with(hi), model);
  if (!top.ok()) return top.status();
  if (top->totals.bytes[0] > 0) f.limit_intensity = top->totals.flops / top->totals.bytes[0];
  if (!top->costs.empty()) {
    // Ridge of the engine doing most of the work against device memory.
    const KernelCost* heaviest = &top->costs.front();
    for (const KernelCost& c : top->costs) {
      if (c.flops > heaviest->flops) heaviest = &c;
    }
    f.ridge = model.Ridge(*heaviest, 0);
  }
  return f;
}

}  // namespace roofline
