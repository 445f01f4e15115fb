// Expected kernel times: the roofline terms at achievable ceilings, the compute term divided by
// the kernel's efficiency, and the cost of launching it (docs/expected-time.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "roofline/cost.h"
#include "roofline/units.h"
#include "src/cost/op_rules.h"
#include "src/cost/round_whole.h"

namespace roofline {
namespace {

std::string Percent(double f) { return fmt::format("{:.1f}%", f * 100); }

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

// The first matmul or convolution of a kernel as an output of m x n in `batch` products.
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

bool HasFusedAttention(const Graph& graph, const Kernel& kernel) {
  return FusedAttention(graph, kernel) != nullptr;
}

// Whether a framework that repeats K/V heads (--modules) copies them to every query head
// for this attention: a decode step (one query per sequence: the static cache's mask makes
// transformers' SDPA path call repeat_kv; a prefill without padding runs SDPA's own grouped
// form) whose K/V heads serve groups of query heads (MLA's absorbed form shares one latent head).
// The framework `m` must repeat them (grouped_kv launches at a known rate).
bool RepeatsKv(const EfficiencyData::ModuleLaunches& m, const AttentionSpec& a) {
  return m.grouped_kv > 0 && m.grouped_kv_copy.value > 0 && a.q_len == 1 && !a.v_in_k &&
         a.kv_heads > 0 && a.kv_heads < a.heads;
}

// The bytes of a decode attention's K and V of its kv_heads at `dtype` (the keys the op reads:
// AttentionKeysRead).
double KvBytes(const AttentionSpec& a, DType dtype) {
  return static_cast<double>(a.batch) * static_cast<double>(a.kv_heads) * AttentionKeysRead(a) *
         static_cast<double>(a.head_dim + a.v_dim()) * BytesOf(dtype);
}

// The kernel's matmul that a --weight-kernel kernel runs (a dense product of activations of the
// kernel's dtype by weights of its weight dtype, scaled per group along K or per output column
// as the kernel's are), or null; `zero_bytes` receives the bytes of its zero points when the
// kernel reads one beside each scale (in the scales' dtype), less those the product counts
// already (a workload's --zero-dtype). Whether a regime covers its rows is the caller's question.
const MatmulSpec* WeightKernelMatmul(const Graph& graph, const Kernel& kernel,
                                     const EfficiencyData::WeightKernel& wk, double& zero_bytes) {
  zero_bytes = 0;
  for (int o : kernel.ops) {
    const Op& op = graph.ops()[o];
    if (const auto* mm = std::get_if<MatmulSpec>(&op.spec)) {
      // One weight matrix (not routed experts, not a weight per batch entry, as MLA's absorbed
      // per-head products have): a linear layer's product.
      if (!mm->b_is_weight || mm->b_dtype != wk.weight_dtype ||
          mm->a_dtype != wk.activation_dtype || (mm->group_size > 0) == wk.channel_scales ||
          mm->experts > 0 || mm->batch != mm->b_broadcast) {
        return nullptr;
      }
      const size_t scales = mm->bias ? 3 : 2;  // operands: A, B, (bias,) scales
      if (wk.zero_points && op.operands.size() > scales) {
        zero_bytes = graph.tensors()[op.operands[scales]].bytes();
        if (mm->zero_dtype.has_value() && op.operands.size() > scales + 1) {
          zero_bytes = std::max(0.0, zero_bytes - graph.tensors()[op.operands[scales + 1]].bytes());
        }
      }
      return mm;
    }
  }
  return nullptr;
}

double BoostClock(const Device& d) {
  for (const auto& [key, q] : d.info) {
    if (key == "boost_clock") return q.value;
  }
  return 0;
}

}  // namespace

Status CheckWeightKernel(const EfficiencyData& data, std::string_view name, const Device& device,
                         Runtime runtime, const std::string& where) {
  Result<const EfficiencyData::WeightKernel*> wk = FindWeightKernel(data, name, where);
  if (!wk.ok()) return wk.status();
  const auto& rts = (*wk)->runtimes;
  if (!rts.empty() && std::find(rts.begin(), rts.end(), runtime) == rts.end()) {
    std::string names;
    for (Runtime r : rts) names += (names.empty() ? "" : " or ") + std::string(NameOf(r));
    return Status::Invalid(where, fmt::format("the {} kernel runs only under --runtime {}, not {}",
                                              name, names, NameOf(runtime)));
  }
  bool sms = false;
  for (const auto& [key, q] : device.info) {
    if ((key == "sm_count" || key == "cu_count") && q.value > 0) sms = true;
  }
  if (!sms || !(BoostClock(device) > 0)) {
    return Status::Invalid(
        where,
        fmt::format(
            "device '{}' lists no {}, which the {} kernel, measured on GPUs, needs (its rates "
            "scale by SMs and clock)",
            device.id,
            !sms ? "SM count (info.sm_count or info.cu_count)" : "boost clock (info.boost_clock)",
            name));
  }
  return Status::Ok();
}

void CostModel::SetUpExpected() {
  const EfficiencyData& e = *options_.efficiency;
  const CeilingSet set = options_.expected.ceilings;
  const Device& d = *device_;
  for (const ComputeCeiling& c : d.compute) {
    used_compute_.push_back(
        Use(c.peak, d.achievable.ComputeFigure(c.engine), set, e.assumed_compute));
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
  if (!e.attention_waves.empty()) {
    const EfficiencyData::AttentionWaves* w = &e.attention_waves.front();
    for (const auto& entry : e.attention_waves) {
      if (entry.device == d.id) w = &entry;
    }
    attention_wave_s_ = w->wave_s.value;
    attention_q_block_ = static_cast<double>(w->q_block);
    attention_max_waves_ = static_cast<double>(w->max_waves);
    attention_max_waves_why_ = w->max_waves_source;
    attention_wave_why_ = w->device == d.id
                              ? w->wave_s.source
                              : w->wave_s.source + "; measured on " + w->device + ", assumed here";
  }
  // --weight-kernel: callers check the name and the device first (CheckWeightKernel); the
  // pointer is into the efficiency data this model shares (copies share it too).
  weight_kernel_ = {};
  if (!options_.expected.weight_kernel.empty()) {
    for (const auto& wk : e.weight_kernels) {
      if (wk.name != options_.expected.weight_kernel) continue;
      if (!(sm_count_ > 0 && BoostClock(d) > 0)) continue;
      const auto& rts = wk.runtimes;
      if (!rts.empty() && std::find(rts.begin(), rts.end(), options_.expected.runtime) == rts.end())
        continue;
      const double cycles = static_cast<double>(sm_count_) * BoostClock(d);
      weight_kernel_.kernel = &wk;
      weight_kernel_.sm_cycles_per_s = cycles;
      weight_kernel_.clock_hz = BoostClock(d);
      weight_kernel_.measured_here =
          std::find(wk.measured_on.begin(), wk.measured_on.end(), d.id) != wk.measured_on.end();
    }
  }
  // --modules: callers check the name first (FindModuleLaunches); an unknown one launches once.
  modules_ = nullptr;
  if (!options_.expected.modules.empty()) {
    Result<const EfficiencyData::ModuleLaunches*> m =
        FindModuleLaunches(e, options_.expected.modules, "--modules");
    if (m.ok()) modules_ = *m;
  }
  for (const MatmulTile& t : e.matmul_tiles) {
    auto power_of_two = [](double x) {
      int exp = 0;
      return x > 0 && std::frexp(x, &exp) == 0.5;
    };
    const auto tm = static_cast<double>(t.m), tn = static_cast<double>(t.n);
    tile_sides_.push_back({tm, tn, 1 / tm, 1 / tn, power_of_two(tm), power_of_two(tn)});
    smallest_tile_m_ = tile_sides_.size() == 1 ? tm : std::min(smallest_tile_m_, tm);
  }
}

double CostModel::MatmulEfficiency(double m, double n, double k, double batch,
                                   MatmulTile* picked) const {
  if (!options_.efficiency || tile_sides_.empty()) return 1;
  double best = 0;
  // Fewer rows than the smallest tile (decode's skinny products): GEMV and skinny-M kernels
  // cover them without padding the rows.
  const bool skinny = m < smallest_tile_m_;
  for (size_t i = 0; i < tile_sides_.size(); ++i) {
    const TileSides& t = tile_sides_[i];
    const double tm = skinny ? m : t.m, tn = t.n;
    // x / 2^j and x * 2^-j are the same double: the powers of two are multiplied. A skinny
    // product's one row of tiles is m / m = 1.
    const double rows =
        skinny && m > 0 ? 1.0 : CeilWhole(!skinny && t.exact_m ? m * t.inv_m : m / tm);
    const double cols = CeilWhole(t.exact_n ? n * t.inv_n : n / tn);
    // Tile quantization: the padded part of the last row and column of tiles is computed too.
    double eff = (m * n) / (rows * tm * cols * tn);
    // The wave factor below is at most 1, so a tile no better than the best before it cannot
    // win: its waves are not worked out (the same result, fewer divides).
    if (eff <= best) continue;
    if (sm_count_ > 0) {
      // Wave quantization: tiles run in waves of one per SM; the last wave may be partly idle.
      // Fewer tiles than SMs: k is split so that more of them work (split-K).
      double tiles = rows * cols * batch;
      const double sms = static_cast<double>(sm_count_);
      if (tiles < sms)
        tiles *= std::max(1.0, std::min(FloorWhole(sms / tiles), FloorWhole(k * (1.0 / 256))));
      eff *= tiles / (CeilWhole(tiles / sms) * sms);
    }
    if (eff > best) {
      best = eff;
      if (picked != nullptr) *picked = options_.efficiency->matmul_tiles[i];
    }
  }
  return std::clamp(best, 1e-9, 1.0);
}

ExpectedCost CostModel::Expect(const Graph& graph, const Kernel& kernel, KernelClass cls,
                               const KernelCost& c, Trace* trace) const {
  ExpectedCost e;
  ExpectInto(graph, kernel, cls, c, trace, e);
  return e;
}

int64_t CostModel::LaunchesOf(const Graph& graph, const Kernel& kernel) const {
  if (modules_ == nullptr) return 1;
  int64_t launches = 1;
  for (int o : kernel.ops) {
    const OpSpec& spec = graph.ops()[static_cast<size_t>(o)].spec;
    int64_t n = 1;
    if (const auto* norm = std::get_if<NormSpec>(&spec)) {
      n = norm->kind == NormKind::kRms ? modules_->rms_norm : 1;
    } else if (const auto* ew = std::get_if<ElementwiseSpec>(&spec)) {
      n = ew->function == "rope" ? modules_->rope : 1;
    } else if (const auto* a = std::get_if<AttentionSpec>(&spec)) {
      n = modules_->attention + (RepeatsKv(*modules_, *a) ? modules_->grouped_kv : 0);
    }
    // A kernel of several ops (fused) runs as one launch of its largest module at most.
    launches = std::max(launches, n);
  }
  return launches;
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
  e.k_steps_s = 0;
  if (!options_.efficiency) {
    e.roofline_s = e.wave_s = e.fixed_s = e.overhead_s = e.host_s = e.time_s = 0;
    e.launches = 1;
    e.term = e.bound = Bound{};
    return;
  }
  const EfficiencyData& data = *options_.efficiency;
  const ExpectedOptions& o = options_.expected;

  // The efficiency of the compute term.
  std::string why;
  const double forced = o.class_efficiency[static_cast<size_t>(cls)];
  double m = 0, n = 0, k = 0, batch = 0;
  if (forced > 0) {
    e.efficiency = forced;
    if (trace) why = fmt::format("--efficiency {}", Percent(forced));
  } else if (cls == KernelClass::kAttention && HasFusedAttention(graph, kernel) &&
             !data.flash_attention.empty()) {
    const EfficiencyData::DeviceFigure* f = &data.flash_attention.front();
    for (const auto& entry : data.flash_attention) {
      if (entry.device == device_->id) f = &entry;
    }
    e.efficiency = f->figure.value;
    if (trace)
      why = fmt::format(
          "fused attention at {} of the dense matmul ceiling ({}{})", Percent(e.efficiency),
          f->figure.source,
          f->device == device_->id ? "" : "; measured on " + f->device + ", assumed here");
  } else if ((cls == KernelClass::kMatmul || cls == KernelClass::kAttention) &&
             MatmulShape(graph, kernel, m, n, k, batch)) {
    MatmulTile tile;
    e.efficiency = MatmulEfficiency(m, n, k, batch, &tile);
    if (trace)
      why = sm_count_ > 0
                ? fmt::format("tile {}x{} and wave quantization of a {}x{} output x{} over {} SMs",
                              tile.m, tile.n, m, n, batch, sm_count_)
                : fmt::format("tile {}x{} quantization of a {}x{} output (no SM count listed)",
                              tile.m, tile.n, m, n);
  } else if (trace) {
    why = "no shape penalty (not a matmul)";
  }
  // A weight-only matmul run as the --weight-kernel kernel, at a row count one of its regimes
  // covers: the regime's measured rates replace the matrix term and cap the streaming rate;
  // its dequantization is inside them. Other row counts keep the model.
  const UsedWeightKernel& wk = weight_kernel_;
  double zero_bytes = 0;
  const MatmulSpec* wmm = wk.kernel != nullptr && forced == 0 && cls == KernelClass::kMatmul
                              ? WeightKernelMatmul(graph, kernel, *wk.kernel, zero_bytes)
                              : nullptr;
  const int64_t wrows = wmm != nullptr ? wmm->batch * wmm->m : 0;
  e.weight_kernel_regime = wmm != nullptr ? wk.kernel->RegimeOf(wrows) : -1;
  const MatmulSpec* wq = e.weight_kernel_regime >= 0 ? wmm : nullptr;
  const EfficiencyData::WeightKernelRegime* regime =
      wq != nullptr ? &wk.kernel->regimes[static_cast<size_t>(e.weight_kernel_regime)] : nullptr;
  if (wq == nullptr) zero_bytes = 0;
  if (trace && wmm != nullptr && wq == nullptr) {
    std::string ranges;
    for (const auto& r : wk.kernel->regimes) {
      ranges += (ranges.empty() ? "" : ", ") + RowsPhrase(r);
    }
    why = fmt::format("{} (weight-only kernel {} not measured at {} rows, only at {}: the model)",
                      why, wk.kernel->name, wrows, ranges);
  }

  // Roofline terms at the ceilings used. The model's efficiency is of the matrix work (tiles,
  // flash attention); vector work (dequantizing weights, softmax exponentials) runs at its
  // ceiling. An --efficiency override applies to every term of its class's kernels.
  auto eff_of = [&](const EngineTerm& t) {
    return forced > 0 || t.requested.tensor ? e.efficiency : 1.0;
  };
  // The ceiling of an engine term: tensor-core matmuls under --accumulate fp16 take the FP16-
  // accumulate figure where the device lists one.
  auto ceiling_of = [&](const EngineTerm& t) -> const UsedCeiling& {
    const UsedCeiling& acc16 = used_compute_fp16_accumulate_[t.ceiling];
    return cls == KernelClass::kMatmul && t.requested.tensor && acc16.value > 0
               ? acc16
               : used_compute_[t.ceiling];
  };
  const double other_eff = forced > 0 ? forced : 1.0;  // memory and comm terms
  // --modules, a decode attention with grouped K/V heads: the framework copies K and V to
  // every query head (reads the cache, writes it `groups` times) and attention reads the
  // copies from device memory (level 0), not the cache. Both at the activation dtype: a
  // quantized cache is dequantized before it is repeated (the dequantizing is not counted).
  const AttentionSpec* repeated = nullptr;
  double kv_bytes = 0, groups = 1, copy_rate = 0;
  if (modules_ != nullptr && c.num_levels > 0 && used_memory_[0].value > 0) {
    repeated = FusedAttention(graph, kernel);
    if (repeated != nullptr && !RepeatsKv(*modules_, *repeated)) repeated = nullptr;
  }
  if (repeated != nullptr) {
    kv_bytes = KvBytes(*repeated, repeated->dtype);
    groups = static_cast<double>(repeated->heads) / static_cast<double>(repeated->kv_heads);
    copy_rate = modules_->grouped_kv_copy.value * used_memory_[0].value;
    // Negative where the cache's dtype is wider than the activations'.
    e.grouped_kv_read_bytes = groups * kv_bytes - KvBytes(*repeated, repeated->kv_dtype);
    e.grouped_kv_copy_s = (1 + groups) * kv_bytes / copy_rate;
  }
  double matrix_s = 0, floor_s = 0;
  if (wq != nullptr) {
    // Never below the ceilings' own time for all its FLOPs (the bound's compute term).
    double tensor_at_ceiling = 0;
    for (int i = 0; i < c.num_engines; ++i) {
      const EngineTerm& t = c.engines[i];
      // The kernel's measured rates hold its accumulation: the floor is at the usual ceilings.
      if (t.ceiling < 0 || used_compute_[t.ceiling].value <= 0) continue;
      const double at_ceiling = t.flops / used_compute_[t.ceiling].value;
      floor_s += at_ceiling;
      if (t.requested.tensor && wk.matrix_flops_per_s(*regime) > 0) {
        matrix_s += t.flops / wk.matrix_flops_per_s(*regime);
        tensor_at_ceiling += at_ceiling;
      }
    }
    e.compute_s = std::max(matrix_s, floor_s);
    e.efficiency = matrix_s > 0 ? std::clamp(tensor_at_ceiling / matrix_s, 1e-9, 1.0) : 1.0;
    if (trace) {
      why = matrix_s > 0
                ? fmt::format(
                      "weight-only kernel {} ({}): matrix FLOPs at {} ({} FLOP per SM-cycle x "
                      "{} SMs x {}), {} of the ceiling",
                      wk.kernel->name, RowsPhrase(*regime),
                      Si(wk.matrix_flops_per_s(*regime), "FLOP/s"),
                      regime->matrix_flops_per_sm_cycle.value, sm_count_,
                      Si(BoostClock(*device_), "Hz"), Percent(e.efficiency))
                : fmt::format(
                      "weight-only kernel {} ({}): no matrix rate of its own (its time did not "
                      "grow with the rows measured): every FLOP at its ceiling",
                      wk.kernel->name, RowsPhrase(*regime));
    }
  } else {
    for (int i = 0; i < c.num_engines; ++i) {
      const EngineTerm& t = c.engines[i];
      if (t.ceiling < 0) continue;
      const UsedCeiling& used = ceiling_of(t);
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
  // A --weight-kernel regime that walks K in steps of a fixed time: the output's column tiles
  // run in waves over the SMs, each tile taking every step along K (one row tile: the regime's
  // rows fit in it). The time floors the device-memory term.
  double k_tiles = 0, k_waves = 0, k_steps = 0, bytes_s0 = 0;
  if (wq != nullptr && regime->k_tile > 0 && c.num_levels > 0 && used_memory_[0].value > 0 &&
      sm_count_ > 0) {
    k_tiles = CeilWhole(static_cast<double>(wq->n) / static_cast<double>(regime->n_tile));
    k_waves = std::max(1.0, CeilWhole(k_tiles / static_cast<double>(sm_count_)));
    k_steps = CeilWhole(static_cast<double>(wq->k) / static_cast<double>(regime->k_tile));
    e.k_steps_s = k_waves * k_steps * wk.k_step_s(*regime);
  }
  for (int l = 0; l < c.num_levels; ++l) {
    // A --weight-kernel matmul streams device memory (level 0), zero points included, at the
    // regime's rate (capped by the bandwidth) or moving `memory_traffic` bytes per byte.
    const bool streamed = wq != nullptr && l == 0 && used_memory_[l].value > 0;
    const bool traffic = streamed && regime->memory_traffic.value > 0;
    const double bw = streamed && !traffic
                          ? std::min(used_memory_[l].value, wk.stream_bytes_per_s(*regime))
                          : used_memory_[l].value;
    const double bytes = traffic    ? (c.bytes[l] + zero_bytes) * regime->memory_traffic.value
                         : streamed ? c.bytes[l] + zero_bytes
                         : l == 0   ? c.bytes[l] + e.grouped_kv_read_bytes
                                    : c.bytes[l];
    e.memory_s[l] = !(bw > 0) ? 0 : other_eff == 1.0 ? bytes / bw : bytes / bw / other_eff;
    if (streamed) {
      bytes_s0 = e.memory_s[l];
      e.memory_s[l] = std::max(e.memory_s[l], e.k_steps_s);
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

  // Fused attention's fixed time per wave of thread blocks: only for the kernels the figure
  // was measured on (flash kernels of head dims up to 256, not MLA's absorbed form) on a
  // device with a known SM count, and not under an --efficiency override, which replaces the
  // model for its class.
  e.wave_s = 0;
  double blocks = 0, waves = 0, counted = 0;
  const AttentionSpec* a = nullptr;
  if (attention_wave_s_ > 0 && forced == 0 && sm_count_ > 0 && cls == KernelClass::kAttention) {
    a = FusedAttention(graph, kernel);
    if (a != nullptr && (a->v_in_k || a->head_dim > 256)) a = nullptr;
    if (a != nullptr) {
      // Decode with grouped queries: the queries of a group share their K/V head's tile (unless
      // a framework repeated the K/V heads: then every query head has its own).
      const bool grouped =
          a->q_len == 1 && a->kv_heads > 0 && a->heads % a->kv_heads == 0 && repeated == nullptr;
      const double rows =
          grouped ? static_cast<double>(a->heads / a->kv_heads) : static_cast<double>(a->q_len);
      const double heads = static_cast<double>(grouped ? a->kv_heads : a->heads);
      blocks = static_cast<double>(a->batch) * heads * CeilWhole(rows / attention_q_block_);
      waves = std::max(1.0, CeilWhole(blocks / static_cast<double>(sm_count_)));
      counted = attention_max_waves_ > 0 ? std::min(waves, attention_max_waves_) : waves;
      e.wave_s = counted * attention_wave_s_;
      e.roofline_s += e.wave_s;
    }
  }
  e.fixed_s = regime != nullptr ? regime->fixed_s.value : 0;
  e.roofline_s += e.fixed_s + e.grouped_kv_copy_s;

  // Launching it.
  const LaunchCost& launch = launch_cost();
  e.launches = LaunchesOf(graph, kernel);
  const double launches = static_cast<double>(e.launches);
  e.overhead_s = launches * (launch.gap_s.value + options_.launch_overhead_s);
  // The host time: the runtime's per launch, times a framework's Python around each kernel
  // where the host runs it every step (eager).
  e.host_s = launches * host_per_launch_s();
  e.time_s = e.roofline_s + e.overhead_s;
  // Host time is hidden while the GPU is busy with earlier kernels: whether it is is a question
  // for the whole step (Totals::expected_s), not for one kernel. The fixed costs (the launch
  // gap, attention's waves) against the largest throughput term decide the verdict.
  const double fixed = e.wave_s + e.fixed_s;
  const bool launch_bound = e.overhead_s + fixed > e.roofline_s - fixed;
  e.bound = launch_bound ? Bound{BoundKind::kOverhead, 0} : e.term;

  if (trace) {
    trace->Add(fmt::format("Expected time ({} ceilings, runtime {}):", NameOf(o.ceilings),
                           NameOf(o.runtime)));
    if (wq != nullptr) {
      const double matrix_flops = 2 * static_cast<double>(wq->batch) * static_cast<double>(wq->m) *
                                  static_cast<double>(wq->n) * static_cast<double>(wq->k);
      trace->Add(
          wk.matrix_flops_per_s(*regime) > 0
              ? fmt::format("  compute (weight-only kernel {}): max(matrix {} FLOP / {}, every "
                            "FLOP at its ceiling {}) = {}",
                            wk.kernel->name, Sci(matrix_flops),
                            Si(wk.matrix_flops_per_s(*regime), "FLOP/s"), Seconds(floor_s),
                            Seconds(e.compute_s))
              : fmt::format("  compute (weight-only kernel {}): every FLOP at its ceiling = {}",
                            wk.kernel->name, Seconds(e.compute_s)));
    }
    for (int i = 0; i < c.num_engines && wq == nullptr; ++i) {
      const EngineTerm& t = c.engines[i];
      if (t.ceiling < 0) continue;
      const UsedCeiling& u = ceiling_of(t);
      trace->Add(fmt::format("  compute {}{}: {} FLOP / ({} x efficiency {}) = {}  [{}]",
                             device_->compute[t.ceiling].engine,
                             &u == &used_compute_[t.ceiling] ? "" : " (FP16 accumulate)",
                             Sci(t.flops), Si(u.value, u.figure.unit), Percent(eff_of(t)),
                             Seconds(t.flops / u.value / eff_of(t)), u.figure.Describe()));
    }
    if (c.num_engines > 0) trace->Add("    efficiency: " + why);
    for (int l = 0; l < c.num_levels; ++l) {
      const UsedCeiling& u = used_memory_[l];
      if (u.value <= 0) continue;
      if (wq != nullptr && l == 0 && regime->memory_traffic.value > 0) {
        trace->Add(fmt::format(
            "  memory {}: ({} B{}) x {} (bytes the weight-only kernel {} moves per byte it "
            "reads) / {} {} = {}  [{}]",
            device_->memory[l].name, Sci(c.bytes[l]),
            zero_bytes > 0 ? fmt::format(" + {} B of zero points", Sci(zero_bytes)) : "",
            regime->memory_traffic.value, wk.kernel->name, NameOf(o.ceilings), Si(u.value, "B/s"),
            Seconds(bytes_s0), u.figure.Describe()));
        continue;
      }
      if (wq != nullptr && l == 0) {
        trace->Add(fmt::format(
            "  memory {}: ({} B{}) / min({} {}, weight-only kernel {}: {} B per SM-cycle x {} "
            "SMs x {} = {}) = {}  [{}]",
            device_->memory[l].name, Sci(c.bytes[l]),
            zero_bytes > 0 ? fmt::format(" + {} B of zero points", Sci(zero_bytes)) : "",
            NameOf(o.ceilings), Si(u.value, "B/s"), wk.kernel->name,
            regime->stream_bytes_per_sm_cycle.value, sm_count_, Si(BoostClock(*device_), "Hz"),
            Si(wk.stream_bytes_per_s(*regime), "B/s"), Seconds(bytes_s0), u.figure.Describe()));
        continue;
      }
      trace->Add(
          fmt::format("  memory {}: {} / {} = {}  [{}]", device_->memory[l].name,
                      l == 0 && e.grouped_kv_read_bytes != 0
                          ? fmt::format("({} B {} {} B for the repeated K/V heads)",
                                        Sci(c.bytes[l]), e.grouped_kv_read_bytes > 0 ? "+" : "-",
                                        Sci(std::abs(e.grouped_kv_read_bytes)))
                          : Sci(c.bytes[l]) + " B",
                      Si(u.value, "B/s"), Seconds(e.memory_s[l]), u.figure.Describe()));
    }
    if (e.k_steps_s > 0) {
      trace->Add(fmt::format(
          "  K steps (weight-only kernel {}): ceil(n {} / {}) = {} column tiles over {} SMs = "
          "{} wave(s) x ceil(k {} / {}) = {} steps x {} cycles / {} = {}; the memory term is "
          "the larger of it and the bytes' time: {}  [{}]",
          wk.kernel->name, wq->n, regime->n_tile, k_tiles, sm_count_, k_waves, wq->k,
          regime->k_tile, k_steps, regime->k_step_cycles.value, Si(wk.clock_hz, "Hz"),
          Seconds(e.k_steps_s), Seconds(e.memory_s[0]), regime->k_step_cycles.source));
    }
    if (c.link >= 0 && used_links_[c.link].value > 0) {
      const UsedCeiling& u = used_links_[c.link];
      const UsedCeiling& call = used_link_call_[c.link];
      const UsedCeiling& lat = used_link_latency_[c.link];
      trace->Add(fmt::format(
          "  comm {}: {} B / {} + {} call{} x {} + {} steps x {} = {}  [{}; per call {}; per "
          "step {}]",
          device_->links[c.link].name, Sci(c.comm_bytes), Si(u.value, "B/s"), c.comm_calls,
          c.comm_calls == 1 ? "" : "s", Seconds(call.value), c.comm_steps, Seconds(lat.value),
          Seconds(e.comm_s), u.figure.Describe(), call.figure.Describe(), lat.figure.Describe()));
    }
    if (e.wave_s > 0) {
      std::string range;
      if (attention_max_waves_ > 0 && waves > attention_max_waves_) {
        range += fmt::format("; waves beyond {} add nothing [{}]", attention_max_waves_,
                             attention_max_waves_why_);
      } else if (attention_max_waves_ == 0 && waves > 16) {
        range += "; extrapolated: the fit saw at most 16 waves";
      }
      if (a->head_dim != 64 && a->head_dim != 128) {
        range += fmt::format("; extrapolated: head dim {}, the fit saw 64 and 128", a->head_dim);
      }
      trace->Add(
          fmt::format("  attention waves: {} blocks of {} query rows over {} SMs = {} wave(s); "
                      "{} x {} = {}{}  [{}]",
                      blocks, attention_q_block_, sm_count_, waves, counted,
                      Seconds(attention_wave_s_), Seconds(e.wave_s), range, attention_wave_why_));
    }
    if (wq != nullptr) {
      std::string on;
      for (const std::string& id : wk.kernel->measured_on) on += (on.empty() ? "" : ", ") + id;
      const bool sm_rates = regime->stream_bytes_per_sm_cycle.value > 0 ||
                            regime->matrix_flops_per_sm_cycle.value > 0 ||
                            regime->k_step_cycles.value > 0;
      trace->Add(fmt::format(
          "  weight-only kernel {} ({}), {}: fixed {} per launch [{}]; {} [{}]; matrix rate "
          "[{}]; measured on {}{} [{}]",
          wk.kernel->name, wk.kernel->description, RowsPhrase(*regime), Seconds(e.fixed_s),
          regime->fixed_s.source,
          regime->memory_traffic.value > 0 ? "memory traffic" : "streaming rate",
          regime->memory_traffic.value > 0 ? regime->memory_traffic.source
                                           : regime->stream_bytes_per_sm_cycle.source,
          regime->matrix_flops_per_sm_cycle.value > 0 ? regime->matrix_flops_per_sm_cycle.source
                                                      : "none of its own",
          on,
          wk.measured_here ? ""
          : sm_rates       ? ", scaled to this device's SMs and clock (assumed)"
                           : ", the fixed time as measured there (assumed)",
          wk.kernel->source));
    }
    if (e.launches > 1) {
      trace->Add(fmt::format("  launches: {} kernels, as the {} module for this op runs [{}]",
                             e.launches, modules_->name, modules_->source));
    }
    if (repeated != nullptr) {
      trace->Add(fmt::format(
          "  repeated K/V heads ({}): K and V copied from {} to {} heads, (1 + {}) x {} B at {} "
          "of {} ({}) = {}; attention reads the copies, {} B in place of the cache's {} B [{}]",
          modules_->name, repeated->kv_heads, repeated->heads, groups, Sci(kv_bytes),
          Percent(modules_->grouped_kv_copy.value), Si(used_memory_[0].value, "B/s"),
          Si(copy_rate, "B/s"), Seconds(e.grouped_kv_copy_s), Sci(groups * kv_bytes),
          Sci(KvBytes(*repeated, repeated->kv_dtype)), modules_->grouped_kv_copy.source));
    }
    trace->Add(fmt::format(
        "  launch ({}): {}{} between kernels [{}]{}; host {} per launch [{}]{}{}",
        NameOf(o.runtime), e.launches > 1 ? fmt::format("{} x ", e.launches) : "",
        Seconds(launch.gap_s.value), launch.gap_s.source,
        options_.launch_overhead_s > 0
            ? " + --launch-overhead-us " + Seconds(options_.launch_overhead_s)
            : "",
        Seconds(launch.host_s.value), launch.host_s.source,
        host_factor() != 1.0
            ? fmt::format(" x {:.2f} for the Python around it (--modules {}) [{}]", host_factor(),
                          modules_->name, modules_->host_factor.source)
            : "",
        e.launches > 1 || host_factor() != 1.0 ? fmt::format(" = host {}", Seconds(e.host_s))
                                               : ""));
    trace->Add(fmt::format(
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
}

}  // namespace roofline
