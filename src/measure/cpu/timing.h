// Internal helpers of the CPU measurements: pinned thread teams, a spin barrier, timing and
// statistics. Header-only and self-contained (standard library and POSIX only).
#ifndef ROOFLINE_SRC_MEASURE_CPU_TIMING_H_
#define ROOFLINE_SRC_MEASURE_CPU_TIMING_H_

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "roofline/measure.h"

namespace roofline::measure_internal {

/// Seconds on the steady clock.
inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Today's date in UTC, YYYY-MM-DD.
inline std::string TodayUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
  return buf;
}

/// MemTotal from /proc/meminfo in bytes, 0 when unknown.
inline double MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) == 0) return std::strtod(line.c_str() + 9, nullptr) * 1024.0;
  }
  return 0;
}

/// "8 KiB", "1.5 MiB", "256 MiB": binary prefixes, up to 3 significant digits.
inline std::string BinaryBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g %s", bytes, kUnits[u]);
  return buf;
}

/// Median, min, max and relative spread of rates (FLOP/s, B/s).
inline Sample Summarize(std::vector<double> rates) {
  Sample s;
  if (rates.empty()) return s;
  std::sort(rates.begin(), rates.end());
  const size_t n = rates.size();
  s.median = n % 2 == 1 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
  s.min = rates.front();
  s.max = rates.back();
  s.spread = s.median > 0 ? (s.max - s.min) / s.median : 0;
  s.repetitions = static_cast<int>(n);
  return s;
}

/// The CPUs this process may run on (its affinity mask), in order; empty when unknown.
inline std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
#endif
  return cpus;
}

/// Pins the calling thread to one CPU; failure (containers, other OSes) is ignored.
inline void PinCurrentThread(int cpu) {
#if defined(__linux__)
  if (cpu < 0 || cpu >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
#else
  (void)cpu;
#endif
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// A reusable barrier that spins briefly (so that the threads of a timed pass start within
/// microseconds of each other) and then yields (so that an oversubscribed machine still moves).
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  SpinBarrier(const SpinBarrier&) = delete;
  SpinBarrier& operator=(const SpinBarrier&) = delete;

  void Wait() {
    const unsigned gen = generation_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == gen) {
      if (++spins < 20000) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  const int n_;
  std::atomic<int> count_{0};
  std::atomic<unsigned> generation_{0};
};

/// A team of `threads` threads, thread i pinned to the i-th allowed CPU (modulo their count).
/// Run(body) calls body(tid, team) on every thread and returns when all are done; inside,
/// team.TimedPass(tid, work) runs work() on every thread at once and returns, identically on
/// every thread, the wall time of the whole parallel pass (latest end - earliest start).
class Team {
 public:
  explicit Team(int threads)
      : threads_(std::max(threads, 1)), barrier_(threads_), start_(threads_), end_(threads_) {}

  int threads() const { return threads_; }

  void Run(const std::function<void(int, Team&)>& body) {
    const std::vector<int> cpus = AllowedCpus();
    std::vector<std::thread> workers;
    workers.reserve(threads_);
    for (int t = 0; t < threads_; ++t) {
      workers.emplace_back([this, t, &cpus, &body] {
        if (!cpus.empty()) PinCurrentThread(cpus[t % cpus.size()]);
        body(t, *this);
      });
    }
    for (auto& w : workers) w.join();
  }

  /// Must be called by every thread of the team with the same sequence of passes.
  template <typename Work>
  double TimedPass(int tid, Work&& work) {
    barrier_.Wait();
    start_[tid].t = NowSeconds();
    work();
    end_[tid].t = NowSeconds();
    barrier_.Wait();
    // Every thread reads the same values: no thread writes start_/end_ again before all have
    // passed the first barrier of the next pass, which is after this read.
    double first = start_[0].t, last = end_[0].t;
    for (int t = 1; t < threads_; ++t) {
      first = std::min(first, start_[t].t);
      last = std::max(last, end_[t].t);
    }
    return last - first;
  }

  /// Finds how many units of work (calls work(n)) make a parallel pass last about `target`
  /// seconds, growing n from `start`; the passes it runs double as warm-up. Every thread must call
  /// it and gets the same answer. The fastest rate seen decides, so that a pass slowed down by
  /// another process does not shorten the timed passes.
  template <typename Work>
  int64_t Calibrate(int tid, double target, int64_t start, Work&& work) {
    int64_t n = std::max<int64_t>(start, 1);
    double best = 0;  // seconds per unit of work
    for (int round = 0; round < 40; ++round) {
      const double dt = TimedPass(tid, [&] { work(n); });
      if (dt > 0 && (best == 0 || dt / n < best)) best = dt / n;
      if (dt >= 0.5 * target) break;
      const double grow = dt > 0 ? std::min(64.0, 1.2 * target / dt) : 64.0;
      n = static_cast<int64_t>(static_cast<double>(n) * std::max(2.0, grow));
    }
    if (best > 0) n = static_cast<int64_t>(target / best) + 1;
    return std::clamp<int64_t>(n, 1, int64_t{1} << 40);
  }

  void Wait() { barrier_.Wait(); }

 private:
  struct alignas(64) Slot {
    double t = 0;
  };
  const int threads_;
  SpinBarrier barrier_;
  std::vector<Slot> start_, end_;
};

/// 64-byte aligned buffer, freed on destruction; not initialized.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes) : bytes_(RoundUp(std::max<size_t>(bytes, 64))) {
    data_ = std::aligned_alloc(64, bytes_);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  bool ok() const { return data_ != nullptr; }
  size_t bytes() const { return bytes_; }

 private:
  static size_t RoundUp(size_t b) { return (b + 63) / 64 * 64; }
  size_t bytes_;
  void* data_ = nullptr;
};

/// Keeps a value alive so the computation producing it cannot be optimized away.
template <typename T>
inline void Sink(const T& value) {
  static std::atomic<unsigned> sink{0};
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&value);
  unsigned x = 0;
  for (size_t i = 0; i < sizeof(T); ++i) x = x * 31u + p[i];
  sink.store(x, std::memory_order_relaxed);
}

}  // namespace roofline::measure_internal

#endif  // ROOFLINE_SRC_MEASURE_CPU_TIMING_H_
