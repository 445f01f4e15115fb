// Speed of the cost engine: op-cost evaluations per second.
//   build/bench/roofline_bench
#include <benchmark/benchmark.h>

#include "roofline/cost.h"
#include "roofline/device_db.h"
#include "roofline/op_analysis.h"

namespace roofline {
namespace {

const Device& H100() {
  static const Device d = [] {
    Result<DeviceDatabase> db = DeviceDatabase::LoadEmbedded();
    return *db->Find("h100-sxm").value();
  }();
  return d;
}

MatmulSpec QProj(int64_t m) {
  MatmulSpec s;
  s.m = m;
  s.n = 4096;
  s.k = 4096;
  return s;
}

/// One kernel evaluation (graph already built): what a model analysis does per kernel.
void BM_EvaluateMatmulKernel(benchmark::State& state) {
  Graph g;
  (void)g.AddOp("q_proj", QProj(2048));
  const std::vector<Kernel> k = Fuse(g, FusionMode::kEager);
  const CostModel model(H100());
  for (auto _ : state) {
    KernelCost c = model.Evaluate(g, k[0]);
    benchmark::DoNotOptimize(c.time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateMatmulKernel);

void BM_EvaluateFlashAttentionKernel(benchmark::State& state) {
  Graph g;
  AttentionSpec a;
  a.batch = 8;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.q_len = 1;
  a.kv_len = 8192;
  a.causal = true;
  (void)AppendAttention(g, a, AttentionImpl::kFlash);
  const std::vector<Kernel> k = Fuse(g, FusionMode::kEager);
  const CostModel model(H100());
  for (auto _ : state) {
    KernelCost c = model.Evaluate(g, k[0]);
    benchmark::DoNotOptimize(c.time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateFlashAttentionKernel);

/// A fused kernel of three ops (matmul + two epilogues).
void BM_EvaluateFusedKernel(benchmark::State& state) {
  Graph g;
  const int gate = *g.AddOp("gate_proj", QProj(2048));
  ElementwiseSpec act;
  act.elements = 2048.0 * 4096;
  act.inputs = 1;
  const int a = *g.AddOp("act", act, {g.OutputOf(gate)});
  ElementwiseSpec mul;
  mul.elements = 2048.0 * 4096;
  (void)g.AddOp("mul", mul, {g.OutputOf(a)});
  const std::vector<Kernel> k = Fuse(g, FusionMode::kFused);
  const CostModel model(H100());
  for (auto _ : state) {
    KernelCost c = model.Evaluate(g, k[0]);
    benchmark::DoNotOptimize(c.time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateFusedKernel);

/// The whole `roofline op` path: validate, build the graph, fuse, evaluate, sum.
void BM_AnalyzeOpMatmul(benchmark::State& state) {
  const CostModel model(H100());
  const OpRequest r{QProj(2048)};
  for (auto _ : state) {
    Result<OpAnalysis> a = AnalyzeOp(r, model);
    benchmark::DoNotOptimize(a->totals.time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyzeOpMatmul);

/// The flip search of `--explain` (both directions, ~80 analyses).
void BM_FlipSearchMatmul(benchmark::State& state) {
  const CostModel model(H100());
  const OpRequest r{QProj(2048)};
  for (auto _ : state) {
    Result<FlipAnalysis> f = AnalyzeFlip(r, model);
    benchmark::DoNotOptimize(f->up.value);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FlipSearchMatmul);

}  // namespace
}  // namespace roofline
