// Launchers of the CUDA kernels of the backend (defined in the .cu files of this directory).
// Each launches asynchronously on `stream` and returns cudaGetLastError() after the launch.
// Compiled by nvcc and by the host compiler, so C++17 and CUDA runtime types only.
#ifndef ROOFLINE_SRC_MEASURE_CUDA_KERNELS_H_
#define ROOFLINE_SRC_MEASURE_CUDA_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace roofline::cuda_kernels {

/// Element types of device buffers.
enum class Elem { kF32, kF16, kBf16, kFp8E4M3, kI8, kI32 };

/// Bytes per element.
inline int SizeOf(Elem e) {
  switch (e) {
    case Elem::kF32:
    case Elem::kI32:
      return 4;
    case Elem::kF16:
    case Elem::kBf16:
      return 2;
    case Elem::kFp8E4M3:
    case Elem::kI8:
      return 1;
  }
  return 4;
}

/// Fills n elements with values uniform in [-1, 1) (integers: [-64, 64)) from a hash of the index
/// and `seed`: never zeros, different for every seed.
cudaError_t FillRandom(void* p, int64_t n, Elem e, uint64_t seed, cudaStream_t stream);

/// One thread that spins for `cycles` SM clock cycles: queued before a timed launch, it keeps
/// the GPU busy (at its clock, drawing little power) while the host records the start event and
/// submits the launch, so the events bracket the kernel alone.
cudaError_t Spin(int64_t cycles, cudaStream_t stream);
/// Fills n token ids uniform in [0, range).
cudaError_t FillIds(int64_t* p, int64_t n, int64_t range, uint64_t seed, cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Ceilings. `blocks` x `threads` threads; n4 counts 16-byte vectors. `sink` receives one value
// (written only when a result is impossible, so the loads cannot be optimized away).

/// Reads src[0, n4) `passes` times.
cudaError_t ReadKernel(const float4* src, int64_t n4, int passes, float* sink, int blocks,
                       int threads, cudaStream_t stream);
/// Writes dst[0, n4) `passes` times with values that depend on the index.
cudaError_t WriteKernel(float4* dst, int64_t n4, int passes, int blocks, int threads,
                        cudaStream_t stream);
/// dst[i] = src[i], `passes` times.
cudaError_t CopyKernel(const float4* src, float4* dst, int64_t n4, int passes, int blocks,
                       int threads, cudaStream_t stream);
/// Every thread reads `iterations` 16-byte vectors of a 32 KiB shared-memory array
/// (conflict-free); bytes = blocks x threads x iterations x 16.
cudaError_t SharedMemoryKernel(int64_t iterations, float* sink, int blocks, int threads,
                               cudaStream_t stream);
/// Every thread runs `iterations` x kFmaChains independent FMAs; FLOP = 2 x that.
inline constexpr int kFmaChains = 8;
cudaError_t FmaF32Kernel(int64_t iterations, float* sink, int blocks, int threads,
                         cudaStream_t stream);
cudaError_t FmaF64Kernel(int64_t iterations, double* sink, int blocks, int threads,
                         cudaStream_t stream);
/// The same with packed 16-bit pairs (HFMA2): every thread runs `iterations` x kFmaChains HFMA2,
/// each two multiply-adds; FLOP = 4 x that.
cudaError_t FmaF16x2Kernel(int64_t iterations, float* sink, int blocks, int threads,
                           cudaStream_t stream);
cudaError_t FmaBf16x2Kernel(int64_t iterations, float* sink, int blocks, int threads,
                            cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Ops of `validate --device cuda`. Element types: kF32, kF16 or kBf16; arithmetic in fp32.

/// Elementwise functions (the CPU runner's set).
/// kSiluMul, kGeluMul: silu (gelu) of the input's first half times its second half (a merged
/// gate-up's activation; the input holds 2n elements, gate then up).
enum class EwFn { kAdd, kMul, kScale, kSilu, kGelu, kSoftcap, kRope, kSiluMul, kGeluMul, kGeneric };
inline constexpr int kMaxEwInputs = 8;
struct EwArgs {
  const void* in[kMaxEwInputs] = {};
  int inputs = 0;
  void* out = nullptr;
  int64_t n = 0;
  int fmas = 0;  ///< kGeneric: multiply-adds per element after summing the inputs
};
cudaError_t Elementwise(EwFn fn, Elem e, const EwArgs& args, cudaStream_t stream);

/// y = softmax(x) over rows of `cols`.
cudaError_t Softmax(Elem e, const void* x, void* y, int64_t rows, int64_t cols,
                    cudaStream_t stream);
/// RMSNorm (rms) or LayerNorm over rows; w and b may be null.
cudaError_t Norm(Elem e, bool rms, const void* x, const void* w, const void* b, void* y,
                 int64_t rows, int64_t cols, cudaStream_t stream);
/// y[t] = table[ids[t]].
cudaError_t Embedding(Elem e, const int64_t* ids, const void* table, void* y, int64_t tokens,
                      int64_t dim, cudaStream_t stream);

/// Attention shapes: Q [batch, heads, q_len, head_dim], K [batch, kv_heads, kv_len, head_dim],
/// V [batch, kv_heads, kv_len, v_ld] (its first v_dim columns), O [batch, heads, q_len, v_dim].
struct AttentionArgs {
  int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 64, v_dim = 64, v_ld = 64;
  int64_t q_len = 1, kv_len = 1;
  bool causal = false;
  int64_t window = 0;  ///< keys per query, 0 = unlimited
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
};
/// Shared memory the tiled attention kernel uses for these shapes with the largest tiles that
/// fit `max_smem_bytes`, bytes; 0 when even the smallest tiles do not fit.
size_t FlashAttentionSmemBytes(const AttentionArgs& a, size_t max_smem_bytes);
/// Whether FlashAttention runs these shapes through the split-key decode kernel (one query per
/// sequence, at most 8 query heads per KV head, head dims up to 256) rather than the tiled one.
bool UsesDecodeAttention(const AttentionArgs& a);
/// Tiled attention with online softmax (flash-style): scores never leave the SM, key blocks
/// outside the causal / window range are skipped. `max_smem_bytes`: the device's opt-in limit.
/// Decode shapes (UsesDecodeAttention) go to a kernel split over the keys: each block reads one
/// slice of one KV head's keys and values once for all its query heads; a second kernel merges.
cudaError_t FlashAttention(Elem e, const AttentionArgs& a, size_t max_smem_bytes,
                           cudaStream_t stream);

}  // namespace roofline::cuda_kernels

#endif  // ROOFLINE_SRC_MEASURE_CUDA_KERNELS_H_
