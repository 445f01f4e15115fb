// Renderers of a network analysis: the kernel table and the JSON document.
#include "roofline/network_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "roofline/sweep_table.h"
#include "roofline/units.h"
#include "src/report/expected_report.h"
#include "src/report/kernel_json.h"
#include "src/report/phrases.h"
#include "src/report/table.h"

namespace roofline {

/// Widest node and module names in the network table before they are abbreviated.
constexpr size_t kNameWidth = 40;
constexpr size_t kModuleWidth = 28;

namespace {

std::string DimsText(const DimBindings& dims) {
  std::string out;
  for (const auto& [name, value] : dims)
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", name, value);
  return out.empty() ? "none" : out;
}

}  // namespace

std::string RenderNetworkTable(const NetworkAnalysis& a, const CostModel& model, int top,
                               const DiffusionRun* diffusion) {
  const Device& d = model.device();
  const std::string mem = d.device_memory().name;
  std::string out = fmt::format("{} on {} ({})\n", a.name, d.name, d.id);
  out += fmt::format("dims: {}; {} nodes: {} kernels, {} views (no kernel), {} uncosted\n",
                     DimsText(a.dims), a.nodes, a.kernels.size(), a.views, a.uncosted.count);
  out += fmt::format("parameters {} ({} of weights and buffers)\n", Si(a.parameters, ""),
                     Si(a.weight_bytes, "B"));
  const double capacity = d.device_memory().total_usable_bytes();
  const double memory = a.weight_bytes + a.activation_bytes;
  out += fmt::format("memory: {} of weights + {} of peak activations (eager) = {}",
                     Si(a.weight_bytes, "B"), Si(a.activation_bytes, "B"), Si(memory, "B"));
  out += capacity > 0 ? fmt::format(" of {}'s {} ({})\n", mem, Si(capacity, "B"),
                                    memory <= capacity ? "fits" : "does not fit")
                      : "\n";
  out +=
      "1 FLOP = one multiply or one add (a multiply-accumulate is 2); one kernel per node "
      "(eager)\n\n";
  // Node names of exported models repeat their module path ("/down_blocks.0/resnets.1/conv1/
  // Conv"): long ones are cut to the tail that keeps them unique, modules likewise among the
  // distinct modules.
  // Among the kernels shown: a top-N table cuts its names to what keeps those apart.
  const std::vector<size_t> shown = TopKernels(a, top);
  // The module column only where it says more than the names: a capture's kernel is named
  // "<module>/<op>" (dots or slashes between the parts), so its module repeats the name's head.
  auto squashed = [](const std::string& s) {
    std::string out;
    for (char c : s) out += (c == '/' || c == '.') ? '.' : c;
    while (!out.empty() && out.front() == '.') out.erase(out.begin());
    return out;
  };
  const bool module_column = std::any_of(shown.begin(), shown.end(), [&](size_t i) {
    const std::string m = squashed(a.info[i].module);
    const std::string name = squashed(a.costs[i].name);
    const bool heads = name == m || name.rfind(m + ".", 0) == 0;
    return !m.empty() && !heads;
  });
  std::vector<std::string> header = {"kernel", "module", "op",     "FLOP", mem + " bytes",
                                     "FLOP/B", "time",   "bound", "share"};
  std::vector<bool> right = {false, false, false, true, true, true, true, false, true};
  if (!module_column) {
    header.erase(header.begin() + 1);
    right.erase(right.begin() + 1);
  }
  TextTable table(header, right);
  std::vector<std::string> names, modules;
  for (size_t i : shown) {
    names.push_back(a.costs[i].name);
    if (std::find(modules.begin(), modules.end(), a.info[i].module) == modules.end()) {
      modules.push_back(a.info[i].module);
    }
  }
  names = AbbreviatePaths(names, kNameWidth);
  const std::vector<std::string> short_modules = AbbreviatePaths(modules, kModuleWidth);
  auto module_of = [&](const std::string& m) {
    const size_t at =
        static_cast<size_t>(std::find(modules.begin(), modules.end(), m) - modules.begin());
    return short_modules[at];
  };
  for (size_t row = 0; row < shown.size(); ++row) {
    const size_t i = shown[row];
    const KernelCost& c = a.costs[i];
    const NetKernelInfo& info = a.info[i];
    std::vector<std::string> cells = {
        names[row], module_of(info.module), info.op, Si(c.flops, ""), Si(c.bytes[0], "B"),
        Num(c.Intensity(0)), Seconds(c.time_s), model.BoundName(c),
        Pct1(a.totals.time_s > 0 ? c.time_s / a.totals.time_s : 0)};
    if (!module_column) cells.erase(cells.begin() + 1);
    table.AddRow(cells);
  }
  out += table.Render();
  out += TopNote(a, shown);
  const double t = a.totals.time_s;
  out += fmt::format(
      "total: {} ({}), {} FLOP ({} FLOP in matmuls, convolutions and attention), {} moved "
      "through {}; time compute-bound {}, memory-bound {}\n",
      Seconds(t), NameOf(a.totals.verdict, model.device()), Si(a.totals.flops, ""),
      Si(a.matrix_flops, ""), Si(a.totals.bytes[0], "B"), mem,
      Pct1(t > 0 ? a.compute_bound_s / t : 0), Pct1(t > 0 ? a.memory_bound_s / t : 0));
  out += ClassSummaryLine(a, d);
  out += ExpectedTotalsLine(a.totals);
  if (diffusion != nullptr) {
    const DiffusionRun& r = *diffusion;
    const std::string guidance =
        r.cfg ? " with classifier-free guidance (conditional and unconditional in one pass)" : "";
    const std::string expected_s =
        r.expected_time_s > 0
            ? fmt::format(", {} expected", Seconds(r.expected_seconds_per_image()))
            : "";
    const std::string expected_rate =
        r.expected_time_s > 0 ? fmt::format(", {} expected", Num(r.expected_images_per_s())) : "";
    out += fmt::format(
        "per image: {} steps{} = {} passes at batch {} for {} image{}{}: {} bound{}; {} images/s "
        "bound{}\n",
        r.steps, guidance, r.steps, r.pass_batch, r.images, r.images == 1 ? "" : "s",
        r.batchless ? " (the graph has no symbolic batch: each pass taken as one image)" : "",
        Seconds(r.seconds_per_image()), expected_s, Num(r.images_per_s()), expected_rate);
  }
  if (a.uncosted.count > 0) {
    std::string ops;
    for (const auto& [op, count] : a.uncosted.by_op) {
      ops += fmt::format("{}{} x{}", ops.empty() ? "" : ", ", op, count);
    }
    out += fmt::format(
        "not costed: {} nodes ({} of the nodes), {} of outputs ({} of all node outputs): {}\n",
        a.uncosted.count, Pct1(a.uncosted.share_of_nodes), Si(a.uncosted.output_bytes, "B"),
        Pct1(a.uncosted.share_of_bytes), ops);
  } else {
    out += "not costed: none (every node was costed or is a view)\n";
  }
  for (const std::string& n : a.notes) out += "note: " + n + "\n";
  return out;
}

std::string RenderNetworkJson(const NetworkAnalysis& a, const CostModel& model,
                              const DiffusionRun* diffusion) {
  using ojson = nlohmann::ordered_json;
  const Device& d = model.device();
  ojson doc;
  ojson uncosted;
  uncosted["count"] = a.uncosted.count;
  uncosted["output_bytes"] = a.uncosted.output_bytes;
  uncosted["share_of_nodes"] = a.uncosted.share_of_nodes;
  uncosted["share_of_bytes"] = a.uncosted.share_of_bytes;
  uncosted["by_op"] = ojson::object();
  for (const auto& [op, count] : a.uncosted.by_op) uncosted["by_op"][op] = count;
  ojson net;
  net["name"] = a.name;
  net["parameters"] = a.parameters;
  net["weight_bytes"] = a.weight_bytes;
  net["activation_bytes"] = a.activation_bytes;
  net["memory_bytes"] = a.weight_bytes + a.activation_bytes;
  net["capacity_bytes"] = d.device_memory().total_usable_bytes();
  net["fits"] = net["capacity_bytes"].get<double>() <= 0 ||
                a.weight_bytes + a.activation_bytes <= d.device_memory().total_usable_bytes();
  net["nodes"] = a.nodes;
  net["kernels"] = a.kernels.size();
  net["views"] = a.views;
  net["uncosted"] = uncosted;
  doc["network"] = net;
  doc["device"] = d.id;
  doc["dims"] = ojson::object();
  for (const auto& [name, value] : a.dims) doc["dims"][name] = value;
  ojson totals;
  totals["flops"] = a.totals.flops;
  totals["matrix_flops"] = a.matrix_flops;
  totals["bytes"] = a.totals.bytes[0];
  ojson levels = ojson::object();
  for (size_t l = 0; l < d.memory.size() && l < static_cast<size_t>(kMaxLevels); ++l) {
    levels[d.memory[l].name] = a.totals.bytes[l];
  }
  totals["bytes_by_level"] = levels;
  totals["time_s"] = a.totals.time_s;
  totals["bound"] = NameOf(a.totals.verdict, model.device());
  totals["compute_bound_s"] = a.compute_bound_s;
  totals["memory_bound_s"] = a.memory_bound_s;
  if (a.totals.has_expected) {
    totals["expected_time_s"] = a.totals.expected_s;
    totals["expected"] = ojson::parse(ExpectedTotalsJson(a.totals).dump());
  }
  doc["totals"] = totals;
  if (diffusion != nullptr) {
    const DiffusionRun& r = *diffusion;
    ojson j;
    j["steps"] = r.steps;
    j["cfg"] = r.cfg;
    j["images"] = r.images;
    j["pass_batch"] = r.pass_batch;
    j["batchless"] = r.batchless;
    j["time_s"] = r.time_s;
    j["seconds_per_image"] = r.seconds_per_image();
    j["images_per_s"] = r.images_per_s();
    if (r.expected_time_s > 0) {
      j["expected_time_s"] = r.expected_time_s;
      j["expected_seconds_per_image"] = r.expected_seconds_per_image();
      j["expected_images_per_s"] = r.expected_images_per_s();
    }
    doc["diffusion"] = j;
  }
  ojson kernels = ojson::array();
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const KernelCost& c = a.costs[i];
    const NetKernelInfo& info = a.info[i];
    ojson k;
    k["name"] = c.name;
    k["module"] = info.module;
    k["op"] = info.op;
    k["source"] = info.source;
    k["matrix_flops"] = info.matrix_flops;
    WriteKernelJson(c, model, k);
    kernels.push_back(k);
  }
  doc["kernels"] = kernels;
  doc["notes"] = a.notes;
  return doc.dump(2) + "\n";
}

namespace {

std::string Name(const NetSweepResult& r, const std::optional<Verdict>& v) {
  return v.has_value() ? r.names.Name(*v) : "";
}

}  // namespace

SweepLine Describe(const Crossover& x, const NetSweepResult& r) {
  SweepLine l;
  l.what = SignalName(x.signal);
  l.variable = x.variable;
  l.value = std::to_string(x.int_value);
  l.from = ValueName(x.signal, x.from, r.names);
  l.to = ValueName(x.signal, x.to, r.names);
  const int64_t before = x.int_value - r.multiple;
  switch (x.signal.kind) {
    case SignalKind::kAttentionShare:
      l.sentence = fmt::format(
          "fused attention takes {} time than the convolutions and matmuls from {} {} on ({} "
          "until {})",
          x.to.yes ? "more" : "no more", l.variable, x.int_value, x.to.yes ? "no more" : "more",
          before);
      break;
    case SignalKind::kCapacity: {
      const NetSweepPoint& p = r.points.front();
      l.sentence = x.to.yes ? fmt::format(
                                  "weights + peak activations fit the {} of device memory from {} "
                                  "{} on",
                                  Si(p.capacity_bytes, "B"), l.variable, x.int_value)
                            : fmt::format(
                                  "weights + peak activations no longer fit the {} of device "
                                  "memory from {} {} on (they fit until {})",
                                  Si(p.capacity_bytes, "B"), l.variable, x.int_value, before);
      break;
    }
    default:
      l.sentence = fmt::format("{}: {} until {} {}, {} from {} {} on", l.what, BoundPhrase(l.from),
                               l.variable, before, BoundPhrase(l.to), l.variable, x.int_value);
  }
  return l;
}

SweepLine Describe(const NeverFlips& n, const NetSweepResult& r) {
  SweepLine l;
  l.what = SignalName(n.signal);
  l.variable = n.variable;
  l.from = ValueName(n.signal, n.value, r.names);
  if (r.points.empty()) return l;
  const std::string range = fmt::format("at every {} from {} to {}", l.variable,
                                        r.points.front().value, r.points.back().value);
  switch (n.signal.kind) {
    case SignalKind::kAttentionShare:
      l.sentence = fmt::format("fused attention takes {} time than the convolutions and matmuls {}",
                               n.value.yes ? "more" : "no more", range);
      break;
    case SignalKind::kCapacity:
      l.sentence = fmt::format("weights + peak activations {} the {} of device memory {}",
                               n.value.yes ? "fit" : "exceed",
                               Si(r.points.front().capacity_bytes, "B"), range);
      break;
    default:
      l.sentence = fmt::format("{}: {} {}", l.what, BoundPhrase(l.from), range);
  }
  return l;
}

std::string RenderNetSweepTable(const NetSweepResult& r, const std::string& title) {
  std::string out = title + "\n\n";
  // A view of the sweep's table (NetSweepTable): the same columns as CSV, JSON and npy.
  const Table t = NetSweepTable(r);
  const Column* expected = t.Find("expected_time_s");
  const Column* images = t.Find("images");
  std::vector<std::string> header = {r.variable, "time"};
  std::vector<bool> right = {true, true};
  if (expected != nullptr) {
    header.emplace_back("expected");
    right.push_back(true);
  }
  for (const char* h : {"FLOP", "matrix FLOP", "bytes", "FLOP/B", "bound", "matrix kernels",
                        "other kernels", "attention", "memory"}) {
    header.emplace_back(h);
    right.push_back(std::string(h).find("kernels") == std::string::npos &&
                    std::string(h) != "bound");
  }
  if (images != nullptr) {
    for (const char* h : {"images", "per image", "images/s"}) {
      header.emplace_back(h);
      right.push_back(true);
    }
    if (expected != nullptr) {
      header.emplace_back("expected images/s");
      right.push_back(true);
    }
  }
  TextTable table(header, right);
  auto real = [&](const char* id, size_t i) { return t.Find(id)->reals[i]; };
  for (size_t i = 0; i < t.rows(); ++i) {
    const double time = real("time_s", i), flops = real("flops", i), bytes = real("bytes", i);
    const double attention = real("attention_time_s", i);
    std::vector<std::string> row = {t.columns().front().Text(i), Seconds(time)};
    if (expected != nullptr) row.push_back(Seconds(expected->reals[i]));
    row.insert(row.end(), {Si(flops, ""), Si(real("matrix_flops", i), ""), Si(bytes, "B"),
                           Num(bytes > 0 ? flops / bytes : 0), t.Find("bound")->Text(i)});
    for (const char* id : {"matrix_bound", "other_bound"}) {
      const std::string v = t.Find(id)->Text(i);
      row.push_back(v == kAbsentLabel ? "-" : v);
    }
    row.push_back(attention > 0 && time > 0 ? Pct1(attention / time) : "-");
    row.push_back(Si(real("memory_bytes", i), "B"));
    if (images != nullptr) {
      row.push_back(images->Text(i));
      row.push_back(Seconds(real("seconds_per_image", i)));
      row.push_back(Num(real("images_per_s", i)));
      if (expected != nullptr) row.push_back(Num(real("expected_images_per_s", i)));
    }
    table.AddRow(std::move(row));
  }
  out += table.Render();
  out +=
      "\nattention: fused attention kernels' share of the time; memory: weights + the peak of "
      "activations alive at once (eager, no allocator caching)\n";
  if (r.steps > 0) {
    out += fmt::format(
        "per image: {} passes per batch of images{}; images/s at the bound{}\n", r.steps,
        r.cfg ? " with classifier-free guidance (each pass at twice the images)" : "",
        expected != nullptr ? " and expected" : "");
  }
  if (expected != nullptr) {
    out += "expected: achievable ceilings and launch costs (docs/expected-time.md); verdicts "
           "and crossovers are of the bound\n";
  }
  out += NetSweepWhy(r);
  return out;
}

// The headings and wording of the LLM sweep's (RenderSweepWhy): one way to read both.
std::string NetSweepWhy(const NetSweepResult& r) {
  std::string out = "\nCrossovers (exact values, found by bisection between grid points";
  out += r.multiple > 1 ? fmt::format(" on multiples of {}", r.multiple) : std::string();
  out += "):\n";
  if (r.crossovers.empty()) out += "  none in the swept range\n";
  for (const Crossover& x : r.crossovers) out += "  - " + Describe(x, r).sentence + "\n";
  if (!r.never.empty()) out += "\nNever flips:\n";
  for (const NeverFlips& n : r.never) out += "  - " + Describe(n, r).sentence + "\n";
  return out;
}

void WriteNetSweepCsv(const NetSweepResult& r, std::ostream& out) {
  WriteCsv(NetSweepTable(r), out);
}

void WriteNetSweepNpy(const NetSweepResult& r, std::ostream& out) {
  WriteNpy(NetSweepTable(r), out);
}

void WriteNetSweepJson(const NetSweepResult& r, const std::string& device, JsonLayout layout,
                       std::ostream& os) {
  if (layout == JsonLayout::kRows) {
    os << RenderNetSweepJson(r, device);
    return;
  }
  // The rows document without its points, then the columns.
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(RenderNetSweepJson(r, device));
  doc.erase("points");
  doc.erase("steps");
  doc.erase("cfg");
  doc["steps"] = r.steps;
  doc["cfg"] = r.cfg;
  doc["schema"] = 2;
  std::string head = doc.dump(2);
  head.resize(head.size() - 2);  // the closing "\n}"
  const Table t = NetSweepTable(r);
  head += ",\n  \"columns\": " + ColumnsJsonDescription(t);
  head += fmt::format(",\n  \"rows\": {},\n  \"data\": ", t.rows());
  os << head;
  WriteJsonColumns(t, os, 2);
  os << "\n}\n";
}

std::string RenderNetSweepJson(const NetSweepResult& r, const std::string& device) {
  using ojson = nlohmann::ordered_json;
  ojson doc;
  doc["network"] = r.name;
  doc["device"] = device;
  doc["variable"] = r.variable;
  doc["follow"] = r.follow;
  doc["multiple"] = r.multiple;
  if (r.steps > 0) {
    doc["steps"] = r.steps;
    doc["cfg"] = r.cfg;
  }
  ojson points = ojson::array();
  for (const NetSweepPoint& p : r.points) {
    ojson j;
    j[r.variable] = p.value;
    j["time_s"] = p.time_s;
    if (p.has_expected) j["expected_time_s"] = p.expected_time_s;
    if (r.steps > 0) {
      const double images = static_cast<double>(r.Images(p)), steps = static_cast<double>(r.steps);
      j["pass_batch"] = p.pass_batch;
      j["images"] = r.Images(p);
      j["seconds_per_image"] = steps * p.time_s / images;
      j["images_per_s"] = p.time_s > 0 ? images / (steps * p.time_s) : 0.0;
      if (p.has_expected) {
        j["expected_seconds_per_image"] = steps * p.expected_time_s / images;
        j["expected_images_per_s"] =
            p.expected_time_s > 0 ? images / (steps * p.expected_time_s) : 0.0;
      }
    }
    j["flops"] = p.flops;
    j["matrix_flops"] = p.matrix_flops;
    j["bytes"] = p.bytes;
    j["bound"] = r.names.Name(p.bound);
    j["matrix_bound"] = Name(r, p.matrix_bound);
    j["other_bound"] = Name(r, p.other_bound);
    j["compute_bound_s"] = p.compute_bound_s;
    j["memory_bound_s"] = p.memory_bound_s;
    j["attention_s"] = p.attention_s;
    j["conv_matmul_s"] = p.conv_matmul_s;
    j["weight_bytes"] = p.weight_bytes;
    j["activation_bytes"] = p.activation_bytes;
    j["memory_bytes"] = p.memory_bytes();
    j["capacity_bytes"] = p.capacity_bytes;
    j["fits"] = p.fits();
    points.push_back(j);
  }
  doc["points"] = points;
  ojson xs = ojson::array();
  for (const Crossover& x : r.crossovers) {
    const SweepLine l = Describe(x, r);
    xs.push_back({{"what", l.what},
                  {"variable", l.variable},
                  {"value", x.int_value},
                  {"from", l.from},
                  {"to", l.to},
                  {"sentence", l.sentence}});
  }
  doc["crossovers"] = xs;
  ojson nv = ojson::array();
  for (const NeverFlips& n : r.never) {
    const SweepLine l = Describe(n, r);
    nv.push_back(
        {{"what", l.what}, {"variable", l.variable}, {"bound", l.from}, {"sentence", l.sentence}});
  }
  doc["never_flips"] = nv;
  doc["evaluations"] = r.evaluations;
  return doc.dump(2) + "\n";
}

}  // namespace roofline
