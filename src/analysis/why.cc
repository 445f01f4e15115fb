// The why of a step: intensity against the ridge, the largest kernel per class, and where their
// verdicts flip along a workload variable.
#include "roofline/why.h"

#include <algorithm>
#include <map>

#include "roofline/verdict.h"

namespace roofline {
namespace {

/// A share below this is left out of the why (matmuls and attention are always kept).
constexpr double kMinShare = 0.01;

/// The ceiling that most of the step's FLOPs run on (repeats included), -1 when none has one.
int MainCeiling(const GraphCosts& costs) {
  std::map<int, double> flops;
  for (const KernelCost& c : costs.costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      if (c.engines[e].ceiling < 0) continue;
      flops[c.engines[e].ceiling] += c.engines[e].flops * static_cast<double>(c.repeat);
    }
  }
  int best = -1;
  for (const auto& [ceiling, f] : flops) {
    if (best < 0 || f > flops[best]) best = ceiling;
  }
  return best;
}

}  // namespace

StepWhy ExplainStep(const GraphCosts& costs, const CostModel& model, std::string label) {
  const Device& d = model.device();
  StepWhy s;
  s.label = std::move(label);
  const Totals& t = costs.totals;
  const int levels = std::min<int>(static_cast<int>(d.memory.size()), kMaxLevels);
  // The level that binds; else device memory; else (a store that holds only weights, crossed
  // by nothing else) the level with the largest memory time.
  if (t.verdict.kind == BoundKind::kMemory) {
    s.level = t.verdict.index;
  } else if (!(t.bytes[0] > 0)) {
    for (int l = 1; l < levels; ++l) {
      if (t.memory_time_s[l] > t.memory_time_s[s.level]) s.level = l;
    }
  }
  if (levels > 0) s.level_name = d.memory[s.level].name;
  s.intensity = t.bytes[s.level] > 0 ? t.flops / t.bytes[s.level] : 0;
  s.verdict = NameOf(t.verdict, d);
  const double bw = levels > 0 ? d.memory[s.level].bandwidth_bytes_per_s() : 0;
  const int ceiling = MainCeiling(costs);
  if (ceiling >= 0) {
    s.engine = d.compute[ceiling].engine;
    s.ridge = bw > 0 ? d.compute[ceiling].peak.value / bw : 0;
  }

  // The step's time at the bound without launch overhead: the classes add up to it.
  double busy = 0;
  for (double c : costs.class_time_s) busy += c;
  for (int k = 0; k < kNumClasses; ++k) {
    if (!costs.class_present[k]) continue;
    const auto cls = static_cast<KernelClass>(k);
    ClassWhy c;
    c.cls = cls;
    c.share = busy > 0 ? costs.class_time_s[k] / busy : 0;
    const bool always = cls == KernelClass::kMatmul || cls == KernelClass::kAttention;
    if (!always && c.share < kMinShare) continue;
    double largest = -1;
    for (size_t i = 0; i < costs.kernels.size(); ++i) {
      if (costs.classes[i] != cls) continue;
      const KernelCost& kc = costs.costs[i];
      const double time = (kc.time_s - kc.overhead_s) * static_cast<double>(kc.repeat);
      if (time > largest) {  // ties: the first in execution order
        largest = time;
        c.kernel = static_cast<int>(i);
      }
    }
    if (c.kernel < 0) continue;
    const KernelCost& kc = costs.costs[c.kernel];
    c.name = kc.name;
    for (int i = 0; i < c.kernel; ++i) c.occurrence += costs.costs[i].name == kc.name ? 1 : 0;
    // As for the step: the binding level, else device memory, else the busiest level.
    c.level = kc.bound.kind == BoundKind::kMemory ? kc.bound.index
              : kc.bytes[0] > 0                   ? 0
                                                  : model.DominantLevel(kc);
    c.level_name = d.memory[c.level].name;
    c.intensity = kc.Intensity(c.level);
    c.ridge = model.Ridge(kc, c.level);
    c.verdict = model.BoundName(kc);
    s.classes.push_back(std::move(c));
  }
  std::stable_sort(s.classes.begin(), s.classes.end(),
                   [](const ClassWhy& a, const ClassWhy& b) { return a.share > b.share; });
  return s;
}

void SearchFlips(StepWhy& step, const std::string& axis, int64_t from, int64_t top,
                 const VerdictsAt& verdicts_at) {
  step.axis = axis;
  step.from = from;
  step.top = top;
  std::map<int64_t, StepVerdicts> seen;
  auto at = [&](int64_t v) -> const StepVerdicts& {
    auto it = seen.find(v);
    if (it == seen.end()) it = seen.emplace(v, verdicts_at(v)).first;
    return it->second;
  };
  // The verdict of the `occurrence`th kernel named `name` (empty name: the step).
  auto verdict = [&](int64_t v, const std::string& name, int occurrence) -> std::string {
    const StepVerdicts& s = at(v);
    if (s.verdicts.empty()) return "error";
    if (name.empty()) return s.verdicts[0];
    int seen_before = 0;
    for (size_t i = 0; i < s.names.size(); ++i) {
      if (s.names[i] != name) continue;
      if (seen_before++ == occurrence) return s.verdicts[i + 1];
    }
    return "none";
  };
  for (ClassWhy& c : step.classes) {
    c.flip = FindFlipUp([&](int64_t v) { return verdict(v, c.name, c.occurrence); }, from, top);
  }
  step.step = FindFlipUp([&](int64_t v) { return verdict(v, "", 0); }, from, top);
}

namespace {

StepVerdicts VerdictsOf(const GraphCosts& costs, const CostModel& model) {
  StepVerdicts s;
  s.verdicts.push_back(NameOf(costs.totals.verdict, model.device()));
  for (const KernelCost& k : costs.costs) {
    s.names.push_back(k.name);
    s.verdicts.push_back(model.BoundName(k));
  }
  return s;
}

}  // namespace

Why ExplainModel(const ModelAnalysis& a, const CostModel& model) {
  Why why;
  why.device = model.device().id;
  why.weight_bytes = BytesOf(a.weight);
  const TransformerConfig& c = a.config;
  for (const PhaseResult& p : a.phases) {
    const bool decode = p.phase == Phase::kDecode;
    StepWhy s = ExplainStep(p, model, decode ? "decode" : "prefill");
    s.tokens = a.workload.batch * (decode ? 1 : a.workload.prompt);
    const Phase phase = p.phase;
    auto verdicts_at = [&](int64_t v) -> StepVerdicts {
      Workload w = a.workload;
      // Stages AnalyzeModel chose are chosen again for this value (a given --pp stays).
      if (a.stages_chosen) w.pp = 0;
      if (decode) {
        w.batch = v;
      } else {
        w.prompt = v;
      }
      // The stages as AnalyzeModel resolves them: the fewest chips that hold this workload.
      Result<Workload> staged = ResolveStages(c, w, model.device());
      if (!staged.ok()) return {};
      // AnalyzeModel's refusal of tensor or pipeline parallelism without an interconnect, kept.
      if ((staged->tp > 1 || staged->Stages() > 1) && model.device().links.empty()) return {};
      Result<PhaseResult> r = AnalyzePhase(c, *staged, model, phase);
      if (!r.ok()) return {};
      return VerdictsOf(*r, model);
    };
    if (decode) {
      SearchFlips(s, "batch", 1, std::max(kWhyTopBatch, a.workload.batch), verdicts_at);
    } else {
      SearchFlips(s, "prompt", 1, std::max(kWhyTopPrompt, a.workload.prompt), verdicts_at);
    }
    why.steps.push_back(std::move(s));
    if (decode) {
      why.context = a.workload.DecodeContext();
      why.max_batch = a.max_batch;
    }
  }
  return why;
}

Why ExplainNetwork(const NetworkAnalysis& a, const CostModel& model,
                   const NetworkAtValue& graph_at, const DimBindings& bindings) {
  Why why;
  why.device = model.device().id;
  StepWhy s = ExplainStep(a, model, "");
  if (a.dims.count("batch") > 0) {
    SearchFlips(s, "batch", 1, kWhyTopNetworkBatch, [&](int64_t v) -> StepVerdicts {
      Result<NetworkGraph> g = graph_at(v);
      if (!g.ok()) return {};
      DimBindings b = bindings;
      b["batch"] = v;
      Result<NetworkAnalysis> r = AnalyzeNetwork(*g, b, model);
      if (!r.ok()) return {};
      return VerdictsOf(*r, model);
    });
  }
  why.steps.push_back(std::move(s));
  return why;
}

}  // namespace roofline
