// Host-side planning of the CUDA measurements: buffer sizes, theoretical peaks, dtype
// availability, GEMM shapes and statistics. Always compiled (no CUDA headers), so it is unit
// tested on machines without nvcc or a GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "roofline/cuda_measure.h"
#include "src/measure/cpu/timing.h"

namespace roofline {

std::string CudaDeviceInfo::ComputeCapability() const {
  return fmt::format("{}.{}", cc_major, cc_minor);
}

namespace cuda_plan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

/// Where the per-SM rates below come from: each is a vendor peak divided by SMs and clock.
constexpr const char* kRateSource =
    "per-SM rate from the vendor peak / (SMs x clock): A100 whitepaper (sm_80: 156/312/624 "
    "TFLOPS tf32/bf16/int8 dense, 108 SMs, 1410 MHz), RTX A6000 datasheet (sm_86: 77.4/154.8/"
    "309.7 T, 84 SMs, 1800 MHz), L40S datasheet (sm_89: 183/362/733 T tf32/bf16/fp8, 142 SMs, "
    "2520 MHz), H100 whitepaper (sm_90: 494.7/989.4/1978.9 T tf32/bf16/fp8, 132 SMs, 1830 MHz), "
    "B200 datasheet (sm_100: 1.125/2.25/4.5 P, 148 SMs)";

}  // namespace

Result<int> ParseCudaDevice(std::string_view spec) {
  if (spec == "cuda") return 0;
  if (spec.rfind("cuda:", 0) != 0 || spec.size() == 5) {
    return Status::Invalid(
        "--device", "expected cuda or cuda:N (a device index), got '" + std::string(spec) + "'");
  }
  const std::string_view digits = spec.substr(5);
  int index = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || index < 0 || index > 1023) {
    return Status::Invalid("--device", "expected cuda:N with N a device index (0, 1, ...), got '" +
                                           std::string(spec) + "'");
  }
  return index;
}

double DramWorkingSetBytes(const CudaDeviceInfo& info, bool quick) {
  double bytes = std::max(8.0 * info.l2_bytes, 256 * kMiB);
  bytes = std::min(bytes, quick ? 1 * kGiB : 4 * kGiB);
  if (info.global_memory_bytes > 0) bytes = std::min(bytes, info.global_memory_bytes / 4);
  const double granule = 2 * kMiB;
  return std::max(granule, std::floor(bytes / granule) * granule);
}

double L2WorkingSetBytes(const CudaDeviceInfo& info) {
  const double granule = 64 * 1024.0;
  const double l2 = info.l2_bytes > 0 ? info.l2_bytes : 4 * kMiB;
  return std::max(granule, std::floor(0.4 * l2 / granule) * granule);
}

// CUDA C++ Programming Guide, "Arithmetic Instructions": results per clock cycle per
// multiprocessor for 32-bit and 64-bit floating-point fused multiply-add.
int Fp32LanesPerSm(int sm) {
  switch (sm) {
    case 70:
    case 72:
    case 75:
    case 80:
      return 64;
    case 86:
    case 87:
    case 89:
    case 90:
    case 100:
    case 103:
    case 120:
    case 121:
      return 128;
    default:
      return 0;
  }
}

int Fp64LanesPerSm(int sm) {
  switch (sm) {
    case 70:
    case 80:
      return 32;
    case 90:
    case 100:
      return 64;
    case 75:
    case 86:
    case 87:
    case 89:
    case 120:
    case 121:
      return 2;
    default:
      return 0;
  }
}

double TensorFlopsPerClockPerSm(int sm, std::string_view dtype) {
  // Dense rates (no structured sparsity), fp32 accumulate for fp16/bf16/fp8, int32 for int8.
  struct Row {
    int sm;
    double tf32, bf16, fp16, fp8, int8;
  };
  static constexpr Row kRows[] = {
      {70, 0, 0, 1024, 0, 0},
      {75, 0, 0, 1024, 0, 2048},
      {80, 1024, 2048, 2048, 0, 4096},
      {86, 512, 1024, 1024, 0, 2048},
      {89, 512, 1024, 1024, 2048, 2048},
      {90, 2048, 4096, 4096, 8192, 8192},
      {100, 4096, 8192, 8192, 16384, 16384},
  };
  for (const Row& r : kRows) {
    if (r.sm != sm) continue;
    if (dtype == "tf32") return r.tf32;
    if (dtype == "bf16") return r.bf16;
    if (dtype == "fp16") return r.fp16;
    if (dtype == "fp8") return r.fp8;
    if (dtype == "int8") return r.int8;
  }
  return 0;
}

// Non-tensor 16-bit multiply-adds per clock per SM (packed HFMA2 pairs counted as two), from the
// vendors' non-tensor peaks / (SMs x boost clock x 2): A100 whitepaper (sm_80: fp16 78, bf16 39
// TFLOPS, 108 SMs, 1410 MHz), L40S datasheet (sm_89: 91.6 TFLOPS for both, 142 SMs, 2520 MHz; the
// same per-SM rate on sm_86 boards, RTX A6000 38.7 TFLOPS at 84 SMs, 1800 MHz), H100 whitepaper
// (sm_90: 133.8 TFLOPS for both, 132 SMs, 1980 MHz). Other architectures: unknown (0).
int Half16LanesPerSm(int sm, std::string_view dtype) {
  const bool bf16 = dtype == "bf16";
  switch (sm) {
    case 80:
      return bf16 ? 128 : 256;
    case 86:
    case 87:
    case 89:
      return 128;
    case 90:
      return 256;
    default:
      return 0;
  }
}

Peak TheoreticalVectorPeak(const CudaDeviceInfo& info, std::string_view dtype) {
  Peak p;
  const bool half16 = dtype == "fp16" || dtype == "bf16";
  const int lanes = dtype == "fp64" ? Fp64LanesPerSm(info.Sm())
                    : half16        ? Half16LanesPerSm(info.Sm(), dtype)
                                    : Fp32LanesPerSm(info.Sm());
  if (lanes == 0 || info.sm_count <= 0 || info.sm_clock_hz <= 0) return p;
  p.value = info.sm_count * static_cast<double>(lanes) * 2 * info.sm_clock_hz;
  p.formula = half16 ? fmt::format(
                           "{} SMs x {} {} multiply-adds per clock (non-tensor peaks of the A100 "
                           "and H100 whitepapers and the L40S datasheet, cc {}) x 2 FLOP x {:.4g} "
                           "Hz (peak SM clock, cudaDevAttrClockRate)",
                           info.sm_count, lanes, dtype, info.ComputeCapability(), info.sm_clock_hz)
                     : fmt::format(
                           "{} SMs x {} {} FMA lanes (CUDA C++ Programming Guide, arithmetic "
                           "instruction throughput, cc {}) x 2 FLOP x {:.4g} Hz (peak SM clock, "
                           "cudaDevAttrClockRate)",
                           info.sm_count, lanes, dtype, info.ComputeCapability(), info.sm_clock_hz);
  return p;
}

Peak TheoreticalTensorPeak(const CudaDeviceInfo& info, std::string_view dtype) {
  Peak p;
  const double rate = TensorFlopsPerClockPerSm(info.Sm(), dtype);
  if (rate == 0 || info.sm_count <= 0 || info.sm_clock_hz <= 0) return p;
  p.value = info.sm_count * rate * info.sm_clock_hz;
  p.formula = fmt::format("{} SMs x {:.0f} {}/clk/SM dense x {:.4g} Hz ({}{})", info.sm_count, rate,
                          dtype == "int8" ? "OP" : "FLOP", info.sm_clock_hz, kRateSource,
                          info.Sm() == 89 || info.Sm() == 86
                              ? "; GeForce boards run fp16/bf16/fp8 with fp32 accumulate at half "
                                "this rate"
                              : "");
  return p;
}

Peak TheoreticalDramBandwidth(const CudaDeviceInfo& info) {
  Peak p;
  if (info.memory_clock_hz <= 0 || info.memory_bus_width_bits <= 0) return p;
  p.value = 2 * info.memory_clock_hz * info.memory_bus_width_bits / 8.0;
  p.formula = fmt::format(
      "2 (double data rate) x {:.4g} Hz (cudaDevAttrMemoryClockRate) x {} bits / 8 "
      "(cudaDeviceProp::memoryBusWidth)",
      info.memory_clock_hz, info.memory_bus_width_bits);
  return p;
}

Peak TheoreticalSmemBandwidth(const CudaDeviceInfo& info) {
  Peak p;
  if (info.sm_count <= 0 || info.sm_clock_hz <= 0) return p;
  p.value = info.sm_count * 128.0 * info.sm_clock_hz;
  p.formula =
      fmt::format("{} SMs x 128 B/clk (32 banks x 4 B, CUDA C++ Programming Guide) x {:.4g} Hz",
                  info.sm_count, info.sm_clock_hz);
  return p;
}

std::string TensorDtypeUnavailable(int sm, std::string_view dtype) {
  if (dtype == "fp16") return sm >= 70 ? "" : "fp16 tensor cores need compute capability 7.0";
  if (dtype == "int8") return sm >= 75 ? "" : "int8 tensor cores need compute capability 7.5";
  if (dtype == "tf32" || dtype == "bf16") {
    return sm >= 80 ? "" : fmt::format("{} tensor cores need compute capability 8.0", dtype);
  }
  if (dtype == "fp8") {
    return sm >= 89 ? "" : "fp8 tensor cores need compute capability 8.9 (Ada) or 9.0 (Hopper)";
  }
  return fmt::format("unknown tensor dtype '{}'", dtype);
}

std::vector<std::string> TensorDtypes(int sm) {
  std::vector<std::string> out;
  for (const char* d : {"tf32", "bf16", "fp16", "fp8", "int8"}) {
    if (TensorDtypeUnavailable(sm, d).empty()) out.emplace_back(d);
  }
  return out;
}

int64_t GemmEdge(const CudaDeviceInfo& info, std::string_view dtype, bool quick) {
  int64_t edge = quick ? 4096 : 8192;
  // A and B in the input dtype, C/D in the output dtype (fp32 for tf32, int32 for int8, bf16 or
  // fp16 otherwise): at most 4 bytes an element, two output matrices (C and D) at worst.
  const double in_bytes = dtype == "tf32" ? 4 : (dtype == "fp8" || dtype == "int8") ? 1 : 2;
  const double out_bytes = (dtype == "tf32" || dtype == "int8") ? 4 : 2;
  auto bytes = [&](int64_t e) {
    const double n = static_cast<double>(e) * static_cast<double>(e);
    return n * (2 * in_bytes + 2 * out_bytes) + 64 * kMiB;  // + the cuBLASLt workspace
  };
  while (edge > 1024 && info.global_memory_bytes > 0 &&
         bytes(edge) > info.global_memory_bytes / 4) {
    edge /= 2;
  }
  return edge;
}

std::string DeviceMemoryName(const CudaDeviceInfo& info) {
  return info.memory_bus_width_bits >= 1024 ? "hbm" : "gddr";
}

std::string MeasuredDeviceId(const std::string& name) {
  std::string id;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      id += static_cast<char>(std::tolower(c));
    } else if (!id.empty() && id.back() != '-') {
      id += '-';
    }
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  if (id.empty()) id = "cuda";
  return id + "-measured";
}

void MedianAndSpread(std::vector<double> seconds, double* median, double* spread) {
  *median = 0;
  *spread = 0;
  if (seconds.empty()) return;
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  *median = n % 2 == 1 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  *spread = *median > 0 ? (seconds.back() - seconds.front()) / *median : 0;
}

Sample RatesFromSeconds(const std::vector<double>& seconds, double work) {
  std::vector<double> rates;
  rates.reserve(seconds.size());
  for (double s : seconds) {
    if (s > 0) rates.push_back(work / s);
  }
  return measure_internal::Summarize(std::move(rates));
}

int64_t ScaleIterations(int64_t trial_iterations, double trial_s, double target_s,
                        int64_t max_iterations) {
  if (trial_iterations < 1) trial_iterations = 1;
  if (!(trial_s > 0)) return std::clamp<int64_t>(trial_iterations * 16, 1, max_iterations);
  const double n = static_cast<double>(trial_iterations) * target_s / trial_s;
  if (!(n >= 1)) return 1;
  if (n >= static_cast<double>(max_iterations)) return max_iterations;
  return static_cast<int64_t>(std::llround(n));
}

}  // namespace cuda_plan
}  // namespace roofline
