// Reports of `roofline model` and `roofline models list`.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "roofline/kernel_table.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/band_json.h"
#include "src/report/expected_report.h"
#include "src/report/kernel_json.h"
#include "src/report/phrases.h"
#include "src/report/table.h"

namespace roofline {
namespace {

using nlohmann::json;

std::string Params(double n) {
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  return fmt::format("{:.1f} M", n / 1e6);
}

/// The linear layers a step runs merged, resolved from --fused-linears and --fusion: "qkv",
/// "gate-up", "qkv,gate-up" or "none" (a config whose checkpoint holds them fused is not said).
std::string MergedLinears(const Workload& w) {
  const bool qkv = w.MergesQkv(), gate_up = w.MergesGateUp();
  return qkv && gate_up ? "qkv,gate-up" : qkv ? "qkv" : gate_up ? "gate-up" : "none";
}

std::string WorkloadLine(const ModelAnalysis& a) {
  const Workload& w = a.workload;
  // How the weights are stored: 4-bit groups, zero points, the output layer quantized too.
  std::vector<std::string> storage;
  if (BitsOf(a.weight) == 4) storage.push_back(fmt::format("group {}", w.group_size));
  if (BitsOf(a.weight) < BitsOf(a.act)) {
    if (IsInteger(a.weight) && w.zero_dtype.has_value()) {
      storage.push_back(fmt::format("zeros {}", NameOf(*w.zero_dtype)));
    }
    if (w.quantize_lm_head) storage.emplace_back("lm_head too");
  }
  std::string stored;
  for (const std::string& part : storage) stored += (stored.empty() ? " (" : ", ") + part;
  if (!stored.empty()) stored += ")";
  std::string s =
      fmt::format("batch {}, prompt {}, context {}, dtype {}, weights {}{}, kv {}", w.batch,
                  w.prompt, w.context, NameOf(a.act), NameOf(a.weight), stored, NameOf(a.kv));
  s += fmt::format(", tp {}, attention {}, fusion {}", w.tp,
                   w.attention == AttentionImpl::kFlash ? "flash" : "eager",
                   w.fusion == FusionMode::kFused ? "fused" : "eager");
  // The products merged as engines load them (--fused-linears), where any are.
  const std::string merged = MergedLinears(w);
  if (merged != "none") s += " (" + merged + " merged)";
  return s;
}

std::string KernelLabel(const KernelCost& c, const Kernel& k) {
  return k.group.empty() ? c.name : c.name;
}

}  // namespace

std::string RenderModelsList(const ModelRegistry& registry,
                             const std::vector<GraphPresetInfo>& networks) {
  TextTable t({"id", "architecture", "layers", "hidden", "heads/kv", "params", "active", "dtype"},
              {false, false, true, true, true, true, true, false});
  std::string errors;
  for (const ModelPreset& p : registry.presets()) {
    Result<TransformerConfig> c = ParseHfConfig(p.text, p.origin);
    if (!c.ok()) {
      errors += "warning: " + c.status().ToString() + "\n";
      continue;
    }
    const ParameterCount n = CountParameters(*c);
    t.AddRow(
        {p.id, c->architecture, std::to_string(c->layers), std::to_string(c->hidden),
         fmt::format("{}/{}", c->heads, c->mla ? std::string("mla") : std::to_string(c->kv_heads)),
         Params(n.total), Params(n.active), std::string(NameOf(c->torch_dtype))});
  }
  std::string out = t.Render() + errors +
                    fmt::format(
                        "{} LLM presets (data/models/, each an HF config.json with its source: "
                        "the model's own, or for gpt-4-class one of GPT-4's reported shape). "
                        "Parameters counted from the graph: every weight, and those one token "
                        "uses.\n",
                        registry.presets().size());
  if (networks.empty()) return out;
  TextTable n({"id", "network", "nodes", "params", "matrix FLOP", "dims"},
              {false, false, true, true, true, false});
  for (const GraphPresetInfo& g : networks) {
    std::string dims;
    for (const auto& [name, value] : g.dims) {
      dims += (dims.empty() ? "" : ", ") + fmt::format("{}={}", name, value);
    }
    n.AddRow({g.id, g.name, std::to_string(g.nodes), Params(g.parameters), Si(g.matrix_flops, ""),
              dims});
  }
  return out + "\n" + n.Render() +
         fmt::format(
             "{} network presets (data/graphs/: captured from the libraries' own classes and "
             "configs by scripts/capture-presets.py; matrix FLOP per pass at the dims shown; "
             "`roofline model ID --dim batch=N`).\n",
             networks.size());
}

std::string RenderModelsListJson(const ModelRegistry& registry,
                                 const std::vector<GraphPresetInfo>& networks) {
  json rows = json::array();
  json warnings = json::array();
  for (const ModelPreset& p : registry.presets()) {
    Result<TransformerConfig> c = ParseHfConfig(p.text, p.origin);
    if (!c.ok()) {
      warnings.push_back(c.status().ToString());
      continue;
    }
    const ParameterCount n = CountParameters(*c);
    rows.push_back({{"id", p.id},
                    {"architecture", c->architecture},
                    {"layers", c->layers},
                    {"hidden", c->hidden},
                    {"heads", c->heads},
                    {"kv_heads", c->mla ? json(nullptr) : json(c->kv_heads)},
                    {"mla", c->mla},
                    {"parameters_total", n.total},
                    {"parameters_active", n.active},
                    {"dtype", std::string(NameOf(c->torch_dtype))}});
  }
  json nets = json::array();
  for (const GraphPresetInfo& g : networks) {
    nets.push_back({{"id", g.id},
                    {"name", g.name},
                    {"dims", g.dims},
                    {"nodes", g.nodes},
                    {"uncosted_nodes", g.uncosted},
                    {"parameters", g.parameters},
                    {"matrix_flops", g.matrix_flops},
                    {"note", g.note}});
  }
  return json{{"models", rows}, {"networks", nets}, {"warnings", warnings}}.dump(2) + "\n";
}

std::string RenderModelHeader(const ModelAnalysis& a, const CostModel& model) {
  const Device& d = model.device();
  std::string out;
  out += fmt::format("{} ({}, {} layers) on {} ({}){}\n", a.config.origin, a.config.architecture,
                     a.config.layers, d.name, d.id,
                     a.workload.tp > 1 ? fmt::format(" x {}", a.workload.tp) : "");
  out += fmt::format("parameters {} total, {} active per token\n", Params(a.params.total),
                     Params(a.params.active));
  out += WorkloadLine(a) + "\n";
  out += a.workload.Stages() > 1
             ? fmt::format(
                   "1 FLOP = one multiply or one add (a multiply-accumulate is 2); "
                   "figures per tensor-parallel device, summed over the {} pipeline "
                   "stages\n",
                   a.workload.Stages())
             : "1 FLOP = one multiply or one add (a multiply-accumulate is 2); figures per "
               "device\n";
  std::vector<KernelCost> all_costs;
  for (const PhaseResult& p : a.phases)
    all_costs.insert(all_costs.end(), p.costs.begin(), p.costs.end());
  out += ExpectedSetupLine(model, all_costs);
  return out;
}

std::string RenderModelTable(const ModelAnalysis& a, const CostModel& model, int top) {
  const Device& d = model.device();
  std::string out = RenderModelHeader(a, model);
  const bool expected = model.has_expected();
  for (const PhaseResult& p : a.phases) {
    out += fmt::format("\n== {} ==\n", NameOf(p.phase));
    const bool grouped = std::any_of(p.kernels.begin(), p.kernels.end(),
                                     [](const Kernel& k) { return k.repeat > 1; });
    std::vector<std::string> header = {
        "kernel", "layers", "x",     "FLOP", d.memory[0].name + " bytes",
        "FLOP/B", "time",   "bound", "share"};
    std::vector<bool> right = {false, false, true, true, true, true, true, false, true};
    if (expected) {
      header.insert(header.end(), {"expected", "expected bound"});
      right.insert(right.end(), {true, false});
    }
    TextTable t(header, right);
    const std::vector<size_t> shown = TopKernels(p, top);
    for (size_t i : shown) {
      const KernelCost& c = p.costs[i];
      const double share =
          p.totals.time_s > 0 ? c.time_s * static_cast<double>(c.repeat) / p.totals.time_s : 0;
      std::vector<std::string> row = {KernelLabel(c, p.kernels[i]),
                                      p.kernels[i].group,
                                      std::to_string(c.repeat),
                                      Si(c.flops, ""),
                                      Si(c.bytes[0], "B"),
                                      c.bytes[0] > 0 ? Num(c.Intensity(0)) : "-",
                                      Seconds(c.time_s),
                                      model.BoundName(c),
                                      Pct1(share)};
      if (c.has_expected) {
        row.push_back(Seconds(c.expected.time_s));
        row.push_back(model.BoundName(c, c.expected.bound));
      }
      t.AddRow(row);
    }
    (void)grouped;
    out += t.Render();
    out += TopNote(p, shown);
    const Totals& s = p.totals;
    out += fmt::format(
        "total: {} ({}), {} FLOP, {} moved through {}; time compute-bound {}, memory-bound {}{}\n",
        Seconds(s.time_s), NameOf(s.verdict, d), Si(s.flops, ""), Si(s.bytes[0], "B"),
        d.memory[0].name, Pct1(s.time_s > 0 ? p.compute_bound_s / s.time_s : 0),
        Pct1(s.time_s > 0 ? p.memory_bound_s / s.time_s : 0),
        p.comm_bound_s > 0 ? fmt::format(", comm-bound {}", Pct1(p.comm_bound_s / s.time_s))
                           : "");
    out += ClassSummaryLine(p, d);
    out += fmt::format(
        "at the bound: MFU {} (of {}), MBU {}{}\n", Pct1(p.mfu), p.mfu_engine, Pct1(p.mbu),
        a.workload.Stages() > 1 ? "; both of one chip's peaks, as the stages run one at a time"
                                : "");
    out += ExpectedTotalsLine(s);
    if (p.calibrated_s > 0) {
      const Calibration& cal = *d.calibration;
      out += fmt::format(
          "expected (calibrated: matmul {:.2f}, attention {:.2f}, norms/elementwise {:.2f} of "
          "the bound; from {}, {}): {}\n",
          cal.matmul, cal.attention, cal.vector, d.origin, cal.date, Seconds(p.calibrated_s));
    }
    if (p.phase == Phase::kPrefill) {
      out += fmt::format(
          "time to first token (whole prompt, batch {}): {}{}\n", a.workload.batch,
          Seconds(p.ttft_s),
          s.has_expected ? fmt::format(" bound, {} expected", Seconds(p.expected_ttft_s)) : "");
    } else {
      out += fmt::format(
          "time per output token {}, {} tokens/s (batch {}){}\n", Seconds(p.time_per_token_s),
          Num(std::round(p.tokens_per_s * 10) / 10), a.workload.batch,
          s.has_expected
              ? fmt::format("; expected {}, {} tokens/s", Seconds(p.expected_time_per_token_s),
                            Num(std::round(p.expected_tokens_per_s * 10) / 10))
              : "");
    }
    if (s.has_expected && p.band.has_value()) {
      out += "trust: " + DescribeBand(*p.band, s.expected_s) + "\n";
    }
  }
  const MemoryFootprint& m = a.memory;
  out += fmt::format("\n== memory (per device, context {}) ==\n",
                     std::max(a.workload.prompt, a.workload.context));
  // The room the engine may fill, and whether it fits; an engine's reserve is said either way.
  // The whole memory: what the driver reports where the device file gives it, else the
  // marketed capacity.
  const bool reported = m.weights_store_bytes == 0 && d.device_memory().usable.has_value();
  const std::string whole = Si(m.capacity_bytes / m.memory_fraction, "B");
  const std::string room =
      m.memory_fraction < 1 ? fmt::format("{} ({} of {}: --memory-fraction)",
                                          Si(m.capacity_bytes, "B"), Num(m.memory_fraction), whole)
                            : whole;
  const std::string verdict =
      std::string(m.fits() ? "fits" : "DOES NOT FIT") +
      (reported ? fmt::format("; {} as the driver reports it, {} marketed", whole,
                              Si(d.device_memory().total_capacity_bytes(), "B"))
                : std::string()) +
      (m.memory_fraction < 1 ? "" : "; all of it usable: no engine reserve (--memory-fraction)");
  if (m.weights_store_bytes > 0) {
    // Weight streaming: the weights live in the far store, the rest in the next level.
    out += fmt::format(
        "weights {} in {} (holds {}; streamed in once per step); KV cache {} ({} per token), "
        "workspace {} = {} of {} {} ({})\n",
        Si(m.weights_bytes, "B"), d.memory[0].name, Si(m.weights_store_bytes, "B"),
        Si(m.kv_cache_bytes, "B"), Si(m.kv_bytes_per_token, "B"), Si(m.workspace_bytes, "B"),
        Si(m.resident_bytes(), "B"), room, d.memory[1].name, verdict);
  } else {
    out += fmt::format("weights {}, KV cache {} ({} per token), workspace {} = {} of {} ({})\n",
                       Si(m.weights_bytes, "B"), Si(m.kv_cache_bytes, "B"),
                       Si(m.kv_bytes_per_token, "B"), Si(m.workspace_bytes, "B"),
                       Si(m.total_bytes(), "B"), room, verdict);
  }
  if (d.model_split || m.stages > 1) {
    out += fmt::format("chips per replica: {} = tp {} x {} pipeline stage{}{}\n", m.devices,
                       a.workload.tp, m.stages, m.stages == 1 ? "" : "s",
                       !a.stages_chosen ? std::string(" (--pp)")
                       : m.workspace_bytes >= m.capacity_bytes
                           ? fmt::format(": the chips the weights and KV cache fill (no count "
                                         "holds the workspace beside them)")
                       : !m.fits()
                           ? fmt::format(": the most allowed; holding the model beside the "
                                         "workspace would take {} stages",
                                         Num(std::ceil((m.weights_bytes + m.kv_cache_bytes) *
                                                       static_cast<double>(m.stages) /
                                                       (m.capacity_bytes - m.workspace_bytes))))
                           : fmt::format(": the fewest whose {} each hold an equal share of the "
                                         "weights and KV cache beside the workspace (the count is "
                                         "set by capacity)",
                                         d.memory[0].name));
  }
  if (a.stages_chosen && m.workspace_bytes >= m.capacity_bytes) {
    out += fmt::format(
        "the decode step's largest op alone needs {} of activations, at least one chip's {}: "
        "no stage count holds it; lower --batch or raise --tp\n",
        Si(m.workspace_bytes, "B"), Si(m.capacity_bytes, "B"));
  } else if (a.stages_chosen && !m.fits()) {
    out += fmt::format(
        "no count of up to {} pipeline stages holds it: lower --batch or --context, or raise "
        "--tp\n",
        kMaxStagesCount);
  }
  out += a.max_batch > 0
             ? fmt::format(
                   "largest batch that fits at this context: {}{} (weights + KV cache "
                   "+ decode workspace)\n",
                   a.max_batch, a.stages_chosen ? fmt::format(" on these {} chips", m.devices) : "")
             : "not even batch 1 fits at this context\n";
  if (a.stages_chosen && a.max_batch_more_chips > a.max_batch) {
    out += fmt::format(
        "on more chips (the fewest that hold each batch, up to {} stages): up to batch {}, on {} "
        "chips\n",
        kMaxStagesCount, a.max_batch_more_chips, a.chips_more_chips);
  }
  out += fmt::format(
      "prefilling the whole batch in one step needs {} of activations for its "
      "largest kernel\n",
      Si(m.prefill_workspace_bytes, "B"));
  if (!a.notes.empty()) {
    out += "\nassumptions:\n";
    for (const auto& n : a.notes) out += "  - " + n + "\n";
  }
  return out;
}

std::string RenderModelJson(const ModelAnalysis& a, const CostModel& model) {
  const Device& d = model.device();
  json j;
  j["flop_convention"] = "1 FLOP = one multiply or one add; a multiply-accumulate counts 2";
  json m;
  m["config"] = a.config.origin;
  m["architecture"] = a.config.architecture;
  m["layers"] = a.config.layers;
  m["hidden"] = a.config.hidden;
  m["parameters_total"] = a.params.total;
  m["parameters_active"] = a.params.active;
  j["model"] = m;
  j["device"] = d.id;
  if (d.calibration) {
    j["calibration"] = {{"profile", d.origin},
                        {"date", d.calibration->date},
                        {"matmul", d.calibration->matmul},
                        {"attention", d.calibration->attention},
                        {"vector", d.calibration->vector}};
  }
  json w;
  w["batch"] = a.workload.batch;
  w["prompt"] = a.workload.prompt;
  w["context"] = a.workload.context;
  w["dtype"] = std::string(NameOf(a.act));
  w["weight_dtype"] = std::string(NameOf(a.weight));
  w["kv_dtype"] = std::string(NameOf(a.kv));
  w["tp"] = a.workload.tp;
  w["attention"] = a.workload.attention == AttentionImpl::kFlash ? "flash" : "eager";
  w["fusion"] = a.workload.fusion == FusionMode::kFused ? "fused" : "eager";
  w["fused_linears"] = MergedLinears(a.workload);
  w["launch_overhead_s"] = model.options().launch_overhead_s;
  w["group_size"] = a.workload.group_size;
  w["quantize_lm_head"] = a.workload.quantize_lm_head;
  w["zero_dtype"] = a.workload.zero_dtype.has_value()
                        ? json(std::string(NameOf(*a.workload.zero_dtype)))
                        : json(nullptr);
  w["all_logits"] = a.workload.all_logits;
  w["mla"] = a.workload.mla == MlaForm::kAuto    ? "auto"
             : a.workload.mla == MlaForm::kNaive ? "naive"
                                                 : "absorbed";
  j["workload"] = w;
  json mem;
  mem["weights_bytes"] = a.memory.weights_bytes;
  mem["kv_cache_bytes_per_token"] = a.memory.kv_bytes_per_token;
  mem["kv_cache_bytes"] = a.memory.kv_cache_bytes;
  mem["workspace_bytes"] = a.memory.workspace_bytes;
  mem["prefill_workspace_bytes"] = a.memory.prefill_workspace_bytes;
  mem["total_bytes"] = a.memory.total_bytes();
  mem["capacity_bytes"] = a.memory.capacity_bytes;
  mem["memory_fraction"] = a.memory.memory_fraction;
  mem["devices"] = a.memory.devices;
  mem["stages"] = a.memory.stages;
  mem["stages_chosen"] = a.stages_chosen;
  if (a.memory.weights_store_bytes > 0) {
    mem["weights_store_bytes"] = a.memory.weights_store_bytes;
    mem["resident_bytes"] = a.memory.resident_bytes();
  }
  mem["fits"] = a.memory.fits();
  mem["max_batch"] = a.max_batch;
  if (a.stages_chosen) {
    mem["max_batch_more_chips"] = a.max_batch_more_chips;
    mem["chips_at_max_batch_more_chips"] = a.chips_more_chips;
  }
  j["memory"] = mem;
  json phases = json::array();
  for (const PhaseResult& p : a.phases) {
    json ph;
    ph["phase"] = std::string(NameOf(p.phase));
    ph["tokens"] = p.graph.tokens;
    ph["time_s"] = p.totals.time_s;
    ph["bound"] = NameOf(p.totals.verdict, model.device());
    ph["flops"] = p.totals.flops;
    json bytes = json::object();
    for (size_t l = 0; l < d.memory.size() && l < static_cast<size_t>(kMaxLevels); ++l) {
      bytes[d.memory[l].name] = p.totals.bytes[l];
    }
    ph["bytes"] = bytes;
    ph["comm_bytes"] = p.totals.comm_bytes;
    ph["compute_bound_time_s"] = p.compute_bound_s;
    ph["memory_bound_time_s"] = p.memory_bound_s;
    ph["comm_bound_time_s"] = p.comm_bound_s;
    ph["mfu"] = p.mfu;
    ph["mfu_engine"] = p.mfu_engine;
    ph["mbu"] = p.mbu;
    if (p.calibrated_s > 0) ph["calibrated_time_s"] = p.calibrated_s;
    if (p.phase == Phase::kPrefill) {
      ph["ttft_s"] = p.ttft_s;
    } else {
      ph["time_per_output_token_s"] = p.time_per_token_s;
      ph["tokens_per_s"] = p.tokens_per_s;
    }
    if (p.totals.has_expected) {
      ph["expected_time_s"] = p.totals.expected_s;
      if (p.band.has_value()) ph["expected_band"] = BandJson(*p.band, p.totals.expected_s);
      json x = ExpectedTotalsJson(p.totals);
      x["setup"] = ExpectedSetupJson(model, p.costs);
      if (p.phase == Phase::kPrefill) {
        x["ttft_s"] = p.expected_ttft_s;
      } else {
        x["time_per_output_token_s"] = p.expected_time_per_token_s;
        x["tokens_per_s"] = p.expected_tokens_per_s;
      }
      ph["expected"] = x;
    }
    json kernels = json::array();
    for (size_t i = 0; i < p.costs.size(); ++i) {
      const KernelCost& c = p.costs[i];
      json k;
      WriteKernelJson(c, model, k);
      k["group"] = p.kernels[i].group;
      std::vector<std::string> ops;
      for (int o : p.kernels[i].ops) ops.push_back(p.graph.graph.ops()[o].name);
      k["ops"] = ops;
      kernels.push_back(k);
    }
    ph["kernels"] = kernels;
    phases.push_back(ph);
  }
  j["phases"] = phases;
  j["notes"] = a.notes;
  return j.dump(2) + "\n";
}

std::string RenderModelCsv(const ModelAnalysis& a, const CostModel& model) {
  std::ostringstream out;
  WriteCsv(KernelTable(a, model, KernelColumns::kCsv), out, 1);
  return std::move(out).str();
}

}  // namespace roofline
