// Memory bandwidth: a sweep of working-set sizes with read, copy and triad kernels on pinned
// threads, and the assignment of its plateaus to the cache levels sysfs reports.
//
// Bytes counted are bytes read + bytes written by the kernel as written in the source. There is no
// write-allocate adjustment: a store that misses the cache also reads the line first (copy and
// triad move 1.5x resp. 1.33x the counted bytes through DRAM), which is not counted. That is how
// the cost model counts bytes too (reads + writes of the op's operands).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ROOFLINE_X86 1
#endif

#include "roofline/measure.h"
#include "src/measure/cpu/timing.h"

// The kernels touch only their own buffers within bounds; sanitizer checks on every load would
// measure the sanitizer, not the memory system.
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define ROOFLINE_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#else
#define ROOFLINE_NO_SANITIZE
#endif

namespace roofline {
namespace {

using measure_internal::AlignedBuffer;
using measure_internal::BinaryBytes;
using measure_internal::Sink;
using measure_internal::Summarize;
using measure_internal::Team;

// Per-thread buffers are a multiple of this many bytes, so that halves (copy) and thirds (triad)
// are whole multiples of 256 B (the widest unrolled step below) and 64-byte aligned.
constexpr size_t kGranule = 1536;

enum class Kind { kRead, kCopy, kTriad };
constexpr Kind kKinds[] = {Kind::kRead, Kind::kCopy, Kind::kTriad};
const char* KindName(Kind k) {
  switch (k) {
    case Kind::kRead:
      return "read";
    case Kind::kCopy:
      return "copy";
    case Kind::kTriad:
      return "triad";
  }
  return "?";
}

constexpr double kScale = 0.5;

// ---- Portable kernels (baseline ISA; the compiler may vectorize or call memcpy) ----

ROOFLINE_NO_SANITIZE __attribute__((noinline)) double ReadScalar(const double* a, size_t n,
                                                                 int passes) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 4) {
      s0 += a[i];
      s1 += a[i + 1];
      s2 += a[i + 2];
      s3 += a[i + 3];
    }
  }
  return s0 + s1 + s2 + s3;
}

ROOFLINE_NO_SANITIZE __attribute__((noinline)) void CopyScalar(double* a, const double* b, size_t n,
                                                               int passes) {
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) a[i] = b[i];
  }
}

ROOFLINE_NO_SANITIZE __attribute__((noinline)) void TriadScalar(double* a, const double* b,
                                                                const double* c, size_t n,
                                                                int passes) {
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + kScale * c[i];
  }
}

#if defined(ROOFLINE_X86)

// ---- AVX2: 256-bit loads and stores, 8 independent accumulators for the read ----

ROOFLINE_NO_SANITIZE __attribute__((target("avx2,fma"), noinline)) double ReadAvx2(const double* a,
                                                                                   size_t n,
                                                                                   int passes) {
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 32) {
      s0 = _mm256_add_pd(s0, _mm256_load_pd(a + i));
      s1 = _mm256_add_pd(s1, _mm256_load_pd(a + i + 4));
      s2 = _mm256_add_pd(s2, _mm256_load_pd(a + i + 8));
      s3 = _mm256_add_pd(s3, _mm256_load_pd(a + i + 12));
      s4 = _mm256_add_pd(s4, _mm256_load_pd(a + i + 16));
      s5 = _mm256_add_pd(s5, _mm256_load_pd(a + i + 20));
      s6 = _mm256_add_pd(s6, _mm256_load_pd(a + i + 24));
      s7 = _mm256_add_pd(s7, _mm256_load_pd(a + i + 28));
    }
  }
  const __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)),
                                  _mm256_add_pd(_mm256_add_pd(s4, s5), _mm256_add_pd(s6, s7)));
  alignas(32) double out[4];
  _mm256_store_pd(out, s);
  return out[0] + out[1] + out[2] + out[3];
}

ROOFLINE_NO_SANITIZE __attribute__((target("avx2,fma"), noinline)) void CopyAvx2(double* a,
                                                                                 const double* b,
                                                                                 size_t n,
                                                                                 int passes) {
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 16) {
      const __m256d x0 = _mm256_load_pd(b + i), x1 = _mm256_load_pd(b + i + 4);
      const __m256d x2 = _mm256_load_pd(b + i + 8), x3 = _mm256_load_pd(b + i + 12);
      _mm256_store_pd(a + i, x0);
      _mm256_store_pd(a + i + 4, x1);
      _mm256_store_pd(a + i + 8, x2);
      _mm256_store_pd(a + i + 12, x3);
    }
  }
}

ROOFLINE_NO_SANITIZE __attribute__((target("avx2,fma"), noinline)) void TriadAvx2(
    double* a, const double* b, const double* c, size_t n, int passes) {
  const __m256d s = _mm256_set1_pd(kScale);
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 16) {
      for (size_t j = 0; j < 16; j += 4) {
        _mm256_store_pd(a + i + j,
                        _mm256_fmadd_pd(s, _mm256_load_pd(c + i + j), _mm256_load_pd(b + i + j)));
      }
    }
  }
}

// ---- AVX-512 ----

ROOFLINE_NO_SANITIZE __attribute__((target("avx512f"), noinline)) double ReadAvx512(const double* a,
                                                                                    size_t n,
                                                                                    int passes) {
  __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 64) {
      s0 = _mm512_add_pd(s0, _mm512_load_pd(a + i));
      s1 = _mm512_add_pd(s1, _mm512_load_pd(a + i + 8));
      s2 = _mm512_add_pd(s2, _mm512_load_pd(a + i + 16));
      s3 = _mm512_add_pd(s3, _mm512_load_pd(a + i + 24));
      s4 = _mm512_add_pd(s4, _mm512_load_pd(a + i + 32));
      s5 = _mm512_add_pd(s5, _mm512_load_pd(a + i + 40));
      s6 = _mm512_add_pd(s6, _mm512_load_pd(a + i + 48));
      s7 = _mm512_add_pd(s7, _mm512_load_pd(a + i + 56));
    }
  }
  const __m512d s = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)),
                                  _mm512_add_pd(_mm512_add_pd(s4, s5), _mm512_add_pd(s6, s7)));
  alignas(64) double out[8];  // (not _mm512_reduce_add_pd: GCC 12 -Wuninitialized in it)
  _mm512_store_pd(out, s);
  double r = 0;
  for (double v : out) r += v;
  return r;
}

ROOFLINE_NO_SANITIZE __attribute__((target("avx512f"), noinline)) void CopyAvx512(double* a,
                                                                                  const double* b,
                                                                                  size_t n,
                                                                                  int passes) {
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 32) {
      const __m512d x0 = _mm512_load_pd(b + i), x1 = _mm512_load_pd(b + i + 8);
      const __m512d x2 = _mm512_load_pd(b + i + 16), x3 = _mm512_load_pd(b + i + 24);
      _mm512_store_pd(a + i, x0);
      _mm512_store_pd(a + i + 8, x1);
      _mm512_store_pd(a + i + 16, x2);
      _mm512_store_pd(a + i + 24, x3);
    }
  }
}

ROOFLINE_NO_SANITIZE __attribute__((target("avx512f"), noinline)) void TriadAvx512(
    double* a, const double* b, const double* c, size_t n, int passes) {
  const __m512d s = _mm512_set1_pd(kScale);
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; i += 32) {
      for (size_t j = 0; j < 32; j += 8) {
        _mm512_store_pd(a + i + j,
                        _mm512_fmadd_pd(s, _mm512_load_pd(c + i + j), _mm512_load_pd(b + i + j)));
      }
    }
  }
}

#endif  // ROOFLINE_X86

struct Kernels {
  double (*read)(const double*, size_t, int) = ReadScalar;
  void (*copy)(double*, const double*, size_t, int) = CopyScalar;
  void (*triad)(double*, const double*, const double*, size_t, int) = TriadScalar;
};

Kernels ChooseKernels(const CpuInfo& info) {
  Kernels k;
#if defined(ROOFLINE_X86)
  if (info.avx512f) {
    k.read = ReadAvx512;
    k.copy = CopyAvx512;
    k.triad = TriadAvx512;
  } else if (info.avx2 && info.fma) {
    k.read = ReadAvx2;
    k.copy = CopyAvx2;
    k.triad = TriadAvx2;
  }
#else
  (void)info;
#endif
  return k;
}

// Total over all instances of the largest cache, 0 when sysfs listed none.
double LargestCacheBytes(const CpuInfo& info) {
  double largest = 0;
  for (const auto& c : info.caches) largest = std::max(largest, c.bytes * c.instances);
  return largest;
}

// Working set the DRAM plateau starts at: 4x the last-level cache (32 MiB assumed if unknown).
double DramThreshold(const CpuInfo& info) {
  const double llc = LargestCacheBytes(info);
  return 4.0 * (llc > 0 ? llc : 32.0 * 1024 * 1024);
}

// Per-thread buffer sizes (bytes) of the sweep.
std::vector<size_t> SweepSizes(const CpuInfo& info, int threads, bool quick) {
  const double mib = 1024.0 * 1024.0;
  double last = std::max(quick ? 128 * mib : 256 * mib, DramThreshold(info));
  if (!quick) last = std::max(last, 2.0 * DramThreshold(info));
  const double mem = measure_internal::MemTotalBytes();
  if (mem > 0) last = std::min(last, mem / 4);
  const double first = 8192.0 * threads;
  last = std::max(last, first);
  const int per_doubling = quick ? 2 : 4;
  std::vector<size_t> sizes;
  for (int i = 0;; ++i) {
    double total = first * std::pow(2.0, static_cast<double>(i) / per_doubling);
    const bool end = total >= last * (1 - 1e-9);
    if (end) total = last;
    const double per_thread = total / threads;
    // Rounded up: the first point holds at least 8 KiB per thread, the last at least `last`.
    const size_t granules =
        std::max<size_t>(1, static_cast<size_t>(std::ceil(per_thread / kGranule - 1e-9)));
    const size_t bytes = granules * kGranule;
    if (sizes.empty() || bytes > sizes.back()) sizes.push_back(bytes);
    if (end) break;
  }
  return sizes;
}

}  // namespace

std::vector<BandwidthPoint> MeasureBandwidthSweep(const CpuInfo& info, int threads, bool quick,
                                                  const std::function<void(double)>& progress) {
  threads = std::max(threads, 1);
  const Kernels kernels = ChooseKernels(info);
  const std::vector<size_t> sizes = SweepSizes(info, threads, quick);
  const double min_time = quick ? 0.002 : 0.004;
  const int reps = quick ? 3 : 5;

  // Progress is weighted by the expected time of a point: working set, or the minimum time.
  std::vector<double> weight;
  double total_weight = 0;
  for (size_t bytes : sizes) {
    weight.push_back(std::max(static_cast<double>(bytes) * threads, 16.0 * 1024 * 1024));
    total_weight += weight.back();
  }

  std::vector<BandwidthPoint> points;
  double done_weight = 0;
  for (size_t si = 0; si < sizes.size(); ++si) {
    const size_t bytes = sizes[si];
    const double ws = static_cast<double>(bytes) * threads;
    std::vector<double> rates[3];
    std::atomic<bool> failed{false};
    Team team(threads);
    team.Run([&](int tid, Team& t) {
      // Allocated and first-touched by the thread that uses it (its NUMA node, its cache).
      AlignedBuffer buf(bytes);
      double* base = buf.as<double>();
      size_t n = bytes / sizeof(double);
      if (!buf.ok()) {
        failed = true;
        n = 0;
      }
      for (size_t i = 0; i < n; ++i) base[i] = 1.0 + static_cast<double>(i % 7);
      double sum = 0;
      for (int ki = 0; ki < 3; ++ki) {
        const Kind kind = kKinds[ki];
        auto run = [&](int passes) {
          switch (kind) {
            case Kind::kRead:
              sum += kernels.read(base, n, passes);
              break;
            case Kind::kCopy:
              kernels.copy(base + n / 2, base, n / 2, passes);
              break;
            case Kind::kTriad:
              kernels.triad(base + 2 * (n / 3), base, base + n / 3, n / 3, passes);
              break;
          }
        };
        // Enough passes for a timing of >= min_time (the calibration passes warm up too).
        const int passes = static_cast<int>(std::min<int64_t>(
            t.Calibrate(tid, min_time, 1, [&](int64_t n) { run(static_cast<int>(n)); }), 1 << 30));
        for (int r = 0; r < reps; ++r) {
          const double dt = t.TimedPass(tid, [&] { run(passes); });
          // Every kernel moves the whole working set once per pass: read reads it, copy reads
          // one half and writes the other, triad reads two thirds and writes one third.
          if (tid == 0 && dt > 0) rates[ki].push_back(ws * passes / dt);
        }
      }
      Sink(sum);
    });
    if (!failed) {
      for (int ki = 0; ki < 3; ++ki) {
        BandwidthPoint p;
        p.working_set_bytes = ws;
        p.kernel = KindName(kKinds[ki]);
        p.bytes_per_s = Summarize(rates[ki]);
        p.threads = threads;
        points.push_back(std::move(p));
      }
    }
    done_weight += weight[si];
    if (progress) progress(std::min(1.0, done_weight / total_weight));
  }
  return points;
}

std::vector<MeasuredLevel> DetectLevels(const CpuInfo& info,
                                        const std::vector<BandwidthPoint>& sweep) {
  std::vector<MeasuredLevel> levels;
  if (sweep.empty()) return levels;
  const int logical = std::max(info.logical_cpus, 1);

  // Selects the points in (lo, hi] of the total working set, then the kernel whose median over
  // those points is highest. Appends a level when any point qualifies.
  auto add_level = [&](const std::string& name, double capacity, int instances, double lo,
                       double hi) {
    const char* kinds[] = {"read", "copy", "triad"};
    MeasuredLevel best;
    double best_median = -1;
    for (const char* kind : kinds) {
      std::vector<const BandwidthPoint*> in;
      for (const auto& p : sweep) {
        if (p.kernel == kind && p.working_set_bytes > lo && p.working_set_bytes <= hi &&
            p.bytes_per_s.median > 0) {
          in.push_back(&p);
        }
      }
      if (in.empty()) continue;
      // median: the median of the points' medians; min, max: the extreme repetitions over the
      // plateau; spread: the median of the points' spreads (repetition noise, not the slope of
      // the plateau).
      std::vector<double> medians, spreads;
      Sample s;
      s.min = in.front()->bytes_per_s.min;
      s.max = in.front()->bytes_per_s.max;
      double from = in.front()->working_set_bytes, to = from;
      for (const BandwidthPoint* p : in) {
        medians.push_back(p->bytes_per_s.median);
        spreads.push_back(p->bytes_per_s.spread);
        s.min = std::min(s.min, p->bytes_per_s.min);
        s.max = std::max(s.max, p->bytes_per_s.max);
        s.repetitions += p->bytes_per_s.repetitions;
        from = std::min(from, p->working_set_bytes);
        to = std::max(to, p->working_set_bytes);
      }
      s.median = Summarize(medians).median;
      s.spread = Summarize(spreads).median;
      if (s.median > best_median) {
        best_median = s.median;
        best.level = name;
        best.capacity_bytes = capacity;
        best.instances = instances;
        best.bandwidth = s;
        best.kernel = kind;
        best.from_bytes = from;
        best.to_bytes = to;
      }
    }
    if (best_median > 0) levels.push_back(std::move(best));
  };

  const int threads = std::max(1, sweep.front().threads);
  // Cache capacity the threads can use: their instances (threads are pinned to consecutive
  // CPUs) times the size of one.
  auto usable = [&](const CpuInfo::Cache& c) {
    const int used = std::clamp((threads * c.instances + logical - 1) / logical, 1, c.instances);
    return c.bytes * used;
  };
  // A level's plateau: more than twice what the nearer levels hold (out of them), at most half
  // of what the level holds (10 % slack for the rounding of the sweep sizes).
  double nearer = 0;
  for (const auto& c : info.caches) {
    const double cap = usable(c);
    std::string name = "l";  // (not "l" + ...: GCC 12 -Wrestrict false positive)
    name += std::to_string(c.level);
    add_level(name, c.bytes, c.instances, 2.0 * nearer, 0.55 * cap);
    nearer = std::max(nearer, cap);
  }
  add_level("dram", 0, 1, DramThreshold(info) * 0.95, 1e300);
  return levels;
}

}  // namespace roofline
