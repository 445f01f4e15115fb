// Reports of `roofline profile ncu`: per-kernel figures and their place on the roofline.
#include <fmt/format.h>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/phrases.h"
#include "src/report/profile_json.h"
#include "src/report/table.h"

namespace roofline {
namespace {

std::string OptSi(const std::optional<double>& v, const char* unit) {
  return v ? Si(*v, unit) : "-";
}

/// The kernels to list: all, or the `top` with the most time (all launches together; no time
/// counts as none), in the file's order.
std::vector<size_t> Listed(const NcuSummary& s, int top) {
  std::vector<size_t> all(s.kernels.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (top <= 0 || static_cast<size_t>(top) >= all.size()) return all;
  auto time = [&](size_t i) { return s.kernels[i].time_s.value_or(0) * s.kernels[i].launches; };
  std::stable_sort(all.begin(), all.end(), [&](size_t a, size_t b) { return time(a) > time(b); });
  all.resize(static_cast<size_t>(top));
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

std::string RenderNcuProfileTable(const NcuSummary& s, const std::string& file,
                                  const std::string& layout, const Device* dev,
                                  const std::string& device_note, int top) {
  std::string out = fmt::format(
      "profile: {}: Nsight Compute CSV, {}; {} of {}\n", file, layout,
      Count(static_cast<double>(s.launches), "launch", "launches"),
      Count(static_cast<double>(s.kernels.size()), "kernel"));
  if (dev) {
    out += fmt::format("device: {} ({}): {}\n", dev->id, dev->name, device_note);
  } else {
    out += fmt::format("device: none ({}); no roofline placement\n", device_note);
  }
  if (s.sm_clock_hz) {
    if (s.low_clock()) {
      out += fmt::format(
          "warning: the kernels ran at a {} SM clock, {} of the {}'s {} boost clock: a locked "
          "clock (Nsight Compute's default --clock-control base; `roofline ncu-command` passes "
          "--clock-control none) or throttling; compute-bound kernels take up to {:.2f}x their boost-clock time, "
          "and the peaks they are placed against here are at boost\n",
          Si(*s.sm_clock_hz, "Hz"), Pct(*s.sm_clock_hz / s.boost_clock_hz), dev->id,
          Si(s.boost_clock_hz, "Hz"), s.boost_clock_hz / *s.sm_clock_hz);
    } else {
      out += fmt::format("SM clock {}{}\n", Si(*s.sm_clock_hz, "Hz"),
                         s.boost_clock_hz > 0
                             ? fmt::format(" ({} of the {}'s {} boost clock)",
                                           Pct(*s.sm_clock_hz / s.boost_clock_hz), dev->id,
                                           Si(s.boost_clock_hz, "Hz"))
                             : "");
    }
  }
  out += "figures per launch (launches of one kernel with the same grid and block averaged)\n\n";
  TextTable m(
      {"#", "kernel", "class", "launches", "time", "FLOP", "by precision", "DRAM", "L2", "L1"},
      {true, false, false, true, true, true, false, true, true, true});
  TextTable r({"#", "kernel", "FLOP/B DRAM", "L2", "L1", "achieved", "of peak", "DRAM B/s", "of bw",
               "L2 B/s", "of roof", "verdict"},
              {true, false, true, true, true, true, true, true, true, true, true, false});
  const std::vector<size_t> listed = Listed(s, top);
  if (listed.size() < s.kernels.size()) {
    out += fmt::format("the {} with the most time of {} (--top 0 lists every one)\n",
                       Count(static_cast<double>(listed.size()), "kernel"), s.kernels.size());
  }
  std::vector<std::string> full, legend;
  for (size_t i : listed) full.push_back(s.kernels[i].name);
  const std::vector<std::string> short_names = DistinctShortKernelNames(full, 44, legend);
  size_t row = 0;
  for (size_t i : listed) {
    const NcuKernelSummary& g = s.kernels[i];
    const Placement& p = g.placement;
    const double n = g.launches;
    auto per = [&](const std::optional<double>& v) -> std::optional<double> {
      if (!v) return std::nullopt;
      return *v / n;
    };
    const std::string id = std::to_string(i + 1);
    const std::string& shortname = short_names[row++];
    std::string precisions;
    auto add_precision = [&](const std::string& label, const std::optional<double>& v) {
      if (!v || *v <= 0) return;
      if (!precisions.empty()) precisions += ", ";
      precisions += label + " " + Si(*v / n, "");
    };
    add_precision("fp64", g.sum.fp64_flops);
    add_precision("fp32", g.sum.fp32_flops);
    add_precision("fp16", g.sum.fp16_flops);
    add_precision(g.sum.tensor_dtype.empty() ? "tensor" : "tensor." + g.sum.tensor_dtype,
                  g.sum.tensor_flops);
    const bool any_flop_metric =
        g.sum.fp64_flops || g.sum.fp32_flops || g.sum.fp16_flops ||
        (g.sum.tensor_flops && *g.sum.tensor_flops > 0);  // tensor = 0 alone says nothing
    m.AddRow({id, shortname, std::string(NameOf(ClassifyKernel(g.name))),
              std::to_string(g.launches), g.time_s ? Seconds(*g.time_s) : "-",
              any_flop_metric ? Si(g.flops, "FLOP") : "-", precisions.empty() ? "-" : precisions,
              OptSi(per(g.sum.dram_bytes), "B"), OptSi(per(g.sum.l2_bytes), "B"),
              OptSi(per(g.sum.l1_bytes), "B")});
    if (!dev) continue;
    const Placement::Level* dram = nullptr;
    const Placement::Level* l2 = nullptr;
    const Placement::Level* l1 = nullptr;
    for (const Placement::Level& l : p.levels) {
      if (l.level == dev->memory.front().name) {
        dram = &l;
      } else if (l.level == "l2") {
        l2 = &l;
      } else {
        l1 = &l;  // "l1" or the device's "smem"
      }
    }
    auto intensity = [&](const Placement::Level* l) {
      return l && g.flops > 0 ? fmt::format("{:.3g}", l->intensity) : std::string("-");
    };
    r.AddRow({id, shortname, intensity(dram), intensity(l2), intensity(l1),
              g.time_s && g.flops > 0 ? Si(p.achieved_flops_per_s, "FLOP/s") : "-",
              p.peak_flops_per_s > 0 ? Pct(p.achieved_flops_per_s / p.peak_flops_per_s) : "-",
              dram ? Si(dram->achieved_bytes_per_s, "B/s") : "-",
              dram && dram->peak_bytes_per_s > 0
                  ? Pct(dram->achieved_bytes_per_s / dram->peak_bytes_per_s)
                  : "-",
              l2 ? Si(l2->achieved_bytes_per_s, "B/s") : "-",
              g.time_s ? fmt::format("{:.0f}%", p.percent_of_roof) : "-", p.verdict});
  }
  out += m.Render(2);
  if (!legend.empty()) {
    out += "kernels whose short names are alike, in full:\n";
    for (const std::string& l : legend) out += "  " + l + "\n";
  }
  if (dev) {
    out += fmt::format(
        "\non the roofline of {} (verdict: the resource used most, if at least 50% "
        "of its ceiling; else latency / occupancy):\n",
        dev->id);
    out += r.Render(2);
  }
  for (const std::string& w : s.warnings) out += "warning: " + w + "\n";
  for (const auto& [note, which] : s.notes) {
    out +=
        s.kernels.size() > 1 ? fmt::format("note ({}): {}\n", which, note) : "note: " + note + "\n";
  }
  if (!s.missing.empty()) {
    // A wildcard name becomes an ncu regular expression ("regex:" prefix of --metrics).
    std::string list, flags;
    for (const std::string& x : s.missing) {
      list += (list.empty() ? "" : ",") + x;
      std::string flag = x;
      if (const size_t star = flag.find('*'); star != std::string::npos) {
        std::string re;
        for (char c : flag)
          re += c == '*' ? std::string(".*") : c == '.' ? "\\." : std::string(1, c);
        flag = "regex:" + re + "$";
      }
      flags += (flags.empty() ? "" : ",") + flag;
    }
    out += fmt::format(
        "missing metrics (figures that need them are shown as -): {}\n  collect them with: "
        "ncu --metrics '{}' --csv --print-units base <app>   (or: roofline ncu-command --hw "
        "{})\n",
        list, flags, dev ? dev->id : std::string("ID"));
  }
  return out;
}

nlohmann::json NcuProfileJson(const NcuSummary& s, const std::string& file,
                              const std::string& layout, const Device* dev,
                              const std::string& device_note, int top) {
  nlohmann::json j;
  j["file"] = file;
  j["format"] = "ncu " + layout;
  if (dev) {
    j["device"] = dev->id;
  } else {
    j["device"] = nullptr;
  }
  j["device_match"] = device_note;
  if (s.sm_clock_hz) {
    j["sm_clock_hz"] = *s.sm_clock_hz;
    if (s.boost_clock_hz > 0) j["boost_clock_hz"] = s.boost_clock_hz;
    j["low_clock"] = s.low_clock();
  }
  j["kernels_total"] = s.kernels.size();
  j["kernels"] = nlohmann::json::array();
  for (size_t i : Listed(s, top)) {
    const NcuKernelSummary& g = s.kernels[i];
    const Placement& p = g.placement;
    nlohmann::json k{{"index", i + 1},
                     {"name", g.name},
                     {"grid", g.grid},
                     {"block", g.block},
                     {"class", NameOf(ClassifyKernel(g.name))},
                     {"launches", g.launches},
                     {"flops", g.flops},
                     {"engine", g.engine},
                     {"verdict", dev ? nlohmann::json(p.verdict) : nlohmann::json(nullptr)},
                     {"percent_of_roof", p.percent_of_roof},
                     {"achieved_flops_per_s", p.achieved_flops_per_s}};
    if (g.time_s) k["time_s"] = *g.time_s;
    for (const Placement::Level& l : p.levels) {
      k["levels"].push_back({{"level", l.level},
                             {"bytes", l.bytes},
                             {"intensity", l.intensity},
                             {"achieved_bytes_per_s", l.achieved_bytes_per_s},
                             {"peak_bytes_per_s", l.peak_bytes_per_s}});
    }
    k["missing_metrics"] = g.missing;
    k["notes"] = g.notes;
    k["warnings"] = p.warnings;
    j["kernels"].push_back(k);
  }
  j["missing_metrics"] = std::vector<std::string>(s.missing.begin(), s.missing.end());
  j["warnings"] = std::vector<std::string>(s.warnings.begin(), s.warnings.end());
  return j;
}

}  // namespace roofline
