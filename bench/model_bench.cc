// Speed of a whole LLM analysis: llama-3-70b, both phases, in process.
//   build/bench/roofline_model_bench
#include <benchmark/benchmark.h>

#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/sweep.h"
#include "src/analysis/graph_cache.h"

namespace roofline {
namespace {

struct Fixture {
  Device device;
  TransformerConfig config;
};

const Fixture& Get() {
  static const Fixture f = [] {
    Fixture x;
    x.device = *DeviceDatabase::LoadEmbedded()->Find("h100-sxm").value();
    x.config = *ResolveModel("llama-3-70b", ModelRegistry::LoadEmbedded());
    return x;
  }();
  return f;
}

/// Build both phase graphs, fuse, evaluate every kernel, sum (no memory footprint search).
void BM_Llama70bPhases(benchmark::State& state) {
  const Fixture& f = Get();
  const CostModel model(f.device);
  Workload w;
  w.batch = 16;
  w.prompt = 2048;
  w.tp = 4;
  int64_t kernels = 0;
  for (auto _ : state) {
    for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
      Result<LlmGraph> g = BuildLlmGraph(f.config, w, p);
      const std::vector<Kernel> ks = Fuse(g->graph, w.fusion);
      double t = 0;
      for (const Kernel& k : ks) t += model.Evaluate(g->graph, k).time_s;
      benchmark::DoNotOptimize(t);
      kernels += static_cast<int64_t>(ks.size());
    }
  }
  state.SetItemsProcessed(kernels);
  state.counters["kernels/analysis"] =
      static_cast<double>(kernels) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Llama70bPhases);

/// The full `roofline model` analysis: both phases, parameters, footprint, largest batch.
void BM_Llama70bFullAnalysis(benchmark::State& state) {
  const Fixture& f = Get();
  const CostModel model(f.device);
  Workload w;
  w.batch = 16;
  w.prompt = 2048;
  w.tp = 4;
  for (auto _ : state) {
    Result<ModelAnalysis> a = AnalyzeModel(f.config, w, model, PhaseSelection::kBoth);
    benchmark::DoNotOptimize(a->max_batch);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Llama70bFullAnalysis);

/// Evaluating the kernels of an already built decode graph (what a sweep repeats).
void BM_Llama70bDecodeKernelEvaluations(benchmark::State& state) {
  const Fixture& f = Get();
  const CostModel model(f.device);
  Workload w;
  w.batch = 16;
  w.prompt = 2048;
  Result<LlmGraph> g = BuildLlmGraph(f.config, w, Phase::kDecode);
  const std::vector<Kernel> ks = Fuse(g->graph, w.fusion);
  for (auto _ : state) {
    double t = 0;
    for (const Kernel& k : ks) t += model.Evaluate(g->graph, k).time_s;
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ks.size()));
}
BENCHMARK(BM_Llama70bDecodeKernelEvaluations);

}  // namespace
}  // namespace roofline

namespace roofline {
namespace {

/// Graph construction alone (both phases).
void BM_Llama70bBuildGraphs(benchmark::State& state) {
  const Fixture& f = Get();
  Workload w;
  w.batch = 16;
  w.prompt = 2048;
  for (auto _ : state) {
    for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
      Result<LlmGraph> g = BuildLlmGraph(f.config, w, p);
      benchmark::DoNotOptimize(g->graph.ops().size());
    }
  }
}
BENCHMARK(BM_Llama70bBuildGraphs);

/// A batch sweep of llama-3-70b (both phases), points per second: grid evaluation plus the
/// bisections for its crossovers.
void BM_Llama70bSweepBatch(benchmark::State& state) {
  const Fixture& f = Get();
  const CostModel model(f.device);
  Workload w;
  w.prompt = 2048;
  w.tp = 4;
  Result<SweepAxis> axis = ParseSweepAxis("batch=1:" + std::to_string(state.range(0)) + ":+1");
  int64_t points = 0;
  for (auto _ : state) {
    Result<SweepResult> r = RunSweep(f.config, w, model, PhaseSelection::kBoth, {*axis});
    points += static_cast<int64_t>(r->points.size());
    benchmark::DoNotOptimize(r->crossovers.size());
  }
  state.SetItemsProcessed(points);
  state.counters["points/s"] =
      benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Llama70bSweepBatch)->Arg(1000)->Unit(benchmark::kMillisecond);

const TransformerConfig& Llama2_7b() {
  static const TransformerConfig config =
      *ResolveModel("llama-2-7b", ModelRegistry::LoadEmbedded());
  return config;
}

/// The sweep target of the one-core issue: llama-2-7b on an H100, batch 1..100,000 step 1, both
/// phases, with every crossover bisected. Reported as wall time per grid point; run it under
/// `taskset -c 0` for the one-core figure (the sweep spreads grid points over every core it sees).
void BM_Llama2_7bSweepBatch100k(benchmark::State& state) {
  const TransformerConfig& config = Llama2_7b();
  const CostModel model(Get().device);
  Workload w;
  w.prompt = 512;
  Result<SweepAxis> axis = ParseSweepAxis("batch=1:" + std::to_string(state.range(0)) + ":+1");
  int64_t points = 0;
  size_t crossovers = 0;
  for (auto _ : state) {
    Result<SweepResult> r = RunSweep(config, w, model, PhaseSelection::kBoth, {*axis});
    points += static_cast<int64_t>(r->points.size());
    crossovers = r->crossovers.size();
  }
  state.SetItemsProcessed(points);
  state.counters["us_per_point"] =
      benchmark::Counter(static_cast<double>(points) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["crossovers"] = static_cast<double>(crossovers);
}
BENCHMARK(BM_Llama2_7bSweepBatch100k)
    ->Arg(100000)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

/// The same sweep with expected times beside the bounds (data/efficiency.json), as the CLI's
/// `roofline sweep` computes it by default.
void BM_Llama2_7bSweepBatch100kExpected(benchmark::State& state) {
  CostOptions options;
  options.efficiency = std::make_shared<const EfficiencyData>(*LoadDefaultEfficiencyData());
  const CostModel model(Get().device, options);
  Workload w;
  w.prompt = 512;
  Result<SweepAxis> axis = ParseSweepAxis("batch=1:" + std::to_string(state.range(0)) + ":+1");
  int64_t points = 0;
  for (auto _ : state) {
    Result<SweepResult> r = RunSweep(Llama2_7b(), w, model, PhaseSelection::kBoth, {*axis});
    points += static_cast<int64_t>(r->points.size());
  }
  state.SetItemsProcessed(points);
  state.counters["us_per_point"] =
      benchmark::Counter(static_cast<double>(points) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Llama2_7bSweepBatch100kExpected)
    ->Arg(100000)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

// The parts of one point of that sweep: re-sizing both phase graphs (ReplayLlmGraph), costing
// their kernels once sized, and the whole point. The batch walks 1..100,000 as the sweep does.

/// The sweep's workload at batch b.
Workload SweepWorkload(int64_t b) {
  Workload w;
  w.prompt = 512;
  w.batch = b;
  return w;
}

void BM_Llama2_7bReplayBothPhases(benchmark::State& state) {
  GraphCache cache;
  int64_t batch = 0;
  for (auto _ : state) {
    const Workload w = SweepWorkload(batch++ % 100000 + 1);
    for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
      benchmark::DoNotOptimize(cache.Get(Llama2_7b(), w, p, 0));
    }
  }
  state.counters["builds"] = static_cast<double>(cache.builds());
}
BENCHMARK(BM_Llama2_7bReplayBothPhases);

void BM_Llama2_7bCostBothPhases(benchmark::State& state) {
  const CostModel model(Get().device);
  const Workload w = SweepWorkload(77);
  GraphCache cache;
  std::vector<GraphCache::Entry*> entries;
  for (Phase p : {Phase::kPrefill, Phase::kDecode})
    entries.push_back(*cache.Get(Llama2_7b(), w, p, 0));
  for (auto _ : state) {
    double t = 0;
    for (GraphCache::Entry* e : entries) {
      CostKernels(e->graph.graph, model, e->analysis);
      t += e->analysis.totals.time_s;
    }
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_Llama2_7bCostBothPhases);

void BM_Llama2_7bEvaluatePoint(benchmark::State& state) {
  const CostModel model(Get().device);
  GraphCache cache;
  int64_t batch = 0;
  for (auto _ : state) {
    const Workload w = SweepWorkload(batch++ % 100000 + 1);
    MemoryFootprint m;
    benchmark::DoNotOptimize(
        EvaluatePhases(Llama2_7b(), w, model, PhaseSelection::kBoth, &m, &cache));
  }
}
BENCHMARK(BM_Llama2_7bEvaluatePoint);

}  // namespace
}  // namespace roofline
