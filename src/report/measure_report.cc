// Reports of `roofline measure`: the measured ceilings beside the theoretical ones.
#include <fmt/format.h>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/table.h"

namespace roofline {
namespace {

std::string Percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100 * part / whole) : "-";
}

}  // namespace

std::string RenderCpuMeasurement(const CpuMeasurement& m) {
  std::string out;
  out +=
      fmt::format("{} - {} threads, {} ({}), {} mode, {}\n\n", m.info.model, m.threads,
                  m.info.Isa(), m.info.clock_hz > 0 ? Si(m.info.clock_hz, "Hz") : "clock unknown",
                  m.quick ? "quick" : "full", m.date);
  TextTable c({"ceiling", "measured", "spread", "theoretical", "share", "kernel"},
              {false, true, true, true, true, false});
  for (const MeasuredCeiling& x : m.ceilings) {
    c.AddRow({x.engine, Si(x.flops_per_s.median, "FLOP/s"),
              fmt::format("{:.1f}%", 100 * x.flops_per_s.spread),
              x.theoretical > 0 ? Si(x.theoretical, "FLOP/s") : "-",
              x.theoretical > 0 ? fmt::format("{:.0f}%", 100 * x.flops_per_s.median / x.theoretical)
                                : "-",
              x.method});
  }
  out += c.Render() + "\n";
  TextTable l({"level", "size", "bandwidth", "spread", "kernel", "working sets"},
              {false, true, true, true, false, false});
  for (const MeasuredLevel& x : m.levels) {
    l.AddRow(
        {x.level,
         x.capacity_bytes > 0
             ? (x.instances > 1 ? fmt::format("{} x {}", Si(x.capacity_bytes, "B"), x.instances)
                                : Si(x.capacity_bytes, "B"))
             : "-",
         Si(x.bandwidth.median, "B/s"), fmt::format("{:.1f}%", 100 * x.bandwidth.spread), x.kernel,
         fmt::format("{} - {}", Si(x.from_bytes, "B"), Si(x.to_bytes, "B"))});
  }
  out += l.Render() + "\n";
  TextTable g({"GEMM (" + m.blas + ")", "dtype", "measured", "spread"}, {false, false, true, true});
  for (const MeasuredGemm& x : m.gemms) {
    g.AddRow({fmt::format("{} x {} x {}", x.m, x.n, x.k), x.dtype,
              Si(x.flops_per_s.median, "FLOP/s"),
              fmt::format("{:.1f}%", 100 * x.flops_per_s.spread)});
  }
  out += g.Render();
  return out;
}

std::string RenderCudaMeasurement(const CudaMeasurement& m) {
  const CudaDeviceInfo& info = m.info;
  std::string out;
  out += fmt::format(
      "{} (cuda:{}) - compute capability {}, {} SMs, {} SM clock, {} memory, {} L2, {} mode, "
      "{}\n\n",
      info.name, info.index, info.ComputeCapability(), info.sm_count, Si(info.sm_clock_hz, "Hz"),
      Si(info.global_memory_bytes, "B"), Si(info.l2_bytes, "B"), m.quick ? "quick" : "full",
      m.date);
  TextTable c({"ceiling", "fastest", "median", "spread", "theoretical", "share", "kernel"},
              {false, true, true, true, true, true, false});
  for (const CudaGemm& g : m.gemms) {
    const char* unit = g.dtype == "int8" ? "OP/s" : "FLOP/s";
    const cuda_plan::Peak t = cuda_plan::TheoreticalTensorPeak(info, g.dtype);
    if (g.skipped) {
      c.AddRow({"tensor." + g.dtype, "skipped", "-", "-", "-", "-", g.why_skipped});
      continue;
    }
    const double ceiling = CudaCeilingOf(g.flops_per_s);
    c.AddRow({"tensor." + g.dtype, Si(ceiling, unit), Si(g.flops_per_s.median, unit),
              fmt::format("{:.1f}%", 100 * g.flops_per_s.spread),
              t.value > 0 ? Si(t.value, unit) : "-", Percent(ceiling, t.value),
              fmt::format("{}x{}x{} (fastest of {} runs), {}", g.m, g.n, g.k, g.shapes_tried,
                          g.layout)});
  }
  for (const MeasuredCeiling& x : m.ceilings) {
    const double ceiling = CudaCeilingOf(x.flops_per_s);
    c.AddRow({x.engine, Si(ceiling, "FLOP/s"), Si(x.flops_per_s.median, "FLOP/s"),
              fmt::format("{:.1f}%", 100 * x.flops_per_s.spread),
              x.theoretical > 0 ? Si(x.theoretical, "FLOP/s") : "-",
              Percent(ceiling, x.theoretical), x.method});
  }
  out += c.Render() + "\n";
  TextTable l({"level", "kernel", "working set", "fastest", "median", "spread", "theoretical"},
              {false, false, true, true, true, true, true});
  const double dram_peak = cuda_plan::TheoreticalDramBandwidth(info).value;
  const double smem_peak = cuda_plan::TheoreticalSmemBandwidth(info).value;
  for (const CudaBandwidth& b : m.bandwidths) {
    const double peak = b.level == "dram" ? dram_peak : b.level == "smem" ? smem_peak : 0;
    const double ceiling = CudaCeilingOf(b.bytes_per_s);
    l.AddRow({b.level == "dram" ? cuda_plan::DeviceMemoryName(info) : b.level, b.kernel,
              Si(b.working_set_bytes, "B"), Si(ceiling, "B/s"), Si(b.bytes_per_s.median, "B/s"),
              fmt::format("{:.1f}%", 100 * b.bytes_per_s.spread),
              peak > 0 ? Si(peak, "B/s") + " (" + Percent(ceiling, peak) + ")" : "-"});
  }
  out += l.Render();
  out +=
      "bandwidth = bytes read + bytes written per second; launches timed with CUDA events after "
      "warm-up; each ceiling is the fastest launch of the fastest kernel (the device file's "
      "value)\n";
  TextTable s(
      {"GEMM shape (m x n x k)", "dtype", "layout", "fastest call", "fastest", "median", "spread"},
      {false, false, false, false, true, true, true});
  for (const CudaGemm& g : m.gemms) {
    const char* unit = g.dtype == "int8" ? "OP/s" : "FLOP/s";
    for (const CudaGemmShape& x : g.shapes) {
      s.AddRow({fmt::format("{} x {} x {}", x.m, x.n, x.k), g.dtype, x.transpose_a ? "TN" : "NN",
                x.library, Si(CudaCeilingOf(x.flops_per_s), unit), Si(x.flops_per_s.median, unit),
                fmt::format("{:.1f}%", 100 * x.flops_per_s.spread)});
    }
  }
  if (s.rows() > 0) {
    out += "\n" + s.Render();
    out +=
        "each tensor ceiling is the fastest launch of these; every timed GEMM launch follows an "
        "L2-sized write and a 1 ms GPU spin\n";
  }
  return out;
}

}  // namespace roofline
