// A quantized linear (--weight-kernel) or a fused MoE call over a layer's routed experts
// (--moe-kernel) run as a kernel timed on its own: its measured rates replace the matrix term and
// cap the streaming rate, with its fixed time per launch and, for a kernel that walks K in steps
// of a fixed time, a floor under the device-memory term (data/efficiency.json
// `weight_only_kernels`; docs/expected-time.md).
#include <fmt/format.h>

#include <algorithm>

#include "roofline/units.h"
#include "src/cost/efficiency_json.h"
#include "src/cost/kernel_term.h"
#include "src/cost/round_whole.h"

namespace roofline {

using nlohmann::json;

void ParseWeightKernels(const json& root, EfficiencyData& d) {
  if (!root.contains("weight_only_kernels")) return;
  ForEachEntry(
      root.at("weight_only_kernels"), "weight_only_kernels",
      {"name", "weight_dtype", "activation_dtype", "zero_points", "scales", "description",
       "measured_on", "vendor", "experts", "runtimes", "source", "regimes"},
      [&](const json& f, const std::string& field) {
        EfficiencyData::WeightKernel k;
        k.name = RequireString(f, "name", field, "the name --weight-kernel takes");
        for (const auto& earlier : d.weight_kernels) {
          if (earlier.name == k.name) {
            throw JsonFieldError(field + ".name", "'" + k.name + "' is listed twice");
          }
        }
        Result<DType> dt =
            ParseDType(RequireString(f, "weight_dtype", field), field + ".weight_dtype");
        if (!dt.ok()) throw JsonFieldError(field + ".weight_dtype", dt.status().what());
        k.weight_dtype = *dt;
        if (f.contains("experts")) {
          const json& ex = f.at("experts");
          if (!ex.is_boolean()) throw JsonFieldError(field + ".experts", "expected true or false");
          k.experts = ex.get<bool>();
        }
        // A linear's kernel is a quantized one; a fused MoE call may take unquantized experts.
        const bool quantized = *dt == DType::kInt4 || *dt == DType::kInt8 || *dt == DType::kFp8;
        const bool unquantized = *dt == DType::kBf16 || *dt == DType::kFp16;
        if (!quantized && !(k.experts && unquantized)) {
          throw JsonFieldError(field + ".weight_dtype",
                               k.experts ? "expected int4, int8, fp8, bf16 or fp16"
                                         : "expected a quantized weight dtype: int4, int8 or fp8");
        }
        Result<DType> act =
            ParseDType(RequireString(f, "activation_dtype", field), field + ".activation_dtype");
        if (!act.ok()) throw JsonFieldError(field + ".activation_dtype", act.status().what());
        if (*act != DType::kBf16 && *act != DType::kFp16 && *act != DType::kFp8) {
          throw JsonFieldError(field + ".activation_dtype", "expected bf16, fp16 or fp8");
        }
        k.activation_dtype = *act;
        const json& zp = Need(f, "zero_points", field);
        if (!zp.is_boolean())
          throw JsonFieldError(field + ".zero_points", "expected true or false");
        k.zero_points = zp.get<bool>();
        k.description = RequireString(f, "description", field, "say which kernel it is");
        const json& on = Need(f, "measured_on", field);
        if (!on.is_array() || on.empty() || on.size() > 64) {
          throw JsonFieldError(field + ".measured_on", "expected a non-empty array of device ids");
        }
        for (const json& id : on) {
          if (!id.is_string() || id.get<std::string>().empty()) {
            throw JsonFieldError(field + ".measured_on", "expected device ids (strings)");
          }
          k.measured_on.push_back(id.get<std::string>());
        }
        k.source = RequireString(f, "source", field, "the measurements it comes from");
        if (f.contains("vendor")) {
          k.vendor = RequireString(f, "vendor", field, "the vendor of the GPUs it runs on");
        }
        if (f.contains("scales")) {
          const json& sc = f.at("scales");
          if (!sc.is_string() || (sc != "group" && sc != "channel")) {
            throw JsonFieldError(field + ".scales",
                                 "expected \"group\" (per group along K, the default) or "
                                 "\"channel\" (per output column)");
          }
          k.channel_scales = sc == "channel";
        }
        if (f.contains("runtimes")) {
          const json& rts = f.at("runtimes");
          if (!rts.is_array() || rts.empty()) {
            throw JsonFieldError(field + ".runtimes",
                                 "expected a non-empty array of runtimes (eager, cuda-graph, "
                                 "compiled); leave it out for any");
          }
          for (size_t i = 0; i < rts.size(); ++i) {
            const std::string at = field + ".runtimes[" + std::to_string(i) + "]";
            Result<Runtime> r = ParseRuntime(rts[i].is_string() ? rts[i].get<std::string>() : "");
            if (!r.ok()) {
              throw JsonFieldError(
                  at, "expected eager, cuda-graph or compiled, got " + rts[i].dump().substr(0, 40));
            }
            if (std::find(k.runtimes.begin(), k.runtimes.end(), *r) != k.runtimes.end()) {
              throw JsonFieldError(at, "'" + std::string(NameOf(*r)) + "' is listed twice");
            }
            k.runtimes.push_back(*r);
          }
        }
        ForEachEntry(
            Need(f, "regimes", field), field + ".regimes",
            {"min_rows", "max_rows", "fixed_s", "stream_bytes_per_sm_cycle", "memory_traffic",
             "matrix_flops_per_sm_cycle", "k_tile", "n_tile", "k_step_cycles"},
            [&](const json& g, const std::string& at) {
              EfficiencyData::WeightKernelRegime r;
              auto rows = [&](const char* key) {
                const json& v = Need(g, key, at);
                if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
                    v.get<int64_t>() > (int64_t{1} << 30)) {
                  throw JsonFieldError(at + "." + key,
                                       "expected an integer between 1 and 2^30 (rows)");
                }
                return v.get<int64_t>();
              };
              r.min_rows = rows("min_rows");
              if (g.contains("max_rows")) {
                r.max_rows = rows("max_rows");
                if (r.max_rows < r.min_rows) {
                  throw JsonFieldError(at + ".max_rows", "below min_rows");
                }
              }
              if (!k.regimes.empty()) {
                const auto& prev = k.regimes.back();
                if (prev.max_rows == 0 || r.min_rows <= prev.max_rows) {
                  throw JsonFieldError(at + ".min_rows",
                                       "regimes must be in ascending, disjoint ranges of rows");
                }
              }
              r.fixed_s = ParseFigure(Need(g, "fixed_s", at), at + ".fixed_s", 1e-3, true);
              // The memory term: a streaming rate of the SMs, or a traffic at the bandwidth.
              if (g.contains("stream_bytes_per_sm_cycle") == g.contains("memory_traffic")) {
                throw JsonFieldError(at,
                                     "expected one of stream_bytes_per_sm_cycle (a rate "
                                     "of the SMs) and memory_traffic (bytes moved per "
                                     "byte read, at the device's bandwidth)");
              }
              if (g.contains("stream_bytes_per_sm_cycle")) {
                r.stream_bytes_per_sm_cycle =
                    ParseFigure(g.at("stream_bytes_per_sm_cycle"),
                                at + ".stream_bytes_per_sm_cycle", 4096, false, "B per SM-cycle");
              } else {
                r.memory_traffic = ParseFigure(g.at("memory_traffic"), at + ".memory_traffic", 100,
                                               false, "bytes moved per byte read");
                if (r.memory_traffic.value < 1) {
                  throw JsonFieldError(at + ".memory_traffic.value",
                                       "below 1: a kernel moves at least the bytes it reads");
                }
              }
              if (g.contains("matrix_flops_per_sm_cycle")) {
                r.matrix_flops_per_sm_cycle = ParseFigure(g.at("matrix_flops_per_sm_cycle"),
                                                          at + ".matrix_flops_per_sm_cycle", 65536,
                                                          false, "FLOP per SM-cycle");
              }
              // A pipeline over K limited by latency: its tiles (from the kernel's source)
              // and the cycles a step takes, all three or none.
              const int tiles = static_cast<int>(g.contains("k_tile")) +
                                static_cast<int>(g.contains("n_tile")) +
                                static_cast<int>(g.contains("k_step_cycles"));
              if (tiles != 0 && tiles != 3) {
                throw JsonFieldError(at,
                                     "expected k_tile, n_tile and k_step_cycles together (a "
                                     "kernel that walks K in steps) or none of them");
              }
              if (tiles == 3) {
                auto tile = [&](const char* key) {
                  const json& v = g.at(key);
                  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 65536) {
                    throw JsonFieldError(at + "." + key,
                                         "expected an integer between 1 and 65536 (elements)");
                  }
                  return v.get<int64_t>();
                };
                r.k_tile = tile("k_tile");
                r.n_tile = tile("n_tile");
                r.k_step_cycles = ParseFigure(g.at("k_step_cycles"), at + ".k_step_cycles", 1e7,
                                              false, "clock cycles per step");
              }
              k.regimes.push_back(std::move(r));
            });
        d.weight_kernels.push_back(std::move(k));
      });
}

namespace {

// Whether the device lists float8 tensor cores (a tensor.fp8 ceiling).
bool HasFp8TensorCores(const Device& d) {
  return std::any_of(d.compute.begin(), d.compute.end(),
                     [](const ComputeCeiling& c) { return c.engine == "tensor.fp8"; });
}

// The kernel's matmul that a --weight-kernel kernel runs (a linear's product of activations of
// the kernel's dtype by weights of its weight dtype, scaled per group along K or per output
// column as the kernel's are), or for a fused MoE call (`experts`) a routed-expert product of
// those dtypes; null otherwise; `zero_bytes` receives the bytes of its zero points when the
// kernel reads one beside each scale (in the scales' dtype), less those the product counts
// already (a workload's --zero-dtype). Whether a regime covers its rows is the caller's question.
const MatmulSpec* WeightKernelMatmul(const Graph& graph, const Kernel& kernel,
                                     const EfficiencyData::WeightKernel& wk, double& zero_bytes) {
  zero_bytes = 0;
  for (int o : kernel.ops) {
    const Op& op = graph.ops()[o];
    if (const auto* mm = std::get_if<MatmulSpec>(&op.spec)) {
      // One weight matrix (not a weight per batch entry, as MLA's absorbed per-head products
      // have): a linear's product, or a fused MoE call's routed experts; scales are matched
      // where the weights are quantized.
      const bool quantized = wk.weight_dtype == DType::kInt4 || wk.weight_dtype == DType::kInt8 ||
                             wk.weight_dtype == DType::kFp8;
      if (!mm->b_is_weight || mm->b_dtype != wk.weight_dtype ||
          mm->a_dtype != wk.activation_dtype ||
          (quantized && (mm->group_size > 0) == wk.channel_scales) ||
          (mm->experts > 0) != wk.experts || mm->batch != mm->b_broadcast) {
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

// A matmul the --weight-kernel kernel runs, at a row count one of its regimes covers: the
// regime's measured rates replace the matrix term and cap the streaming rate; its dequantization
// is inside them. Other row counts keep the model (said in the efficiency's reason). Not under an
// --efficiency override for matmuls, which replaces the model.
class WeightKernelTerm final : public KernelTerm {
 public:
  explicit WeightKernelTerm(bool experts) : experts_(experts) {}
  std::string_view name() const override { return experts_ ? "moe kernel" : "weight kernel"; }
  Phase phase() const override { return Phase::kTerms; }
  bool Apply(KernelTermContext& k, ExpectedCost& e) const override {
    const CostModel::UsedWeightKernel& wk = Used(k.model);
    if (k.forced != 0 || k.cls != KernelClass::kMatmul) return false;
    double zero_bytes = 0;
    const MatmulSpec* wq = WeightKernelMatmul(k.graph, k.kernel, *wk.kernel, zero_bytes);
    if (wq == nullptr) return false;
    const int64_t wrows = wq->batch * wq->m;
    const int regime_index = wk.kernel->RegimeOf(wrows);
    (experts_ ? e.moe_kernel_regime : e.weight_kernel_regime) = regime_index;
    if (regime_index < 0) {
      if (k.lines != nullptr) {
        std::string ranges;
        for (const auto& r : wk.kernel->regimes) {
          ranges += (ranges.empty() ? "" : ", ") + RowsPhrase(r);
        }
        k.lines->why = fmt::format(
            "{} ({} {} not measured at {} rows, only at {}: the "
            "model)",
            k.lines->why, Kind(), wk.kernel->name, wrows, ranges);
      }
      return false;
    }
    const EfficiencyData::WeightKernelRegime& regime =
        wk.kernel->regimes[static_cast<size_t>(regime_index)];
    const KernelCost& c = k.cost;
    const std::vector<UsedCeiling>& compute = k.model.used_compute();
    const std::vector<UsedCeiling>& memory = k.model.used_memory();
    const int64_t sm_count = k.model.sm_count();

    // The compute term: the matrix FLOPs at the regime's rate, never below the ceilings' own
    // time for all its FLOPs (the bound's compute term). The kernel's measured rates hold its
    // accumulation: the floor is at the usual ceilings.
    double matrix_s = 0, floor_s = 0, tensor_at_ceiling = 0;
    for (int i = 0; i < c.num_engines; ++i) {
      const EngineTerm& t = c.engines[i];
      if (t.ceiling < 0 || compute[t.ceiling].value <= 0) continue;
      const double at_ceiling = t.flops / compute[t.ceiling].value;
      floor_s += at_ceiling;
      if (t.requested.tensor && wk.matrix_flops_per_s(regime) > 0) {
        matrix_s += t.flops / wk.matrix_flops_per_s(regime);
        tensor_at_ceiling += at_ceiling;
      }
    }
    e.compute_s = std::max(matrix_s, floor_s);
    e.efficiency = matrix_s > 0 ? std::clamp(tensor_at_ceiling / matrix_s, 1e-9, 1.0) : 1.0;
    k.compute_set = true;

    // A regime that walks K in steps of a fixed time: the output's column tiles run in waves over
    // the SMs, each tile taking every step along K (one row tile: the regime's rows fit in it).
    // The time floors the device-memory term.
    const bool streamed = c.num_levels > 0 && memory[0].value > 0;
    double k_tiles = 0, k_waves = 0, k_steps = 0;
    if (regime.k_tile > 0 && streamed && sm_count > 0) {
      k_tiles = CeilWhole(static_cast<double>(wq->n) / static_cast<double>(regime.n_tile));
      k_waves = std::max(1.0, CeilWhole(k_tiles / static_cast<double>(sm_count)));
      k_steps = CeilWhole(static_cast<double>(wq->k) / static_cast<double>(regime.k_tile));
      e.k_steps_s = k_waves * k_steps * wk.k_step_s(regime);
    }
    // Device memory (level 0), zero points included, at the regime's rate (capped by the
    // bandwidth) or moving `memory_traffic` bytes per byte.
    double bytes_s0 = 0;
    if (streamed) {
      const bool traffic = regime.memory_traffic.value > 0;
      const double bw =
          traffic ? memory[0].value : std::min(memory[0].value, wk.stream_bytes_per_s(regime));
      const double bytes = traffic ? (c.bytes[0] + zero_bytes) * regime.memory_traffic.value
                                   : c.bytes[0] + zero_bytes;
      bytes_s0 = !(bw > 0) ? 0 : bytes / bw;
      e.memory_s[0] = std::max(bytes_s0, e.k_steps_s);
      k.memory0_set = true;
    }
    e.fixed_s = regime.fixed_s.value;
    if (k.lines != nullptr) {
      Explain(k, e, *wq, regime, zero_bytes, matrix_s, floor_s, bytes_s0, k_tiles, k_waves,
              k_steps);
    }
    return true;
  }

 private:
  const char* Kind() const { return experts_ ? "fused MoE kernel" : "weight-only kernel"; }
  const CostModel::UsedWeightKernel& Used(const CostModel& m) const {
    return experts_ ? m.used_moe_kernel() : m.used_weight_kernel();
  }
  void Explain(KernelTermContext& k, const ExpectedCost& e, const MatmulSpec& wq,
               const EfficiencyData::WeightKernelRegime& regime, double zero_bytes,
               double matrix_s, double floor_s, double bytes_s0, double k_tiles, double k_waves,
               double k_steps) const {
    const CostModel::UsedWeightKernel& wk = Used(k.model);
    const Device& device = k.model.device();
    const int64_t sm_count = k.model.sm_count();
    TermLines& lines = *k.lines;
    const double matrix_flops = 2 * static_cast<double>(wq.batch) * static_cast<double>(wq.m) *
                                static_cast<double>(wq.n) * static_cast<double>(wq.k);
    lines.compute.push_back(
        wk.matrix_flops_per_s(regime) > 0
            ? fmt::format("  compute ({} {}): max(matrix {} FLOP / {}, every "
                          "FLOP at its ceiling {}) = {}",
                          Kind(), wk.kernel->name, Sci(matrix_flops),
                          Si(wk.matrix_flops_per_s(regime), "FLOP/s"), Seconds(floor_s),
                          Seconds(e.compute_s))
            : fmt::format("  compute ({} {}): every FLOP at its ceiling = {}",
                          Kind(), wk.kernel->name, Seconds(e.compute_s)));
    k.lines->why =
        matrix_s > 0
            ? fmt::format(
                  "{} {} ({}): matrix FLOPs at {} ({} FLOP per SM-cycle x "
                  "{} SMs x {}), {} of the ceiling",
                  Kind(), wk.kernel->name, RowsPhrase(regime), Si(wk.matrix_flops_per_s(regime), "FLOP/s"),
                  regime.matrix_flops_per_sm_cycle.value, sm_count, Si(BoostClock(device), "Hz"),
                  Percent(e.efficiency))
            : fmt::format(
                  "{} {} ({}): no matrix rate of its own ({}): every FLOP at its ceiling",
                  Kind(), wk.kernel->name, RowsPhrase(regime),
                  experts_ ? "its time follows the touched experts' bytes at the rows measured"
                           : "its time did not grow with the rows measured");
    if (k.memory0_set) {
      const UsedCeiling& u = k.model.used_memory()[0];
      const std::string zeros =
          zero_bytes > 0 ? fmt::format(" + {} B of zero points", Sci(zero_bytes)) : "";
      lines.memory0 =
          regime.memory_traffic.value > 0
              ? fmt::format(
                    "  memory {}: ({} B{}) x {} (bytes the {} {} moves "
                    "per byte it reads) / {} {} = {}  [{}]",
                    device.memory[0].name, Sci(k.cost.bytes[0]), zeros, regime.memory_traffic.value,
                    Kind(), wk.kernel->name, NameOf(k.model.options().expected.ceilings),
                    Si(u.value, "B/s"), Seconds(bytes_s0), u.figure.Describe())
              : fmt::format(
                    "  memory {}: ({} B{}) / min({} {}, {} {}: {} B per "
                    "SM-cycle x {} SMs x {} = {}) = {}  [{}]",
                    device.memory[0].name, Sci(k.cost.bytes[0]), zeros,
                    NameOf(k.model.options().expected.ceilings), Si(u.value, "B/s"),
                    Kind(), wk.kernel->name, regime.stream_bytes_per_sm_cycle.value, sm_count,
                    Si(BoostClock(device), "Hz"), Si(wk.stream_bytes_per_s(regime), "B/s"),
                    Seconds(bytes_s0), u.figure.Describe());
    }
    if (e.k_steps_s > 0) {
      lines.Detail(
          TermSection::kKSteps,
          fmt::format("  K steps ({} {}): ceil(n {} / {}) = {} column tiles over "
                      "{} SMs = {} wave(s) x ceil(k {} / {}) = {} steps x {} cycles / {} = {}; "
                      "the memory term is the larger of it and the bytes' time: {}  [{}]",
                      Kind(), wk.kernel->name, wq.n, regime.n_tile, k_tiles, sm_count, k_waves, wq.k,
                      regime.k_tile, k_steps, regime.k_step_cycles.value, Si(wk.clock_hz, "Hz"),
                      Seconds(e.k_steps_s), Seconds(e.memory_s[0]), regime.k_step_cycles.source));
    }
    std::string on;
    for (const std::string& id : wk.kernel->measured_on) on += (on.empty() ? "" : ", ") + id;
    const bool sm_rates = regime.stream_bytes_per_sm_cycle.value > 0 ||
                          regime.matrix_flops_per_sm_cycle.value > 0 ||
                          regime.k_step_cycles.value > 0;
    lines.Detail(
        TermSection::kKernel,
        fmt::format("  {} {} ({}), {}: fixed {} per launch [{}]; {} [{}]; matrix "
                    "rate [{}]; measured on {}{} [{}]",
                    Kind(), wk.kernel->name, wk.kernel->description, RowsPhrase(regime), Seconds(e.fixed_s),
                    regime.fixed_s.source,
                    regime.memory_traffic.value > 0 ? "memory traffic" : "streaming rate",
                    regime.memory_traffic.value > 0 ? regime.memory_traffic.source
                                                    : regime.stream_bytes_per_sm_cycle.source,
                    regime.matrix_flops_per_sm_cycle.value > 0
                        ? regime.matrix_flops_per_sm_cycle.source
                        : "none of its own",
                    on,
                    wk.measured_here ? ""
                    : sm_rates       ? ", scaled to this device's SMs and clock (assumed)"
                                     : ", the fixed time as measured there (assumed)",
                    wk.kernel->source));
  }
  bool experts_;
};

}  // namespace

Status CheckWeightKernel(const EfficiencyData& data, std::string_view name, const Device& device,
                         Runtime runtime, const std::string& where, bool experts) {
  Result<const EfficiencyData::WeightKernel*> wk = FindWeightKernel(data, name, where);
  if (!wk.ok()) return wk.status();
  if ((*wk)->experts != experts) {
    return Status::Invalid(
        where, experts ? fmt::format("the {} kernel runs a linear's weights, not a mixture of "
                                     "experts' routed products (--weight-kernel takes it)",
                                     name)
                       : fmt::format("the {} kernel is a fused MoE call for routed experts "
                                     "(--moe-kernel takes it)",
                                     name));
  }
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
  if (!(*wk)->vendor.empty() && (*wk)->vendor != device.vendor) {
    return Status::Invalid(
        where, fmt::format("the {} kernel runs on {} GPUs, not on {} ({})", name, (*wk)->vendor,
                           device.id, device.vendor.empty() ? "no vendor given" : device.vendor));
  }
  if ((*wk)->activation_dtype == DType::kFp8 && !HasFp8TensorCores(device)) {
    return Status::Invalid(
        where, fmt::format("the {} kernel multiplies float8 activations on float8 tensor cores, "
                           "which {} does not list (no tensor.fp8 ceiling)",
                           name, device.id));
  }
  return Status::Ok();
}

void CostModel::SetUpWeightKernel() {
  // Callers check the names and the device first (CheckWeightKernel); the pointers are into the
  // efficiency data this model shares (copies share it too).
  const Device& d = *device_;
  auto set_up = [&](const std::string& name, bool experts, UsedWeightKernel& used) {
    used = {};
    if (name.empty()) return;
    for (const auto& wk : options_.efficiency->weight_kernels) {
      if (wk.name != name || wk.experts != experts) continue;
      if (!(sm_count_ > 0 && BoostClock(d) > 0)) continue;
      if (!wk.vendor.empty() && wk.vendor != d.vendor) continue;
      if (wk.activation_dtype == DType::kFp8 && !HasFp8TensorCores(d)) continue;
      const auto& rts = wk.runtimes;
      if (!rts.empty() &&
          std::find(rts.begin(), rts.end(), options_.expected.runtime) == rts.end()) {
        continue;
      }
      used.kernel = &wk;
      used.sm_cycles_per_s = static_cast<double>(sm_count_) * BoostClock(d);
      used.clock_hz = BoostClock(d);
      used.measured_here =
          std::find(wk.measured_on.begin(), wk.measured_on.end(), d.id) != wk.measured_on.end();
    }
  };
  set_up(options_.expected.weight_kernel, false, weight_kernel_);
  set_up(options_.expected.moe_kernel, true, moe_kernel_);
}

std::shared_ptr<const KernelTerm> MakeWeightKernelTerm(const CostModel& model, bool experts) {
  if ((experts ? model.used_moe_kernel() : model.used_weight_kernel()).kernel == nullptr) {
    return nullptr;
  }
  return std::make_shared<const WeightKernelTerm>(experts);
}

}  // namespace roofline
