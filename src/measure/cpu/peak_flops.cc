// Peak arithmetic throughput: chains of independent FMAs (or dot-product instructions) kept in
// registers, one pinned thread per CPU, the widest ISA the CPU has chosen at run time.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ROOFLINE_X86 1
#endif

#include "roofline/measure.h"
#include "roofline/units.h"
#include "src/measure/cpu/timing.h"

namespace roofline {
namespace {

using measure_internal::Sink;
using measure_internal::Summarize;
using measure_internal::Team;

// A kernel runs `iters` iterations of its unrolled body and returns something derived from
// every accumulator (so nothing can be optimized away).
using KernelFn = double (*)(int64_t iters);

// Twelve statements on accumulators a0..a11 (AVX2 has 16 vector registers: 12 accumulators and
// the two operands). 12 covers latency x throughput of the FMA pipes (4-5 cycles x 2 units).
#define ROOFLINE_REPEAT12(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11)
// Sixteen for AVX-512 (32 vector registers).
#define ROOFLINE_REPEAT16(S) ROOFLINE_REPEAT12(S) S(12) S(13) S(14) S(15)

// Multiplier and addend keep the recurrence a = a * m + c bounded (it converges to c / (1 - m))
// and away from denormals.
constexpr double kMul = 0.9999999;
constexpr double kAdd = 1e-7;

__attribute__((noinline)) double ScalarF64(int64_t iters) {
#define DECL(i) double a##i = 1.0 + (i);
  ROOFLINE_REPEAT12(DECL)
#undef DECL
  const double m = kMul, c = kAdd;
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = a##i * m + c;
    ROOFLINE_REPEAT12(STEP)
#undef STEP
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
}

__attribute__((noinline)) double ScalarF32(int64_t iters) {
#define DECL(i) float a##i = 1.0f + (i);
  ROOFLINE_REPEAT12(DECL)
#undef DECL
  const float m = static_cast<float>(kMul), c = static_cast<float>(kAdd);
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = a##i * m + c;
    ROOFLINE_REPEAT12(STEP)
#undef STEP
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
}

#if defined(ROOFLINE_X86)

__attribute__((target("avx2,fma"), noinline)) double Avx2F64(int64_t iters) {
#define DECL(i) __m256d a##i = _mm256_set1_pd(1.0 + (i));
  ROOFLINE_REPEAT12(DECL)
#undef DECL
  const __m256d m = _mm256_set1_pd(kMul), c = _mm256_set1_pd(kAdd);
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm256_fmadd_pd(a##i, m, c);
    ROOFLINE_REPEAT12(STEP)
#undef STEP
  }
  __m256d s = _mm256_setzero_pd();
#define SUM(i) s = _mm256_add_pd(s, a##i);
  ROOFLINE_REPEAT12(SUM)
#undef SUM
  alignas(32) double out[4];
  _mm256_store_pd(out, s);
  return out[0] + out[1] + out[2] + out[3];
}

__attribute__((target("avx2,fma"), noinline)) double Avx2F32(int64_t iters) {
#define DECL(i) __m256 a##i = _mm256_set1_ps(1.0f + (i));
  ROOFLINE_REPEAT12(DECL)
#undef DECL
  const __m256 m = _mm256_set1_ps(static_cast<float>(kMul));
  const __m256 c = _mm256_set1_ps(static_cast<float>(kAdd));
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, m, c);
    ROOFLINE_REPEAT12(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, a##i);
  ROOFLINE_REPEAT12(SUM)
#undef SUM
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  double r = 0;
  for (float v : out) r += v;
  return r;
}

__attribute__((target("avx512f"), noinline)) double Avx512F64(int64_t iters) {
#define DECL(i) __m512d a##i = _mm512_set1_pd(1.0 + (i));
  ROOFLINE_REPEAT16(DECL)
#undef DECL
  const __m512d m = _mm512_set1_pd(kMul), c = _mm512_set1_pd(kAdd);
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm512_fmadd_pd(a##i, m, c);
    ROOFLINE_REPEAT16(STEP)
#undef STEP
  }
  __m512d s = _mm512_setzero_pd();
#define SUM(i) s = _mm512_add_pd(s, a##i);
  ROOFLINE_REPEAT16(SUM)
#undef SUM
  alignas(64) double out[8];  // (not _mm512_reduce_add_pd: GCC 12 -Wuninitialized in it)
  _mm512_store_pd(out, s);
  double r = 0;
  for (double v : out) r += v;
  return r;
}

__attribute__((target("avx512f"), noinline)) double Avx512F32(int64_t iters) {
#define DECL(i) __m512 a##i = _mm512_set1_ps(1.0f + (i));
  ROOFLINE_REPEAT16(DECL)
#undef DECL
  const __m512 m = _mm512_set1_ps(static_cast<float>(kMul));
  const __m512 c = _mm512_set1_ps(static_cast<float>(kAdd));
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, m, c);
    ROOFLINE_REPEAT16(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, a##i);
  ROOFLINE_REPEAT16(SUM)
#undef SUM
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  double r = 0;
  for (float v : out) r += v;
  return r;
}

// vdpbf16ps: per fp32 lane, acc += x[2i] * y[2i] + x[2i+1] * y[2i+1] (16 lanes, 64 FLOP).
__attribute__((target("avx512f,avx512bf16"), noinline)) double Avx512Bf16(int64_t iters) {
#define DECL(i) __m512 a##i = _mm512_set1_ps(static_cast<float>(i));
  ROOFLINE_REPEAT16(DECL)
#undef DECL
  const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.01f), _mm512_set1_ps(0.02f));
  const __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.03f), _mm512_set1_ps(0.01f));
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm512_dpbf16_ps(a##i, x, y);
    ROOFLINE_REPEAT16(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, a##i);
  ROOFLINE_REPEAT16(SUM)
#undef SUM
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  double r = 0;
  for (float v : out) r += v;
  return r;
}

// vpdpbusd: per int32 lane, acc += four u8 x s8 products (16 lanes, 128 OP). Wraps, by design.
__attribute__((target("avx512f,avx512vnni"), noinline)) double Avx512Vnni(int64_t iters) {
// Initial values from a run-time value: with constants, GCC 12 copies every accumulator through
// another register (or the stack) in each iteration.
#define DECL(i) __m512i a##i = _mm512_set1_epi32(static_cast<int>(iters) + (i));
  ROOFLINE_REPEAT16(DECL)
#undef DECL
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm512_dpbusd_epi32(a##i, x, y);
    ROOFLINE_REPEAT16(STEP)
#undef STEP
  }
  __m512i s = _mm512_setzero_si512();
#define SUM(i) s = _mm512_xor_si512(s, a##i);
  ROOFLINE_REPEAT16(SUM)
#undef SUM
  alignas(64) int32_t out[16];
  _mm512_store_si512(out, s);
  double r = 0;
  for (int32_t v : out) r += v;
  return r;
}

// AVX-VNNI (VEX-encoded, 256-bit): 8 lanes x 4 products, 64 OP per instruction.
__attribute__((target("avx2,avxvnni"), noinline)) double AvxVnni(int64_t iters) {
#define DECL(i) __m256i a##i = _mm256_set1_epi32(static_cast<int>(iters) + (i));
  ROOFLINE_REPEAT12(DECL)
#undef DECL
  const __m256i x = _mm256_set1_epi8(3), y = _mm256_set1_epi8(-2);
  for (int64_t it = 0; it < iters; ++it) {
#define STEP(i) a##i = _mm256_dpbusd_avx_epi32(a##i, x, y);
    ROOFLINE_REPEAT12(STEP)
#undef STEP
  }
  __m256i s = _mm256_setzero_si256();
#define SUM(i) s = _mm256_xor_si256(s, a##i);
  ROOFLINE_REPEAT12(SUM)
#undef SUM
  alignas(32) int32_t out[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), s);
  double r = 0;
  for (int32_t v : out) r += v;
  return r;
}

#endif  // ROOFLINE_X86

struct FmaKernel {
  std::string engine;
  KernelFn fn = nullptr;
  double ops_per_iter = 0;  // FLOP (or OP) of one iteration of the unrolled body, one thread
  std::string method;
  // Theoretical peak per thread per Hz, with its formula (0: not stated).
  double per_thread_per_hz = 0;
  std::string formula_tail;  // "2 FMA units x 4 lanes x 2 FLOP per FMA"
};

Sample TimeKernel(const FmaKernel& k, int threads, bool quick) {
  const double target = quick ? 0.03 : 0.1;
  const int reps = quick ? 3 : 7;
  std::vector<double> rates;
  Team team(threads);
  team.Run([&](int tid, Team& t) {
    double result = 0;
    const int64_t iters = t.Calibrate(tid, target, 256, [&](int64_t n) { result += k.fn(n); });
    for (int r = 0; r < reps; ++r) {
      const double dt = t.TimedPass(tid, [&] { result += k.fn(iters); });
      if (tid == 0 && dt > 0) {
        rates.push_back(static_cast<double>(threads) * static_cast<double>(iters) * k.ops_per_iter /
                        dt);
      }
    }
    Sink(result);
  });
  return Summarize(rates);
}

}  // namespace

std::vector<MeasuredCeiling> MeasurePeakFlops(const CpuInfo& info, int threads, bool quick) {
  threads = std::max(threads, 1);
  std::vector<FmaKernel> kernels;
  const std::string tail = ", " + std::to_string(threads) + " pinned threads, 2 FLOP per FMA lane";
  const std::string units_note = "2 FMA units per core (assumed: Zen, and Intel client/server)";
#if defined(ROOFLINE_X86)
  if (info.avx512f) {
    kernels.push_back(
        {"vector.fp64", Avx512F64, 16 * 8 * 2.0,
         "avx512f fma (_mm512_fmadd_pd), 16 independent accumulators, 8 fp64 lanes" + tail,
         2 * 8 * 2.0, "2 FMA units x 8 fp64 lanes x 2 FLOP per FMA"});
    kernels.push_back(
        {"vector.fp32", Avx512F32, 16 * 16 * 2.0,
         "avx512f fma (_mm512_fmadd_ps), 16 independent accumulators, 16 fp32 lanes" + tail,
         2 * 16 * 2.0, "2 FMA units x 16 fp32 lanes x 2 FLOP per FMA"});
  } else if (info.avx2 && info.fma) {
    kernels.push_back(
        {"vector.fp64", Avx2F64, 12 * 4 * 2.0,
         "avx2 fma (_mm256_fmadd_pd), 12 independent accumulators, 4 fp64 lanes" + tail,
         2 * 4 * 2.0, "2 FMA units x 4 fp64 lanes x 2 FLOP per FMA"});
    kernels.push_back(
        {"vector.fp32", Avx2F32, 12 * 8 * 2.0,
         "avx2 fma (_mm256_fmadd_ps), 12 independent accumulators, 8 fp32 lanes" + tail,
         2 * 8 * 2.0, "2 FMA units x 8 fp32 lanes x 2 FLOP per FMA"});
  }
  if (info.avx512_bf16) {
    kernels.push_back(
        {"vector.bf16", Avx512Bf16, 16 * 16 * 2 * 2.0,
         "avx512_bf16 dot product (_mm512_dpbf16_ps: 16 fp32 lanes x 2 bf16 products), 16 "
         "independent accumulators, " +
             std::to_string(threads) + " pinned threads, 2 FLOP per product",
         2 * 16 * 2 * 2.0, "2 units x 16 lanes x 2 bf16 products x 2 FLOP"});
  }
  if (info.avx512_vnni) {
    kernels.push_back(
        {"tensor.int8", Avx512Vnni, 16 * 16 * 4 * 2.0,
         "VNNI int8 dot product, not a matrix engine (_mm512_dpbusd_epi32: 16 int32 lanes x 4 "
         "u8*s8 products), 16 independent accumulators, " +
             std::to_string(threads) + " pinned threads, 2 OP per product",
         2 * 16 * 4 * 2.0, "2 units x 16 lanes x 4 int8 products x 2 OP"});
  } else if (info.avx_vnni) {
    kernels.push_back(
        {"tensor.int8", AvxVnni, 12 * 8 * 4 * 2.0,
         "AVX-VNNI int8 dot product, not a matrix engine (_mm256_dpbusd_avx_epi32: 8 int32 lanes "
         "x 4 u8*s8 products), 12 independent accumulators, " +
             std::to_string(threads) + " pinned threads, 2 OP per product",
         2 * 8 * 4 * 2.0, "2 units x 8 lanes x 4 int8 products x 2 OP"});
  }
#endif
  if (kernels.empty()) {
    // Baseline ISA: whatever the compiler makes of independent multiply-adds (no FMA assumed).
    kernels.push_back({"vector.fp64", ScalarF64, 12 * 2.0,
                       "scalar multiply-add (baseline ISA), 12 independent accumulators, " +
                           std::to_string(threads) + " pinned threads, 2 FLOP per multiply-add",
                       0, ""});
    kernels.push_back({"vector.fp32", ScalarF32, 12 * 2.0,
                       "scalar multiply-add (baseline ISA), 12 independent accumulators, " +
                           std::to_string(threads) + " pinned threads, 2 FLOP per multiply-add",
                       0, ""});
  }

  std::vector<MeasuredCeiling> out;
  for (const FmaKernel& k : kernels) {
    MeasuredCeiling& c = out.emplace_back();
    c.engine = k.engine;
    c.method = k.method;
    c.flops_per_s = TimeKernel(k, threads, quick);
    if (k.per_thread_per_hz > 0 && info.clock_hz > 0) {
      c.theoretical = threads * k.per_thread_per_hz * info.clock_hz;
      c.theoretical_formula = std::to_string(threads) + " threads x " + k.formula_tail + " x " +
                              Sci(info.clock_hz) + " Hz (" + info.clock_source + "); " + units_note;
    }
  }
  return out;
}

}  // namespace roofline
