#include "roofline/model_analysis.h"

#include <fmt/format.h>

#include <optional>

#include "roofline/flip.h"
#include "roofline/kernel_class.h"
#include "roofline/units.h"

namespace roofline {
namespace {

PhaseResult RunPhase(const TransformerConfig& c, const Workload& w, const CostModel& model,
                     LlmGraph graph, DType compute) {
  PhaseResult r;
  r.phase = graph.phase;
  // A prefill under the engine's own prefill runtime (eager where decode replays a graph).
  std::optional<CostModel> prefill_model;
  if (graph.phase == Phase::kPrefill) {
    if (std::optional<CostOptions> o = PrefillOptions(model.options())) {
      prefill_model.emplace(model.device(), *std::move(o));
    }
  }
  static_cast<GraphCosts&>(r) =
      AnalyzeGraph(graph.graph, prefill_model ? *prefill_model : model, w.fusion,
                   /*with_trace=*/false, w.batch, c.layers, graph.phase);
  const Device& d = model.device();
  const int ceiling = model.ResolveEngine({true, compute});
  if (ceiling >= 0 && r.totals.time_s > 0) {
    r.mfu_engine = d.compute[ceiling].engine;
    r.mfu = r.totals.flops / (r.totals.time_s * d.compute[ceiling].peak.value);
  }
  if (r.totals.time_s > 0) {
    r.mbu = r.totals.bytes[0] / (r.totals.time_s * d.device_memory().bandwidth_bytes_per_s());
  }
  if (r.phase == Phase::kPrefill) {
    r.ttft_s = r.totals.time_s;
  } else {
    r.time_per_token_s = r.totals.time_s;
    r.tokens_per_s = r.totals.time_s > 0 ? static_cast<double>(w.batch) / r.totals.time_s : 0;
  }
  if (r.totals.has_expected) {
    const double t = r.totals.expected_s;
    if (r.phase == Phase::kPrefill) {
      r.expected_ttft_s = t;
    } else {
      r.expected_time_per_token_s = t;
      r.expected_tokens_per_s = t > 0 ? static_cast<double>(w.batch) / t : 0;
    }
  }
  (void)c;
  if (d.calibration) {
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      const double e = EfficiencyOf(*d.calibration, r.classes[i]);
      r.calibrated_s += r.costs[i].time_s * static_cast<double>(r.costs[i].repeat) / e;
    }
  }
  r.graph = std::move(graph);
  return r;
}

}  // namespace

Result<PhaseResult> AnalyzePhase(const TransformerConfig& c, const Workload& w,
                                 const CostModel& model, Phase phase) {
  Result<LlmGraph> g = BuildLlmGraph(c, w, phase);
  if (!g.ok()) return g.status();
  const DType act = w.dtype.value_or(c.torch_dtype);
  const DType weight = w.weight_dtype.value_or(act);
  return RunPhase(c, w, model, std::move(g).value(), BitsOf(weight) > BitsOf(act) ? weight : act);
}

Result<ModelAnalysis> AnalyzeModel(const TransformerConfig& c, const Workload& w,
                                   const CostModel& model, PhaseSelection which) {
  ModelAnalysis a;
  a.config = c;
  a.workload = w;
  a.act = w.dtype.value_or(c.torch_dtype);
  a.weight = w.weight_dtype.value_or(a.act);
  a.kv = w.kv_dtype.value_or(a.act);
  a.workload.dtype = a.act;
  a.workload.weight_dtype = a.weight;
  a.workload.kv_dtype = a.kv;
  a.workload.context = w.DecodeContext();
  const Device& d = model.device();
  a.stages_chosen = w.pp == 0 && d.model_split.has_value();
  Result<Workload> staged = ResolveStages(c, a.workload, d);
  if (!staged.ok()) return staged.status();
  a.workload = *staged;
  if (a.workload.Stages() > 1 && d.links.empty()) {
    return Status::Invalid("--pp", "device '" + d.id +
                                       "' lists no link between chips for pipeline stages "
                                       "(see `roofline hw show`)");
  }
  if (Status st = CheckTensorParallel(w, d); !st.ok()) return st;
  if (w.tp > 1 && d.PrimaryLink()->max_devices > 0 && w.tp > d.PrimaryLink()->max_devices) {
    a.notes.push_back(
        fmt::format("tp {} exceeds the {} devices one {} domain connects; the "
                    "link figure assumes they are all on it",
                    w.tp, d.PrimaryLink()->max_devices, d.PrimaryLink()->name));
  }
  const DType compute = BitsOf(a.weight) > BitsOf(a.act) ? a.weight : a.act;
  for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
    if (which == PhaseSelection::kPrefill && p != Phase::kPrefill) continue;
    if (which == PhaseSelection::kDecode && p != Phase::kDecode) continue;
    Result<LlmGraph> g = BuildLlmGraph(c, a.workload, p);
    if (!g.ok()) return g.status();
    for (const auto& n : g->notes) {
      if (std::find(a.notes.begin(), a.notes.end(), n) == a.notes.end()) a.notes.push_back(n);
    }
    a.phases.push_back(RunPhase(c, a.workload, model, std::move(g).value(), compute));
  }
  for (const PhaseResult& ph : a.phases) {
    for (const auto& [engine, flops] : UntimedFlops(ph.costs)) {
      const std::string n = fmt::format(
          "{}: {} requested at {}{} have no ceiling on {} (none listed to fall back on), so only "
          "their bytes are timed",
          NameOf(ph.phase), Si(flops, "FLOP"), engine,
          engine.rfind("vector.", 0) == 0 ? " (norms, activations, softmax...)" : "", d.id);
      a.notes.push_back(n);
    }
    for (const FallbackFlops& f : FallbackTensorFlops(ph.costs, d)) {
      a.notes.push_back(fmt::format(
          "{}: {} requested at {} run at {}: {} lists no {} ceiling, and {} is the next in the "
          "fallback order (docs/cost-model.md, section 4)",
          NameOf(ph.phase), Si(f.flops, "FLOP"), f.requested, f.used, d.id, f.requested,
          f.used));
    }
  }
  a.params = CountParameters(c);
  const int64_t context = std::max(a.workload.prompt, a.workload.context);
  Result<MemoryFootprint> m = Footprint(c, a.workload, d, a.workload.batch, context);
  if (!m.ok()) return m.status();
  a.memory = *m;
  a.memory.prefill_workspace_bytes = PrefillWorkspace(c, a.workload);
  a.max_batch = LargestBatch(c, a.workload, d, context);
  if (a.stages_chosen) {
    Workload any = a.workload;
    any.pp = 0;
    a.max_batch_more_chips = LargestBatch(c, any, d, context);
    any.batch = std::max<int64_t>(1, a.max_batch_more_chips);
    any.context = context;
    Result<Workload> at = ResolveStages(c, any, d);
    a.chips_more_chips = at.ok() ? at->Chips() : 0;
  }
  if (model.options().launch_overhead_s > 0) {
    a.notes.push_back(fmt::format("every kernel pays a launch overhead of {}",
                                  Seconds(model.options().launch_overhead_s)));
  }
  return a;
}

Status CheckTensorParallel(const Workload& w, const Device& d) {
  if (w.tp > 1 && d.links.empty()) {
    return Status::Invalid("--tp", "device '" + d.id +
                                       "' lists no interconnect for tensor parallelism (see "
                                       "`roofline hw show`)");
  }
  return Status::Ok();
}

}  // namespace roofline
