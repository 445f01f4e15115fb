// Expected kernel times: the roofline terms at achievable ceilings, the compute term divided by
// the kernel's efficiency, and the cost of launching it (docs/expected-time.md). The effects
// beyond the roofline terms are kernel terms (src/cost/kernel_term.h, src/cost/kernel_terms/);
// ExpectInto runs them in their phases.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "roofline/cost.h"
#include "roofline/units.h"
#include "src/cost/kernel_term.h"

namespace roofline {

static_assert(static_cast<int>(KernelTerm::Phase::kLaunch) + 1 == 4,
              "a kernel-term phase was added: size CostModel::kernel_terms_ for it");

std::string Percent(double f) { return fmt::format("{:.1f}%", f * 100); }

namespace {

// Whether a ceiling is expected at its own figure: `--ceilings spec`, or a ceiling measured by
// `roofline measure` or published as measured, which is already what kernels reach.
bool TakesSpec(const Quantity& spec, CeilingSet set) {
  return set == CeilingSet::kSpec || spec.provenance == Provenance::kMeasured ||
         spec.provenance == Provenance::kPublished;
}

// The figure a ceiling is expected at: the spec one (TakesSpec), else the device's achievable
// figure, else the spec ceiling times the assumed fraction.
UsedCeiling Use(const Quantity& spec, const Quantity* achievable, CeilingSet set,
                const Figure& assumed) {
  UsedCeiling u;
  if (TakesSpec(spec, set)) {
    u.value = spec.value;
    u.figure = spec;
  } else if (achievable != nullptr) {
    u.value = achievable->value;
    u.figure = *achievable;
  } else {
    u.value = spec.value * assumed.value;
    u.figure.value = u.value;
    u.figure.unit = spec.unit;
    u.figure.provenance = Provenance::kAssumed;
    u.figure.note = fmt::format("{} of the spec {} (none published for this device; {})",
                                Percent(assumed.value), Si(spec.value, spec.unit), assumed.source);
  }
  return u;
}

// FP16 and BF16 products run on the same tensor cores. Where a device lists tensor.fp16 and
// tensor.bf16 at the same spec peak and publishes (or measured) an achievable figure for only one
// of them, the other is expected at that figure, derived and said so, rather than at the assumed
// fraction of its spec: the same hardware does not get two figures from two sources.
std::optional<Quantity> SiblingFigure(const Device& d, const ComputeCeiling& c) {
  std::string_view sibling;
  if (c.engine == "tensor.fp16") sibling = "tensor.bf16";
  if (c.engine == "tensor.bf16") sibling = "tensor.fp16";
  if (sibling.empty() || d.achievable.ComputeFigure(c.engine) != nullptr) return std::nullopt;
  const Quantity* figure = d.achievable.ComputeFigure(sibling);
  if (figure == nullptr || figure->provenance == Provenance::kAssumed) return std::nullopt;
  for (const ComputeCeiling& other : d.compute) {
    if (other.engine != sibling || other.peak.value != c.peak.value) continue;
    Quantity q;
    q.value = figure->value;
    q.unit = figure->unit;
    q.provenance = Provenance::kDerived;
    q.formula = fmt::format(
        "{}'s {} figure {}: FP16 and BF16 products run on the same tensor cores at the same "
        "spec peak ({} each), so one achievable figure serves both ({})",
        sibling, NameOf(figure->provenance), Si(figure->value, figure->unit),
        Si(c.peak.value, c.peak.unit), figure->Describe());
    return q;
  }
  return std::nullopt;
}

// The ceiling of an engine term: tensor-core matmuls at a term's ceilings where one is listed
// (--accumulate fp16), else the used ceiling.
const UsedCeiling& CeilingOf(const KernelTermContext& k, const std::vector<UsedCeiling>& used,
                             const EngineTerm& t) {
  if (k.matmul_ceilings != nullptr && t.requested.tensor) {
    const UsedCeiling& u = (*k.matmul_ceilings)[t.ceiling];
    if (u.value > 0) return u;
  }
  return used[t.ceiling];
}

}  // namespace

bool MatmulShape(const Graph& graph, const Kernel& kernel, double& m, double& n, double& k,
                 double& batch) {
  for (int o : kernel.ops) {
    const OpSpec& spec = graph.ops()[o].spec;
    if (const auto* mm = std::get_if<MatmulSpec>(&spec)) {
      m = static_cast<double>(mm->m);
      n = static_cast<double>(mm->n);
      k = static_cast<double>(mm->k);
      batch = static_cast<double>(mm->batch);
      return true;
    }
    if (const auto* cv = std::get_if<Conv2dSpec>(&spec)) {
      m = static_cast<double>(cv->batch) * static_cast<double>(cv->out_height()) *
          static_cast<double>(cv->out_width());
      n = static_cast<double>(cv->out_channels / cv->groups);
      k = static_cast<double>(cv->in_channels / cv->groups) * static_cast<double>(cv->kernel_h) *
          static_cast<double>(cv->kernel_w);
      batch = static_cast<double>(cv->groups);
      return true;
    }
  }
  return false;
}

const AttentionSpec* FusedAttention(const Graph& graph, const Kernel& kernel) {
  for (int o : kernel.ops) {
    if (const auto* a = std::get_if<AttentionSpec>(&graph.ops()[o].spec)) return a;
  }
  return nullptr;
}

double BoostClock(const Device& d) {
  for (const auto& [key, q] : d.info) {
    if (key == "boost_clock") return q.value;
  }
  return 0;
}


void CostModel::SetUpExpected() {
  const EfficiencyData& e = *options_.efficiency;
  const CeilingSet set = options_.expected.ceilings;
  const Device& d = *device_;
  for (const ComputeCeiling& c : d.compute) {
    const std::optional<Quantity> sibling = SiblingFigure(d, c);
    used_compute_.push_back(Use(c.peak,
                                sibling ? &*sibling : d.achievable.ComputeFigure(c.engine), set,
                                e.assumed_compute));
    // --accumulate fp16: the device's FP16-accumulate figure, where it lists one and achievable
    // figures are in use (a spec, measured or published ceiling is used as it is, by Use).
    const Quantity* acc16 = d.achievable.Fp16AccumulateFigure(c.engine);
    const bool takes_acc16 =
        options_.expected.fp16_accumulate && acc16 != nullptr && !TakesSpec(c.peak, set);
    used_compute_fp16_accumulate_.push_back(takes_acc16 ? Use(c.peak, acc16, set, e.assumed_compute)
                                                        : UsedCeiling{});
  }
  for (const MemoryLevel& m : d.memory) {
    if (!m.bandwidth) {
      used_memory_.push_back({});
      continue;
    }
    used_memory_.push_back(
        Use(*m.bandwidth, d.achievable.MemoryFigure(m.name), set, e.assumed_memory));
  }
  for (const Link& l : d.links) {
    used_links_.push_back(Use(l.bandwidth, d.achievable.LinkFigure(l.name), set, e.assumed_link));
  }
  for (const Link& l : d.links) {
    const EfficiencyData::LinkLatency* found = nullptr;
    for (const auto& entry : e.collective_latency) {
      if (entry.device == d.id && entry.link == l.name) found = &entry;
    }
    const EfficiencyData::LinkLatency* used = found != nullptr ? found
                                              : !e.collective_latency.empty()
                                                  ? &e.collective_latency.front()
                                                  : nullptr;
    UsedCeiling call, step;
    call.figure.unit = step.figure.unit = "s";
    if (used != nullptr) {
      call.value = used->call_s.value;
      step.value = used->step_s.value;
      if (found != nullptr) {
        // The call figure is worked out from a published time (less the steps and the gap).
        call.figure.provenance = Provenance::kDerived;
        call.figure.formula = used->call_s.source;
        step.figure.provenance = Provenance::kPublished;
        step.figure.source = used->step_s.source;
        step.figure.method = "NCCL's latency per ring step on this link";
        step.figure.date = "see source";
      } else {
        call.figure.provenance = step.figure.provenance = Provenance::kAssumed;
        call.figure.note =
            "as measured on " + used->device + " " + used->link + ": " + used->call_s.source;
        step.figure.note = "as on " + used->device + " " + used->link + ": " + used->step_s.source;
      }
    }
    step.value = std::max(step.value, l.latency_s());  // never below the device file's own
    call.figure.value = call.value;
    step.figure.value = step.value;
    used_link_call_.push_back(std::move(call));
    used_link_latency_.push_back(std::move(step));
  }
  for (const auto& [key, q] : d.info) {
    if (key == "sm_count" || key == "cu_count") sm_count_ = static_cast<int64_t>(q.value);
  }
  SetUpWeightKernel();
  // --modules: callers check the name first (FindModuleLaunches); an unknown one launches once.
  modules_ = nullptr;
  if (!options_.expected.modules.empty()) {
    Result<const EfficiencyData::ModuleLaunches*> m =
        FindModuleLaunches(e, options_.expected.modules, "--modules");
    if (m.ok()) modules_ = *m;
  }
  SetUpMatmulTiles();
  // The kernel terms by phase, in the order they run (the efficiency's claimants: flash attention
  // before the tiles of its unfused products).
  for (auto& phase : kernel_terms_) phase.clear();
  for (std::shared_ptr<const KernelTerm> t :
       {MakeFlashAttentionTerm(*this), MakeMatmulTilesTerm(*this), MakeModuleLaunchesTerm(*this),
        MakeWeightKernelTerm(*this, false), MakeWeightKernelTerm(*this, true),
        MakeFp16AccumulateTerm(*this), MakeAttentionWavesTerm(*this),
        MakeLaunchTerm(*this)}) {
    if (t != nullptr) kernel_terms_[static_cast<size_t>(t->phase())].push_back(std::move(t));
  }
}

ExpectedCost CostModel::Expect(const Graph& graph, const Kernel& kernel, KernelClass cls,
                               const KernelCost& c, Trace* trace) const {
  ExpectedCost e;
  ExpectInto(graph, kernel, cls, c, trace, e);
  return e;
}

void CostModel::ExpectInto(const Graph& graph, const Kernel& kernel, KernelClass cls,
                           const KernelCost& c, Trace* trace, ExpectedCost& e) const {
  // Every field is set below (a sweep refills the same storage).
  e.compute_s = 0;
  e.memory_s.fill(0);
  e.comm_s = 0;
  e.efficiency = 1;
  e.grouped_kv_copy_s = e.grouped_kv_read_bytes = 0;
  e.fp16_accumulate = false;
  e.weight_kernel_regime = -1;
  e.moe_kernel_regime = -1;
  e.k_steps_s = 0;
  e.roofline_s = e.wave_s = e.fixed_s = e.overhead_s = e.host_s = e.time_s = 0;
  e.launches = 1;
  if (!options_.efficiency) {
    e.term = e.bound = Bound{};
    return;
  }
  using Phase = KernelTerm::Phase;
  auto terms = [this](Phase p) -> const KernelTerms& {
    return kernel_terms_[static_cast<size_t>(p)];
  };
  // The explanation's lines only when one is asked for (a sweep's kernels build none).
  std::unique_ptr<TermLines> lines;
  KernelTermContext k(*this, graph, kernel, cls, c);
  k.forced = options_.expected.class_efficiency[static_cast<size_t>(cls)];
  if (trace != nullptr) {
    lines = std::make_unique<TermLines>();
    k.lines = lines.get();
  }

  // The efficiency of the compute term: an --efficiency override, else the first term that
  // models this kernel's.
  if (k.forced > 0) {
    e.efficiency = k.forced;
    if (trace) k.lines->why = fmt::format("--efficiency {}", Percent(k.forced));
  } else {
    bool set = false;
    for (const auto& t : terms(Phase::kEfficiency)) {
      if ((set = t->Apply(k, e))) break;
    }
    if (!set && trace) k.lines->why = "no shape penalty (not a matmul)";
  }
  for (const auto& t : terms(Phase::kTerms)) t->Apply(k, e);

  // Roofline terms at the ceilings used. The model's efficiency is of the matrix work (tiles,
  // flash attention); vector work (dequantizing weights, softmax exponentials) runs at its
  // ceiling. An --efficiency override applies to every term of its class's kernels.
  auto eff_of = [&](const EngineTerm& t) {
    return k.forced > 0 || t.requested.tensor ? e.efficiency : 1.0;
  };
  const double other_eff = k.forced > 0 ? k.forced : 1.0;  // memory and comm terms
  if (!k.compute_set) {
    for (int i = 0; i < c.num_engines; ++i) {
      const EngineTerm& t = c.engines[i];
      if (t.ceiling < 0) continue;
      const UsedCeiling& used = CeilingOf(k, used_compute_, t);
      const double ceiling = used.value;
      if (ceiling <= 0) continue;
      if (&used != &used_compute_[t.ceiling] && t.flops > 0) e.fp16_accumulate = true;
      // Dividing by an efficiency of 1 changes nothing: skipped (the same bits, fewer divides).
      const double at_ceiling = t.flops / ceiling, eff = eff_of(t);
      e.compute_s += eff == 1.0 ? at_ceiling : at_ceiling / eff;
    }
  }
  e.roofline_s = e.compute_s;
  e.term = c.num_engines > 0 ? Bound{BoundKind::kCompute, DominantEngine(c)}
                             : Bound{BoundKind::kMemory, 0};
  for (int l = 0; l < c.num_levels; ++l) {
    if (l != 0 || !k.memory0_set) {
      // Device memory (level 0) also moves the bytes a term adds (repeated K/V heads).
      const double bw = used_memory_[l].value;
      const double bytes = l == 0 ? c.bytes[l] + e.grouped_kv_read_bytes : c.bytes[l];
      e.memory_s[l] = !(bw > 0) ? 0 : other_eff == 1.0 ? bytes / bw : bytes / bw / other_eff;
    }
    if (e.memory_s[l] > e.roofline_s) {
      e.roofline_s = e.memory_s[l];
      e.term = {BoundKind::kMemory, l};
    }
  }
  if (c.link >= 0 && used_links_[c.link].value > 0) {
    e.comm_s =
        (c.comm_bytes / used_links_[c.link].value + c.comm_calls * used_link_call_[c.link].value +
         c.comm_steps * used_link_latency_[c.link].value) /
        other_eff;
    if (e.comm_s > e.roofline_s) {
      e.roofline_s = e.comm_s;
      e.term = {BoundKind::kComm, c.link};
    }
  }
  // Fixed times on top of the largest term: attention's waves (set by this phase's terms), a
  // weight kernel's own and the copies of repeated K/V heads (set before the roofline terms).
  for (const auto& t : terms(Phase::kAdded)) t->Apply(k, e);
  e.roofline_s += e.wave_s;
  e.roofline_s += e.fixed_s + e.grouped_kv_copy_s;

  // Launching it.
  for (const auto& t : terms(Phase::kLaunch)) t->Apply(k, e);
  e.time_s = e.roofline_s + e.overhead_s;
  // Host time is hidden while the GPU is busy with earlier kernels: whether it is is a question
  // for the whole step (Totals::expected_s), not for one kernel. The fixed costs (the launch
  // gap, attention's waves) against the largest throughput term decide the verdict.
  const double fixed = e.wave_s + e.fixed_s;
  const bool launch_bound = e.overhead_s + fixed > e.roofline_s - fixed;
  e.bound = launch_bound ? Bound{BoundKind::kOverhead, 0} : e.term;
  if (trace) Explain(k, *lines, e, launch_bound, *trace);
}

void CostModel::Explain(const KernelTermContext& k, const TermLines& lines, const ExpectedCost& e,
                        bool launch_bound, Trace& trace) const {
  const KernelCost& c = k.cost;
  const ExpectedOptions& o = options_.expected;
  trace.Add(fmt::format("Expected time ({} ceilings, runtime {}):", NameOf(o.ceilings),
                        NameOf(o.runtime)));
  for (const std::string& line : lines.compute) trace.Add(line);
  for (int i = 0; i < c.num_engines && !k.compute_set; ++i) {
    const EngineTerm& t = c.engines[i];
    if (t.ceiling < 0) continue;
    const UsedCeiling* u = &CeilingOf(k, used_compute_, t);
    const double eff = k.forced > 0 || t.requested.tensor ? e.efficiency : 1.0;
    trace.Add(fmt::format("  compute {}{}: {} FLOP / ({} x efficiency {}) = {}  [{}]",
                          device_->compute[t.ceiling].engine,
                          u == &used_compute_[t.ceiling] ? "" : " (FP16 accumulate)",
                          Sci(t.flops), Si(u->value, u->figure.unit), Percent(eff),
                          Seconds(t.flops / u->value / eff), u->figure.Describe()));
  }
  if (c.num_engines > 0) trace.Add("    efficiency: " + lines.why);
  for (int l = 0; l < c.num_levels; ++l) {
    const UsedCeiling& u = used_memory_[l];
    if (u.value <= 0) continue;
    if (l == 0 && k.memory0_set) {
      trace.Add(lines.memory0);
      continue;
    }
    trace.Add(fmt::format("  memory {}: {} / {} = {}  [{}]", device_->memory[l].name,
                          l == 0 && e.grouped_kv_read_bytes != 0
                              ? fmt::format("({} B {} {} B for the repeated K/V heads)",
                                            Sci(c.bytes[l]), e.grouped_kv_read_bytes > 0 ? "+" : "-",
                                            Sci(std::abs(e.grouped_kv_read_bytes)))
                              : Sci(c.bytes[l]) + " B",
                          Si(u.value, "B/s"), Seconds(e.memory_s[l]), u.figure.Describe()));
  }
  // The K steps of a weight kernel floor the memory term: their line precedes the link's.
  for (const std::string& line : lines.details[static_cast<size_t>(TermSection::kKSteps)]) {
    trace.Add(line);
  }
  if (c.link >= 0 && used_links_[c.link].value > 0) {
    const UsedCeiling& u = used_links_[c.link];
    const UsedCeiling& call = used_link_call_[c.link];
    const UsedCeiling& lat = used_link_latency_[c.link];
    trace.Add(fmt::format(
        "  comm {}: {} B / {} + {} call{} x {} + {} steps x {} = {}  [{}; per call {}; per "
        "step {}]",
        device_->links[c.link].name, Sci(c.comm_bytes), Si(u.value, "B/s"), c.comm_calls,
        c.comm_calls == 1 ? "" : "s", Seconds(call.value), c.comm_steps, Seconds(lat.value),
        Seconds(e.comm_s), u.figure.Describe(), call.figure.Describe(), lat.figure.Describe()));
  }
  for (size_t s = static_cast<size_t>(TermSection::kKSteps) + 1; s < lines.details.size(); ++s) {
    for (const std::string& line : lines.details[s]) trace.Add(line);
  }
  const double fixed = e.wave_s + e.fixed_s;
  trace.Add(fmt::format(
      "Expected = largest term {}{}{}{} + overhead {} = {} ({} the bound {}){}",
      Seconds(e.roofline_s - fixed - e.grouped_kv_copy_s),
      e.wave_s > 0 ? " + attention waves " + Seconds(e.wave_s) : "",
      e.fixed_s > 0 ? " + kernel fixed time " + Seconds(e.fixed_s) : "",
      e.grouped_kv_copy_s > 0 ? " + K/V copies " + Seconds(e.grouped_kv_copy_s) : "",
      Seconds(e.overhead_s), Seconds(e.time_s),
      c.time_s > 0 ? fmt::format("{:.2f}x", e.time_s / c.time_s) : "-", Seconds(c.time_s),
      !launch_bound   ? ""
      : e.wave_s > 0  ? " -> overhead (the launch gap and attention's waves "
                        "exceed the largest term)"
      : e.fixed_s > 0 ? " -> overhead (the launch gap and the kernel's fixed "
                        "time exceed the largest term)"
                      : " -> overhead (launch-bound)"));
}

}  // namespace roofline
