// CPU measurements (quick mode only): detection, peak FLOP/s, the bandwidth sweep and its levels,
// BLAS GEMMs and the measured device profile. No absolute timing thresholds: only sanity bounds
// and relations between levels that hold on any machine.
#include "roofline/measure.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/device.h"

namespace roofline {
namespace measure_test {

int Threads() { return std::max(1, DetectCpu().logical_cpus); }

// The quick measurements are run once and shared by the tests.
const CpuInfo& Info() {
  static const CpuInfo info = DetectCpu();
  return info;
}
const std::vector<MeasuredCeiling>& Ceilings() {
  static const std::vector<MeasuredCeiling> c = MeasurePeakFlops(Info(), Threads(), true);
  return c;
}
const std::vector<BandwidthPoint>& Sweep() {
  static const std::vector<BandwidthPoint> s =
      MeasureBandwidthSweep(Info(), Threads(), true, nullptr);
  return s;
}
const std::vector<MeasuredGemm>& Gemms(std::string* blas = nullptr) {
  static std::string blas_name;
  static const std::vector<MeasuredGemm> g = MeasureGemms(Threads(), true, &blas_name);
  if (blas != nullptr) *blas = blas_name;
  return g;
}

const MeasuredLevel* FindLevel(const std::vector<MeasuredLevel>& levels, const std::string& n) {
  for (const auto& l : levels) {
    if (l.level == n) return &l;
  }
  return nullptr;
}

TEST(MeasureCpuInfo, FindsCpusAndCaches) {
  const CpuInfo& info = Info();
  EXPECT_GE(info.logical_cpus, 1);
  EXPECT_FALSE(info.model.empty());
  ASSERT_FALSE(info.caches.empty()) << "no data/unified cache in /sys/devices/system/cpu/cpu0";
  for (const auto& c : info.caches) {
    EXPECT_GE(c.level, 1);
    EXPECT_GT(c.bytes, 0);
    EXPECT_GE(c.instances, 1);
  }
  const std::string isa = info.Isa();
  EXPECT_TRUE(isa == "avx512" || isa == "avx2+fma" || isa == "scalar") << isa;
  if (info.clock_hz > 0) {
    EXPECT_FALSE(info.clock_source.empty());
  }
}

TEST(MeasurePeakFlops, QuickCeilingsArePositiveAndBelowTheoretical) {
  const auto& ceilings = Ceilings();
  ASSERT_GE(ceilings.size(), 2u);
  EXPECT_EQ(ceilings[0].engine, "vector.fp64");
  EXPECT_EQ(ceilings[1].engine, "vector.fp32");
  for (const auto& c : ceilings) {
    EXPECT_GT(c.flops_per_s.median, 0) << c.engine;
    EXPECT_EQ(c.flops_per_s.repetitions, 3) << c.engine;
    EXPECT_LE(c.flops_per_s.min, c.flops_per_s.median);
    EXPECT_LE(c.flops_per_s.median, c.flops_per_s.max);
    EXPECT_FALSE(c.method.empty());
    if (c.theoretical > 0) {
      // Sanity bound on the timer and the FLOP count, not a performance requirement: a kernel
      // cannot beat the hardware. The slack covers turbo clocks above the nominal clock_hz:
      // /proc/cpuinfo reports the base clock on many VMs (2.6 GHz on the CI VM's EPYC, which
      // was measured running at ~1.52x that), and EPYC boost clocks reach up to ~1.9x base.
      EXPECT_LT(c.flops_per_s.median, 2.0 * c.theoretical)
          << c.engine << ": " << c.theoretical_formula;
      EXPECT_FALSE(c.theoretical_formula.empty());
    }
  }
}

TEST(MeasureBandwidth, QuickSweepCoversCachesAndDram) {
  const auto& sweep = Sweep();
  ASSERT_FALSE(sweep.empty());
  double largest_cache = 0;
  for (const auto& c : Info().caches)
    largest_cache = std::max(largest_cache, c.bytes * c.instances);
  double largest_ws = 0;
  for (const auto& p : sweep) {
    EXPECT_GT(p.bytes_per_s.median, 0) << p.kernel << " " << p.working_set_bytes;
    EXPECT_EQ(p.threads, Threads());
    largest_ws = std::max(largest_ws, p.working_set_bytes);
  }
  EXPECT_GE(largest_ws, 4 * largest_cache);
  EXPECT_GE(sweep.front().working_set_bytes, 8192.0 * Threads());
  EXPECT_LE(sweep.front().working_set_bytes, 16384.0 * Threads());
}

TEST(MeasureBandwidth, LevelsFallFromL1ToDram) {
  const std::vector<MeasuredLevel> levels = DetectLevels(Info(), Sweep());
  for (const auto& l : levels) {
    EXPECT_GT(l.bandwidth.median, 0) << l.level;
    EXPECT_FALSE(l.kernel.empty()) << l.level;
    EXPECT_LE(l.from_bytes, l.to_bytes) << l.level;
  }
  const MeasuredLevel* l1 = FindLevel(levels, "l1");
  const MeasuredLevel* l3 = FindLevel(levels, "l3");
  const MeasuredLevel* dram = FindLevel(levels, "dram");
  ASSERT_NE(l1, nullptr);
  ASSERT_NE(dram, nullptr);
#if !defined(ROOFLINE_SANITIZED) && !defined(__SANITIZE_ADDRESS__)
  // Bandwidth falls from the nearest to the farthest level. L1 and DRAM are an order of
  // magnitude apart; the closer pairs compare the best repetitions, which another process
  // competing for the CPUs (parallel ctest) disturbs less than the medians. Only in a plain
  // build: under AddressSanitizer every load and store is instrumented, and a CI run measured
  // L1, L3 and DRAM all at about 29 GB/s (L1 median 28.6 GB/s, DRAM 29.0 GB/s).
  EXPECT_GT(l1->bandwidth.median, dram->bandwidth.median);
  if (l3 != nullptr) {
    EXPECT_GT(l3->bandwidth.max, dram->bandwidth.max);
    EXPECT_GT(l1->bandwidth.max, l3->bandwidth.max);
  }
#else
  (void)l3;
#endif
}

TEST(MeasureBandwidth, DetectLevelsAssignsPlateausToCaches) {
  // A synthetic 2-CPU machine: 32 KiB L1 and 512 KiB L2 per CPU, a shared 32 MiB L3.
  CpuInfo info;
  info.logical_cpus = 2;
  info.caches = {{1, 32 * 1024.0, 2}, {2, 512 * 1024.0, 2}, {3, 32 * 1024 * 1024.0, 1}};
  std::vector<BandwidthPoint> sweep;
  for (double ws = 16 * 1024.0; ws <= 256 * 1024 * 1024.0; ws *= 2) {
    const double bw = ws <= 32 * 1024.0 ? 400e9
                      : ws <= 1 << 20   ? 200e9
                      : ws <= 32 << 20  ? 80e9
                                        : 20e9;
    for (const char* kernel : {"read", "copy", "triad"}) {
      BandwidthPoint p;
      p.working_set_bytes = ws;
      p.kernel = kernel;
      p.threads = 2;
      const double k = std::string(kernel) == "read" ? 1.0 : 0.7;
      p.bytes_per_s.median = p.bytes_per_s.min = p.bytes_per_s.max = bw * k;
      p.bytes_per_s.repetitions = 3;
      sweep.push_back(p);
    }
  }
  const std::vector<MeasuredLevel> levels = DetectLevels(info, sweep);
  ASSERT_EQ(levels.size(), 4u);
  const char* names[] = {"l1", "l2", "l3", "dram"};
  const double expected[] = {400e9, 200e9, 80e9, 20e9};
  for (int i = 0; i < 4; ++i) {
    const MeasuredLevel* l = FindLevel(levels, names[i]);
    ASSERT_NE(l, nullptr) << names[i];
    EXPECT_DOUBLE_EQ(l->bandwidth.median, expected[i]) << names[i];
    EXPECT_EQ(l->kernel, "read") << names[i];
  }
  // Plateaus: L1 up to half of 2 x 32 KiB, L2 from 2 x 64 KiB to half of 2 x 512 KiB, L3 from
  // 2 MiB to half of 32 MiB, DRAM from 4 x 32 MiB.
  EXPECT_EQ(FindLevel(levels, "l1")->to_bytes, 32 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "l2")->from_bytes, 256 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "l2")->to_bytes, 512 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "l3")->from_bytes, 4 * 1024 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "l3")->to_bytes, 16 * 1024 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "dram")->from_bytes, 128 * 1024 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "l2")->capacity_bytes, 512 * 1024.0);
  EXPECT_EQ(FindLevel(levels, "l2")->instances, 2);
}

TEST(MeasureGemm, QuickGemmsArePositive) {
  std::string blas;
  const auto& gemms = Gemms(&blas);
  ASSERT_GE(gemms.size(), 3u);
  EXPECT_NE(blas.find("OpenBLAS"), std::string::npos) << blas;
  for (const auto& g : gemms) {
    EXPECT_GT(g.flops_per_s.median, 0) << g.m << "x" << g.n << "x" << g.k << " " << g.dtype;
    EXPECT_TRUE(g.dtype == "fp32" || g.dtype == "fp64");
  }
}

CpuMeasurement QuickMeasurement() {
  CpuMeasurement m;
  m.info = Info();
  m.threads = Threads();
  m.quick = true;
  m.date = "2025-01-01";
  m.ceilings = Ceilings();
  m.sweep = Sweep();
  m.levels = DetectLevels(m.info, m.sweep);
  m.gemms = Gemms(&m.blas);
  return m;
}

TEST(MeasureDevice, ToDeviceRoundTripsThroughParseDevice) {
  const CpuMeasurement m = QuickMeasurement();
  const Device d = ToDevice(m);
  EXPECT_EQ(d.id, "cpu-measured");
  EXPECT_EQ(d.kind, "cpu");
  ASSERT_FALSE(d.memory.empty());
  EXPECT_EQ(d.memory[0].name, "dram");
  EXPECT_NE(d.FindCompute("vector.fp64"), nullptr);
  EXPECT_NE(d.FindCompute("vector.fp32"), nullptr);
  const MemoryLevel* l1 = d.FindMemory("l1");
  ASSERT_NE(l1, nullptr);
  EXPECT_TRUE(l1->has_bandwidth());
  EXPECT_EQ(l1->bandwidth->provenance, Provenance::kMeasured);
  EXPECT_EQ(l1->bandwidth->date, "2025-01-01");
  EXPECT_NE(d.notes.find("OpenBLAS"), std::string::npos);

  const std::string json = DeviceToJson(d);
  Result<Device> parsed = ParseDevice(json, "measured.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << json;
  EXPECT_EQ(DeviceToJson(*parsed), json);
  for (const auto& c : parsed->compute) {
    EXPECT_EQ(c.peak.provenance, Provenance::kMeasured) << c.engine;
    EXPECT_FALSE(c.peak.method.empty()) << c.engine;
  }
  for (const auto& level : parsed->memory) {
    if (level.bandwidth) {
      EXPECT_EQ(level.bandwidth->provenance, Provenance::kMeasured);
    }
  }
}

TEST(MeasureDevice, ParseDeviceRejectsABrokenProfile) {
  const std::string json = DeviceToJson(ToDevice(QuickMeasurement()));
  {
    nlohmann::json j = nlohmann::json::parse(json);
    j["memory"][0]["bandwidth"]["value"] = -1.0;
    Result<Device> r = ParseDevice(j.dump(), "negative.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().ToString().find("memory[0].bandwidth"), std::string::npos)
        << r.status().ToString();
  }
  {
    nlohmann::json j = nlohmann::json::parse(json);
    j["compute"]["vector.fp64"].erase("method");
    Result<Device> r = ParseDevice(j.dump(), "no-method.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().ToString().find("method"), std::string::npos) << r.status().ToString();
  }
}

TEST(MeasureCpu, RejectsNegativeThreads) {
  MeasureOptions options;
  options.threads = -1;
  EXPECT_FALSE(MeasureCpu(options).ok());
}

}  // namespace measure_test
}  // namespace roofline
