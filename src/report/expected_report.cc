// Expected times in reports (docs/expected-time.md).
#include "src/report/expected_report.h"


#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "roofline/engine.h"
#include "roofline/units.h"

namespace roofline {
namespace {

using nlohmann::json;

// Compute ceilings the kernels run on, in device order.
std::vector<int> UsedEngines(const std::vector<KernelCost>& costs) {
  std::vector<int> out;
  for (const KernelCost& c : costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      const int ceiling = c.engines[e].ceiling;
      if (ceiling >= 0 && c.engines[e].flops > 0 &&
          std::find(out.begin(), out.end(), ceiling) == out.end()) {
        out.push_back(ceiling);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The engines whose tensor-core work some kernel ran at the FP16-accumulate figure.
std::vector<int> Fp16AccumulateEngines(const std::vector<KernelCost>& costs) {
  std::vector<int> out;
  for (const KernelCost& c : costs) {
    if (!c.has_expected || !c.expected.fp16_accumulate) continue;
    for (int e = 0; e < c.num_engines; ++e) {
      const EngineTerm& t = c.engines[e];
      if (t.ceiling >= 0 && t.flops > 0 && t.requested.tensor &&
          std::find(out.begin(), out.end(), t.ceiling) == out.end()) {
        out.push_back(t.ceiling);
      }
    }
  }
  return out;
}

std::vector<int> UsedLinks(const std::vector<KernelCost>& costs) {
  std::vector<int> out;
  for (const KernelCost& c : costs) {
    if (c.link >= 0 && std::find(out.begin(), out.end(), c.link) == out.end()) {
      out.push_back(c.link);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

json FigureJson(const UsedCeiling& u) {
  json j;
  j["value"] = u.value;
  j["unit"] = u.figure.unit;
  j["provenance"] = std::string(NameOf(u.figure.provenance));
  j["source"] = u.figure.Describe();
  return j;
}

// How many of `costs`' kernels ran as each regime of the --weight-kernel kernel, or with
// `experts` of the --moe-kernel kernel (the one asked for is set).
std::vector<int> KernelsPerRegime(const CostModel& model, const std::vector<KernelCost>& costs,
                                  bool experts) {
  const CostModel::UsedWeightKernel& wk =
      experts ? model.used_moe_kernel() : model.used_weight_kernel();
  std::vector<int> ran(wk.kernel->regimes.size(), 0);
  for (const KernelCost& c : costs) {
    const int regime =
        experts ? c.expected.moe_kernel_regime : c.expected.weight_kernel_regime;
    if (c.has_expected && regime >= 0) ++ran[static_cast<size_t>(regime)];
  }
  return ran;
}

// The figures of the regimes of `wk` that ran (`ran`, from KernelsPerRegime), each with its
// rows where the kernel has several: "" where none ran.
std::string RanRegimes(const CostModel& model, const CostModel::UsedWeightKernel& wk,
                       const std::vector<int>& ran) {
  std::string rates;
  for (size_t i = 0; i < ran.size(); ++i) {
    if (!ran[i]) continue;
    const EfficiencyData::WeightKernelRegime& r = wk.kernel->regimes[i];
    rates += fmt::format("{}{}{}", rates.empty() ? "" : "; ",
                         ran.size() > 1 ? RowsPhrase(r) + ": " : "",
                         WeightKernelRegimePhrase(model, wk, r));
  }
  return rates;
}

}  // namespace

std::string WeightKernelRegimePhrase(const CostModel& model,
                                     const CostModel::UsedWeightKernel& wk,
                                     const EfficiencyData::WeightKernelRegime& r) {
  const double bandwidth = model.used_memory().empty() ? 0 : model.used_memory()[0].value;
  const double matrix = wk.matrix_flops_per_s(r);
  const std::string memory =
      r.memory_traffic.value > 0
          ? fmt::format("{:.3g}x its bytes at {}", r.memory_traffic.value, Si(bandwidth, "B/s"))
          : "streaming " + Si(bandwidth > 0 ? std::min(bandwidth, wk.stream_bytes_per_s(r))
                                            : wk.stream_bytes_per_s(r),
                              "B/s");
  const std::string steps = wk.k_step_s(r) > 0 ? fmt::format(", at least {} per step of {} along K",
                                                             Seconds(wk.k_step_s(r)), r.k_tile)
                                               : "";
  return fmt::format("{} + {}{}{}", Seconds(r.fixed_s.value), memory, steps,
                     matrix > 0 ? ", matrix " + Si(matrix, "FLOP/s") : "");
}

std::string WeightKernelProvenancePhrase(const CostModel::UsedWeightKernel& wk) {
  if (wk.measured_here) return "measured on this device";
  const bool sm_rates =
      std::any_of(wk.kernel->regimes.begin(), wk.kernel->regimes.end(), [](const auto& r) {
        return r.stream_bytes_per_sm_cycle.value > 0 || r.matrix_flops_per_sm_cycle.value > 0 ||
               r.k_step_cycles.value > 0;
      });
  return sm_rates ? "scaled from the devices it was measured on"
                  : "its fixed times as measured on other devices";
}

std::string ModuleLaunchesPhrase(const EfficiencyData::ModuleLaunches& m) {
  const std::string grouped =
      m.grouped_kv > 0 ? fmt::format(
                             " (+{} in decode with grouped K/V heads, which copy K and V to "
                             "every query head at {:.1f}% of the memory ceiling)",
                             m.grouped_kv, m.grouped_kv_copy.value * 100)
                       : "";
  return fmt::format("each RMSNorm {} kernels, rotary embedding {}, attention {}{}", m.rms_norm,
                     m.rope, m.attention, grouped);
}

std::string ExpectedSetupLine(const CostModel& model, const std::vector<KernelCost>& costs) {
  if (!CostModel::ExpectsTimesOn(model.device())) {
    return "bound only: no expected times on this device (no published kernel efficiencies for "
           "it; docs/sram-accelerators.md)\n";
  }
  if (!model.has_expected()) return "";
  const Device& d = model.device();
  std::string parts;
  auto add = [&](const std::string& name, const UsedCeiling& u) {
    parts += fmt::format("{}{} {} ({})", parts.empty() ? "" : ", ", name,
                         Si(u.value, u.figure.unit), NameOf(u.figure.provenance));
  };
  const std::vector<int> acc16_engines = Fp16AccumulateEngines(costs);
  auto ran_acc16 = [&](int e) {
    return std::find(acc16_engines.begin(), acc16_engines.end(), e) != acc16_engines.end();
  };
  for (int e : UsedEngines(costs)) {
    add(d.compute[e].engine, model.used_compute()[e]);
    const UsedCeiling& acc16 = model.used_compute_fp16_accumulate()[e];
    if (acc16.value > 0 && ran_acc16(e)) {
      add(d.compute[e].engine + " matmuls at FP16 accumulate", acc16);
    }
  }
  add(d.memory[0].name, model.used_memory()[0]);
  for (int l : UsedLinks(costs)) add(d.links[l].name, model.used_links()[l]);
  const ExpectedOptions& o = model.options().expected;
  const LaunchCost& launch = model.launch_cost();
  std::string kernel;
  if (const auto& wk = model.used_weight_kernel(); wk.kernel != nullptr) {
    const std::string rates = RanRegimes(model, wk, KernelsPerRegime(model, costs, false));
    if (!rates.empty()) {
      kernel = fmt::format(";\n  {} weights run as the {} kernel ({}; {})",
                           NameOf(wk.kernel->weight_dtype), wk.kernel->name, rates,
                           WeightKernelProvenancePhrase(wk));
    } else if (o.class_efficiency[static_cast<size_t>(KernelClass::kMatmul)] > 0) {
      kernel = fmt::format(
          ";\n  no matmul here runs as the {} kernel: --efficiency matmul= "
          "replaces the model for matmuls",
          wk.kernel->name);
    } else {
      std::string rows;
      for (const auto& r : wk.kernel->regimes) rows += (rows.empty() ? "" : ", ") + RowsPhrase(r);
      kernel = fmt::format(
          ";\n  no matmul here runs as the {} kernel (it takes {} weights with a scale per {} "
          "and {} activations, at {})",
          wk.kernel->name, NameOf(wk.kernel->weight_dtype),
          wk.kernel->channel_scales ? "output column" : "group along K",
          NameOf(wk.kernel->activation_dtype), rows);
    }
  }
  if (const auto& wk = model.used_moe_kernel(); wk.kernel != nullptr) {
    const std::string rates = RanRegimes(model, wk, KernelsPerRegime(model, costs, true));
    kernel += !rates.empty()
                  ? fmt::format(";\n  routed experts' {} products run as the {} fused MoE call "
                                "(per product {}; {})",
                                NameOf(wk.kernel->weight_dtype), wk.kernel->name, rates,
                                WeightKernelProvenancePhrase(wk))
                  : fmt::format(";\n  no routed-expert product here runs as the {} fused MoE "
                                "call (it takes {} experts with {} activations)",
                                wk.kernel->name, NameOf(wk.kernel->weight_dtype),
                                NameOf(wk.kernel->activation_dtype));
  }
  std::string modules;
  if (const auto* m = model.used_modules(); m != nullptr) {
    modules = fmt::format(";\n  modules {}: {}", m->name, ModuleLaunchesPhrase(*m));
  }
  const std::string python =
      model.host_factor() != 1.0
          ? fmt::format(", x {:.2f} = {} with the Python of --modules {}", model.host_factor(),
                        Seconds(model.host_per_launch_s()), model.used_modules()->name)
          : "";
  std::string engine;
  if (const Engine* e = EngineOf(model.options().step_terms)) engine = EnginePhrase(*e);
  std::string prefill;
  if (o.prefill_runtime && *o.prefill_runtime != o.runtime) {
    const auto& pl = model.options().efficiency->launch[static_cast<size_t>(*o.prefill_runtime)];
    prefill = fmt::format(", prefill {} ({} host per launch, {} between kernels)",
                          NameOf(*o.prefill_runtime), Seconds(pl.host_s.value),
                          Seconds(pl.gap_s.value));
  }
  return fmt::format(
      "expected times: {} ceilings ({});\n  runtime {}{} ({} host per launch{}, {} between "
      "kernels){}{}{}{}; --explain shows the derivation\n",
      NameOf(o.ceilings), parts, prefill.empty() ? "" : "decode ", NameOf(o.runtime),
      Seconds(launch.host_s.value), python, Seconds(launch.gap_s.value), prefill, modules,
      kernel, engine);
}

std::string EnginePhrase(const Engine& e) {
  std::string host;
  for (const HostPart& p : e.host) {
    std::string figures;
    for (int k = 0; k < kNumHostPer; ++k) {
      if (const auto& f = p.per[static_cast<size_t>(k)]) {
        figures += fmt::format("{}{} per {}", figures.empty() ? "" : " + ", Seconds(f->value_s),
                               NameOf(static_cast<HostPer>(k)));
      }
    }
    host += fmt::format("{}{} {} ({})", host.empty() ? "" : ", ", p.name, figures, NameOf(p.mode));
  }
  return fmt::format(";\n  engine {} {} ({}; {}): host work {}", e.name, e.versions, e.label,
                     e.chosen_as, host.empty() ? "none counted (no step-level figure)" : host);
}

json EngineJson(const Engine& e) {
  json j;
  j["id"] = e.id;
  j["name"] = e.name;
  j["versions"] = e.versions;
  j["label"] = e.label;
  j["chosen_as"] = e.chosen_as;
  j["file"] = e.file;
  j["calibrated"] = e.calibrated;
  // The runtime and host parts as the engine file writes them (EngineFileText): one serializer.
  const json entry = json::parse(EngineFileText(e)).at("entries").at(0);
  j["runtime"] = entry.value("runtime", json::object());
  for (const char* key : {"fusion", "modules", "weight_kernels", "moe_kernels"}) {
    if (entry.contains(key)) j[key] = entry.at(key);
  }
  j["host"] = entry.value("host", json::array());
  j["notes"] = e.notes;
  return j;
}

json ExpectedSetupJson(const CostModel& model, const std::vector<KernelCost>& costs) {
  json j;
  if (!model.has_expected()) return j;
  const Device& d = model.device();
  const ExpectedOptions& o = model.options().expected;
  const EfficiencyData& data = *model.options().efficiency;
  j["ceilings"] = std::string(NameOf(o.ceilings));
  j["runtime"] = std::string(NameOf(o.runtime));
  if (o.prefill_runtime) j["prefill_runtime"] = std::string(NameOf(*o.prefill_runtime));
  if (const Engine* e = EngineOf(model.options().step_terms)) j["engine"] = EngineJson(*e);
  json used = json::object();
  json acc16 = json::object();
  const std::vector<int> acc16_engines = Fp16AccumulateEngines(costs);
  for (int e : UsedEngines(costs)) {
    used[d.compute[e].engine] = FigureJson(model.used_compute()[e]);
    const UsedCeiling& u = model.used_compute_fp16_accumulate()[e];
    if (u.value > 0 &&
        std::find(acc16_engines.begin(), acc16_engines.end(), e) != acc16_engines.end()) {
      acc16[d.compute[e].engine] = FigureJson(u);
    }
  }
  j["accumulate"] = o.fp16_accumulate ? "fp16" : "fp32";
  // The figures matmuls use in place of used_ceilings' under --accumulate fp16.
  if (!acc16.empty()) j["used_ceilings_fp16_accumulate"] = acc16;
  used[d.memory[0].name] = FigureJson(model.used_memory()[0]);
  for (int l : UsedLinks(costs)) used[d.links[l].name] = FigureJson(model.used_links()[l]);
  j["used_ceilings"] = used;
  json latency = json::object();
  for (int l : UsedLinks(costs)) {
    latency[d.links[l].name] = {{"call", FigureJson(model.used_link_call()[l])},
                                {"step", FigureJson(model.used_link_latency()[l])}};
  }
  if (!latency.empty()) j["collective_latency"] = latency;
  const LaunchCost& launch = model.launch_cost();
  j["launch"] = {{"host_s", launch.host_s.value},
                 {"host_source", launch.host_s.source},
                 {"gap_s", launch.gap_s.value},
                 {"gap_source", launch.gap_s.source}};
  json overrides = json::object();
  for (size_t c = 0; c < o.class_efficiency.size(); ++c) {
    if (o.class_efficiency[c] > 0) {
      overrides[std::string(EfficiencyClassName(static_cast<KernelClass>(c)))] =
          o.class_efficiency[c];
    }
  }
  if (!overrides.empty()) j["efficiency_overrides"] = overrides;
  for (const bool experts : {false, true}) {
    const CostModel::UsedWeightKernel& wk =
        experts ? model.used_moe_kernel() : model.used_weight_kernel();
    if (wk.kernel == nullptr) continue;
    const std::vector<int> ran = KernelsPerRegime(model, costs, experts);
    nlohmann::json regimes = nlohmann::json::array();
    int total = 0;
    for (size_t i = 0; i < ran.size(); ++i) {
      const EfficiencyData::WeightKernelRegime& r = wk.kernel->regimes[i];
      nlohmann::json x = {
          {"min_rows", r.min_rows}, {"kernels_run_as_it", ran[i]}, {"fixed_s", r.fixed_s.value}};
      if (r.max_rows > 0) x["max_rows"] = r.max_rows;
      if (r.memory_traffic.value > 0) {
        x["memory_traffic"] = r.memory_traffic.value;  // bytes moved per byte, at the bandwidth
      } else {
        x["stream_bytes_per_s"] = wk.stream_bytes_per_s(r);  // before the bandwidth cap
      }
      if (wk.matrix_flops_per_s(r) > 0) x["matrix_flops_per_s"] = wk.matrix_flops_per_s(r);
      if (r.k_tile > 0) {
        x["k_tile"] = r.k_tile;
        x["n_tile"] = r.n_tile;
        x["k_step_cycles"] = r.k_step_cycles.value;
      }
      regimes.push_back(std::move(x));
      total += ran[i];
    }
    std::vector<std::string> runtimes;
    for (Runtime rt : wk.kernel->runtimes) runtimes.emplace_back(NameOf(rt));
    nlohmann::json& out = j[experts ? "moe_kernel" : "weight_kernel"];
    out = {{"name", wk.kernel->name},
                          {"kernels_run_as_it", total},
                          {"weight_dtype", std::string(NameOf(wk.kernel->weight_dtype))},
                          {"activation_dtype", std::string(NameOf(wk.kernel->activation_dtype))},
                          {"scales", wk.kernel->weight_dtype == DType::kBf16 ||
                                             wk.kernel->weight_dtype == DType::kFp16
                                         ? "none"
                                         : wk.kernel->channel_scales ? "channel" : "group"},
                          {"experts", wk.kernel->experts},
                          {"description", wk.kernel->description},
                          {"regimes", std::move(regimes)},
                          {"provenance", wk.measured_here ? "measured" : "assumed"},
                          {"measured_on", wk.kernel->measured_on},
                          {"source", wk.kernel->source}};
    if (!runtimes.empty()) out["runtimes"] = runtimes;  // absent: any
    if (!wk.kernel->vendor.empty()) out["vendor"] = wk.kernel->vendor;
  }
  if (const auto* m = model.used_modules(); m != nullptr) {
    int64_t launches = 0;
    for (const KernelCost& c : costs)
      launches += c.has_expected ? c.expected.launches * c.repeat : 0;
    j["modules"] = {{"name", m->name},
                    {"description", m->description},
                    {"rms_norm", m->rms_norm},
                    {"rope", m->rope},
                    {"attention", m->attention},
                    {"grouped_kv", m->grouped_kv},
                    {"grouped_kv_copy", m->grouped_kv_copy.value},
                    {"grouped_kv_copy_source", m->grouped_kv_copy.source},
                    {"host_factor", m->host_factor.value},
                    {"host_factor_source", m->host_factor.source},
                    {"host_factor_applied", model.host_factor() != 1.0},
                    {"launches_per_step", launches},
                    {"source", m->source}};
  }
  j["efficiency_data"] = data.origin;
  return j;
}

std::string ExpectedTotalsLine(const Totals& t) {
  if (!t.has_expected) return "";
  static constexpr const char* kKinds[] = {"compute", "memory", "comm", "overhead"};
  size_t top = 0;
  for (size_t k = 1; k < t.expected_by_bound.size(); ++k) {
    if (t.expected_by_bound[k] > t.expected_by_bound[top]) top = k;
  }
  const bool host_bound = t.host_bound;
  const std::string verdict =
      host_bound
          ? fmt::format("launch-bound: the host needs {} to launch the kernels, the GPU waits",
                        Seconds(t.expected_host_s))
      : top == 3 ? std::string("mostly launch-bound kernels")
                 : fmt::format("mostly {}-bound kernels", kKinds[top]);
  std::string engine;
  if (t.engine_host_s > 0) {
    engine = t.engine_bound
                 ? fmt::format("; the engine's host work ({}) is longer than the GPU's step and "
                               "sets its pace",
                               Seconds(t.engine_host_s))
                 : fmt::format("; engine host work {}, {} of it exposed",
                               Seconds(t.engine_host_s), Seconds(t.engine_exposed_s));
  }
  return fmt::format("expected: {} ({:.2f}x the bound), {}; launch overhead {:.1f}% of it{}\n",
                     Seconds(t.expected_s), t.time_s > 0 ? t.expected_s / t.time_s : 0.0, verdict,
                     100 * t.overhead_share(), engine);
}

json ExpectedTotalsJson(const Totals& t) {
  json j;
  j["time_s"] = t.expected_s;
  j["gpu_s"] = t.expected_gpu_s;
  j["host_launch_s"] = t.expected_host_s;
  j["roofline_s"] = t.expected_roofline_s;
  j["overhead_share"] = t.overhead_share();
  if (t.engine_host_s > 0) {
    j["engine_host_s"] = t.engine_host_s;
    j["engine_exposed_s"] = t.engine_exposed_s;
  }
  j["compute_bound_time_s"] = t.expected_by_bound[0];
  j["memory_bound_time_s"] = t.expected_by_bound[1];
  j["comm_bound_time_s"] = t.expected_by_bound[2];
  j["overhead_bound_time_s"] = t.expected_by_bound[3];
  return j;
}

}  // namespace roofline
