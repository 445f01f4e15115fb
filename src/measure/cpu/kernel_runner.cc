// Runs the ops of a graph on the host CPU in fp32 and times them (see kernel_runner.h).
//
// Layouts and conventions of the host kernels:
//  * every operand of OperandsOf(spec) becomes one 64-byte aligned fp32 buffer (token ids:
//    int64), inputs filled with xorshift values in [-1, 1), outputs zeroed; unused operands
//    (quantization scales, V when it is a slice of K) are not allocated;
//  * matmul: A [m x k], B [k x n], C [m x n], all row-major, one cblas_sgemm per product
//    (batch entry b reads B set b / b_broadcast); routed experts: the m rows are split evenly
//    over round(E (1 - (1 - k/E)^T)) touched experts, one cblas_sgemm per touched expert;
//    the bias is added afterwards by a threaded loop;
//  * attention: see attention_kernel.h;
//  * conv2d: NCHW input, weights [K, C/groups, R, S], im2col (skipped for 1x1 / stride 1 /
//    padding 0) + one cblas_sgemm per (image, group);
//  * softmax, norms, elementwise, embedding: loops over contiguous chunks of rows or elements,
//    one chunk per thread of a persistent worker pool.
//
// Threads: the worker pool and BLAS both use RunOptions::threads (0: every online CPU).
// Streaming ops whose work is below kMinParallelWork (64 Ki elements) run on the calling thread
// only: waking the pool costs ~5-20 us, about what such an op takes on one core.
//
// Guards: an op is skipped (never run) when its buffers (plus scratch) exceed
// RunOptions::max_bytes or 80% of the host's physical memory, when a dimension exceeds BLAS's
// 32-bit int, or when its FLOPs exceed kFlopsPerThreadSecond x threads x max(1, max_seconds)
// (so that one op cannot keep the host busy for minutes). Collectives are skipped (single
// host). A failed allocation ends the run with an error Status.

#include "roofline/kernel_runner.h"

#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ROOFLINE_HAVE_AVX2_PATH 1
#else
#define ROOFLINE_HAVE_AVX2_PATH 0
#endif

#include "roofline/measure.h"
#include "src/measure/cpu/attention_kernel.h"

namespace roofline {
namespace {

/// Streaming work (elements) below which a loop runs on the calling thread only.
constexpr double kMinParallelWork = 65536;
/// FLOP budget of one op: this many FLOP per thread and per second of max_seconds.
constexpr double kFlopsPerThreadSecond = 1e12;
/// Block sizes of the tiled attention kernel.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 64;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// ------------------------------------------------------------------------------------------
// Worker pool.

/// A fixed team of threads (the caller is worker 0). Run(tasks, fn) calls fn(task, worker) for
/// every task in [0, tasks), handing tasks out dynamically, and returns when all are done.
/// `fn` must not throw.
class WorkerPool {
 public:
  explicit WorkerPool(int threads) {
    try {
      for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { Work(w); });
    } catch (const std::system_error&) {
      // The system refused more threads: run with those that started.
    }
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void Run(int64_t tasks, const std::function<void(int64_t, int)>& fn) {
    if (tasks <= 0) return;
    if (tasks == 1 || workers_.empty()) {
      for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &fn;
      tasks_ = tasks;
      next_.store(0, std::memory_order_relaxed);
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    start_.notify_all();
    Drain(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void Drain(int worker) {
    for (int64_t t = next_.fetch_add(1); t < tasks_; t = next_.fetch_add(1)) (*job_)(t, worker);
  }
  void Work(int worker) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      lock.unlock();
      Drain(worker);
      lock.lock();
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  const std::function<void(int64_t, int)>* job_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
  int busy_ = 0;
};

int ResolveThreads(int threads) {
  if (threads > 0) return std::min(threads, 1024);
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(std::min(hw, 1024u)) : 1;
}

/// Splits [0, n) into contiguous chunks, one per worker when n x work_per_item is at least
/// kMinParallelWork (else one chunk on the caller), and calls fn(begin, end) for each.
void ParallelChunks(WorkerPool& pool, int64_t n, double work_per_item,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const double work = static_cast<double>(n) * work_per_item;
  const int64_t chunks = work < kMinParallelWork ? 1 : std::min<int64_t>(n, pool.size());
  pool.Run(chunks, [&](int64_t c, int) {
    const int64_t begin = n / chunks * c + std::min(c, n % chunks);
    const int64_t end = begin + n / chunks + (c < n % chunks ? 1 : 0);
    if (begin < end) fn(begin, end);
  });
}

/// Sets the number of OpenBLAS threads for its lifetime and restores the previous one.
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(int threads) : saved_(openblas_get_num_threads()), set_(threads) {
    if (saved_ != set_) openblas_set_num_threads(set_);
  }
  ~BlasThreadsScope() {
    if (saved_ != set_) openblas_set_num_threads(saved_);
  }
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

 private:
  int saved_;
  int set_;
};

// ------------------------------------------------------------------------------------------
// Vector math: exp, max, sums. An AVX2+FMA path chosen at run time, and a portable one.

#if ROOFLINE_HAVE_AVX2_PATH
bool HasAvx2Fma() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
}

// exp(x) for 8 floats: Cephes' expf (range reduction by ln 2, degree-5 polynomial), relative
// error ~2e-7; inputs below -88.4 give 0.
__attribute__((target("avx2,fma"))) inline __m256 Exp8(__m256 x) {
  x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
  x = _mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f));
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, z, x);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  __m256i e = _mm256_cvttps_epi32(fx);
  e = _mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

__attribute__((target("avx2,fma"))) inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) float ExpShiftSumAvx2(float* x, int64_t n, float shift) {
  const __m256 vs = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), vs));
    _mm256_storeu_ps(x + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = HorizontalSum(acc);
  for (; j < n; ++j) {
    x[j] = std::exp(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

__attribute__((target("avx2,fma"))) void ExpAvx2(float* x, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(x + j, Exp8(_mm256_loadu_ps(x + j)));
  for (; j < n; ++j) x[j] = std::exp(x[j]);
}

__attribute__((target("avx2,fma"))) float MaxAvx2(const float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + j));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float r = lanes[0];
  for (int l = 1; l < 8; ++l) r = std::max(r, lanes[l]);
  for (; j < n; ++j) r = std::max(r, x[j]);
  return r;
}
#endif  // ROOFLINE_HAVE_AVX2_PATH

/// x[j] = exp(x[j] - shift) for j < n; returns the sum of the new values.
float ExpShiftSum(float* x, int64_t n, float shift) {
#if ROOFLINE_HAVE_AVX2_PATH
  if (HasAvx2Fma()) return ExpShiftSumAvx2(x, n, shift);
#endif
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

/// x[j] = exp(x[j]) for j < n.
void ExpInPlace(float* x, int64_t n) {
#if ROOFLINE_HAVE_AVX2_PATH
  if (HasAvx2Fma()) return ExpAvx2(x, n);
#endif
  for (int64_t j = 0; j < n; ++j) x[j] = std::exp(x[j]);
}

/// The largest of x[0..n), -inf when n == 0.
float RowMax(const float* x, int64_t n) {
#if ROOFLINE_HAVE_AVX2_PATH
  if (HasAvx2Fma()) return MaxAvx2(x, n);
#endif
  float r = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) r = std::max(r, x[j]);
  return r;
}

// Row sums with 16 independent partial sums (the compiler vectorizes these without needing to
// reassociate a single accumulator).
float RowSum(const float* x, int64_t n) {
  float acc[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    for (int l = 0; l < 16; ++l) acc[l] += x[j + l];
  }
  float s = 0;
  for (int l = 0; l < 16; ++l) s += acc[l];
  for (; j < n; ++j) s += x[j];
  return s;
}

float RowSumSquares(const float* x, int64_t n, float center) {
  float acc[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    for (int l = 0; l < 16; ++l) {
      const float d = x[j + l] - center;
      acc[l] += d * d;
    }
  }
  float s = 0;
  for (int l = 0; l < 16; ++l) s += acc[l];
  for (; j < n; ++j) s += (x[j] - center) * (x[j] - center);
  return s;
}

/// Numerically stable softmax of one row of n values into y (x and y may be the same).
void SoftmaxRow(const float* x, float* y, int64_t n) {
  const float mx = RowMax(x, n);
  if (x != y) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
  const float sum = ExpShiftSum(y, n, mx);
  const float inv = sum > 0 ? 1.0f / sum : 0.0f;
  for (int64_t j = 0; j < n; ++j) y[j] *= inv;
}

// ------------------------------------------------------------------------------------------
// Attention.

int64_t GroupOf(const AttentionSpec& a) {
  return a.kv_heads > 0 && a.heads % a.kv_heads == 0 ? a.heads / a.kv_heads : 1;
}

int64_t KvHeadOf(const AttentionSpec& a, int64_t head) {
  return std::min(head / GroupOf(a), std::max<int64_t>(a.kv_heads, 1) - 1);
}

/// Where V rows come from: V itself, or the first v_dim columns of K's rows (v_in_k).
struct VSource {
  const float* base;
  int64_t ld;
};

VSource VSourceOf(const AttentionSpec& a, const float* k, const float* v) {
  if (a.v_in_k && a.v_dim() <= a.head_dim) return {k, a.head_dim};
  return {v, a.v_dim()};
}

void TiledAttention(const AttentionSpec& a, const float* q, const float* k, const float* v,
                    float* o, WorkerPool& pool) {
  const int64_t d = a.head_dim;
  const int64_t dv = a.v_dim();
  const VSource vs = VSourceOf(a, k, v);
  const int64_t q_blocks = (a.q_len + kQueryBlock - 1) / kQueryBlock;
  const int64_t tasks = a.batch * a.heads * q_blocks;
  // Per worker: scores/probabilities [Bq x Bk], output accumulator [Bq x dv], max and sum.
  const int64_t scratch = kQueryBlock * kKeyBlock + kQueryBlock * dv + 2 * kQueryBlock;
  std::vector<std::vector<float>> work(static_cast<size_t>(pool.size()),
                                       std::vector<float>(static_cast<size_t>(scratch)));
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const int bd = static_cast<int>(d);
  const int bdv = static_cast<int>(dv);
  const int bvld = static_cast<int>(vs.ld);
  BlasThreadsScope blas_single(1);
  pool.Run(tasks, [&](int64_t task, int worker) {
    const int64_t qb = task % q_blocks;
    const int64_t bh = task / q_blocks;
    const int64_t h = bh % a.heads;
    const int64_t b = bh / a.heads;
    const int64_t kvh = KvHeadOf(a, h);
    const int64_t q0 = qb * kQueryBlock;
    const int64_t rows = std::min(kQueryBlock, a.q_len - q0);
    const float* qp = q + ((b * a.heads + h) * a.q_len + q0) * d;
    const float* kp = k + (b * a.kv_heads + kvh) * a.kv_len * d;
    const float* vp = vs.base + (b * a.kv_heads + kvh) * a.kv_len * vs.ld;
    float* op = o + ((b * a.heads + h) * a.q_len + q0) * dv;
    float* s = work[static_cast<size_t>(worker)].data();
    float* acc = s + kQueryBlock * kKeyBlock;
    float* mrow = acc + kQueryBlock * dv;
    float* lrow = mrow + kQueryBlock;
    std::fill(acc, acc + rows * dv, 0.0f);
    std::fill(mrow, mrow + rows, -std::numeric_limits<float>::infinity());
    std::fill(lrow, lrow + rows, 0.0f);
    // Visible ranges never move backwards: the block's keys are [first.begin, last.end).
    const KeyRange first = VisibleKeys(a, q0);
    const KeyRange last = VisibleKeys(a, q0 + rows - 1);
    for (int64_t k0 = first.begin; k0 < last.end; k0 += kKeyBlock) {
      const int64_t cols = std::min(kKeyBlock, last.end - k0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                  static_cast<int>(cols), bd, scale, qp, bd, kp + k0 * d, bd, 0.0f, s,
                  static_cast<int>(kKeyBlock));
      for (int64_t r = 0; r < rows; ++r) {
        float* sr = s + r * kKeyBlock;
        const KeyRange kr = VisibleKeys(a, q0 + r);
        const int64_t lo = std::clamp<int64_t>(kr.begin - k0, 0, cols);
        const int64_t hi = std::clamp<int64_t>(kr.end - k0, lo, cols);
        if (lo == hi) {
          std::fill(sr, sr + cols, 0.0f);
          continue;
        }
        const float m_new = std::max(mrow[r], RowMax(sr + lo, hi - lo));
        const float alpha = std::exp(mrow[r] - m_new);  // 0 on the first visible block
        const float sum = ExpShiftSum(sr + lo, hi - lo, m_new);
        std::fill(sr, sr + lo, 0.0f);
        std::fill(sr + hi, sr + cols, 0.0f);
        lrow[r] = lrow[r] * alpha + sum;
        mrow[r] = m_new;
        if (alpha != 1.0f) {
          float* ar = acc + r * dv;
          for (int64_t j = 0; j < dv; ++j) ar[j] *= alpha;
        }
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), bdv,
                  static_cast<int>(cols), 1.0f, s, static_cast<int>(kKeyBlock), vp + k0 * vs.ld,
                  bvld, 1.0f, acc, bdv);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float inv = lrow[r] > 0 ? 1.0f / lrow[r] : 0.0f;
      for (int64_t j = 0; j < dv; ++j) op[r * dv + j] = acc[r * dv + j] * inv;
    }
  });
}

void UntiledAttention(const AttentionSpec& a, const float* q, const float* k, const float* v,
                      float* o, WorkerPool& pool) {
  const int64_t d = a.head_dim;
  const int64_t dv = a.v_dim();
  const VSource vs = VSourceOf(a, k, v);
  std::vector<std::vector<float>> work(static_cast<size_t>(pool.size()),
                                       std::vector<float>(static_cast<size_t>(a.q_len * a.kv_len)));
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  BlasThreadsScope blas_single(1);
  pool.Run(a.batch * a.heads, [&](int64_t bh, int worker) {
    const int64_t h = bh % a.heads;
    const int64_t b = bh / a.heads;
    const int64_t kvh = KvHeadOf(a, h);
    const float* qp = q + bh * a.q_len * d;
    const float* kp = k + (b * a.kv_heads + kvh) * a.kv_len * d;
    const float* vp = vs.base + (b * a.kv_heads + kvh) * a.kv_len * vs.ld;
    float* s = work[static_cast<size_t>(worker)].data();
    const int sq = static_cast<int>(a.q_len);
    const int skv = static_cast<int>(a.kv_len);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sq, skv, static_cast<int>(d), scale, qp,
                static_cast<int>(d), kp, static_cast<int>(d), 0.0f, s, skv);
    for (int64_t r = 0; r < a.q_len; ++r) {
      float* sr = s + r * a.kv_len;
      const KeyRange kr = VisibleKeys(a, r);
      const int64_t lo = std::clamp<int64_t>(kr.begin, 0, a.kv_len);
      const int64_t hi = std::clamp<int64_t>(kr.end, lo, a.kv_len);
      std::fill(sr, sr + lo, 0.0f);
      std::fill(sr + hi, sr + a.kv_len, 0.0f);
      if (lo < hi) SoftmaxRow(sr + lo, sr + lo, hi - lo);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sq, static_cast<int>(dv), skv, 1.0f, s,
                skv, vp, static_cast<int>(vs.ld), 0.0f, o + bh * a.q_len * dv,
                static_cast<int>(dv));
  });
}

// ------------------------------------------------------------------------------------------
// Buffers and random inputs.

/// A 64-byte aligned allocation (throws std::bad_alloc).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t bytes) {
    if (bytes == 0) return;
    bytes_ = (bytes + 63) / 64 * 64;
    data_ = ::operator new (bytes_, std::align_val_t{64});
  }
  ~Buffer() { Free(); }
  Buffer(Buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      Free();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  float* f() const { return static_cast<float*>(data_); }
  int64_t* i64() const { return static_cast<int64_t*>(data_); }

 private:
  void Free() {
    if (data_ != nullptr) ::operator delete (data_, std::align_val_t{64});
    data_ = nullptr;
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr int64_t kFillChunk = int64_t{1} << 16;

/// Uniform values in [-1, 1) (xorshift64 per chunk of 64 Ki elements), filled by the pool.
void FillUniform(float* p, int64_t n, uint64_t seed, WorkerPool& pool) {
  const int64_t chunks = (n + kFillChunk - 1) / kFillChunk;
  pool.Run(chunks, [&](int64_t c, int) {
    uint64_t s = SplitMix64(seed * 0x100000001B3ull + static_cast<uint64_t>(c)) | 1;
    const int64_t end = std::min(n, (c + 1) * kFillChunk);
    for (int64_t i = c * kFillChunk; i < end; ++i) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      p[i] = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(s >> 32))) * 0x1p-31f;
    }
  });
}

/// Random ids in [0, range).
void FillIds(int64_t* p, int64_t n, int64_t range, uint64_t seed) {
  uint64_t s = SplitMix64(seed) | 1;
  for (int64_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = static_cast<int64_t>((s >> 11) % static_cast<uint64_t>(range));
  }
}

void FillZero(float* p, int64_t n, WorkerPool& pool) {
  const int64_t chunks = (n + kFillChunk - 1) / kFillChunk;
  pool.Run(chunks, [&](int64_t c, int) {
    const int64_t begin = c * kFillChunk;
    const int64_t end = std::min(n, begin + kFillChunk);
    std::memset(p + begin, 0, static_cast<size_t>(end - begin) * sizeof(float));
  });
}

double Elements(const Operand& o) { return std::ceil(std::max(0.0, o.elements)); }
double HostBytesPerElement(const Operand& o) { return o.role == TensorRole::kIndex ? 8 : 4; }

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);  // NOLINT(runtime/int)
  const long page = sysconf(_SC_PAGE_SIZE);    // NOLINT(runtime/int)
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<double>(pages) * static_cast<double>(page);
}

std::string Bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.3g} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.3g} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.3g} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

// ------------------------------------------------------------------------------------------
// Per-op preparation.

/// An op ready to run: its buffers and the closure that computes it once.
struct Prepared {
  std::vector<Buffer> buffers;
  std::function<void()> run;
  std::string implementation;
  std::string skipped;  ///< non-empty: not run, and why
};

struct Context {
  WorkerPool* pool = nullptr;
  int threads = 1;
  double max_bytes = 0;
  double max_seconds = 0;
  bool tiled_attention = true;
  uint64_t seed = 0;
};

/// Why an op with these buffer bytes and FLOPs cannot run here; empty when it can.
std::string BudgetProblem(double bytes, double flops, const Context& ctx) {
  if (!(bytes <= ctx.max_bytes)) {
    return fmt::format("needs {} of fp32 buffers, over the limit of {}", Bytes(bytes),
                       Bytes(ctx.max_bytes));
  }
  const double phys = PhysicalMemoryBytes();
  if (phys > 0 && bytes > 0.8 * phys) {
    return fmt::format("needs {} of fp32 buffers, over 80% of the host's {} of memory",
                       Bytes(bytes), Bytes(phys));
  }
  const double budget = kFlopsPerThreadSecond * ctx.threads * std::max(1.0, ctx.max_seconds);
  if (flops > budget) {
    return fmt::format("{:.3g} FLOP is too much work for the host (limit {:.3g} FLOP)", flops,
                       budget);
  }
  return "";
}

std::string TooLargeForBlas(std::initializer_list<std::pair<const char*, int64_t>> dims) {
  for (const auto& [name, value] : dims) {
    if (value > INT_MAX) return fmt::format("{} = {} exceeds BLAS's 32-bit int", name, value);
  }
  return "";
}

/// Operand buffers: allocates `operands` (elements 0: not allocated), fills the inputs.
/// ids_range > 0: operands with the index role get ids in [0, ids_range).
std::vector<void*> Allocate(const std::vector<Operand>& operands, Prepared& p, const Context& ctx,
                            int64_t ids_range = 0) {
  std::vector<void*> ptrs(operands.size(), nullptr);
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    const auto n = static_cast<int64_t>(Elements(o));
    if (n <= 0) continue;
    Buffer buf(static_cast<size_t>(n) * static_cast<size_t>(HostBytesPerElement(o)));
    const uint64_t seed = SplitMix64(ctx.seed * 131 + i);
    if (o.role == TensorRole::kIndex) {
      FillIds(buf.i64(), n, std::max<int64_t>(ids_range, 1), seed);
    } else if (o.is_output) {
      FillZero(buf.f(), n, *ctx.pool);
    } else {
      FillUniform(buf.f(), n, seed, *ctx.pool);
    }
    ptrs[i] = buf.f();
    p.buffers.push_back(std::move(buf));
  }
  return ptrs;
}

double OperandBytes(const std::vector<Operand>& operands) {
  double bytes = 0;
  for (const Operand& o : operands) bytes += Elements(o) * HostBytesPerElement(o);
  return bytes;
}

int IndexOf(const std::vector<Operand>& operands, const char* name) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (std::strcmp(operands[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

float* Ptr(const std::vector<void*>& ptrs, const std::vector<Operand>& operands, const char* name) {
  const int i = IndexOf(operands, name);
  return i < 0 ? nullptr : static_cast<float*>(ptrs[static_cast<size_t>(i)]);
}

/// Adds bias[set(row)] to every row of C [rows x n]; set(row) picks the bias vector.
void AddBias(float* c, const float* bias, int64_t rows, int64_t n,
             const std::function<int64_t(int64_t)>& set, WorkerPool& pool) {
  ParallelChunks(pool, rows, static_cast<double>(n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* bv = bias + set(r) * n;
      float* cr = c + r * n;
      for (int64_t j = 0; j < n; ++j) cr[j] += bv[j];
    }
  });
}

Prepared PrepareMatmul(const MatmulSpec& s, const Context& ctx) {
  Prepared p;
  std::vector<Operand> operands = OperandsOf(s);
  // fp32: no dequantization, so neither scales nor zero points are allocated.
  for (const char* unused : {"scales", "zeros"}) {
    const int i = IndexOf(operands, unused);
    if (i >= 0) operands[static_cast<size_t>(i)].elements = 0;
  }
  p.skipped = TooLargeForBlas({{"m", s.m}, {"n", s.n}, {"k", s.k}});
  if (!p.skipped.empty()) return p;
  const double flops = 2.0 * static_cast<double>(s.batch) * static_cast<double>(s.m) *
                       static_cast<double>(s.n) * static_cast<double>(s.k);
  p.skipped = BudgetProblem(OperandBytes(operands), flops, ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx);
  const float* a = Ptr(ptrs, operands, "A");
  const float* b = Ptr(ptrs, operands, "B");
  const float* bias = Ptr(ptrs, operands, "bias");
  float* c = Ptr(ptrs, operands, "C");
  const int m = static_cast<int>(s.m);
  const int n = static_cast<int>(s.n);
  const int k = static_cast<int>(s.k);
  WorkerPool* pool = ctx.pool;
  if (s.experts > 0) {
    // Tokens x top-k rows split evenly over the experts the batch touches.
    const int64_t touched =
        std::clamp<int64_t>(std::llround(s.ExpertsTouched()), 1, std::min(s.experts, s.m));
    p.implementation =
        fmt::format("cblas_sgemm (one per touched expert: {} of {})", touched, s.experts);
    p.run = [=] {
      int64_t row = 0;
      for (int64_t e = 0; e < touched; ++e) {
        const int64_t rows = s.m / touched + (e < s.m % touched ? 1 : 0);
        const int64_t expert = e * s.experts / touched;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), n, k, 1.0f,
                    a + row * s.k, k, b + expert * s.k * s.n, n, 0.0f, c + row * s.n, n);
        row += rows;
      }
      if (bias != nullptr) {
        AddBias(
            c, bias, s.m, s.n, [](int64_t) { return int64_t{0}; }, *pool);
      }
    };
    return p;
  }
  p.implementation = s.batch == 1 ? std::string("cblas_sgemm")
                                  : fmt::format("cblas_sgemm (loop over {} products)", s.batch);
  if (bias != nullptr) p.implementation += " + bias loop";
  p.run = [=] {
    for (int64_t i = 0; i < s.batch; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a + i * s.m * s.k, k,
                  b + i / s.b_broadcast * s.k * s.n, n, 0.0f, c + i * s.m * s.n, n);
    }
    if (bias != nullptr) {
      const bool per_weight = s.b_is_weight;
      AddBias(
          c, bias, s.batch * s.m, s.n,
          [&s, per_weight](int64_t r) {
            const int64_t i = r / s.m;
            return per_weight ? i / s.b_broadcast : i;
          },
          *pool);
    }
  };
  return p;
}

Prepared PrepareAttention(const AttentionSpec& s, const Context& ctx) {
  Prepared p;
  std::vector<Operand> operands = OperandsOf(s);
  const bool v_in_k = s.v_in_k && s.v_dim() <= s.head_dim;
  if (v_in_k) operands[static_cast<size_t>(IndexOf(operands, "V"))].elements = 0;
  p.skipped = TooLargeForBlas({{"head-dim", s.head_dim},
                               {"v-head-dim", s.v_dim()},
                               {"q-len", ctx.tiled_attention ? 0 : s.q_len},
                               {"kv-len", ctx.tiled_attention ? 0 : s.kv_len}});
  if (!p.skipped.empty()) return p;
  const double pairs = AttentionPairs(s, ctx.tiled_attention);
  const double flops = 2.0 * static_cast<double>(s.batch) * static_cast<double>(s.heads) * pairs *
                       static_cast<double>(s.head_dim + s.v_dim());
  double bytes = OperandBytes(operands);
  if (!ctx.tiled_attention) {
    bytes += 4.0 * ctx.pool->size() * static_cast<double>(s.q_len) * static_cast<double>(s.kv_len);
  }
  p.skipped = BudgetProblem(bytes, flops, ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx);
  const float* q = Ptr(ptrs, operands, "Q");
  const float* k = Ptr(ptrs, operands, "K");
  const float* v = Ptr(ptrs, operands, "V");
  float* o = Ptr(ptrs, operands, "O");
  WorkerPool* pool = ctx.pool;
  if (ctx.tiled_attention) {
    p.implementation = "tiled attention (fp32)";
    p.run = [=] { TiledAttention(s, q, k, v, o, *pool); };
  } else {
    p.implementation = "untiled attention (fp32, full score matrix per head)";
    p.run = [=] { UntiledAttention(s, q, k, v, o, *pool); };
  }
  return p;
}

// Elementwise functions recognized by name (ElementwiseSpec::function, e.g. "mlp.act").
enum class EwFn { kAdd, kMul, kScale, kSilu, kGelu, kSoftcap, kRope, kSiluMul, kGeluMul, kGeneric };

EwFn Classify(const std::string& function, int inputs) {
  if (inputs == 0) return EwFn::kGeneric;
  // A merged gate-up's gated activation: the activation of the first half times the second half
  // (GELU for GeGLU models, "act_mul:gelu"; SiLU otherwise).
  if (function == "act_mul") return EwFn::kSiluMul;
  if (function == "act_mul:gelu") return EwFn::kGeluMul;
  std::string f = function;
  for (char& ch : f) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto has = [&](const char* word) { return f.find(word) != std::string::npos; };
  auto ends = [&](const char* word) {
    const size_t n = std::strlen(word);
    return f.size() >= n && f.compare(f.size() - n, n, word) == 0;
  };
  if (has("rope") || has("rotary")) return EwFn::kRope;
  if (has("softcap")) return EwFn::kSoftcap;
  if (has("gelu")) return EwFn::kGelu;
  if (has("silu") || has("swish") || has("swiglu") || ends("act")) return EwFn::kSilu;
  if (has("mul")) return inputs >= 2 ? EwFn::kMul : EwFn::kScale;
  if (has("scale")) return EwFn::kScale;
  if (has("add") || has("residual") || has("combine") || has("sum")) return EwFn::kAdd;
  return EwFn::kGeneric;
}

const char* NameOf(EwFn fn) {
  switch (fn) {
    case EwFn::kAdd:
      return "add";
    case EwFn::kMul:
      return "mul";
    case EwFn::kScale:
      return "scale";
    case EwFn::kSilu:
      return "silu";
    case EwFn::kSiluMul:
      return "silu(gate) x up, both halves of one input";
    case EwFn::kGeluMul:
      return "gelu(gate) x up, both halves of one input";
    case EwFn::kGelu:
      return "gelu (tanh)";
    case EwFn::kSoftcap:
      return "softcap (tanh)";
    case EwFn::kRope:
      return "rope (pair rotation)";
    case EwFn::kGeneric:
      return "generic";
  }
  return "?";
}

struct EwPlan {
  EwFn fn = EwFn::kGeneric;
  std::vector<const float*> in;
  float* out = nullptr;
  int64_t fmas = 0;  ///< generic: multiply-adds per element after combining the inputs
  int64_t half = 0;  ///< kSiluMul, kGeluMul: where the input's second half (up) starts
};

/// out[j] *= in[i][j] (or += when add) for the inputs from `first` on, over [b, e).
void FoldInputs(const EwPlan& p, size_t first, bool add, int64_t b, int64_t e) {
  for (size_t i = first; i < p.in.size(); ++i) {
    const float* x = p.in[i];
    float* out = p.out;
    if (add) {
      for (int64_t j = b; j < e; ++j) out[j] += x[j];
    } else {
      for (int64_t j = b; j < e; ++j) out[j] *= x[j];
    }
  }
}

void ElementwiseRange(const EwPlan& p, int64_t begin, int64_t end) {
  constexpr int64_t kTile = 512;
  alignas(64) float tmp[kTile];
  float* out = p.out;
  switch (p.fn) {
    case EwFn::kAdd:
    case EwFn::kMul: {
      const bool add = p.fn == EwFn::kAdd;
      const float* x0 = p.in[0];
      if (p.in.size() >= 2) {
        const float* x1 = p.in[1];
        if (add) {
          for (int64_t j = begin; j < end; ++j) out[j] = x0[j] + x1[j];
        } else {
          for (int64_t j = begin; j < end; ++j) out[j] = x0[j] * x1[j];
        }
      } else {
        std::memcpy(out + begin, x0 + begin, static_cast<size_t>(end - begin) * sizeof(float));
      }
      FoldInputs(p, 2, add, begin, end);
      return;
    }
    case EwFn::kScale: {
      const float* x0 = p.in[0];
      for (int64_t j = begin; j < end; ++j) out[j] = x0[j] * 0.5f;
      FoldInputs(p, 1, false, begin, end);
      return;
    }
    case EwFn::kSilu:
    case EwFn::kSiluMul:
    case EwFn::kGelu:
    case EwFn::kGeluMul:
    case EwFn::kSoftcap: {
      const float* x = p.in[0];
      for (int64_t t0 = begin; t0 < end; t0 += kTile) {
        const int64_t len = std::min(kTile, end - t0);
        const float* xt = x + t0;
        float* ot = out + t0;
        if (p.fn == EwFn::kSilu || p.fn == EwFn::kSiluMul) {  // x * sigmoid(x) [* up]
          for (int64_t j = 0; j < len; ++j) tmp[j] = -xt[j];
          ExpInPlace(tmp, len);
          for (int64_t j = 0; j < len; ++j) ot[j] = xt[j] / (1.0f + tmp[j]);
          if (p.fn == EwFn::kSiluMul) {
            const float* up = xt + p.half;
            for (int64_t j = 0; j < len; ++j) ot[j] *= up[j];
          }
        } else if (p.fn == EwFn::kGelu || p.fn == EwFn::kGeluMul) {
          // 0.5 x (1 + tanh(u)) = x * sigmoid(2u) [* up]
          for (int64_t j = 0; j < len; ++j) {
            const float v = xt[j];
            tmp[j] = -1.5957691216057308f * (v + 0.044715f * v * v * v);
          }
          ExpInPlace(tmp, len);
          for (int64_t j = 0; j < len; ++j) ot[j] = xt[j] / (1.0f + tmp[j]);
          if (p.fn == EwFn::kGeluMul) {
            const float* up = xt + p.half;
            for (int64_t j = 0; j < len; ++j) ot[j] *= up[j];
          }
        } else {  // c * tanh(x / c), c = 30
          for (int64_t j = 0; j < len; ++j) tmp[j] = xt[j] * (2.0f / 30.0f);
          ExpInPlace(tmp, len);
          for (int64_t j = 0; j < len; ++j) ot[j] = 30.0f - 60.0f / (tmp[j] + 1.0f);
        }
      }
      FoldInputs(p, 1, p.fn == EwFn::kSoftcap, begin, end);  // gates multiply
      return;
    }
    case EwFn::kRope:  // handled by RopePairs
      return;
    case EwFn::kGeneric: {
      for (int64_t t0 = begin; t0 < end; t0 += kTile) {
        const int64_t len = std::min(kTile, end - t0);
        if (p.in.empty()) {
          for (int64_t j = 0; j < len; ++j) tmp[j] = static_cast<float>((t0 + j) & 1023) * 1e-3f;
        } else {
          std::memcpy(tmp, p.in[0] + t0, static_cast<size_t>(len) * sizeof(float));
          for (size_t i = 1; i < p.in.size(); ++i) {
            const float* x = p.in[i] + t0;
            for (int64_t j = 0; j < len; ++j) tmp[j] += x[j];
          }
        }
        for (int64_t f = 0; f < p.fmas; ++f) {
          for (int64_t j = 0; j < len; ++j) tmp[j] = tmp[j] * 0.999f + 0.001f;
        }
        std::memcpy(out + t0, tmp, static_cast<size_t>(len) * sizeof(float));
      }
      return;
    }
  }
}

/// Rotary embedding of pairs [begin, end): (x0, x1) -> (x0 c - x1 s, x0 s + x1 c).
void RopePairs(const float* x, float* out, const float* cs, int64_t begin, int64_t end) {
  for (int64_t q = begin; q < end; ++q) {
    const float c = cs[2 * (q & 63)];
    const float s = cs[2 * (q & 63) + 1];
    const float x0 = x[2 * q];
    const float x1 = x[2 * q + 1];
    out[2 * q] = x0 * c - x1 * s;
    out[2 * q + 1] = x0 * s + x1 * c;
  }
}

Prepared PrepareElementwise(const ElementwiseSpec& s, const Context& ctx) {
  Prepared p;
  const std::vector<Operand> operands = OperandsOf(s);
  const double elements = std::ceil(s.elements);
  const EwFn fn = Classify(s.function, s.inputs);
  const double combine = std::max(0, s.inputs - 1);
  const auto fmas =
      static_cast<int64_t>(std::ceil(std::max(0.0, s.flops_per_element - combine) / 2));
  const double flops =
      elements * (fn == EwFn::kGeneric ? combine + 2.0 * static_cast<double>(fmas) : 20.0);
  p.skipped = BudgetProblem(OperandBytes(operands), flops, ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx);
  auto plan = std::make_shared<EwPlan>();
  plan->fn = fn;
  plan->fmas = fmas;
  plan->half = static_cast<int64_t>(elements);
  for (size_t i = 0; i + 1 < operands.size(); ++i) plan->in.push_back(static_cast<float*>(ptrs[i]));
  plan->out = static_cast<float*>(ptrs.back());
  const auto n = static_cast<int64_t>(elements);
  WorkerPool* pool = ctx.pool;
  p.implementation = fmt::format("loop ({})", NameOf(fn));
  if (fn == EwFn::kGeneric) {
    p.implementation =
        fmt::format("loop (generic: {} input sum + {} multiply-adds per element)", s.inputs, fmas);
  }
  if (fn == EwFn::kRope) {
    auto cs = std::make_shared<std::vector<float>>(128);
    for (int i = 0; i < 64; ++i) {
      const double angle = (i + 1) * std::pow(10000.0, -i / 64.0);
      (*cs)[2 * i] = static_cast<float>(std::cos(angle));
      (*cs)[2 * i + 1] = static_cast<float>(std::sin(angle));
    }
    p.run = [plan, cs, n, pool] {
      ParallelChunks(*pool, n / 2, 2.0, [&](int64_t b, int64_t e) {
        RopePairs(plan->in[0], plan->out, cs->data(), b, e);
      });
      if (n % 2 == 1) plan->out[n - 1] = plan->in[0][n - 1];
    };
    return p;
  }
  const double work = fn == EwFn::kGeneric ? 1.0 + static_cast<double>(fmas) : 1.0;
  p.run = [plan, n, pool, work] {
    ParallelChunks(*pool, n, work, [&](int64_t b, int64_t e) { ElementwiseRange(*plan, b, e); });
  };
  return p;
}

Prepared PrepareNorm(const NormSpec& s, const Context& ctx) {
  Prepared p;
  const std::vector<Operand> operands = OperandsOf(s);
  const double elements = static_cast<double>(s.rows) * static_cast<double>(s.cols);
  p.skipped = BudgetProblem(OperandBytes(operands), 7 * elements, ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx);
  const float* x = Ptr(ptrs, operands, "x");
  const float* w = Ptr(ptrs, operands, "weight");
  const float* bias = Ptr(ptrs, operands, "bias");
  float* y = Ptr(ptrs, operands, "y");
  const bool rms = s.kind == NormKind::kRms;
  const int64_t rows = s.rows;
  const int64_t cols = s.cols;
  WorkerPool* pool = ctx.pool;
  p.implementation = rms ? "loop (rmsnorm)" : "loop (layernorm)";
  p.run = [=] {
    ParallelChunks(*pool, rows, static_cast<double>(cols), [&](int64_t begin, int64_t end) {
      constexpr float kEps = 1e-5f;
      const float inv_n = 1.0f / static_cast<float>(cols);
      for (int64_t r = begin; r < end; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float mean = rms ? 0.0f : RowSum(xr, cols) * inv_n;
        const float rstd = 1.0f / std::sqrt(RowSumSquares(xr, cols, mean) * inv_n + kEps);
        if (w == nullptr) {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mean) * rstd;
        } else if (bias == nullptr) {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mean) * rstd * w[j];
        } else {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mean) * rstd * w[j] + bias[j];
        }
      }
    });
  };
  return p;
}

Prepared PrepareSoftmax(const SoftmaxSpec& s, const Context& ctx) {
  Prepared p;
  const std::vector<Operand> operands = OperandsOf(s);
  const double rows_d = std::ceil(s.rows);
  p.skipped = BudgetProblem(OperandBytes(operands), 5 * rows_d * static_cast<double>(s.cols), ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx);
  const float* x = Ptr(ptrs, operands, "x");
  float* y = Ptr(ptrs, operands, "y");
  const auto rows = static_cast<int64_t>(rows_d);
  const int64_t cols = s.cols;
  WorkerPool* pool = ctx.pool;
  p.implementation = "loop (softmax)";
  p.run = [=] {
    ParallelChunks(*pool, rows, static_cast<double>(cols), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) SoftmaxRow(x + r * cols, y + r * cols, cols);
    });
  };
  return p;
}

Prepared PrepareEmbedding(const EmbeddingSpec& s, const Context& ctx) {
  Prepared p;
  const std::vector<Operand> operands = OperandsOf(s);
  p.skipped = BudgetProblem(OperandBytes(operands), 0, ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx, s.vocab);
  const auto* ids =
      static_cast<const int64_t*>(ptrs[static_cast<size_t>(IndexOf(operands, "ids"))]);
  const float* table = Ptr(ptrs, operands, "table");
  float* y = Ptr(ptrs, operands, "y");
  const int64_t dim = s.dim;
  const int64_t tokens = s.tokens;
  WorkerPool* pool = ctx.pool;
  p.implementation = "loop (row gather)";
  p.run = [=] {
    ParallelChunks(*pool, tokens, static_cast<double>(dim), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        std::memcpy(y + t * dim, table + ids[t] * dim, static_cast<size_t>(dim) * sizeof(float));
      }
    });
  };
  return p;
}

Prepared PrepareConv2d(const Conv2dSpec& s, const Context& ctx) {
  Prepared p;
  const std::vector<Operand> operands = OperandsOf(s);
  const int64_t ho = s.out_height();
  const int64_t wo = s.out_width();
  const int64_t cg = s.in_channels / s.groups;
  const int64_t kg = s.out_channels / s.groups;
  // Checked in double first: the products of two valid dimensions can overflow int64.
  const double gemm_k_d =
      static_cast<double>(cg) * static_cast<double>(s.kernel_h) * static_cast<double>(s.kernel_w);
  const double gemm_n_d = static_cast<double>(ho) * static_cast<double>(wo);
  if (kg > INT_MAX || gemm_k_d > INT_MAX || gemm_n_d > INT_MAX) {
    p.skipped = fmt::format("implicit GEMM of {} x {} x {} (per group) exceeds BLAS's 32-bit int",
                            kg, gemm_n_d, gemm_k_d);
    return p;
  }
  const int64_t gemm_k = cg * s.kernel_h * s.kernel_w;
  const int64_t gemm_n = ho * wo;
  const bool pointwise = s.kernel_h == 1 && s.kernel_w == 1 && s.stride == 1 && s.padding == 0;
  const double col_bytes = pointwise ? 0 : 4.0 * static_cast<double>(gemm_k * gemm_n);
  const double flops = 2.0 * static_cast<double>(s.batch) * static_cast<double>(s.out_channels) *
                       static_cast<double>(gemm_n) * static_cast<double>(gemm_k);
  p.skipped = BudgetProblem(OperandBytes(operands) + col_bytes, flops, ctx);
  if (!p.skipped.empty()) return p;
  const std::vector<void*> ptrs = Allocate(operands, p, ctx);
  const float* x = Ptr(ptrs, operands, "x");
  const float* w = Ptr(ptrs, operands, "w");
  const float* bias = Ptr(ptrs, operands, "bias");
  float* y = Ptr(ptrs, operands, "y");
  float* col = nullptr;
  if (!pointwise) {
    p.buffers.emplace_back(static_cast<size_t>(col_bytes));
    col = p.buffers.back().f();
  }
  WorkerPool* pool = ctx.pool;
  p.implementation = pointwise ? "cblas_sgemm (1x1 conv, per image and group)"
                               : "im2col + cblas_sgemm (per image and group)";
  if (bias != nullptr) p.implementation += " + bias loop";
  p.run = [=] {
    const int64_t hw = s.height * s.width;
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.groups; ++g) {
        const float* xg = x + (n * s.in_channels + g * cg) * hw;
        const float* cols = xg;
        if (!pointwise) {
          ParallelChunks(*pool, gemm_k, static_cast<double>(gemm_n), [&](int64_t b, int64_t e) {
            for (int64_t row = b; row < e; ++row) {
              const int64_t c = row / (s.kernel_h * s.kernel_w);
              const int64_t r = row / s.kernel_w % s.kernel_h;
              const int64_t q = row % s.kernel_w;
              const float* xc = xg + c * hw;
              float* dst = col + row * gemm_n;
              for (int64_t oh = 0; oh < ho; ++oh) {
                const int64_t ih = oh * s.stride - s.padding + r * s.dilation;
                float* d = dst + oh * wo;
                if (ih < 0 || ih >= s.height) {
                  std::fill(d, d + wo, 0.0f);
                  continue;
                }
                for (int64_t ow = 0; ow < wo; ++ow) {
                  const int64_t iw = ow * s.stride - s.padding + q * s.dilation;
                  d[ow] = iw >= 0 && iw < s.width ? xc[ih * s.width + iw] : 0.0f;
                }
              }
            }
          });
          cols = col;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(kg),
                    static_cast<int>(gemm_n), static_cast<int>(gemm_k), 1.0f, w + g * kg * gemm_k,
                    static_cast<int>(gemm_k), cols, static_cast<int>(gemm_n), 0.0f,
                    y + (n * s.out_channels + g * kg) * gemm_n, static_cast<int>(gemm_n));
      }
    }
    if (bias != nullptr) {
      ParallelChunks(*pool, s.batch * s.out_channels, static_cast<double>(gemm_n),
                     [&](int64_t b, int64_t e) {
                       for (int64_t plane = b; plane < e; ++plane) {
                         const float bv = bias[plane % s.out_channels];
                         float* yp = y + plane * gemm_n;
                         for (int64_t j = 0; j < gemm_n; ++j) yp[j] += bv;
                       }
                     });
    }
  };
  return p;
}

Prepared Prepare(const OpSpec& spec, const Context& ctx) {
  return std::visit(Overloaded{
                        [&](const MatmulSpec& s) { return PrepareMatmul(s, ctx); },
                        [&](const AttentionSpec& s) { return PrepareAttention(s, ctx); },
                        [&](const ElementwiseSpec& s) { return PrepareElementwise(s, ctx); },
                        [&](const NormSpec& s) { return PrepareNorm(s, ctx); },
                        [&](const SoftmaxSpec& s) { return PrepareSoftmax(s, ctx); },
                        [&](const EmbeddingSpec& s) { return PrepareEmbedding(s, ctx); },
                        [&](const Conv2dSpec& s) { return PrepareConv2d(s, ctx); },
                        [&](const CollectiveSpec&) {
                          Prepared p;
                          p.skipped = "collective: not measured on a single host";
                          return p;
                        },
                    },
                    spec);
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// Evicts the caches: writes (and reads back) a buffer twice the size of the largest cache.
void FlushCaches() {
  static std::vector<uint8_t> buffer = [] {
    double largest = 8.0 * 1024 * 1024;
    for (const CpuInfo::Cache& c : DetectCpu().caches) {
      largest = std::max(largest, c.bytes * static_cast<double>(c.instances));
    }
    return std::vector<uint8_t>(static_cast<size_t>(2 * largest), 1);
  }();
  static volatile uint64_t sink = 0;
  uint64_t sum = 0;
  for (size_t i = 0; i < buffer.size(); i += 64) {
    buffer[i] = static_cast<uint8_t>(buffer[i] + 1);
    sum += buffer[i];
  }
  sink = sink + sum;
}

/// One warm-up, then up to `repetitions` timed runs (at least one, fewer once max_seconds have
/// been spent on the op); fills seconds (median), spread and repetitions. The cache flushes
/// between runs are not timed.
void Time(const std::function<void()>& run, const RunOptions& options, OpTiming& t) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  if (options.flush_caches) FlushCaches();
  run();
  std::vector<double> times;
  for (int r = 0; r < options.repetitions; ++r) {
    if (options.flush_caches) FlushCaches();
    const Clock::time_point t0 = Clock::now();
    run();
    const Clock::time_point t1 = Clock::now();
    // The clock ticks in nanoseconds: a run of a few instructions still reads > 0.
    times.push_back(std::max(Seconds(t1 - t0), 1e-9));
    if (Seconds(t1 - start) >= options.max_seconds) break;
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  t.seconds = n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  t.spread = (times.back() - times.front()) / t.seconds;
  t.repetitions = static_cast<int>(n);
}

}  // namespace

KeyRange VisibleKeys(const AttentionSpec& a, int64_t query) {
  const int64_t kv = a.kv_len;
  const int64_t pos = kv - a.q_len + query;  // negative only when non-causal with q_len > kv_len
  if (a.causal) {
    const int64_t end = std::clamp<int64_t>(pos + 1, 0, kv);
    const int64_t begin = a.window > 0 ? std::clamp<int64_t>(end - a.window, 0, end) : 0;
    return {begin, end};
  }
  if (a.window > 0 && a.window < kv) {
    const int64_t begin = std::clamp<int64_t>(pos - (a.window - 1) / 2, 0, kv - a.window);
    return {begin, begin + a.window};
  }
  return {0, kv};
}

void TiledAttentionFp32(const AttentionSpec& a, const float* q, const float* k, const float* v,
                        float* o, int threads) {
  WorkerPool pool(ResolveThreads(threads));
  TiledAttention(a, q, k, v, o, pool);
}

void UntiledAttentionFp32(const AttentionSpec& a, const float* q, const float* k, const float* v,
                          float* o, int threads) {
  WorkerPool pool(ResolveThreads(threads));
  UntiledAttention(a, q, k, v, o, pool);
}

Result<std::vector<OpTiming>> RunGraphOnCpu(const Graph& graph, const RunOptions& options) {
  if (options.threads < 0) {
    return Status::Invalid(
        "threads", fmt::format("must be >= 0 (0 = every online CPU), got {}", options.threads));
  }
  if (options.repetitions < 1) {
    return Status::Invalid("repetitions",
                           fmt::format("must be at least 1, got {}", options.repetitions));
  }
  if (!(options.max_seconds >= 0)) {
    return Status::Invalid("max-seconds", fmt::format("must be >= 0, got {}", options.max_seconds));
  }
  if (!(options.max_bytes >= 0)) {
    return Status::Invalid("max-bytes", fmt::format("must be >= 0, got {}", options.max_bytes));
  }
  const int threads = ResolveThreads(options.threads);
  // BLAS gets the same threads for the run; its previous setting is restored afterwards.
  struct RestoreBlasThreads {
    int previous = openblas_get_num_threads();
    ~RestoreBlasThreads() { SetBlasThreads(previous); }
  } restore_blas_threads;
  SetBlasThreads(threads);
  WorkerPool pool(threads);
  Context ctx;
  ctx.pool = &pool;
  ctx.threads = pool.size();
  ctx.max_bytes = options.max_bytes;
  ctx.max_seconds = options.max_seconds;
  ctx.tiled_attention = options.tiled_attention;

  std::vector<OpTiming> out;
  out.reserve(graph.ops().size());
  for (size_t i = 0; i < graph.ops().size(); ++i) {
    const Op& op = graph.ops()[i];
    OpTiming t;
    t.op = static_cast<int>(i);
    t.name = op.name;
    const Status valid = Validate(op.spec);
    if (!valid.ok()) {
      t.skipped = true;
      t.why_skipped = "invalid op: " + valid.ToString();
      out.push_back(std::move(t));
      continue;
    }
    ctx.seed = SplitMix64(i + 1);
    try {
      Prepared p = Prepare(op.spec, ctx);
      t.implementation = p.implementation;
      if (!p.skipped.empty()) {
        t.skipped = true;
        t.why_skipped = p.skipped;
      } else {
        Time(p.run, options, t);
      }
    } catch (const std::bad_alloc&) {
      double bytes = 0;
      for (const Operand& o : OperandsOf(op.spec)) bytes += Elements(o) * HostBytesPerElement(o);
      return Status::Unsupported(
          op.name, fmt::format("out of memory: could not allocate the host buffers (about {})",
                               Bytes(bytes)));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace roofline
