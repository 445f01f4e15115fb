// `roofline profile nsys` and `profile torch` as tables and JSON, the join of any profile with a
// prediction, and the measured points each puts on a roofline chart.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/phrases.h"
#include "src/report/profile_json.h"
#include "src/report/table.h"

namespace roofline {
namespace {

std::string ClassTable(const ClassTotals& c, double total) {
  TextTable t({"class", "launches", "time", "share"}, {false, true, true, true});
  std::vector<std::pair<OpClass, ClassTotal>> rows(c.begin(), c.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.time_s > b.second.time_s; });
  for (const auto& [cls, v] : rows) {
    t.AddRow({std::string(NameOf(cls)), std::to_string(v.launches), Seconds(v.time_s),
              total > 0 ? Pct(v.time_s / total) : "-"});
    // A copy class split by where its copies went, where any crossed between host and device.
    if (cls != OpClass::kCopy || v.to_device + v.to_host == 0) continue;
    auto part = [&](const char* label, int64_t n, double s) {
      t.AddRow({label, std::to_string(n), Seconds(s), total > 0 ? Pct(s / total) : "-"});
    };
    part("  host to device", v.to_device, v.to_device_s);
    part("  device to host", v.to_host, v.to_host_s);
    part("  on the device", v.launches - v.to_device - v.to_host,
         std::max(0.0, v.time_s - v.to_device_s - v.to_host_s));  // no -0 from rounding
  }
  return t.Render(2);
}

nlohmann::json ClassJson(const ClassTotals& c, double total) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [cls, v] : c) {
    j.push_back({{"class", NameOf(cls)},
                 {"launches", v.launches},
                 {"time_s", v.time_s},
                 {"share", total > 0 ? v.time_s / total : 0.0}});
    if (cls == OpClass::kCopy && v.to_device + v.to_host > 0) {
      j.back()["host_to_device"] = {{"launches", v.to_device}, {"time_s", v.to_device_s}};
      j.back()["device_to_host"] = {{"launches", v.to_host}, {"time_s", v.to_host_s}};
    }
  }
  return j;
}

size_t Shown(int top, size_t n) { return top > 0 ? std::min<size_t>(top, n) : n; }

}  // namespace

namespace {

std::string RenderLaunchCheck(const LaunchCheck& lc) {
  if (lc.kernels == 0) return "";
  std::string out;
  const std::string shorter = fmt::format(
      "{} of {} launches ({}) are kernels under {}, {} of the GPU time", lc.short_launches,
      lc.kernels, Pct(static_cast<double>(lc.short_launches) / static_cast<double>(lc.kernels)),
      Seconds(kEagerLaunchS), lc.kernel_s > 0 ? Pct(lc.short_s / lc.kernel_s) : "-");
  const std::string remedy =
      "  Capture the step in a CUDA graph (torch.compile mode=\"reduce-overhead\") or fuse "
      "kernels.\n";
  if (lc.launch_bound() && lc.traced) {
    out += fmt::format(
        "launch-bound: the GPU ran no kernel for {} of the trace's {} while {}: it waits for the "
        "host, which needs ~{} to issue one eager PyTorch op (docs/profiles.md).\n",
        Pct(lc.idle_s / lc.span_s), Seconds(lc.span_s), shorter, Seconds(kEagerLaunchS));
    return out + remedy;
  }
  if (lc.launch_bound()) {
    out += fmt::format(
        "likely launch-bound: the mean kernel runs {}, under the ~{} of host time eager PyTorch "
        "spends issuing one op (docs/profiles.md), so the GPU would wait for the host; {} (a "
        "summary has no gaps to confirm it: a cuda_gpu_trace report does).\n",
        Seconds(lc.mean_s()), Seconds(kEagerLaunchS), shorter);
    return out + remedy;
  } else {
    out += fmt::format("launches: the mean kernel runs {}; {}\n", Seconds(lc.mean_s()), shorter);
  }
  if (lc.traced && lc.span_s > 0) {
    out += fmt::format(
        "  from the first kernel's start to the last one's end ({}), the GPU ran no "
        "kernel for {} ({})\n",
        Seconds(lc.span_s), Seconds(lc.idle_s), Pct(lc.idle_s / lc.span_s));
  }
  return out;
}

}  // namespace

std::string RenderNsysProfileTable(const NsysReport& report, const NsysSummary& summary,
                                   const std::string& file, int top) {
  std::ostringstream out;
  out << fmt::format("profile: {}: Nsight Systems {}; {}, {}, {} of GPU time\n", file,
                     report.report, Count(static_cast<double>(report.kernels.size()), "kernel"),
                     Count(static_cast<double>(summary.launches), "launch", "launches"),
                     Seconds(summary.gpu_time_s));
  out << RenderLaunchCheck(summary.launch);
  out << "\nby op class (name patterns: docs/profiles.md):\n";
  out << ClassTable(summary.classes, summary.gpu_time_s);
  const size_t shown = Shown(top, report.kernels.size());
  out << fmt::format("\nkernels by time ({} of {}):\n", shown, report.kernels.size());
  TextTable t({"kernel", "class", "launches", "total", "avg", "med", "share"},
              {false, false, true, true, true, true, true});
  std::vector<std::string> full, legend;
  for (size_t i = 0; i < shown; ++i) full.push_back(report.kernels[i].name);
  const std::vector<std::string> names = DistinctShortKernelNames(full, 52, legend);
  for (size_t i = 0; i < shown; ++i) {
    const NsysKernel& k = report.kernels[i];
    t.AddRow({names[i], std::string(NameOf(k.op_class)),
              std::to_string(k.instances), Seconds(k.total_s), Seconds(k.avg_s),
              Seconds(k.median_s),
              summary.gpu_time_s > 0 ? Pct(k.total_s / summary.gpu_time_s) : "-"});
  }
  out << t.Render(2);
  if (!legend.empty()) {
    out << "kernels whose short names are alike, in full:\n";
    for (const std::string& l : legend) out << "  " << l << "\n";
  }
  return out.str();
}

nlohmann::json NsysProfileJson(const NsysReport& report, const NsysSummary& summary,
                               const std::string& file) {
  nlohmann::json j;
  j["file"] = file;
  j["format"] = "nsys " + report.report;
  j["gpu_time_s"] = summary.gpu_time_s;
  const LaunchCheck& lc = summary.launch;
  j["launch"] = {{"launch_bound", lc.launch_bound()},   {"kernels", lc.kernels},
                 {"mean_kernel_s", lc.mean_s()},        {"short_threshold_s", kEagerLaunchS},
                 {"short_launches", lc.short_launches}, {"short_s", lc.short_s}};
  if (lc.traced) {
    j["launch"]["span_s"] = lc.span_s;
    j["launch"]["idle_s"] = lc.idle_s;
  }
  j["classes"] = ClassJson(summary.classes, summary.gpu_time_s);
  for (const NsysKernel& k : report.kernels) {
    j["kernels"].push_back({{"name", k.name},
                            {"class", NameOf(k.op_class)},
                            {"instances", k.instances},
                            {"total_s", k.total_s},
                            {"avg_s", k.avg_s},
                            {"median_s", k.median_s},
                            {"min_s", k.min_s},
                            {"max_s", k.max_s}});
  }
  return j;
}

std::string RenderTorchProfileTable(const TorchTrace& trace, const TorchSummary& summary,
                                    const std::string& file, const Device* device,
                                    const std::string& device_note, int top) {
  std::ostringstream out;
  const double total = summary.gpu_time_s;
  out << fmt::format(
      "profile: {}: PyTorch trace, {}; {} ({} of GPU time) under {}; "
      "shapes {}\n",
      file, trace.format, Count(static_cast<double>(trace.kernels.size()), "kernel"),
      Seconds(total), Count(static_cast<double>(trace.ops.size()), "op"),
      trace.has_shapes ? "recorded" : "not recorded");
  if (device != nullptr) {
    out << fmt::format("device: {} ({}): {}\n", device->id, device->name, device_note);
  } else {
    out << fmt::format("device: '{}' not in the database (pass --hw to place ops on a roofline)\n",
                       trace.device_name);
  }
  for (const std::string& n : trace.notes) out << "note: " << n << "\n";
  out << "\nby op class (kernel names, docs/profiles.md):\n";
  out << ClassTable(summary.classes, total);

  const bool shapes = trace.has_shapes;
  TextTable t(
      shapes ? std::vector<std::string>{"op", "shapes", "calls", "GPU time", "FLOP", "min bytes",
                                        "FLOP/B", "achieved", "of roof", "verdict"}
             : std::vector<std::string>{"op", "class", "calls", "kernels", "GPU time", "share"},
      shapes ? std::vector<bool>{false, false, true, true, true, true, true, true, true, false}
             : std::vector<bool>{false, false, true, true, true, true});
  const size_t shown = Shown(top, summary.groups.size());
  for (size_t i = 0; i < shown; ++i) {
    const TorchOpGroup& g = summary.groups[i];
    if (!shapes) {
      t.AddRow({g.name, std::string(NameOf(g.op_class)), std::to_string(g.calls),
                std::to_string(g.kernels), Seconds(g.gpu_time_s),
                total > 0 ? Pct(g.gpu_time_s / total) : "-"});
      continue;
    }
    const std::string shown_shapes =
        g.shapes.size() > 34 ? g.shapes.substr(0, 31) + "..." : g.shapes;
    if (!g.placement) {
      t.AddRow({g.name, shown_shapes, std::to_string(g.calls), Seconds(g.gpu_time_s), "-", "-", "-",
                "-", "-", g.cost_note.empty() ? "no cost rule" : g.cost_note});
      continue;
    }
    const Placement& p = *g.placement;
    t.AddRow(
        {g.name, shown_shapes, std::to_string(g.calls), Seconds(g.gpu_time_s), Si(g.flops, "FLOP"),
         Si(g.min_bytes, "B"), g.min_bytes > 0 ? fmt::format("{:.3g}", g.flops / g.min_bytes) : "-",
         g.flops > 0 ? Si(p.achieved_flops_per_s, "FLOP/s") : Si(g.min_bytes / g.gpu_time_s, "B/s"),
         fmt::format("{:.0f}%", p.percent_of_roof), p.verdict});
  }
  out << fmt::format("\nops with GPU work, by GPU time ({} of {}){}:\n", shown,
                     summary.groups.size(),
                     shapes ? "; FLOPs and minimum bytes from the recorded shapes "
                              "(each input read once, the output written once)"
                            : "");
  out << t.Render(2);
  for (const std::string& w : summary.warnings) out << "warning: " << w << "\n";
  return out.str();
}

nlohmann::json TorchProfileJson(const TorchTrace& trace, const TorchSummary& summary,
                                const std::string& file, const Device* device) {
  nlohmann::json j;
  j["file"] = file;
  j["format"] = "torch " + trace.format;
  j["device_name"] = trace.device_name;
  if (device != nullptr) j["device"] = device->id;
  j["gpu_time_s"] = summary.gpu_time_s;
  j["classes"] = ClassJson(summary.classes, summary.gpu_time_s);
  j["shapes"] = trace.has_shapes;
  for (const TorchOpGroup& g : summary.groups) {
    nlohmann::json jg{{"op", g.name},     {"shapes", g.shapes},   {"class", NameOf(g.op_class)},
                      {"calls", g.calls}, {"kernels", g.kernels}, {"gpu_time_s", g.gpu_time_s}};
    if (trace.has_shapes) {
      if (g.placement) {
        jg["flops"] = g.flops;
        jg["min_bytes"] = g.min_bytes;
        jg["engine"] = g.engine;
        jg["achieved_flops_per_s"] = g.placement->achieved_flops_per_s;
        jg["percent_of_roof"] = g.placement->percent_of_roof;
        jg["verdict"] = g.placement->verdict;
      }
      jg["cost_note"] = g.cost_note;
    }
    j["ops"].push_back(jg);
  }
  j["warnings"] = std::vector<std::string>(summary.warnings.begin(), summary.warnings.end());
  return j;
}

std::string RenderProfileJoinTable(const ProfileJoin& join, const std::string& title) {
  std::ostringstream out;
  out << fmt::format("\nagainst the prediction: {}; {:.2f} steps found in the profile\n", title,
                     join.steps);
  const bool expected = std::any_of(join.classes.begin(), join.classes.end(),
                                    [](const ClassJoin& cj) { return cj.expected_s_per_step > 0; });
  std::vector<std::string> header = {"class",     "predicted/step",      "measured",
                                     "steps",     "predicted time/step", "measured time/step",
                                     "efficiency"};
  std::vector<bool> right = {false, true, true, true, true, true, true};
  if (expected) {
    header.insert(header.end(), {"expected time/step", "of expected"});
    right.insert(right.end(), {true, true});
  }
  TextTable c(header, right);
  for (const ClassJoin& cj : join.classes) {
    // Less than one whole step in the profile: a per-step figure would be an extrapolation.
    const double per_step = join.steps >= 1 ? cj.measured_s / join.steps : 0;
    std::vector<std::string> row = {std::string(NameOf(cj.op_class)),
                                    std::to_string(cj.predicted_per_step),
                                    std::to_string(cj.measured),
                                    cj.predicted_per_step ? fmt::format("{:.2f}", cj.steps) : "-",
                                    cj.predicted_per_step ? Seconds(cj.predicted_s_per_step) : "-",
                                    per_step > 0 ? Seconds(per_step) : "-",
                                    per_step > 0 && cj.predicted_s_per_step > 0
                                        ? Pct(cj.predicted_s_per_step / per_step)
                                        : "-"};
    if (expected) {
      row.push_back(cj.expected_s_per_step > 0 ? Seconds(cj.expected_s_per_step) : "-");
      row.push_back(per_step > 0 && cj.expected_s_per_step > 0
                        ? Pct(cj.expected_s_per_step / per_step)
                        : "-");
    }
    c.AddRow(row);
  }
  out << c.Render(2);
  if (expected) {
    out << "  (efficiency = bound / measured: how close to the ideal roofline; of expected = "
           "expected / measured: how close to what real kernels achieve on this device)\n";
  }
  if (join.steps < 1) {
    out << fmt::format(
        "  (the profile holds {:.2f} of one predicted step: no per-step measured time; compare "
        "per kernel below)\n",
        join.steps);
  }
  if (join.ordered) {
    out << "\nper predicted kernel (efficiency = predicted bound / measured mean"
        << (expected ? "; of expected = expected time / measured mean" : "") << "):\n";
    std::vector<std::string> kh = {"kernel",    "group",    "class",   "x/step",    "bound",
                                   "predicted", "measured", "matched", "efficiency"};
    std::vector<bool> kr = {false, false, false, true, false, true, true, true, true};
    if (expected) {
      kh.insert(kh.end(), {"expected", "of expected"});
      kr.insert(kr.end(), {true, true});
    }
    kh.push_back("measured kernel");
    kr.push_back(false);
    TextTable k(kh, kr);
    for (const JoinRow& r : join.rows) {
      std::vector<std::string> row = {r.predicted.name,
                                      r.predicted.group.empty() ? "-" : r.predicted.group,
                                      std::string(NameOf(r.predicted.op_class)),
                                      std::to_string(r.predicted.repeat),
                                      r.predicted.bound,
                                      Seconds(r.predicted.bound_s),
                                      r.matched ? Seconds(r.measured_s) : "-",
                                      std::to_string(r.matched),
                                      r.matched ? Pct(r.efficiency) : "-"};
      if (expected) {
        row.push_back(r.predicted.expected_s > 0 ? Seconds(r.predicted.expected_s) : "-");
        row.push_back(r.matched && r.of_expected > 0 ? Pct(r.of_expected) : "-");
      }
      row.push_back(r.example.empty() ? "-" : ShortKernelName(r.example, 44));
      k.AddRow(row);
    }
    out << k.Render(2);
  }
  for (const std::string& n : join.notes) out << "note: " << n << "\n";
  return out.str();
}

std::string RenderJoinMismatch(const JoinMismatch& m, const std::string& title) {
  if (!m.any()) return "";
  std::vector<std::string> signs;
  if (m.faster_than_bound > 0) {
    signs.push_back(fmt::format("{} kernel(s) measured faster than their ideal bound (up to {})",
                                m.faster_than_bound, Pct(m.max_efficiency)));
  }
  if (m.shapes_disagree()) {
    signs.push_back(
        fmt::format("{} of {} GEMM launches' FLOPs (from their recorded shapes) are over "
                    "2x off their predicted kernel's",
                    m.shapes_off, m.shapes_checked));
  }
  if (m.steps_disagree()) {
    signs.push_back(fmt::format("the op classes hold different step counts ({} {:.2f}, {} {:.2f})",
                                NameOf(m.fewest_class), m.fewest_steps, NameOf(m.most_class),
                                m.most_steps));
  }
  std::string all;
  for (const std::string& s : signs) all += (all.empty() ? "" : "; ") + s;
  return fmt::format(
      "warning: this profile does not look like a run of {}: {}; check --model, --phase and the "
      "workload flags (--batch, --prompt, --context, --tp)\n",
      title, all);
}

nlohmann::json ProfileJoinJson(const ProfileJoin& join, const std::string& title) {
  nlohmann::json j;
  const JoinMismatch& m = join.mismatch;
  j["mismatch"] = {{"suspect", m.any()},
                   {"faster_than_bound", m.faster_than_bound},
                   {"max_efficiency", m.max_efficiency},
                   {"shapes_checked", m.shapes_checked},
                   {"shapes_off", m.shapes_off},
                   {"fewest_steps", m.fewest_steps},
                   {"fewest_steps_class", NameOf(m.fewest_class)},
                   {"most_steps", m.most_steps},
                   {"most_steps_class", NameOf(m.most_class)}};
  j["steps"] = join.steps;
  j["ordered"] = join.ordered;
  for (const ClassJoin& cj : join.classes) {
    j["classes"].push_back({{"class", NameOf(cj.op_class)},
                            {"predicted_per_step", cj.predicted_per_step},
                            {"predicted_s_per_step", cj.predicted_s_per_step},
                            {"expected_s_per_step", cj.expected_s_per_step},
                            {"measured", cj.measured},
                            {"measured_s", cj.measured_s},
                            {"steps", cj.steps}});
  }
  for (const JoinRow& r : join.rows) {
    j["kernels"].push_back({{"name", r.predicted.name},
                            {"group", r.predicted.group},
                            {"class", NameOf(r.predicted.op_class)},
                            {"repeat", r.predicted.repeat},
                            {"bound", r.predicted.bound},
                            {"predicted_s", r.predicted.bound_s},
                            {"matched", r.matched},
                            {"measured_s", r.measured_s},
                            {"efficiency", r.efficiency},
                            {"expected_s", r.predicted.expected_s},
                            {"expected_copies_s", r.predicted.expected_copies_s},
                            {"of_expected", r.of_expected},
                            {"measured_kernel", r.example}});
  }
  j["notes"] = join.notes;
  j["title"] = title;
  return j;
}

std::vector<RooflinePoint> NcuRooflinePoints(const NcuSummary& summary, const Device& device,
                                             std::vector<std::string>* engines) {
  std::vector<RooflinePoint> points;
  double total_time = 0;
  for (const NcuKernelSummary& g : summary.kernels) total_time += g.sum.duration_s.value_or(0);
  for (size_t i = 0; i < summary.kernels.size(); ++i) {
    const NcuKernelSummary& g = summary.kernels[i];
    if (!g.time_s || g.flops <= 0) continue;
    bool any = false;
    for (const Placement::Level& l : g.placement.levels) {
      if (l.bytes <= 0 || l.intensity <= 0) continue;
      int level = 0;
      for (size_t m = 0; m < device.memory.size(); ++m) {
        if (device.memory[m].name == l.level) level = static_cast<int>(m);
      }
      RooflinePoint pt;
      // Numbered as in the table: two launches configurations of one kernel stay apart.
      pt.label = "#" + std::to_string(i + 1) + " " + ShortKernelName(g.name, 24);
      pt.series = "measured";
      pt.intensity = l.intensity;
      pt.flops_per_s = g.placement.achieved_flops_per_s;
      pt.share = total_time > 0 ? g.sum.duration_s.value_or(0) / total_time : 0;
      pt.level = level;
      pt.group = static_cast<int>(i);
      pt.tip = fmt::format(
          "#{} {}\n{} launch(es), {} each, {} FLOP, {} FLOP/s achieved\n{} "
          "through {}: {} FLOP/B\n{}",
          i + 1, ShortKernelName(g.name, 60), g.launches, Seconds(*g.time_s), Si(g.flops, ""),
          Si(g.placement.achieved_flops_per_s, ""), Si(l.bytes, "B"), l.level, Num(l.intensity),
          g.placement.verdict);
      points.push_back(std::move(pt));
      any = true;
    }
    if (any) engines->push_back(g.engine);
  }
  return points;
}

std::vector<RooflinePoint> TorchRooflinePoints(const TorchSummary& summary,
                                               std::vector<std::string>* engines) {
  std::vector<RooflinePoint> points;
  for (const TorchOpGroup& g : summary.groups) {
    if (!g.placement || g.flops <= 0) continue;
    points.push_back({g.name.substr(g.name.rfind(':') + 1), "measured", g.flops / g.min_bytes,
                      g.placement->achieved_flops_per_s,
                      summary.gpu_time_s > 0 ? g.gpu_time_s / summary.gpu_time_s : 0});
    engines->push_back(g.engine);
  }
  return points;
}

std::vector<RooflinePoint> JoinRooflinePoints(const ProfileJoin& join) {
  std::vector<RooflinePoint> points;
  double total = 0;
  for (const JoinRow& r : join.rows) total += r.measured_s * static_cast<double>(r.matched);
  for (const JoinRow& r : join.rows) {
    if (r.matched == 0 || r.measured_s <= 0 || r.predicted.flops <= 0 ||
        r.predicted.device_bytes <= 0) {
      continue;
    }
    RooflinePoint pt;
    pt.label = r.predicted.name;
    pt.series = "measured";
    pt.intensity = r.predicted.flops / r.predicted.device_bytes;
    pt.flops_per_s = r.predicted.flops / r.measured_s;
    pt.share = total > 0 ? r.measured_s * static_cast<double>(r.matched) / total : 0;
    points.push_back(pt);
  }
  return points;
}

}  // namespace roofline
