// Kernels of `roofline measure --device cuda`: random fills, bandwidth per memory level and
// CUDA-core FMA peaks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "src/measure/cuda/kernels.h"

namespace roofline::cuda_kernels {
namespace {

constexpr int kFillThreads = 256;

__device__ __forceinline__ uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform in (-1, 1), never exactly 0: ((h >> 40) + 0.5) / 2^24 lies strictly inside (0, 1).
__device__ __forceinline__ float Uniform(uint64_t h) {
  const float u = (static_cast<float>(h >> 40) + 0.5f) * (1.0f / 16777216.0f);
  return 2.0f * u - 1.0f;
}

__global__ void FillKernel(void* p, int64_t n, Elem e, uint64_t seed) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint64_t h = Mix(seed ^ Mix(static_cast<uint64_t>(i)));
    const float x = Uniform(h);
    switch (e) {
      case Elem::kF32:
        static_cast<float*>(p)[i] = x;
        break;
      case Elem::kF16:
        static_cast<__half*>(p)[i] = __float2half(x);
        break;
      case Elem::kBf16:
        static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(x);
        break;
      case Elem::kFp8E4M3: {
        // Magnitudes in [1/16, 1): far above e4m3's smallest subnormal, so never rounded to 0.
        const float m = 0.0625f + 0.9375f * (0.5f * (x + 1.0f));
        static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3((h & 1) ? m : -m);
        break;
      }
      case Elem::kI8: {
        int v = static_cast<int>((h >> 8) % 127) - 63;  // [-63, 63]
        static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v == 0 ? 1 : v);
        break;
      }
      case Elem::kI32: {
        int v = static_cast<int>((h >> 8) % 127) - 63;
        static_cast<int32_t*>(p)[i] = v == 0 ? 1 : v;
        break;
      }
    }
  }
}

__global__ void FillIdsKernel(int64_t* p, int64_t n, int64_t range, uint64_t seed) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    p[i] = static_cast<int64_t>(Mix(seed ^ Mix(static_cast<uint64_t>(i))) %
                                static_cast<uint64_t>(range));
  }
}

int FillBlocks(int64_t n) {
  const int64_t blocks = (n + kFillThreads - 1) / kFillThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65536 ? 65536 : blocks));
}

__device__ __forceinline__ float Sum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

/// Four independent 16-byte loads in flight per thread per step.
__global__ void ReadKernelImpl(const float4* __restrict__ src, int64_t n4, int passes,
                               float* sink) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0;
  for (int p = 0; p < passes; ++p) {
    int64_t i = first;
    for (; i + 3 * stride < n4; i += 4 * stride) {
      const float4 a = src[i];
      const float4 b = src[i + stride];
      const float4 c = src[i + 2 * stride];
      const float4 d = src[i + 3 * stride];
      acc += (Sum(a) + Sum(b)) + (Sum(c) + Sum(d));
    }
    for (; i < n4; i += stride) acc += Sum(src[i]);
  }
  if (acc == -1.2345e30f) *sink = acc;  // never true for inputs in (-1, 1); keeps the loads
}

__global__ void WriteKernelImpl(float4* __restrict__ dst, int64_t n4, int passes) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int p = 0; p < passes; ++p) {
    const float f = static_cast<float>(p + 1);
    for (int64_t i = first; i < n4; i += stride) {
      const float x = static_cast<float>(i & 1023) * 1e-3f + f;
      dst[i] = make_float4(x, x + 1, x + 2, x + 3);
    }
  }
}

__global__ void CopyKernelImpl(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n4,
                               int passes) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int p = 0; p < passes; ++p) {
    int64_t i = first;
    for (; i + 3 * stride < n4; i += 4 * stride) {
      const float4 a = src[i];
      const float4 b = src[i + stride];
      const float4 c = src[i + 2 * stride];
      const float4 d = src[i + 3 * stride];
      dst[i] = a;
      dst[i + stride] = b;
      dst[i + 2 * stride] = c;
      dst[i + 3 * stride] = d;
    }
    for (; i < n4; i += stride) dst[i] = src[i];
  }
}

constexpr int kSmemVectors = 2048;  // 32 KiB of float4

/// A shared-memory load the compiler must issue (volatile asm), 16 bytes wide.
__device__ __forceinline__ float4 LoadShared(const float4* p) {
  float4 v;
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

__global__ void SharedMemoryKernelImpl(int64_t iterations, float* sink) {
  __shared__ float4 buf[kSmemVectors];
  for (int i = threadIdx.x; i < kSmemVectors; i += blockDim.x) {
    const float x = static_cast<float>(i) * 1e-4f;
    buf[i] = make_float4(x, x + 1e-5f, x + 2e-5f, x + 3e-5f);
  }
  __syncthreads();
  float4 acc = make_float4(0, 0, 0, 0);
  // Consecutive lanes read consecutive vectors (a warp reads 512 contiguous bytes): no bank
  // conflicts. The launcher rounds iterations up to a multiple of 8.
  unsigned base = threadIdx.x;
  for (int64_t it = 0; it < iterations; it += 8) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float4 v = LoadShared(&buf[(base + 32u * j) & (kSmemVectors - 1)]);
      acc.x += v.x;
      acc.y += v.y;
      acc.z += v.z;
      acc.w += v.w;
    }
    base = (base + 256u) & (kSmemVectors - 1);
  }
  if (Sum(acc) == -1.2345e30f) *sink = Sum(acc);
}

template <typename T>
__device__ __forceinline__ T Fma(T a, T b, T c);
template <>
__device__ __forceinline__ float Fma(float a, float b, float c) {
  return fmaf(a, b, c);
}
template <>
__device__ __forceinline__ double Fma(double a, double b, double c) {
  return fma(a, b, c);
}

/// kFmaChains independent dependency chains per thread; the multiplier and addend depend on the
/// thread so nothing is known at compile time.
template <typename T>
__global__ void FmaKernelImpl(int64_t iterations, T* sink) {
  T a[kFmaChains];
  const T b = static_cast<T>(0.999999) - static_cast<T>(threadIdx.x & 7) * static_cast<T>(1e-7);
  const T c = static_cast<T>(1e-6) * static_cast<T>((threadIdx.x & 3) + 1);
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j)
    a[j] = static_cast<T>(threadIdx.x + j) * static_cast<T>(1e-3);
#pragma unroll 8
  for (int64_t it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) a[j] = Fma(a[j], b, c);
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) s += a[j];
  if (s == static_cast<T>(-1.2345e30)) *sink = s;
}

__device__ __forceinline__ __half2 Fma2(__half2 a, __half2 b, __half2 c) {
  return __hfma2(a, b, c);
}
__device__ __forceinline__ __nv_bfloat162 Fma2(__nv_bfloat162 a, __nv_bfloat162 b,
                                               __nv_bfloat162 c) {
  return __hfma2(a, b, c);
}
template <typename T2>
__device__ __forceinline__ T2 Pair(float lo, float hi);
template <>
__device__ __forceinline__ __half2 Pair(float lo, float hi) {
  return __floats2half2_rn(lo, hi);
}
template <>
__device__ __forceinline__ __nv_bfloat162 Pair(float lo, float hi) {
  return __floats2bfloat162_rn(lo, hi);
}

/// FmaKernelImpl for packed 16-bit pairs: each HFMA2 does two multiply-adds (4 FLOP). The chains
/// settle near c / (1 - b), far from overflow and subnormals.
template <typename T2>
__global__ void Fma2KernelImpl(int64_t iterations, float* sink) {
  T2 a[kFmaChains];
  const float bf = 0.999f - static_cast<float>(threadIdx.x & 7) * 1e-4f;
  const float cf = 1e-3f * static_cast<float>((threadIdx.x & 3) + 1);
  const T2 b = Pair<T2>(bf, bf), c = Pair<T2>(cf, cf);
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) {
    a[j] = Pair<T2>(static_cast<float>(threadIdx.x + j) * 1e-3f,
                    static_cast<float>(threadIdx.x + 2 * j) * 1e-3f);
  }
#pragma unroll 8
  for (int64_t it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) a[j] = Fma2(a[j], b, c);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) s += __low2float(a[j]) + __high2float(a[j]);
  if (s == -1.2345e30f) *sink = s;
}

}  // namespace

cudaError_t FmaF16x2Kernel(int64_t iterations, float* sink, int blocks, int threads,
                           cudaStream_t stream) {
  Fma2KernelImpl<__half2><<<blocks, threads, 0, stream>>>(iterations, sink);
  return cudaGetLastError();
}

cudaError_t FmaBf16x2Kernel(int64_t iterations, float* sink, int blocks, int threads,
                            cudaStream_t stream) {
  Fma2KernelImpl<__nv_bfloat162><<<blocks, threads, 0, stream>>>(iterations, sink);
  return cudaGetLastError();
}

__global__ void SpinKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

cudaError_t Spin(int64_t cycles, cudaStream_t stream) {
  if (cycles <= 0) return cudaSuccess;
  SpinKernel<<<1, 1, 0, stream>>>(static_cast<long long>(cycles));
  return cudaGetLastError();
}

cudaError_t FillRandom(void* p, int64_t n, Elem e, uint64_t seed, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  FillKernel<<<FillBlocks(n), kFillThreads, 0, stream>>>(p, n, e, seed);
  return cudaGetLastError();
}

cudaError_t FillIds(int64_t* p, int64_t n, int64_t range, uint64_t seed, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  FillIdsKernel<<<FillBlocks(n), kFillThreads, 0, stream>>>(p, n, range < 1 ? 1 : range, seed);
  return cudaGetLastError();
}

cudaError_t ReadKernel(const float4* src, int64_t n4, int passes, float* sink, int blocks,
                       int threads, cudaStream_t stream) {
  ReadKernelImpl<<<blocks, threads, 0, stream>>>(src, n4, passes, sink);
  return cudaGetLastError();
}

cudaError_t WriteKernel(float4* dst, int64_t n4, int passes, int blocks, int threads,
                        cudaStream_t stream) {
  WriteKernelImpl<<<blocks, threads, 0, stream>>>(dst, n4, passes);
  return cudaGetLastError();
}

cudaError_t CopyKernel(const float4* src, float4* dst, int64_t n4, int passes, int blocks,
                       int threads, cudaStream_t stream) {
  CopyKernelImpl<<<blocks, threads, 0, stream>>>(src, dst, n4, passes);
  return cudaGetLastError();
}

cudaError_t SharedMemoryKernel(int64_t iterations, float* sink, int blocks, int threads,
                               cudaStream_t stream) {
  SharedMemoryKernelImpl<<<blocks, threads, 0, stream>>>((iterations + 7) / 8 * 8, sink);
  return cudaGetLastError();
}

cudaError_t FmaF32Kernel(int64_t iterations, float* sink, int blocks, int threads,
                         cudaStream_t stream) {
  FmaKernelImpl<float><<<blocks, threads, 0, stream>>>(iterations, sink);
  return cudaGetLastError();
}

cudaError_t FmaF64Kernel(int64_t iterations, double* sink, int blocks, int threads,
                         cudaStream_t stream) {
  FmaKernelImpl<double><<<blocks, threads, 0, stream>>>(iterations, sink);
  return cudaGetLastError();
}

}  // namespace roofline::cuda_kernels
