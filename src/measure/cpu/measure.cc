// The whole CPU measurement and its conversion to a device profile.
#include "roofline/measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "roofline/units.h"
#include "src/measure/cpu/timing.h"

namespace roofline {
namespace {

constexpr const char* kCpuTool = "roofline measure --device cpu";

std::string Vendor(const std::string& model) {
  if (model.find("AMD") != std::string::npos) return "AMD";
  if (model.find("Intel") != std::string::npos) return "Intel";
  return "generic";
}

std::string LevelMethod(const MeasuredLevel& l, int threads) {
  return fmt::format(
      "{}: {} kernel, {} threads, working set {}\u2013{} (median over the plateau; bytes read + "
      "written, no write-allocate adjustment)",
      kCpuTool, l.kernel, threads, measure_internal::BinaryBytes(l.from_bytes),
      measure_internal::BinaryBytes(l.to_bytes));
}

const MeasuredGemm* BestGemm(const CpuMeasurement& m, const std::string& dtype) {
  const MeasuredGemm* best = nullptr;
  for (const auto& g : m.gemms) {
    if (g.dtype == dtype && (best == nullptr || g.flops_per_s.median > best->flops_per_s.median)) {
      best = &g;
    }
  }
  return best;
}

}  // namespace

Result<CpuMeasurement> MeasureCpu(const MeasureOptions& options) {
  if (options.threads < 0) {
    return Status::Invalid(
        "--threads", "must be >= 0 (0: every online CPU), got " + std::to_string(options.threads));
  }
  auto report = [&](double fraction, const std::string& what) {
    if (options.progress) options.progress(std::clamp(fraction, 0.0, 1.0), what);
  };
  CpuMeasurement m;
  m.date = measure_internal::TodayUtc();
  m.quick = options.quick;
  report(0, "detecting the CPU");
  m.info = DetectCpu();
  int threads = options.threads;
  if (threads == 0) {
    threads = m.info.logical_cpus;
    const size_t allowed = measure_internal::AllowedCpus().size();
    if (allowed > 0) threads = std::min(threads, static_cast<int>(allowed));
  }
  m.threads = std::max(threads, 1);

  // Rough shares of the run time: peak FLOP/s, bandwidth sweep, GEMMs.
  const double kFlopsEnd = 0.05, kSweepEnd = 0.85;
  report(0.01, "peak FLOP/s (" + m.info.Isa() + ")");
  m.ceilings = MeasurePeakFlops(m.info, m.threads, m.quick);
  report(kFlopsEnd, "bandwidth sweep");
  m.sweep = MeasureBandwidthSweep(m.info, m.threads, m.quick, [&](double f) {
    report(kFlopsEnd + (kSweepEnd - kFlopsEnd) * f, "bandwidth sweep");
  });
  m.levels = DetectLevels(m.info, m.sweep);
  report(kSweepEnd, "BLAS GEMM");
  m.gemms = MeasureGemms(m.threads, m.quick, &m.blas);
  report(1, "done");
  return m;
}

Device ToDevice(const CpuMeasurement& m) {
  Device d;
  d.id = "cpu-measured";
  d.name = m.info.model + " (measured)";
  d.vendor = Vendor(m.info.model);
  d.kind = "cpu";

  // Notes: how it was measured, and the BLAS figures (the schema has no engine for them).
  std::string isa_flags;
  const std::pair<bool, const char*> flags[] = {{m.info.avx2, "avx2"},
                                                {m.info.fma, "fma"},
                                                {m.info.avx512f, "avx512f"},
                                                {m.info.avx512_bf16, "avx512_bf16"},
                                                {m.info.avx512_vnni, "avx512_vnni"},
                                                {m.info.avx_vnni, "avx_vnni"}};
  for (const auto& [has, name] : flags) {
    if (has) isa_flags += std::string(isa_flags.empty() ? "" : " ") + name;
  }
  std::string notes =
      "Measured by `" + std::string(kCpuTool) + "` (" + (m.quick ? "quick" : "full") + " mode) on " +
      m.date + " with " + std::to_string(m.threads) + " pinned threads; kernels use " +
      m.info.Isa() + " (CPU flags: " + (isa_flags.empty() ? "none detected" : isa_flags) +
      "). Compute ceilings are register-only FMA (or dot-product) loops; bandwidths are the "
      "plateaus of a read/copy/triad sweep (bytes read + written, no "
      "write-allocate adjustment).";
  if (!m.blas.empty()) notes += " BLAS: " + m.blas + ".";
  for (const char* dtype : {"fp32", "fp64"}) {
    if (const MeasuredGemm* g = BestGemm(m, dtype); g != nullptr && g->flops_per_s.median > 0) {
      notes += std::string(" Best BLAS GEMM ") + dtype + ": " +
               Si(g->flops_per_s.median, "FLOP/s") + " at m=" + std::to_string(g->m) +
               " n=" + std::to_string(g->n) + " k=" + std::to_string(g->k) + ".";
    }
  }
  d.notes = notes;

  for (const MeasuredCeiling& c : m.ceilings) {
    if (!(c.flops_per_s.median > 0)) continue;
    const bool integer = c.engine.find("int") != std::string::npos;
    // A ceiling is never below what a real kernel achieved: if BLAS beat the FMA loop (a busy
    // machine can slow the short FMA runs), the best GEMM of that dtype is the ceiling.
    double value = c.flops_per_s.median;
    std::string method = std::string(kCpuTool) + ": " + c.method;
    const std::string dtype = c.engine.substr(c.engine.find('.') + 1);
    for (const MeasuredGemm& g : m.gemms) {
      if (g.dtype == dtype && g.flops_per_s.median > value) {
        value = g.flops_per_s.median;
        method = fmt::format(
            "{}: BLAS GEMM {}x{}x{} ({}) beat the FMA loop ({}), so it sets the "
            "ceiling",
            kCpuTool, g.m, g.n, g.k, m.blas, Si(c.flops_per_s.median, "FLOP/s"));
      }
    }
    Quantity q =
        MeasuredQuantity(value, integer ? "OP/s" : "FLOP/s", method, m.date, c.flops_per_s.spread);
    if (c.theoretical > 0) {
      q.note = "median of " + std::to_string(c.flops_per_s.repetitions) + " repetitions; " +
               "theoretical " + Si(c.theoretical, integer ? "OP/s" : "FLOP/s") + " = " +
               c.theoretical_formula;
    }
    d.compute.push_back({c.engine, std::move(q)});
  }

  auto find_level = [&](const std::string& name) -> const MeasuredLevel* {
    for (const auto& l : m.levels) {
      if (l.level == name && l.bandwidth.median > 0) return &l;
    }
    return nullptr;
  };

  // Device memory first.
  MemoryLevel dram;
  dram.name = "dram";
  const double mem_total = measure_internal::MemTotalBytes();
  const MeasuredLevel* dram_bw = find_level("dram");
  if (dram_bw != nullptr) {
    dram.bandwidth =
        MeasuredQuantity(dram_bw->bandwidth.median, "B/s", LevelMethod(*dram_bw, m.threads), m.date,
                         dram_bw->bandwidth.spread);
  } else {
    // No point of the sweep was far enough beyond the caches: the largest working set is the
    // closest thing to DRAM this run measured.
    const BandwidthPoint* far = nullptr;
    for (const auto& p : m.sweep) {
      if (p.bytes_per_s.median > 0 &&
          (far == nullptr || p.working_set_bytes > far->working_set_bytes ||
           (p.working_set_bytes == far->working_set_bytes &&
            p.bytes_per_s.median > far->bytes_per_s.median))) {
        far = &p;
      }
    }
    if (far != nullptr) {
      dram.bandwidth = MeasuredQuantity(far->bytes_per_s.median, "B/s",
                                        std::string(kCpuTool) + ": " + far->kernel + " kernel, " +
                                            std::to_string(m.threads) + " threads, working set " +
                                            measure_internal::BinaryBytes(far->working_set_bytes),
                                        m.date, far->bytes_per_s.spread);
      dram.bandwidth->note =
          "the sweep did not reach 4x the last-level cache: may include cache hits";
    }
  }
  if (mem_total > 0) {
    dram.capacity = SpecQuantity(mem_total, "B", "/proc/meminfo MemTotal");
  } else {
    double largest = 0;
    for (const auto& p : m.sweep) largest = std::max(largest, p.working_set_bytes);
    dram.capacity.value = std::max(largest, 1.0);
    dram.capacity.unit = "B";
    dram.capacity.provenance = Provenance::kDerived;
    dram.capacity.formula = "lower bound: the largest working set measured (" +
                            measure_internal::BinaryBytes(largest) +
                            "); /proc/meminfo was unreadable";
  }
  if (dram.bandwidth) d.memory.push_back(std::move(dram));

  // Caches, far to near.
  std::vector<CpuInfo::Cache> caches = m.info.caches;
  std::sort(caches.begin(), caches.end(),
            [](const CpuInfo::Cache& a, const CpuInfo::Cache& b) { return a.level > b.level; });
  for (const auto& c : caches) {
    MemoryLevel level;
    level.name = "l" + std::to_string(c.level);
    level.capacity =
        SpecQuantity(c.bytes, "B",
                     "sysfs /sys/devices/system/cpu/cpu0/cache/index*/size (level " +
                         std::to_string(c.level) + " data/unified cache, per instance)");
    level.instances = std::max(1, c.instances);
    if (const MeasuredLevel* l = find_level(level.name); l != nullptr) {
      level.bandwidth = MeasuredQuantity(l->bandwidth.median, "B/s", LevelMethod(*l, m.threads),
                                         m.date, l->bandwidth.spread);
    }
    d.memory.push_back(std::move(level));
  }

  d.info.emplace_back("cores", SpecQuantity(std::max(1, m.info.logical_cpus), "count",
                                            "sysconf(_SC_NPROCESSORS_ONLN): logical CPUs online"));
  if (m.info.clock_hz > 0) {
    d.info.emplace_back("clock", SpecQuantity(m.info.clock_hz, "Hz", m.info.clock_source));
  }
  return d;
}

}  // namespace roofline
