// Internal helpers of the CUDA backend's host code: checked CUDA calls, device buffers, event
// timing. Only compiled when the backend is (needs the CUDA runtime headers).
#ifndef ROOFLINE_SRC_MEASURE_CUDA_CUDA_UTIL_H_
#define ROOFLINE_SRC_MEASURE_CUDA_CUDA_UTIL_H_

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "roofline/cuda_measure.h"
#include "src/measure/cuda/kernels.h"

namespace roofline::cuda_internal {

/// A failed CUDA runtime call as a Status: "--device cuda: <what>: <error name>: <message>".
inline Status CudaError(cudaError_t e, const std::string& what) {
  return Status::Unsupported("--device cuda", fmt::format("{}: {} ({})", what, cudaGetErrorName(e),
                                                          cudaGetErrorString(e)));
}

/// Returns from the calling function (which returns Status or Result) when a CUDA call fails.
#define ROOFLINE_CUDA_CHECK(call)                                             \
  do {                                                                        \
    const cudaError_t roofline_cuda_err_ = (call);                            \
    if (roofline_cuda_err_ != cudaSuccess) {                                  \
      return ::roofline::cuda_internal::CudaError(roofline_cuda_err_, #call); \
    }                                                                         \
  } while (0)

/// Device memory freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /// Allocates `bytes` (at least 256) of device memory.
  Status Allocate(size_t bytes) {
    Reset();
    bytes = std::max<size_t>(bytes, 256);
    const cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
      ptr_ = nullptr;
      (void)cudaGetLastError();  // cudaMalloc's error is not sticky; clear it
      return CudaError(e, fmt::format("cudaMalloc({} bytes)", bytes));
    }
    bytes_ = bytes;
    return Status::Ok();
  }
  void Reset() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// A stream and two events, destroyed with the object.
class Timer {
 public:
  Timer() = default;
  ~Timer() {
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  Status Init() {
    ROOFLINE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ROOFLINE_CUDA_CHECK(cudaEventCreate(&start_));
    ROOFLINE_CUDA_CHECK(cudaEventCreate(&stop_));
    return Status::Ok();
  }
  cudaStream_t stream() const { return stream_; }

  /// Before each timed launch (after `before`), a one-thread kernel spins this many SM cycles
  /// (0: none). The GPU then holds its clock at low power and the launch is queued before the
  /// start event runs. On an H100 SXM5 (2026-11-25) a 4096x4096x14336 bf16 GEMM timed so by
  /// PyTorch (torch.cuda._sleep) ran at 840 TFLOP/s with 0.8% spread between launches, and the
  /// same shape timed right after a memset read 5-20% spreads and medians near 810.
  void SetLeadCycles(int64_t cycles) { lead_cycles_ = cycles; }

  /// Runs `launch` `warmup` times, then `repetitions` times between two events; `before` (if
  /// set) runs before each timed launch, outside the events (an L2 flush), then the lead spin
  /// (SetLeadCycles). Seconds per launch.
  Result<std::vector<double>> Time(const std::function<cudaError_t()>& launch, int warmup,
                                   int repetitions,
                                   const std::function<cudaError_t()>& before = nullptr) {
    for (int i = 0; i < warmup; ++i) {
      ROOFLINE_CUDA_CHECK(launch());
    }
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> seconds;
    seconds.reserve(static_cast<size_t>(repetitions));
    for (int i = 0; i < repetitions; ++i) {
      if (before) {
        ROOFLINE_CUDA_CHECK(before());
      }
      ROOFLINE_CUDA_CHECK(cuda_kernels::Spin(lead_cycles_, stream_));
      ROOFLINE_CUDA_CHECK(cudaEventRecord(start_, stream_));
      ROOFLINE_CUDA_CHECK(launch());
      ROOFLINE_CUDA_CHECK(cudaEventRecord(stop_, stream_));
      ROOFLINE_CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      ROOFLINE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      seconds.push_back(static_cast<double>(ms) * 1e-3);
    }
    ROOFLINE_CUDA_CHECK(cudaGetLastError());
    return seconds;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  int64_t lead_cycles_ = 0;
};

/// The lead spin of every timed launch (Timer::SetLeadCycles): 1 ms at the peak SM clock.
inline int64_t LeadCyclesOf(const CudaDeviceInfo& info) {
  const double hz = info.sm_clock_hz > 0 ? info.sm_clock_hz : 2e9;
  return static_cast<int64_t>(hz * 1e-3);
}

/// Checks that a device exists and selects it; fills `info`.
Status SelectDevice(int index, CudaDeviceInfo* info);

}  // namespace roofline::cuda_internal

#endif  // ROOFLINE_SRC_MEASURE_CUDA_CUDA_UTIL_H_
