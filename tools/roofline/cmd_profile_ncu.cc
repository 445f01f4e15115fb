// `roofline profile ncu FILE.csv`: Nsight Compute kernels on the roofline of their device.
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

/// The ceiling an ncu kernel is compared against: the precision with the most FLOPs.
std::string EngineOf(const NcuFigures& f) {
  if (f.tensor_flops && *f.tensor_flops > 0 && !f.tensor_dtype.empty()) {
    return "tensor." + f.tensor_dtype;
  }
  std::pair<double, std::string> best{0, "vector.fp32"};
  if (f.fp64_flops && *f.fp64_flops > best.first) best = {*f.fp64_flops, "vector.fp64"};
  if (f.fp32_flops && *f.fp32_flops > best.first) best = {*f.fp32_flops, "vector.fp32"};
  if (f.fp16_flops && *f.fp16_flops > best.first) best = {*f.fp16_flops, "vector.fp16"};
  return best.second;
}

/// Launches of one kernel (same name, grid and block) summed.
struct NcuGroup {
  std::string name, grid, block;
  int launches = 0;
  NcuFigures sum;  ///< figures summed over launches (absent if any launch lacks it)
  std::vector<std::string> missing, notes;
};

void AddOpt(std::optional<double>& into, const std::optional<double>& v, bool first) {
  if (first) {
    into = v;
  } else if (into && v) {
    *into += *v;
  } else {
    into.reset();
  }
}

/// A device from the `.peak_sustained` figures of the file (the largest over its kernels):
/// CUDA-core and tensor FLOP/s, DRAM / L2 / L1 bandwidth. Needs DRAM and one compute peak.
std::optional<Device> DeviceFromNcuPeaks(const NcuReport& report, const std::string& name) {
  NcuFigures best;
  auto take = [](std::optional<double>& into, const std::optional<double>& v) {
    if (v && *v > 0 && (!into || *v > *into)) into = v;
  };
  for (const NcuKernel& k : report.kernels) {
    const NcuFigures f = DeriveNcuFigures(k);
    take(best.peak_fp64_flops_per_s, f.peak_fp64_flops_per_s);
    take(best.peak_fp32_flops_per_s, f.peak_fp32_flops_per_s);
    take(best.peak_fp16_flops_per_s, f.peak_fp16_flops_per_s);
    take(best.peak_dram_bytes_per_s, f.peak_dram_bytes_per_s);
    take(best.peak_l2_bytes_per_s, f.peak_l2_bytes_per_s);
    take(best.peak_l1_bytes_per_s, f.peak_l1_bytes_per_s);
    if (f.peak_tensor_flops_per_s && !f.tensor_dtype.empty() &&
        (!best.peak_tensor_flops_per_s ||
         *f.peak_tensor_flops_per_s > *best.peak_tensor_flops_per_s)) {
      best.peak_tensor_flops_per_s = f.peak_tensor_flops_per_s;
      best.tensor_dtype = f.tensor_dtype;
    }
  }
  Device d;
  d.id = "ncu-peaks";
  d.name = name.empty() ? fmt::format("CC {} GPU", report.kernels.front().cc) : name;
  d.vendor = "NVIDIA";
  d.kind = "gpu";
  auto q = [](double v, const char* unit, const char* metric) {
    return MeasuredQuantity(
        v, unit, std::string("Nsight Compute ") + metric + ".peak_sustained x clock", "", 0);
  };
  auto compute = [&](const char* engine, const std::optional<double>& v, const char* metric) {
    if (v) d.compute.push_back({engine, q(*v, "FLOP/s", metric)});
  };
  compute("vector.fp64", best.peak_fp64_flops_per_s, "op_dfma");
  compute("vector.fp32", best.peak_fp32_flops_per_s, "op_ffma");
  compute("vector.fp16", best.peak_fp16_flops_per_s, "op_hfma");
  if (best.peak_tensor_flops_per_s) {
    d.compute.push_back({"tensor." + best.tensor_dtype,
                         q(*best.peak_tensor_flops_per_s, "FLOP/s", "sm__ops_path_tensor")});
  }
  // A level without a measured peak is still listed: its bytes and intensity are reported, with
  // no bandwidth roof.
  auto memory = [&](const char* level, const std::optional<double>& v, const char* metric) {
    MemoryLevel m;
    m.name = level;
    if (v) m.bandwidth = q(*v, "B/s", metric);
    d.memory.push_back(m);
  };
  memory("dram", best.peak_dram_bytes_per_s, "dram__bytes");
  memory("l2", best.peak_l2_bytes_per_s, "lts__t_bytes");
  memory("l1", best.peak_l1_bytes_per_s, "l1tex__t_bytes");
  if (d.compute.empty() || !best.peak_dram_bytes_per_s) return std::nullopt;
  return d;
}

}  // namespace

int RunProfileNcu(Context& ctx, const ProfileOptions& o) {
  Result<NcuReport> report = LoadNcuCsv(o.file);
  if (!report.ok()) return Fail(ctx, report.status());
  if (report->kernels.empty()) {
    return Fail(ctx, Status::Parse(o.file, "no kernel rows in the Nsight Compute CSV"));
  }
  const NcuKernel& first = report->kernels.front();
  const bool named =
      !first.device.empty() && first.device.find_first_not_of("0123456789") != std::string::npos;
  std::string how;
  Result<Device> device =
      ResolveProfileDevice(ctx, o.model.hw, named ? first.device : "", first.cc, &how);
  if (!device.ok() && o.model.hw.empty() && device.status().code() == StatusCode::kNotFound) {
    // No database device: the peaks the file measured itself (roofline ncu-command collects
    // them) make one.
    if (std::optional<Device> own = DeviceFromNcuPeaks(*report, named ? first.device : "")) {
      how = fmt::format(
          "no database device for compute capability {}; ceilings from the "
          "file's own .peak_sustained metrics",
          first.cc);
      device = std::move(*own);
    }
  }
  // Without a device the per-kernel figures are still reported; the roofline part needs one.
  const bool need_device = !o.model.hw.empty() || !o.model.model.empty() || !o.plot.empty();
  if (!device.ok() && (need_device || device.status().code() != StatusCode::kNotFound)) {
    return Fail(ctx, device.status());
  }
  const Device* dev = device.ok() ? &*device : nullptr;

  std::vector<NcuGroup> groups;
  std::map<std::string, size_t> index;
  std::vector<MeasuredKernel> measured;
  for (const NcuKernel& k : report->kernels) {
    const NcuFigures f = DeriveNcuFigures(k);
    const std::string key = k.name + "\x1f" + k.grid + "\x1f" + k.block;
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) groups.push_back({k.name, k.grid, k.block, 0, {}, {}, {}});
    NcuGroup& g = groups[it->second];
    const bool first_launch = g.launches == 0;
    AddOpt(g.sum.duration_s, f.duration_s, first_launch);
    AddOpt(g.sum.fp64_flops, f.fp64_flops, first_launch);
    AddOpt(g.sum.fp32_flops, f.fp32_flops, first_launch);
    AddOpt(g.sum.fp16_flops, f.fp16_flops, first_launch);
    AddOpt(g.sum.tensor_flops, f.tensor_flops, first_launch);
    AddOpt(g.sum.dram_bytes, f.dram_bytes, first_launch);
    AddOpt(g.sum.l2_bytes, f.l2_bytes, first_launch);
    AddOpt(g.sum.l1_bytes, f.l1_bytes, first_launch);
    if (first_launch) g.sum.tensor_dtype = f.tensor_dtype;
    for (const std::string& m : f.missing) {
      if (std::find(g.missing.begin(), g.missing.end(), m) == g.missing.end()) {
        g.missing.push_back(m);
      }
    }
    for (const std::string& n : f.notes) {
      if (std::find(g.notes.begin(), g.notes.end(), n) == g.notes.end()) g.notes.push_back(n);
    }
    ++g.launches;
    if (f.duration_s) measured.push_back({k.name, ClassifyKernel(k.name), *f.duration_s, 1});
  }

  const bool json = o.model.format == "json";
  nlohmann::json out_json;
  std::ostream& out = *ctx.out;
  if (json) {
    out_json["file"] = o.file;
    out_json["format"] = "ncu " + report->layout;
    if (dev) {
      out_json["device"] = dev->id;
      out_json["device_match"] = how;
    } else {
      out_json["device"] = nullptr;
      out_json["device_match"] = device.status().what();
    }
  } else {
    out << fmt::format("profile: {}: Nsight Compute CSV, {}; {} launches of {} kernels\n", o.file,
                       report->layout, report->kernels.size(), groups.size());
    if (dev) {
      out << fmt::format("device: {} ({}): {}\n", dev->id, dev->name, how);
    } else {
      out << fmt::format("device: none ({}); no roofline placement\n", device.status().what());
    }
    out << "figures per launch (launches of one kernel with the same grid and block averaged)\n\n";
  }
  TextTable m(
      {"#", "kernel", "class", "launches", "time", "FLOP", "by precision", "DRAM", "L2", "L1"},
      {true, false, false, true, true, true, false, true, true, true});
  TextTable r({"#", "kernel", "FLOP/B DRAM", "L2", "L1", "achieved", "of peak", "DRAM B/s", "of bw",
               "L2 B/s", "of roof", "verdict"},
              {true, false, true, true, true, true, true, true, true, true, true, false});
  std::vector<RooflinePoint> points;
  std::vector<std::string> engines;
  std::set<std::string> missing_all, warnings_all;
  std::vector<std::pair<std::string, std::string>> notes_all;  // note, the kernels it applies to
  double total_time = 0;
  for (const NcuGroup& g : groups) total_time += g.sum.duration_s.value_or(0);
  for (size_t i = 0; i < groups.size(); ++i) {
    const NcuGroup& g = groups[i];
    const double n = g.launches;
    auto per = [&](const std::optional<double>& v) -> std::optional<double> {
      if (!v) return std::nullopt;
      return *v / n;
    };
    const double flops = g.sum.TotalFlops() / n;
    const std::optional<double> time = per(g.sum.duration_s);
    const std::string engine = EngineOf(g.sum);
    std::vector<LevelBytes> bytes;
    if (g.sum.dram_bytes) bytes.push_back({"dram", *g.sum.dram_bytes / n});
    if (g.sum.l2_bytes) bytes.push_back({"l2", *g.sum.l2_bytes / n});
    if (g.sum.l1_bytes) bytes.push_back({"l1", *g.sum.l1_bytes / n});
    const Placement p =
        dev ? PlaceKernel(*dev, engine, flops, bytes, time.value_or(0)) : Placement{};
    for (const std::string& x : g.missing) missing_all.insert(x);
    for (const std::string& x : g.notes) {
      auto it = std::find_if(notes_all.begin(), notes_all.end(),
                             [&](const auto& e) { return e.first == x; });
      if (it == notes_all.end()) {
        notes_all.emplace_back(x, "#" + std::to_string(i + 1));
      } else {
        it->second += ", #" + std::to_string(i + 1);
      }
    }
    for (const std::string& w : p.warnings) {
      warnings_all.insert(fmt::format("#{} {}: {}", i + 1, ShortKernelName(g.name, 40), w));
    }
    const std::string id = std::to_string(i + 1);
    const std::string shortname = ShortKernelName(g.name, 44);
    std::string precisions;
    auto add_precision = [&](const char* label, const std::optional<double>& v) {
      if (!v || *v <= 0) return;
      if (!precisions.empty()) precisions += ", ";
      precisions += std::string(label) + " " + Si(*v / n, "");
    };
    add_precision("fp64", g.sum.fp64_flops);
    add_precision("fp32", g.sum.fp32_flops);
    add_precision("fp16", g.sum.fp16_flops);
    add_precision(g.sum.tensor_dtype.empty() ? "tensor" : ("tensor." + g.sum.tensor_dtype).c_str(),
                  g.sum.tensor_flops);
    const bool any_flop_metric =
        g.sum.fp64_flops || g.sum.fp32_flops || g.sum.fp16_flops ||
        (g.sum.tensor_flops && *g.sum.tensor_flops > 0);  // tensor = 0 alone says nothing
    m.AddRow({id, shortname, std::string(NameOf(ClassifyKernel(g.name))),
              std::to_string(g.launches), time ? Seconds(*time) : "-",
              any_flop_metric ? Si(flops, "FLOP") : "-", precisions.empty() ? "-" : precisions,
              OptSi(per(g.sum.dram_bytes), "B"), OptSi(per(g.sum.l2_bytes), "B"),
              OptSi(per(g.sum.l1_bytes), "B")});
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
      return l && flops > 0 ? fmt::format("{:.3g}", l->intensity) : std::string("-");
    };
    if (dev)
      r.AddRow({id, shortname, intensity(dram), intensity(l2), intensity(l1),
                time && flops > 0 ? Si(p.achieved_flops_per_s, "FLOP/s") : "-",
                p.peak_flops_per_s > 0 ? Pct(p.achieved_flops_per_s / p.peak_flops_per_s) : "-",
                dram ? Si(dram->achieved_bytes_per_s, "B/s") : "-",
                dram && dram->peak_bytes_per_s > 0
                    ? Pct(dram->achieved_bytes_per_s / dram->peak_bytes_per_s)
                    : "-",
                l2 ? Si(l2->achieved_bytes_per_s, "B/s") : "-",
                time ? fmt::format("{:.0f}%", p.percent_of_roof) : "-", p.verdict});
    if (time && flops > 0 && dram && dram->bytes > 0) {
      points.push_back({ShortKernelName(g.name, 28), "measured", dram->intensity,
                        p.achieved_flops_per_s,
                        total_time > 0 ? g.sum.duration_s.value_or(0) / total_time : 0});
      engines.push_back(engine);
    }
    if (json) {
      nlohmann::json k{{"name", g.name},
                       {"grid", g.grid},
                       {"block", g.block},
                       {"class", NameOf(ClassifyKernel(g.name))},
                       {"launches", g.launches},
                       {"flops", flops},
                       {"engine", engine},
                       {"verdict", dev ? nlohmann::json(p.verdict) : nlohmann::json(nullptr)},
                       {"percent_of_roof", p.percent_of_roof},
                       {"achieved_flops_per_s", p.achieved_flops_per_s}};
      if (time) k["time_s"] = *time;
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
      out_json["kernels"].push_back(k);
    }
  }
  if (!json) {
    out << m.Render(2);
    if (dev) {
      out << fmt::format(
          "\non the roofline of {} (verdict: the resource used most, if at least 50% "
          "of its ceiling; else latency / occupancy):\n",
          dev->id);
      out << r.Render(2);
    }
    for (const std::string& w : warnings_all) out << "warning: " << w << "\n";
    for (const auto& [n, which] : notes_all) {
      out << (groups.size() > 1 ? fmt::format("note ({}): {}\n", which, n) : "note: " + n + "\n");
    }
    if (!missing_all.empty()) {
      // A wildcard name becomes an ncu regular expression ("regex:" prefix of --metrics).
      std::string list, flags;
      for (const std::string& x : missing_all) {
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
      out << fmt::format(
          "missing metrics (figures that need them are shown as -): {}\n  collect them with: "
          "ncu --metrics '{}' --csv --print-units base <app>   (or: roofline ncu-command --hw "
          "{})\n",
          list, flags, dev ? dev->id : std::string("ID"));
    }
  } else {
    out_json["missing_metrics"] = std::vector<std::string>(missing_all.begin(), missing_all.end());
    out_json["warnings"] = std::vector<std::string>(warnings_all.begin(), warnings_all.end());
  }
  if (!dev) {
    if (json) out << out_json.dump(2) << "\n";
    return kExitOk;
  }
  return FinishWithModel(ctx, o, *dev, measured, true, points, engines, json ? &out_json : nullptr,
                         fmt::format("{} on {} (Nsight Compute)", o.file, dev->id));
}

}  // namespace roofline::cli
