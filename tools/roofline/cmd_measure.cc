// `roofline measure [--device cpu|cuda] [--threads N] [--quick] [-o profile.json]`.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <ostream>
#include <string>

#include "roofline/cuda_measure.h"
#include "roofline/measure.h"
#include "roofline/units.h"
#include "src/report/table.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

/// Options of `roofline measure`.
struct MeasureCommandOptions {
  std::string device = "cpu";  ///< cpu | cuda[:N]
  int threads = 0;             ///< 0: every online CPU
  bool quick = false;          ///< under ~20 s
  std::string output;          ///< device JSON to write
};

namespace {

/// Progress on stderr: a bar on a terminal, one line per stage otherwise.
std::function<void(double, const std::string&)> Progress(Context& ctx, bool tty,
                                                         std::string* last) {
  return [&ctx, tty, last](double f, const std::string& what) {
    if (tty) {
      const int width = 30;
      const int done = static_cast<int>(f * width + 0.5);
      *ctx.err << "\r[" << std::string(done, '#') << std::string(width - done, '.') << "] "
               << fmt::format("{:3.0f}% {:<28}", 100 * f, what) << std::flush;
    } else if (what != *last) {
      *ctx.err << fmt::format("measure: {:3.0f}% {}\n", 100 * f, what);
    }
    *last = what;
  };
}

std::string Percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100 * part / whole) : "-";
}

/// `measure --device cuda[:N]`.
int RunMeasureCuda(Context& ctx, const MeasureCommandOptions& o) {
  Result<int> index = cuda_plan::ParseCudaDevice(o.device);
  if (!index.ok()) return Fail(ctx, index.status());
  if (!CudaBackendCompiled()) {
    return Fail(ctx, Status::Unsupported("--device " + o.device, CudaBackendMissingReason()));
  }
  Result<int> count = CudaDeviceCount();
  if (!count.ok()) {
    return Fail(ctx, Status::Unsupported("--device " + o.device, count.status().what()));
  }
  CudaMeasureOptions mo;
  mo.device = *index;
  mo.quick = o.quick;
  const bool tty = isatty(fileno(stderr)) != 0;
  std::string last;
  mo.progress = Progress(ctx, tty, &last);
  Result<CudaMeasurement> m = MeasureCuda(mo);
  if (tty && !last.empty()) *ctx.err << "\n";
  if (!m.ok()) return Fail(ctx, m.status());
  const Device d = ToDevice(*m);
  const CudaDeviceInfo& info = m->info;
  std::ostream& out = *ctx.out;
  out << fmt::format(
      "{} (cuda:{}) - compute capability {}, {} SMs, {} SM clock, {} memory, {} L2, {} mode, "
      "{}\n\n",
      info.name, info.index, info.ComputeCapability(), info.sm_count, Si(info.sm_clock_hz, "Hz"),
      Si(info.global_memory_bytes, "B"), Si(info.l2_bytes, "B"), m->quick ? "quick" : "full",
      m->date);
  TextTable c({"ceiling", "measured", "spread", "theoretical", "share", "kernel"},
              {false, true, true, true, true, false});
  for (const CudaGemm& g : m->gemms) {
    const char* unit = g.dtype == "int8" ? "OP/s" : "FLOP/s";
    const cuda_plan::Peak t = cuda_plan::TheoreticalTensorPeak(info, g.dtype);
    if (g.skipped) {
      c.AddRow({"tensor." + g.dtype, "skipped", "-", "-", "-", g.why_skipped});
      continue;
    }
    c.AddRow({"tensor." + g.dtype, Si(g.flops_per_s.median, unit),
              fmt::format("{:.1f}%", 100 * g.flops_per_s.spread),
              t.value > 0 ? Si(t.value, unit) : "-", Percent(g.flops_per_s.median, t.value),
              fmt::format("cuBLASLt {}x{}x{}, {}", g.m, g.n, g.k, g.layout)});
  }
  for (const MeasuredCeiling& x : m->ceilings) {
    c.AddRow({x.engine, Si(x.flops_per_s.median, "FLOP/s"),
              fmt::format("{:.1f}%", 100 * x.flops_per_s.spread),
              x.theoretical > 0 ? Si(x.theoretical, "FLOP/s") : "-",
              Percent(x.flops_per_s.median, x.theoretical), x.method});
  }
  out << c.Render() << "\n";
  TextTable l({"level", "kernel", "working set", "bandwidth", "spread", "theoretical"},
              {false, false, true, true, true, true});
  const double dram_peak = cuda_plan::TheoreticalDramBandwidth(info).value;
  const double smem_peak = cuda_plan::TheoreticalSmemBandwidth(info).value;
  for (const CudaBandwidth& b : m->bandwidths) {
    const double peak = b.level == "dram" ? dram_peak : b.level == "smem" ? smem_peak : 0;
    l.AddRow({b.level == "dram" ? cuda_plan::DeviceMemoryName(info) : b.level, b.kernel,
              Si(b.working_set_bytes, "B"), Si(b.bytes_per_s.median, "B/s"),
              fmt::format("{:.1f}%", 100 * b.bytes_per_s.spread),
              peak > 0 ? Si(peak, "B/s") + " (" + Percent(b.bytes_per_s.median, peak) + ")" : "-"});
  }
  out << l.Render();
  out << "bandwidth = bytes read + bytes written per second; medians of launches timed with CUDA "
         "events after warm-up\n";
  if (!o.output.empty()) {
    Status s = WriteFileAtomically(o.output, DeviceToJson(d) + "\n");
    if (!s.ok()) return Fail(ctx, s);
    out << "\nwrote " << o.output << " (use it with --hw " << o.output << ")\n";
  }
  return kExitOk;
}

}  // namespace

int RunMeasure(Context& ctx) {
  CLI::App app{
      "Measure the ceilings this machine really delivers (peak FLOP/s per dtype, "
      "bandwidth per memory level, BLAS GEMM; on a GPU: cuBLASLt tensor-core peaks, CUDA-core "
      "FMA peaks, device memory / L2 / shared-memory bandwidth) and write them as a device "
      "profile that --hw accepts.\nexample: roofline measure --device cpu --quick -o cpu.json\n"
      "example: roofline measure --device cuda:0 -o h100.json",
      "roofline measure"};
  MeasureCommandOptions o;
  app.add_option("--device", o.device, "cpu, or cuda[:N] (needs the CUDA backend)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "threads (0: every online CPU)")->capture_default_str();
  app.add_flag("--quick", o.quick, "fewer sizes and repetitions (under ~20 s)");
  app.add_option("-o,--output", o.output, "write the measured device JSON here");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (o.device.rfind("cuda", 0) == 0) return RunMeasureCuda(ctx, o);
  if (o.device != "cpu") {
    return Fail(ctx, Status::Invalid("--device", "unknown device '" + o.device +
                                                     "' (expected cpu or cuda[:N])"));
  }
  if (o.threads < 0 || o.threads > 4096) {
    return Fail(ctx, Status::Invalid("--threads", "must be between 0 and 4096"));
  }
  MeasureOptions mo;
  mo.threads = o.threads;
  mo.quick = o.quick;
  const bool tty = isatty(fileno(stderr)) != 0;
  std::string last;
  mo.progress = Progress(ctx, tty, &last);
  Result<CpuMeasurement> m = MeasureCpu(mo);
  if (tty) *ctx.err << "\n";
  if (!m.ok()) return Fail(ctx, m.status());
  const Device d = ToDevice(*m);
  std::ostream& out = *ctx.out;
  out << fmt::format("{} - {} threads, {} ({}), {} mode, {}\n\n", m->info.model, m->threads,
                     m->info.Isa(),
                     m->info.clock_hz > 0 ? Si(m->info.clock_hz, "Hz") : "clock unknown",
                     m->quick ? "quick" : "full", m->date);
  TextTable c({"ceiling", "measured", "spread", "theoretical", "share", "kernel"},
              {false, true, true, true, true, false});
  for (const MeasuredCeiling& x : m->ceilings) {
    c.AddRow({x.engine, Si(x.flops_per_s.median, "FLOP/s"),
              fmt::format("{:.1f}%", 100 * x.flops_per_s.spread),
              x.theoretical > 0 ? Si(x.theoretical, "FLOP/s") : "-",
              x.theoretical > 0 ? fmt::format("{:.0f}%", 100 * x.flops_per_s.median / x.theoretical)
                                : "-",
              x.method});
  }
  out << c.Render() << "\n";
  TextTable l({"level", "size", "bandwidth", "spread", "kernel", "working sets"},
              {false, true, true, true, false, false});
  for (const MeasuredLevel& x : m->levels) {
    l.AddRow(
        {x.level,
         x.capacity_bytes > 0
             ? (x.instances > 1 ? fmt::format("{} x {}", Si(x.capacity_bytes, "B"), x.instances)
                                : Si(x.capacity_bytes, "B"))
             : "-",
         Si(x.bandwidth.median, "B/s"), fmt::format("{:.1f}%", 100 * x.bandwidth.spread), x.kernel,
         fmt::format("{} - {}", Si(x.from_bytes, "B"), Si(x.to_bytes, "B"))});
  }
  out << l.Render() << "\n";
  TextTable g({"GEMM (" + m->blas + ")", "dtype", "measured", "spread"},
              {false, false, true, true});
  for (const MeasuredGemm& x : m->gemms) {
    g.AddRow({fmt::format("{} x {} x {}", x.m, x.n, x.k), x.dtype,
              Si(x.flops_per_s.median, "FLOP/s"),
              fmt::format("{:.1f}%", 100 * x.flops_per_s.spread)});
  }
  out << g.Render();
  if (!o.output.empty()) {
    Status s = WriteFileAtomically(o.output, DeviceToJson(d) + "\n");
    if (!s.ok()) return Fail(ctx, s);
    out << "\nwrote " << o.output << " (use it with --hw " << o.output << ")\n";
  }
  return kExitOk;
}

}  // namespace roofline::cli
