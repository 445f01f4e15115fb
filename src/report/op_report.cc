#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/expected_report.h"
#include "src/report/kernel_json.h"
#include "src/report/table.h"

namespace roofline {
namespace {

using nlohmann::json;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string Intensity(double flops, double bytes) {
  if (bytes <= 0) return "-";
  return Num(flops / bytes);
}

}  // namespace

std::string DescribeOp(const OpRequest& r) {
  return std::visit(
      Overloaded{
          [](const MatmulSpec& s) {
            std::string q;
            if (s.b_is_weight && s.b_dtype != s.a_dtype && BitsOf(s.b_dtype) < 16) {
              q = s.group_size > 0
                      ? fmt::format(", scales {} per {} of k", NameOf(s.scale_dtype), s.group_size)
                      : fmt::format(", scales {} per column", NameOf(s.scale_dtype));
              if (s.zero_dtype.has_value()) q += fmt::format(", zeros {}", NameOf(*s.zero_dtype));
            }
            return fmt::format("matmul batch={} m={} n={} k={}  A={} B={}{}{} C={}", s.batch, s.m,
                               s.n, s.k, NameOf(s.a_dtype), NameOf(s.b_dtype),
                               s.b_is_weight ? " (weight)" : "", q, NameOf(s.out_dtype));
          },
          [&r](const AttentionSpec& s) {
            return fmt::format(
                "attention ({}) batch={} heads={} kv-heads={} head-dim={}{} q-len={} kv-len={}{}{} "
                "dtype={} kv-dtype={}",
                r.attention_impl == AttentionImpl::kFlash ? "flash" : "eager", s.batch, s.heads,
                s.kv_heads, s.head_dim,
                s.v_head_dim > 0 ? fmt::format(" v-head-dim={}", s.v_head_dim) : "", s.q_len,
                s.kv_len, s.causal ? " causal" : "",
                s.window > 0 ? fmt::format(" window={}", s.window) : "", NameOf(s.dtype),
                NameOf(s.kv_dtype));
          },
          [](const ElementwiseSpec& s) {
            return fmt::format("elementwise{} elements={} inputs={} flops/element={} dtype={}",
                               s.function.empty() ? "" : " " + s.function, Num(s.elements),
                               s.inputs, Num(s.flops_per_element), NameOf(s.dtype));
          },
          [](const NormSpec& s) {
            return fmt::format("{} rows={} cols={} dtype={}", NameOf(s.kind), s.rows, s.cols,
                               NameOf(s.dtype));
          },
          [](const SoftmaxSpec& s) {
            return fmt::format("softmax rows={} cols={} dtype={}", Num(s.rows), s.cols,
                               NameOf(s.dtype));
          },
          [](const EmbeddingSpec& s) {
            return fmt::format("embedding tokens={} vocab={} dim={} dtype={}", s.tokens, s.vocab,
                               s.dim, NameOf(s.dtype));
          },
          [](const Conv2dSpec& s) {
            return fmt::format(
                "conv2d N={} C={} H={} W={} -> K={} kernel={}x{} stride={} padding={} dilation={} "
                "groups={} dtype={} (output {}x{})",
                s.batch, s.in_channels, s.height, s.width, s.out_channels, s.kernel_h, s.kernel_w,
                s.stride, s.padding, s.dilation, s.groups, NameOf(s.dtype), s.out_height(),
                s.out_width());
          },
          [](const CollectiveSpec& s) {
            return fmt::format("{} of {} over {} devices", NameOf(s.kind), Si(s.message_bytes, "B"),
                               s.devices);
          },
      },
      r.spec);
}

std::string RenderOpTable(const OpAnalysis& a, const CostModel& model) {
  const Device& d = model.device();
  std::string out;
  out += DescribeOp(a.request) + "\n";
  out +=
      fmt::format("device: {} ({})   1 FLOP = 1 multiply or add (a multiply-accumulate is 2)\n\n",
                  d.name, d.id);
  const Totals& t = a.totals;
  if (a.costs.size() > 1) {
    TextTable kt({"kernel", "FLOP", d.memory[0].name + " bytes", "FLOP/B", "time", "bound"},
                 {false, true, true, true, true, false});
    for (const KernelCost& c : a.costs) {
      kt.AddRow({c.name, Si(c.flops, ""), Si(c.bytes[0], "B"), Intensity(c.flops, c.bytes[0]),
                 Seconds(c.time_s), model.BoundName(c)});
    }
    out += kt.Render() + "\n";
  }
  // Ridge against each level: the engine doing the most work.
  const KernelCost* heaviest = &a.costs.front();
  for (const KernelCost& c : a.costs) {
    if (c.flops > heaviest->flops) heaviest = &c;
  }
  TextTable lt({"level", "bytes", "intensity", "ridge", "time"}, {false, true, true, true, true});
  for (size_t l = 0; l < d.memory.size() && l < static_cast<size_t>(kMaxLevels); ++l) {
    const MemoryLevel& m = d.memory[l];
    const double ridge = model.Ridge(*heaviest, static_cast<int>(l));
    lt.AddRow({m.name, Si(t.bytes[l], "B"), Intensity(t.flops, t.bytes[l]) + " FLOP/B",
               ridge > 0 ? Num(ridge) + " FLOP/B" : "-",
               m.has_bandwidth() ? Seconds(t.memory_time_s[l]) : "(no bandwidth)"});
  }
  out += lt.Render();
  // Compute per engine.
  std::map<std::string, std::pair<double, double>> engines;  // ceiling -> flops, time
  std::vector<std::string> fallbacks;
  for (const KernelCost& c : a.costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      const EngineTerm& term = c.engines[e];
      auto& slot = engines[model.CeilingName(term)];
      slot.first += term.flops * static_cast<double>(c.repeat);
      slot.second += term.time_s * static_cast<double>(c.repeat);
      const std::string used = model.CeilingName(term);
      if (used != term.requested.Name()) {
        fallbacks.push_back(
            fmt::format("no {} ceiling on this device: ran at {}", term.requested.Name(), used));
      }
    }
  }
  out += "\n";
  for (const auto& [name, ft] : engines) {
    if (name == "none") {
      out += fmt::format("compute (no ceiling listed)  {}: no time term\n", Si(ft.first, "FLOP"));
      continue;
    }
    const ComputeCeiling* c = d.FindCompute(name);
    out += fmt::format("compute {:<12} {} / {} = {}\n", name, Si(ft.first, "FLOP"),
                       Si(c->peak.value, c->peak.unit), Seconds(ft.second));
  }
  if (t.comm_bytes > 0) {
    out += fmt::format("comm    {} sent = {}\n", Si(t.comm_bytes, "B"), Seconds(t.comm_time_s));
  }
  std::sort(fallbacks.begin(), fallbacks.end());
  fallbacks.erase(std::unique(fallbacks.begin(), fallbacks.end()), fallbacks.end());
  for (const auto& f : fallbacks) out += "note: " + f + "\n";
  out += fmt::format("\ntime bound  {}   bound: {}\n", Seconds(t.time_s),
                     NameOf(t.verdict, model.device()));
  const double attainable = t.time_s > 0 ? t.flops / t.time_s : 0;
  std::string share;
  const int dom = model.DominantEngine(*heaviest);
  if (dom >= 0 && heaviest->engines[dom].ceiling >= 0) {
    const auto& c = d.compute[heaviest->engines[dom].ceiling];
    share = fmt::format(" ({:.1f}% of {} peak)", 100.0 * attainable / c.peak.value, c.engine);
  }
  out += fmt::format("attainable  {}{}\n", Si(attainable, "FLOP/s"), share);
  if (t.has_expected) {
    out += "\n" + ExpectedSetupLine(model, a.costs) + ExpectedTotalsLine(t);
  }
  return out;
}

std::string RenderOpJson(const OpAnalysis& a, const CostModel& model, const FlipAnalysis* flip,
                         bool explain) {
  const Device& d = model.device();
  auto kernel_json = [&](const KernelCost& c) {
    json k;
    WriteKernelJson(c, model, k);
    return k;
  };
  json j;
  j["op"] = DescribeOp(a.request);
  j["device"] = d.id;
  j["flop_convention"] = "1 FLOP = one multiply or one add; a multiply-accumulate counts 2";
  const Totals& t = a.totals;
  j["flops"] = t.flops;
  json bytes = json::object();
  json intensity = json::object();
  json ridge = json::object();
  json terms = json::object();
  terms["compute"] = t.compute_time_s;
  const KernelCost* heaviest = &a.costs.front();
  for (const KernelCost& c : a.costs) {
    if (c.flops > heaviest->flops) heaviest = &c;
  }
  for (size_t l = 0; l < d.memory.size() && l < static_cast<size_t>(kMaxLevels); ++l) {
    const std::string& name = d.memory[l].name;
    bytes[name] = t.bytes[l];
    intensity[name] = t.bytes[l] > 0 ? t.flops / t.bytes[l] : 0.0;
    const double r = model.Ridge(*heaviest, static_cast<int>(l));
    if (r > 0) ridge[name] = r;
    if (d.memory[l].has_bandwidth()) terms["memory:" + name] = t.memory_time_s[l];
  }
  if (t.comm_bytes > 0) j["comm_bytes"] = t.comm_bytes;
  j["bytes"] = bytes;
  j["intensity"] = intensity;
  j["ridge"] = ridge;
  j["time_terms_s"] = terms;
  j["time_s"] = t.time_s;
  j["bound"] = NameOf(t.verdict, model.device());
  j["attainable_flops_per_s"] = t.time_s > 0 ? t.flops / t.time_s : 0.0;
  if (t.has_expected) {
    j["expected_time_s"] = t.expected_s;
    json x = ExpectedTotalsJson(t);
    x["setup"] = ExpectedSetupJson(model, a.costs);
    j["expected"] = x;
  }
  json kernels = json::array();
  for (const KernelCost& c : a.costs) kernels.push_back(kernel_json(c));
  j["kernels"] = kernels;
  if (flip != nullptr) {
    json f;
    f["variable"] = flip->variable;
    f["current"] = flip->current;
    f["bound_now"] = flip->up.from;
    if (flip->up.found) {
      f["flips_up_at"] = flip->up.value;
      f["bound_above"] = flip->up.to;
    }
    if (flip->down.found) {
      f["flips_below_at"] = flip->down.value;
      f["bound_below"] = flip->down.from;
    }
    f["limit_intensity"] = flip->limit_intensity;
    f["ridge"] = flip->ridge;
    j["flip"] = f;
    if (explain) {  // the derivation, a line per string
      json lines = json::array();
      const std::string text = RenderOpExplain(a, *flip, model);
      for (size_t start = 0; start < text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
      }
      j["explanation"] = lines;
    }
  }
  return j.dump(2) + "\n";
}

}  // namespace roofline
