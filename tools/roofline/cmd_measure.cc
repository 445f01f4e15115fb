// `roofline measure [--device cpu|cuda] [--threads N] [--quick] [-o profile.json]`.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <ostream>
#include <string>

#include "roofline/cuda_measure.h"
#include "roofline/measure.h"
#include "roofline/report.h"
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
  *ctx.out << RenderCudaMeasurement(*m);
  if (!o.output.empty()) {
    Status s = WriteFileAtomically(o.output, DeviceToJson(d) + "\n");
    if (!s.ok()) return Fail(ctx, s);
    *ctx.out << "\nwrote " << o.output << " (use it with --hw " << o.output << ")\n";
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
  *ctx.out << RenderCpuMeasurement(*m);
  if (!o.output.empty()) {
    Status s = WriteFileAtomically(o.output, DeviceToJson(d) + "\n");
    if (!s.ok()) return Fail(ctx, s);
    *ctx.out << "\nwrote " << o.output << " (use it with --hw " << o.output << ")\n";
  }
  return kExitOk;
}

}  // namespace roofline::cli
