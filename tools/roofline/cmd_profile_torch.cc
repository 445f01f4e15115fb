// `roofline profile torch TRACE.json[.gz]`: kernels joined to aten ops, FLOPs from shapes.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "roofline/model_analysis.h"
#include "roofline/plot.h"
#include "roofline/profile.h"
#include "roofline/units.h"
#include "src/report/table.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/profile_common.h"

namespace roofline::cli {
namespace {

/// Calls of one aten op with the same input shapes.
struct TorchGroup {
  std::string name, shapes;
  OpClass op_class = OpClass::kOther;
  int calls = 0, kernels = 0;
  double gpu_s = 0, flops = 0, bytes = 0;
  bool costed = true;
  std::string note, dtype;
};

std::string ShapesOf(const TorchOp& op) {
  std::string s;
  for (const auto& dims : op.input_dims) {
    if (!s.empty()) s += " ";
    s += "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    s += "]";
  }
  return s;
}

/// The ceiling for an op's FLOPs from its first input's dtype: matrix ops on the tensor engine.
std::string TorchEngine(const TorchOp& op) {
  std::string dtype = "fp32";
  if (!op.input_types.empty()) {
    const std::string& t = op.input_types.front();
    if (t.find("BFloat16") != std::string::npos) dtype = "bf16";
    if (t.find("Half") != std::string::npos) dtype = "fp16";
    if (t == "double") dtype = "fp64";
    if (t.find("Float8") != std::string::npos) dtype = "fp8";
  }
  const bool matrix = op.op_class == OpClass::kGemm || op.op_class == OpClass::kAttention ||
                      op.op_class == OpClass::kConv;
  if (matrix && dtype == "fp32") return "tensor.tf32";
  return (matrix ? "tensor." : "vector.") + dtype;
}

}  // namespace

int RunProfileTorch(Context& ctx, const ProfileOptions& o) {
  Result<TorchTrace> trace = LoadTorchTrace(o.file);
  if (!trace.ok()) return Fail(ctx, trace.status());
  std::string how;
  Result<Device> device =
      ResolveProfileDevice(ctx, o.model.hw, trace->device_name, trace->cc, &how);
  const bool need_device = !o.model.model.empty() || !o.plot.empty() || trace->has_shapes;
  if (!device.ok() && (need_device || !o.model.hw.empty())) return Fail(ctx, device.status());
  const bool json = o.model.format == "json";
  std::ostream& out = *ctx.out;
  double total = 0;
  std::map<OpClass, std::pair<int64_t, double>> classes;
  std::vector<MeasuredKernel> measured;
  for (const TorchKernel& k : trace->kernels) {
    total += k.duration_s;
    classes[k.op_class].first += 1;
    classes[k.op_class].second += k.duration_s;
    measured.push_back({k.name, k.op_class, k.duration_s, 1});
  }
  std::vector<TorchGroup> groups;
  std::map<std::string, size_t> index;
  std::vector<std::string> engines;
  for (const TorchOp& op : trace->ops) {
    const std::string shapes = ShapesOf(op);
    auto [it, fresh] = index.try_emplace(op.name + "\x1f" + shapes, groups.size());
    if (fresh) {
      TorchGroup g;
      g.name = op.name;
      g.shapes = shapes;
      g.op_class = op.op_class;
      g.note = op.cost_note;
      g.dtype = device.ok() ? TorchEngine(op) : "";
      groups.push_back(g);
    }
    TorchGroup& g = groups[it->second];
    ++g.calls;
    g.kernels += op.kernels;
    g.gpu_s += op.gpu_time_s;
    if (op.flops && op.min_bytes) {
      g.flops += *op.flops;
      g.bytes += *op.min_bytes;
    } else {
      g.costed = false;
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const TorchGroup& a, const TorchGroup& b) { return a.gpu_s > b.gpu_s; });
  nlohmann::json out_json;
  if (json) {
    out_json["file"] = o.file;
    out_json["format"] = "torch " + trace->format;
    out_json["device_name"] = trace->device_name;
    if (device.ok()) out_json["device"] = device->id;
    out_json["gpu_time_s"] = total;
    out_json["classes"] = ClassJson(classes, total);
    out_json["shapes"] = trace->has_shapes;
  } else {
    out << fmt::format(
        "profile: {}: PyTorch trace, {}; {} kernels ({} of GPU time) under {} ops; "
        "shapes {}\n",
        o.file, trace->format, trace->kernels.size(), Seconds(total), trace->ops.size(),
        trace->has_shapes ? "recorded" : "not recorded");
    if (device.ok()) {
      out << fmt::format("device: {} ({}): {}\n", device->id, device->name, how);
    } else {
      out << fmt::format(
          "device: '{}' not in the database (pass --hw to place ops on a roofline)\n",
          trace->device_name);
    }
    for (const std::string& n : trace->notes) out << "note: " << n << "\n";
    out << "\nby op class (kernel names, docs/profiles.md):\n";
    PrintClassTable(out, classes, total);
  }
  std::vector<RooflinePoint> points;
  TextTable t(
      trace->has_shapes
          ? std::vector<std::string>{"op", "shapes", "calls", "GPU time", "FLOP", "min bytes",
                                     "FLOP/B", "achieved", "of roof", "verdict"}
          : std::vector<std::string>{"op", "class", "calls", "kernels", "GPU time", "share"},
      trace->has_shapes
          ? std::vector<bool>{false, false, true, true, true, true, true, true, true, false}
          : std::vector<bool>{false, false, true, true, true, true});
  const size_t shown = o.top > 0 ? std::min<size_t>(o.top, groups.size()) : groups.size();
  std::set<std::string> warnings;
  for (size_t i = 0; i < groups.size(); ++i) {
    const TorchGroup& g = groups[i];
    nlohmann::json jg{{"op", g.name},     {"shapes", g.shapes},   {"class", NameOf(g.op_class)},
                      {"calls", g.calls}, {"kernels", g.kernels}, {"gpu_time_s", g.gpu_s}};
    if (!trace->has_shapes) {
      if (i < shown) {
        t.AddRow({g.name, std::string(NameOf(g.op_class)), std::to_string(g.calls),
                  std::to_string(g.kernels), Seconds(g.gpu_s),
                  total > 0 ? Pct(g.gpu_s / total) : "-"});
      }
      if (json) out_json["ops"].push_back(jg);
      continue;
    }
    const bool costed = g.costed && g.flops + g.bytes > 0 && g.gpu_s > 0;
    Placement p;
    if (costed && device.ok()) {
      p = PlaceKernel(*device, g.dtype, g.flops, {{"dram", g.bytes}}, g.gpu_s);
      for (const std::string& w : p.warnings) warnings.insert(g.name + " " + g.shapes + ": " + w);
      if (g.flops > 0) {
        points.push_back({g.name.substr(g.name.rfind(':') + 1), "measured", g.flops / g.bytes,
                          p.achieved_flops_per_s, total > 0 ? g.gpu_s / total : 0});
        engines.push_back(g.dtype);
      }
      jg["flops"] = g.flops;
      jg["min_bytes"] = g.bytes;
      jg["engine"] = g.dtype;
      jg["achieved_flops_per_s"] = p.achieved_flops_per_s;
      jg["percent_of_roof"] = p.percent_of_roof;
      jg["verdict"] = p.verdict;
    }
    jg["cost_note"] = g.note;
    if (json) out_json["ops"].push_back(jg);
    if (i >= shown) continue;
    std::string shapes = g.shapes.size() > 34 ? g.shapes.substr(0, 31) + "..." : g.shapes;
    if (!costed) {
      t.AddRow({g.name, shapes, std::to_string(g.calls), Seconds(g.gpu_s), "-", "-", "-", "-", "-",
                g.note.empty() ? "no cost rule" : g.note});
      continue;
    }
    t.AddRow({g.name, shapes, std::to_string(g.calls), Seconds(g.gpu_s), Si(g.flops, "FLOP"),
              Si(g.bytes, "B"), g.bytes > 0 ? fmt::format("{:.3g}", g.flops / g.bytes) : "-",
              g.flops > 0 ? Si(p.achieved_flops_per_s, "FLOP/s") : Si(g.bytes / g.gpu_s, "B/s"),
              fmt::format("{:.0f}%", p.percent_of_roof), p.verdict});
  }
  if (!json) {
    out << fmt::format("\nops with GPU work, by GPU time ({} of {}){}:\n", shown, groups.size(),
                       trace->has_shapes ? "; FLOPs and minimum bytes from the recorded shapes "
                                           "(each input read once, the output written once)"
                                         : "");
    out << t.Render(2);
    for (const std::string& w : warnings) out << "warning: " << w << "\n";
  } else {
    out_json["warnings"] = std::vector<std::string>(warnings.begin(), warnings.end());
  }
  if (!device.ok()) {
    if (json) *ctx.out << out_json.dump(2) << "\n";
    return kExitOk;
  }
  return FinishWithModel(ctx, o, *device, measured, true, points, engines,
                         json ? &out_json : nullptr,
                         fmt::format("{} on {} (PyTorch profiler)", o.file, device->id));
}

}  // namespace roofline::cli
