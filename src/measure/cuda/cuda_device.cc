// A CUDA measurement as a device profile, and validation rows from GPU timings. Plain host
// code, always compiled.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "roofline/cuda_measure.h"
#include "roofline/units.h"
#include "src/measure/cpu/timing.h"

namespace roofline {
namespace {

constexpr const char* kCudaTool = "roofline measure --device cuda";

double CeilingOf(const Sample& s) { return CudaCeilingOf(s); }

std::string HowRead(const Sample& s, const char* unit) {
  return fmt::format("the fastest of {} launches timed with CUDA events (median {})", s.repetitions,
                     Si(s.median, unit));
}

/// The fastest kernel of a level, or nullptr.
const CudaBandwidth* Best(const CudaMeasurement& m, const std::string& level) {
  const CudaBandwidth* best = nullptr;
  for (const CudaBandwidth& b : m.bandwidths) {
    if (b.level == level && CeilingOf(b.bytes_per_s) > 0 &&
        (best == nullptr || CeilingOf(b.bytes_per_s) > CeilingOf(best->bytes_per_s))) {
      best = &b;
    }
  }
  return best;
}

std::string BandwidthMethod(const CudaMeasurement& m, const CudaBandwidth& b) {
  std::string others;
  for (const CudaBandwidth& x : m.bandwidths) {
    if (x.level != b.level || &x == &b || !(CeilingOf(x.bytes_per_s) > 0)) continue;
    others += fmt::format("{}{} {}", others.empty() ? "" : ", ", x.kernel,
                          Si(CeilingOf(x.bytes_per_s), "B/s"));
  }
  return fmt::format(
      "{}: {} kernel (16-byte accesses, grid-stride), working set {}, bytes read + written, {}{}",
      kCudaTool, b.kernel, measure_internal::BinaryBytes(b.working_set_bytes),
      HowRead(b.bytes_per_s, "B/s"), others.empty() ? "" : "; other kernels: " + others);
}

}  // namespace

double CudaCeilingOf(const Sample& launches) { return launches.max; }

Device ToDevice(const CudaMeasurement& m) {
  const CudaDeviceInfo& info = m.info;
  Device d;
  d.id = cuda_plan::MeasuredDeviceId(info.name);
  d.name = fmt::format("{} (measured)", info.name);
  d.vendor = "NVIDIA";
  d.kind = "gpu";
  std::string notes = fmt::format(
      "Measured by `{}` ({} mode) on {} on CUDA device {} (compute capability {}, {} SMs, "
      "driver {}, runtime {}). Vector ceilings are register-only FMA loops on the CUDA cores; "
      "tensor ceilings are the fastest of cuBLASLt and cuBLAS GEMMs at seven large shapes and two "
      "layouts ({}); "
      "bandwidths "
      "count bytes read + written, device memory on buffers far larger than L2.",
      kCudaTool, m.quick ? "quick" : "full", m.date, info.index, info.ComputeCapability(),
      info.sm_count, info.driver_version, info.runtime_version,
      m.cublas.empty() ? "cuBLASLt" : m.cublas);
  for (const CudaGemm& g : m.gemms) {
    if (g.skipped) notes += fmt::format(" {} GEMM not measured: {}.", g.dtype, g.why_skipped);
  }
  d.notes = notes;

  for (const CudaGemm& g : m.gemms) {
    if (g.skipped || !(CeilingOf(g.flops_per_s) > 0)) continue;
    const bool integer = g.dtype == "int8";
    const char* unit = integer ? "OP/s" : "FLOP/s";
    Quantity q = MeasuredQuantity(
        CeilingOf(g.flops_per_s), unit,
        fmt::format("{}: GEMM {}x{}x{} ({}; the fastest of {} shapes and layouts), random "
                    "inputs, L2 written and a 1 ms GPU spin before each launch, {}",
                    kCudaTool, g.m, g.n, g.k, g.layout, g.shapes_tried, HowRead(g.flops_per_s, unit)),
        m.date, g.flops_per_s.spread);
    const cuda_plan::Peak t = cuda_plan::TheoreticalTensorPeak(info, g.dtype);
    if (t.value > 0) {
      q.note = fmt::format("{:.0f}% of theoretical {} = {}",
                           100 * CeilingOf(g.flops_per_s) / t.value, Si(t.value, unit), t.formula);
    }
    d.compute.push_back({fmt::format("tensor.{}", g.dtype), std::move(q)});
  }
  for (const MeasuredCeiling& c : m.ceilings) {
    if (!(CeilingOf(c.flops_per_s) > 0)) continue;
    Quantity q =
        MeasuredQuantity(CeilingOf(c.flops_per_s), "FLOP/s", fmt::format("{}: {}", kCudaTool, c.method),
                         m.date, c.flops_per_s.spread);
    if (c.theoretical > 0) {
      q.note = fmt::format("{}; {:.0f}% of theoretical {} = {}", HowRead(c.flops_per_s, "FLOP/s"),
                           100 * CeilingOf(c.flops_per_s) / c.theoretical,
                           Si(c.theoretical, "FLOP/s"), c.theoretical_formula);
    }
    d.compute.push_back({c.engine, std::move(q)});
  }

  const std::string props = "cudaGetDeviceProperties";
  MemoryLevel dram;
  dram.name = cuda_plan::DeviceMemoryName(info);
  dram.capacity = SpecQuantity(info.global_memory_bytes, "B", props + " totalGlobalMem");
  if (const CudaBandwidth* b = Best(m, "dram"); b != nullptr) {
    dram.bandwidth = MeasuredQuantity(CeilingOf(b->bytes_per_s), "B/s", BandwidthMethod(m, *b),
                                      m.date, b->bytes_per_s.spread);
    const cuda_plan::Peak t = cuda_plan::TheoreticalDramBandwidth(info);
    if (t.value > 0) {
      dram.bandwidth->note =
          fmt::format("{:.0f}% of theoretical {} = {}", 100 * CeilingOf(b->bytes_per_s) / t.value,
                      Si(t.value, "B/s"), t.formula);
    }
  }
  if (dram.capacity.value > 0) d.memory.push_back(std::move(dram));

  MemoryLevel l2;
  l2.name = "l2";
  l2.capacity = SpecQuantity(info.l2_bytes, "B", props + " l2CacheSize");
  if (const CudaBandwidth* b = Best(m, "l2"); b != nullptr) {
    l2.bandwidth = MeasuredQuantity(CeilingOf(b->bytes_per_s), "B/s", BandwidthMethod(m, *b),
                                    m.date, b->bytes_per_s.spread);
  }
  if (l2.capacity.value > 0) d.memory.push_back(std::move(l2));

  MemoryLevel smem;
  smem.name = "smem";
  smem.capacity = SpecQuantity(info.smem_per_sm_bytes, "B", props + " sharedMemPerMultiprocessor");
  smem.instances = std::max(1, info.sm_count);
  if (const CudaBandwidth* b = Best(m, "smem"); b != nullptr) {
    smem.bandwidth = MeasuredQuantity(CeilingOf(b->bytes_per_s), "B/s", BandwidthMethod(m, *b),
                                      m.date, b->bytes_per_s.spread);
    const cuda_plan::Peak t = cuda_plan::TheoreticalSmemBandwidth(info);
    if (t.value > 0) {
      smem.bandwidth->note =
          fmt::format("{:.0f}% of theoretical {} = {}", 100 * CeilingOf(b->bytes_per_s) / t.value,
                      Si(t.value, "B/s"), t.formula);
    }
  }
  if (smem.capacity.value > 0) d.memory.push_back(std::move(smem));

  d.info.emplace_back("sm_count",
                      SpecQuantity(info.sm_count, "count", props + " multiProcessorCount"));
  if (info.sm_clock_hz > 0) {
    d.info.emplace_back("boost_clock", SpecQuantity(info.sm_clock_hz, "Hz",
                                                    "cudaDevAttrClockRate (peak SM clock)"));
  }
  if (info.memory_clock_hz > 0) {
    d.info.emplace_back(
        "memory_clock",
        SpecQuantity(info.memory_clock_hz, "Hz", "cudaDevAttrMemoryClockRate (peak memory clock)"));
  }
  d.info.emplace_back("compute_capability", SpecQuantity(info.cc_major + info.cc_minor / 10.0,
                                                         "count", props + " major.minor"));
  return d;
}

}  // namespace roofline
