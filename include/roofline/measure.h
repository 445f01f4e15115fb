// Measured ceilings of the host CPU: peak arithmetic, bandwidth per memory level, BLAS GEMM.
#ifndef ROOFLINE_MEASURE_H_
#define ROOFLINE_MEASURE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roofline/device.h"
#include "roofline/status.h"

namespace roofline {

/// Median and spread of repeated timings of one quantity.
struct Sample {
  double median = 0;  ///< of the rate (FLOP/s or B/s)
  double min = 0;
  double max = 0;
  double spread = 0;  ///< (max - min) / median over the kept repetitions
  int repetitions = 0;
};

/// What the host is (from CPUID, /proc/cpuinfo and sysfs).
struct CpuInfo {
  std::string model;     ///< "AMD EPYC 7B13" or "unknown"
  int logical_cpus = 1;  ///< online CPUs
  bool avx2 = false, fma = false, avx512f = false, avx512_bf16 = false, avx512_vnni = false,
       avx_vnni = false;
  double clock_hz = 0;       ///< nominal or current clock, 0 when unknown
  std::string clock_source;  ///< where clock_hz came from
  /// Data/unified caches from sysfs: level (1, 2, 3), size per instance (bytes), instances.
  struct Cache {
    int level = 0;
    double bytes = 0;
    int instances = 1;
  };
  std::vector<Cache> caches;
  /// "avx512", "avx2+fma" or "scalar": the widest FMA path the kernels use.
  std::string Isa() const;
};

/// Reads CPUID, /proc/cpuinfo and /sys/devices/system/cpu.
CpuInfo DetectCpu();

/// One measured compute ceiling.
struct MeasuredCeiling {
  std::string engine;  ///< "vector.fp64", "vector.fp32", "vector.bf16", "tensor.int8"
  std::string method;  ///< kernel description ("avx2 fma, 8 independent accumulators")
  Sample flops_per_s;
  double theoretical = 0;  ///< cores x FMA units x lanes x 2 x clock, 0 when unknown
  std::string theoretical_formula;
};

/// One point of the bandwidth sweep.
struct BandwidthPoint {
  double working_set_bytes = 0;  ///< total over all threads
  std::string kernel;            ///< "read", "copy", "triad"
  Sample bytes_per_s;            ///< bytes read + bytes written per second, all threads
  int threads = 1;               ///< threads that ran it (per thread: working_set_bytes / threads)
};

/// A plateau of the sweep assigned to a memory level.
struct MeasuredLevel {
  std::string level;          ///< "l1", "l2", "l3", "dram"
  double capacity_bytes = 0;  ///< per instance (sysfs), 0 for dram (capacity from /proc/meminfo)
  int instances = 1;
  Sample bandwidth;                     ///< the best kernel's median on the plateau
  std::string kernel;                   ///< which kernel gave it
  double from_bytes = 0, to_bytes = 0;  ///< working sets the plateau spans
};

/// One BLAS GEMM shape.
struct MeasuredGemm {
  int64_t m = 0, n = 0, k = 0;
  std::string dtype;  ///< "fp32", "fp64"
  Sample flops_per_s;
};

struct CpuMeasurement {
  CpuInfo info;
  int threads = 1;
  bool quick = false;
  std::string date;  ///< YYYY-MM-DD
  std::vector<MeasuredCeiling> ceilings;
  std::vector<BandwidthPoint> sweep;
  std::vector<MeasuredLevel> levels;
  std::vector<MeasuredGemm> gemms;
  std::string blas;  ///< which BLAS library, e.g. "OpenBLAS 0.3.21"
};

/// Knobs of a measurement run.
struct MeasureOptions {
  int threads = 0;     ///< 0: every online CPU
  bool quick = false;  ///< fewer sizes and repetitions (under ~20 s)
  /// Called with a fraction in [0, 1] and what is running, for a progress bar.
  std::function<void(double, const std::string&)> progress;
};

/// Runs every measurement.
Result<CpuMeasurement> MeasureCpu(const MeasureOptions& options);

// The parts, callable on their own (the tests use them).
std::vector<MeasuredCeiling> MeasurePeakFlops(const CpuInfo& info, int threads, bool quick);
std::vector<BandwidthPoint> MeasureBandwidthSweep(const CpuInfo& info, int threads, bool quick,
                                                  const std::function<void(double)>& progress);
/// Finds the plateaus of a sweep and names them after the caches (sysfs sizes) they fit in.
std::vector<MeasuredLevel> DetectLevels(const CpuInfo& info,
                                        const std::vector<BandwidthPoint>& sweep);
std::vector<MeasuredGemm> MeasureGemms(int threads, bool quick, std::string* blas_name);

/// The measurement as a device in the database schema, every value with `measured` provenance.
Device ToDevice(const CpuMeasurement& m);

/// Sets the number of threads BLAS uses (OpenBLAS), for measurement and validation runs.
void SetBlasThreads(int threads);

}  // namespace roofline

#endif  // ROOFLINE_MEASURE_H_
