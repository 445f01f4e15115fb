// An Nsight Compute report summarized: launches of one kernel (name, grid, block) averaged, and
// each kernel placed on the roofline of a device.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "roofline/profile.h"

namespace roofline {
namespace {

/// The ceiling an ncu kernel is compared against: the precision with the most FLOPs.
std::string EngineOfFigures(const NcuFigures& f) {
  if (f.tensor_flops && *f.tensor_flops > 0 && !f.tensor_dtype.empty()) {
    return "tensor." + f.tensor_dtype;
  }
  std::pair<double, std::string> best{0, "vector.fp32"};
  if (f.fp64_flops && *f.fp64_flops > best.first) best = {*f.fp64_flops, "vector.fp64"};
  if (f.fp32_flops && *f.fp32_flops > best.first) best = {*f.fp32_flops, "vector.fp32"};
  if (f.fp16_flops && *f.fp16_flops > best.first) best = {*f.fp16_flops, "vector.fp16"};
  return best.second;
}

void AddOpt(std::optional<double>& into, const std::optional<double>& v, bool first) {
  if (first) {
    into = v;
  } else if (into && v) {
    *into += *v;
  } else {
    into.reset();
  }
}

}  // namespace

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

NcuSummary SummarizeNcu(const NcuReport& report, const Device* dev) {
  NcuSummary s;
  s.launches = report.kernels.size();
  std::map<std::string, size_t> index;
  // The clock: duration-weighted over launches with both figures, else their plain mean.
  double weighted = 0, weight = 0, plain = 0;
  int clocked = 0;
  bool all_timed = true;
  for (const NcuKernel& k : report.kernels) {
    const NcuFigures f = DeriveNcuFigures(k);
    if (f.sm_clock_hz) {
      ++clocked;
      plain += *f.sm_clock_hz;
      if (f.duration_s) {
        weighted += *f.sm_clock_hz * *f.duration_s;
        weight += *f.duration_s;
      } else {
        all_timed = false;
      }
    }
    const std::string key = k.name + "\x1f" + k.grid + "\x1f" + k.block;
    auto [it, fresh] = index.try_emplace(key, s.kernels.size());
    if (fresh) {
      NcuKernelSummary g;
      g.name = k.name;
      g.grid = k.grid;
      g.block = k.block;
      s.kernels.push_back(std::move(g));
    }
    NcuKernelSummary& g = s.kernels[it->second];
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
    if (f.duration_s) {
      MeasuredKernel m{k.name, ClassifyKernel(k.name), *f.duration_s, 1};
      const bool counted = f.tensor_flops || f.fp32_flops || f.fp16_flops || f.fp64_flops;
      if (counted) m.flops = f.TotalFlops();
      s.measured.push_back(std::move(m));
    }
  }
  if (clocked > 0) {
    s.sm_clock_hz = all_timed && weight > 0 ? weighted / weight : plain / clocked;
  }
  if (dev) {
    for (const auto& [key, q] : dev->info) {
      if (key == "boost_clock") s.boost_clock_hz = q.value;
    }
  }
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    NcuKernelSummary& g = s.kernels[i];
    const double n = g.launches;
    g.flops = g.sum.TotalFlops() / n;
    if (g.sum.duration_s) g.time_s = *g.sum.duration_s / n;
    g.engine = EngineOfFigures(g.sum);
    std::vector<LevelBytes> bytes;
    if (g.sum.dram_bytes) bytes.push_back({"dram", *g.sum.dram_bytes / n});
    if (g.sum.l2_bytes) bytes.push_back({"l2", *g.sum.l2_bytes / n});
    if (g.sum.l1_bytes) bytes.push_back({"l1", *g.sum.l1_bytes / n});
    if (dev) g.placement = PlaceKernel(*dev, g.engine, g.flops, bytes, g.time_s.value_or(0));
    const Placement& p = g.placement;
    for (const std::string& x : g.missing) s.missing.insert(x);
    for (const std::string& x : g.notes) {
      auto it =
          std::find_if(s.notes.begin(), s.notes.end(), [&](const auto& e) { return e.first == x; });
      if (it == s.notes.end()) {
        s.notes.emplace_back(x, "#" + std::to_string(i + 1));
      } else {
        it->second += ", #" + std::to_string(i + 1);
      }
    }
    for (const std::string& w : p.warnings) {
      s.warnings.insert(fmt::format("#{} {}: {}", i + 1, ShortKernelName(g.name, 40), w));
    }
  }
  return s;
}

}  // namespace roofline
