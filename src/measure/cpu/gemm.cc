// BLAS GEMM throughput (OpenBLAS cblas_sgemm / cblas_dgemm) at a few shapes.
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "roofline/measure.h"
#include "src/measure/cpu/timing.h"

namespace roofline {
namespace {

using measure_internal::NowSeconds;
using measure_internal::Summarize;

struct Shape {
  int64_t m, n, k;
  bool fp64;
};

template <typename T>
std::vector<T> RandomMatrix(int64_t elements, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(elements));
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Row-major C[m,n] = A[m,k] * B[k,n].
template <typename T>
void Gemm(const Shape& s, const T* a, const T* b, T* c) {
  if constexpr (sizeof(T) == sizeof(double)) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m),
                static_cast<int>(s.n), static_cast<int>(s.k), 1.0, a, static_cast<int>(s.k), b,
                static_cast<int>(s.n), 0.0, c, static_cast<int>(s.n));
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m),
                static_cast<int>(s.n), static_cast<int>(s.k), 1.0f, a, static_cast<int>(s.k), b,
                static_cast<int>(s.n), 0.0f, c, static_cast<int>(s.n));
  }
}

template <typename T>
Sample TimeGemm(const Shape& s, bool quick) {
  const std::vector<T> a = RandomMatrix<T>(s.m * s.k, 1);
  const std::vector<T> b = RandomMatrix<T>(s.k * s.n, 2);
  std::vector<T> c(static_cast<size_t>(s.m * s.n));
  const double flop =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  // Warm-up (BLAS thread pool start and buffers, page faults of C: the first GEMM of a process
  // is often slow for tens of ms) for at least two calls and 4 x min_time, then enough calls per
  // timing that one timing lasts >= min_time (at the fastest call seen).
  const double min_time = quick ? 0.005 : 0.02;
  double fastest = 0, spent = 0;
  for (int i = 0; i < 1000 && (i < 2 || spent < 4 * min_time); ++i) {
    const double t0 = NowSeconds();
    Gemm(s, a.data(), b.data(), c.data());
    const double dt = NowSeconds() - t0;
    spent += dt;
    if (dt > 0 && (fastest == 0 || dt < fastest)) fastest = dt;
  }
  const int calls = fastest > 0 ? std::clamp(static_cast<int>(min_time / fastest) + 1, 1, 1000) : 1;
  const int reps = quick ? 3 : 5;
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowSeconds();
    for (int i = 0; i < calls; ++i) Gemm(s, a.data(), b.data(), c.data());
    const double dt = NowSeconds() - t0;
    if (dt > 0) rates.push_back(flop * calls / dt);
  }
  measure_internal::Sink(c[c.size() / 2]);
  return Summarize(rates);
}

std::string BlasName() {
  const char* config = openblas_get_config();
  std::string name = config != nullptr ? config : "";
  while (!name.empty() && name.back() == ' ') name.pop_back();
  while (!name.empty() && name.front() == ' ') name.erase(name.begin());
  if (name.rfind("OpenBLAS", 0) != 0) name = "OpenBLAS " + name;
  return name;
}

}  // namespace

void SetBlasThreads(int threads) {
  if (threads > 0) openblas_set_num_threads(threads);
}

std::vector<MeasuredGemm> MeasureGemms(int threads, bool quick, std::string* blas_name) {
  if (blas_name != nullptr) *blas_name = BlasName();
  const int previous = openblas_get_num_threads();
  SetBlasThreads(threads);
  std::vector<Shape> shapes = {
      {512, 512, 512, false}, {1024, 1024, 1024, false}, {512, 512, 512, true}};
  if (!quick) {
    shapes.push_back({2048, 2048, 2048, false});
    shapes.push_back({4096, 4096, 1024, false});
    // Tall-skinny: many rows (tokens) times a weight matrix with few output columns.
    shapes.push_back({8192, 64, 4096, false});
    shapes.push_back({2048, 2048, 2048, true});
  }
  std::vector<MeasuredGemm> out;
  for (const Shape& s : shapes) {
    MeasuredGemm g;
    g.m = s.m;
    g.n = s.n;
    g.k = s.k;
    g.dtype = s.fp64 ? "fp64" : "fp32";
    g.flops_per_s = s.fp64 ? TimeGemm<double>(s, quick) : TimeGemm<float>(s, quick);
    out.push_back(std::move(g));
  }
  if (previous > 0) openblas_set_num_threads(previous);
  return out;
}

}  // namespace roofline
