#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/table.h"

namespace roofline {

std::string RenderHwList(const DeviceDatabase& db) {
  TextTable t({"id", "name", "bf16 TFLOP/s", "fp8 TFLOP/s", "int8 TOP/s", "fp32 vector TFLOP/s",
               "memory", "bandwidth", "link/dir"},
              {false, false, true, true, true, true, true, true, true});
  auto tera = [](const Device& d, const char* engine) {
    const ComputeCeiling* c = d.FindCompute(engine);
    return c ? Num(std::round(c->peak.value / 1e10) / 100) : std::string("-");
  };
  for (const Device& d : db.devices()) {
    const MemoryLevel& m = d.device_memory();
    const Link* link = d.PrimaryLink();
    t.AddRow({d.id, d.name, tera(d, "tensor.bf16"), tera(d, "tensor.fp8"), tera(d, "tensor.int8"),
              tera(d, "vector.fp32"), Si(m.total_capacity_bytes(), "B"),
              Si(m.bandwidth_bytes_per_s(), "B/s"),
              link ? fmt::format("{} {}", link->name, Si(link->bandwidth.value, "B/s")) : "-"});
  }
  return t.Render() + fmt::format(
                          "{} devices. Peaks are dense (no sparsity) unless a device's notes say "
                          "otherwise, in TFLOP/s (TOP/s for "
                          "int8). `roofline hw show ID` lists every figure with its source.\n",
                          db.devices().size());
}

std::string RenderHwListJson(const DeviceDatabase& db) {
  nlohmann::json rows = nlohmann::json::array();
  auto peak = [](const Device& d, const char* engine) -> nlohmann::json {
    const ComputeCeiling* c = d.FindCompute(engine);
    return c ? nlohmann::json(c->peak.value) : nlohmann::json(nullptr);
  };
  for (const Device& d : db.devices()) {
    const MemoryLevel& m = d.device_memory();
    const Link* link = d.PrimaryLink();
    rows.push_back({{"id", d.id},
                    {"name", d.name},
                    {"vendor", d.vendor},
                    {"kind", d.kind},
                    {"tensor_bf16_flops_per_s", peak(d, "tensor.bf16")},
                    {"tensor_fp8_flops_per_s", peak(d, "tensor.fp8")},
                    {"tensor_int8_ops_per_s", peak(d, "tensor.int8")},
                    {"vector_fp32_flops_per_s", peak(d, "vector.fp32")},
                    {"memory_level", m.name},
                    {"memory_bytes", m.total_capacity_bytes()},
                    {"usable_memory_bytes", m.total_usable_bytes()},
                    {"memory_bytes_per_s", m.bandwidth_bytes_per_s()},
                    {"link", link ? nlohmann::json(link->name) : nlohmann::json(nullptr)},
                    {"link_bytes_per_s",
                     link ? nlohmann::json(link->bandwidth.value) : nlohmann::json(nullptr)}});
  }
  return nlohmann::json{{"devices", rows}}.dump(2) + "\n";
}

std::string RenderHwShow(const Device& d) {
  std::string out;
  out += fmt::format("{} ({}) - {} {}, from {}\n", d.name, d.id, d.vendor, d.kind, d.origin);
  if (!d.notes.empty()) out += "notes: " + d.notes + "\n";
  out += "\nCompute ceilings (dense unless the notes say otherwise):\n";
  TextTable c({"engine", "peak", "provenance"}, {false, true, false});
  for (const auto& e : d.compute) {
    c.AddRow({e.engine, Si(e.peak.value, e.peak.unit), e.peak.Describe()});
  }
  out += c.Render(2);
  out += "\nMemory levels (far to near):\n";
  TextTable m({"level", "capacity", "bandwidth", "provenance"}, {false, true, true, false});
  for (const auto& l : d.memory) {
    const std::string cap = l.instances > 1
                                ? fmt::format("{} x {}", Si(l.capacity.value, "B"), l.instances)
                                : Si(l.capacity.value, "B");
    m.AddRow({l.name + (l.weights_only ? " (weights only)" : ""), cap,
              l.bandwidth ? Si(l.bandwidth->value, "B/s") : "-",
              "capacity " + l.capacity.Describe()});
    if (l.usable) {
      m.AddRow({"", Si(l.usable->value, "B"), "", "usable (the driver's total) " + l.usable->Describe()});
    }
    if (l.bandwidth) m.AddRow({"", "", "", "bandwidth " + l.bandwidth->Describe()});
  }
  out += m.Render(2);
  out += "\nLinks (per device, per direction):\n";
  if (d.links.empty()) {
    out += "  none listed\n";
  } else {
    TextTable lt({"link", "bandwidth", "latency", "provenance"}, {false, true, true, false});
    for (const auto& l : d.links) {
      lt.AddRow({l.name, Si(l.bandwidth.value, "B/s"), l.latency ? Seconds(l.latency->value) : "-",
                 l.bandwidth.Describe()});
    }
    out += lt.Render(2);
  }
  out += "\nRidge points (FLOP/B = peak / bandwidth; above it a kernel is compute-bound):\n";
  std::vector<std::string> header = {"engine"};
  std::vector<bool> right = {false};
  for (const auto& l : d.memory) {
    if (!l.bandwidth) continue;
    header.push_back(l.name);
    right.push_back(true);
  }
  TextTable r(header, right);
  for (const auto& e : d.compute) {
    std::vector<std::string> row = {e.engine};
    for (const auto& l : d.memory) {
      if (!l.bandwidth) continue;
      row.push_back(Num(e.peak.value / l.bandwidth->value));
    }
    r.AddRow(row);
  }
  out += r.Render(2);
  if (!d.memory.empty() && d.memory.front().weights_only && d.memory.front().bandwidth &&
      !d.compute.empty()) {
    // Over a store that only weights cross, a matmul's intensity is FLOP per weight byte:
    // 2 FLOP per weight per token of the step, so tokens per step x 2 / bytes per weight.
    const double ridge = d.compute.front().peak.value / d.memory.front().bandwidth->value;
    out += fmt::format(
        "  {} carries only weights, once per step: a weight matmul does 2 FLOP per weight per "
        "token of the step, so with 2-byte weights it is {}-bound below {} tokens per step (batch "
        "x tokens each) and {}-bound above\n",
        d.memory.front().name, d.memory.front().name, Num(std::ceil(ridge)),
        d.compute.front().engine);
  }
  if (d.model_split) {
    out += fmt::format(
        "\nModel split: a model that does not fit one chip goes on the fewest chips whose {} "
        "holds an equal share of its weights and KV cache, in pipeline stages joined by {}; the "
        "chip count is part of every answer (--pp sets it).\n  [{}]\n",
        d.memory.front().name, d.links.empty() ? "a link" : d.links.front().name,
        d.model_split->source);
  }
  if (!d.info.empty()) {
    out += "\nInfo:\n";
    size_t width = 14;
    for (const auto& [k, q] : d.info) width = std::max(width, k.size());
    for (const auto& [k, q] : d.info) {
      out += fmt::format("  {:<{}} {}   [{}]\n", k, width,
                         q.unit == "count" ? Num(q.value) : Si(q.value, q.unit), q.Describe());
    }
  }
  return out;
}

std::string RenderHwShowJson(const Device& d) {
  nlohmann::json j = nlohmann::json::parse(DeviceToJson(d));
  nlohmann::json ridges = nlohmann::json::object();
  for (const auto& e : d.compute) {
    nlohmann::json row = nlohmann::json::object();
    for (const auto& l : d.memory) {
      if (l.bandwidth) row[l.name] = e.peak.value / l.bandwidth->value;
    }
    ridges[e.engine] = row;
  }
  j["ridge_points"] = ridges;
  j["origin"] = d.origin;
  return j.dump(2) + "\n";
}

}  // namespace roofline
