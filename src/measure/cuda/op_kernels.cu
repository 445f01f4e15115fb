// Kernels of `roofline validate --device cuda` for the ops cuBLAS does not cover: elementwise,
// softmax, norms, embedding and tiled (flash-style) attention. Storage in fp32, fp16 or bf16;
// arithmetic in fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cstdint>

#include "src/measure/cuda/kernels.h"

namespace roofline::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGrid = 65535 * 4;

template <typename T>
__device__ __forceinline__ float Load(const T* p, int64_t i);
template <>
__device__ __forceinline__ float Load(const float* p, int64_t i) {
  return p[i];
}
template <>
__device__ __forceinline__ float Load(const __half* p, int64_t i) {
  return __half2float(p[i]);
}
template <>
__device__ __forceinline__ float Load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}

template <typename T>
__device__ __forceinline__ void Store(T* p, int64_t i, float x);
template <>
__device__ __forceinline__ void Store(float* p, int64_t i, float x) {
  p[i] = x;
}
template <>
__device__ __forceinline__ void Store(__half* p, int64_t i, float x) {
  p[i] = __float2half(x);
}
template <>
__device__ __forceinline__ void Store(__nv_bfloat16* p, int64_t i, float x) {
  p[i] = __float2bfloat16(x);
}

int GridFor(int64_t items, int per_block) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > kMaxGrid ? kMaxGrid : blocks));
}

// ---------------------------------------------------------------------------------------------
// Elementwise.

template <typename T>
__global__ void ElementwiseKernel(EwFn fn, EwArgs a) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  auto in = [&a](int j) { return static_cast<const T*>(a.in[j]); };
  T* out = static_cast<T*>(a.out);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += stride) {
    float y = 0;
    int rest = 1;  // first input folded in afterwards
    switch (fn) {
      case EwFn::kAdd:
      case EwFn::kGeneric:
        y = a.inputs > 0 ? Load(in(0), i) : static_cast<float>(i & 1023) * 1e-3f;
#pragma unroll
        for (int j = 1; j < kMaxEwInputs; ++j) {  // constant indices: pointers stay in registers
          if (j < a.inputs) y += Load(in(j), i);
        }
        rest = a.inputs;
        if (fn == EwFn::kGeneric) {
          for (int f = 0; f < a.fmas; ++f) y = fmaf(y, 0.999f, 0.001f);
        }
        break;
      case EwFn::kMul:
        y = Load(in(0), i);
        break;
      case EwFn::kScale:
        y = Load(in(0), i) * 0.5f;
        break;
      case EwFn::kSilu: {
        const float x = Load(in(0), i);
        y = x / (1.0f + __expf(-x));
        break;
      }
      case EwFn::kSiluMul: {
        const float x = Load(in(0), i);
        y = x / (1.0f + __expf(-x)) * Load(in(0), i + a.n);
        break;
      }
      case EwFn::kGeluMul: {
        const float x = Load(in(0), i);
        y = x / (1.0f + __expf(-1.5957691216057308f * (x + 0.044715f * x * x * x))) *
            Load(in(0), i + a.n);
        break;
      }
      case EwFn::kGelu: {
        const float x = Load(in(0), i);
        y = x / (1.0f + __expf(-1.5957691216057308f * (x + 0.044715f * x * x * x)));
        break;
      }
      case EwFn::kSoftcap: {
        const float x = Load(in(0), i);
        y = 30.0f - 60.0f / (__expf(x * (2.0f / 30.0f)) + 1.0f);
        break;
      }
      case EwFn::kRope:
        break;
    }
    // The remaining inputs: gates multiply, softcap and add accumulate.
    const bool add = fn == EwFn::kSoftcap;
#pragma unroll
    for (int j = 1; j < kMaxEwInputs; ++j) {
      if (j < rest || j >= a.inputs) continue;
      const float x = Load(in(j), i);
      y = add ? y + x : y * x;
    }
    Store(out, i, y);
  }
}

/// Rotary embedding of pairs: (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), angle per pair index.
template <typename T>
__global__ void RopeKernel(const T* x, T* out, int64_t n) {
  const int64_t pairs = n / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < pairs;
       q += stride) {
    const int i = static_cast<int>(q & 63);
    float s, c;
    __sincosf((i + 1) * __powf(10000.0f, -i / 64.0f), &s, &c);
    const float x0 = Load(x, 2 * q);
    const float x1 = Load(x, 2 * q + 1);
    Store(out, 2 * q, x0 * c - x1 * s);
    Store(out, 2 * q + 1, x0 * s + x1 * c);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && n % 2 == 1) Store(out, n - 1, Load(x, n - 1));
}

// ---------------------------------------------------------------------------------------------
// Row reductions: one block per row.

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
__device__ float BlockSum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpSum(v);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  return WarpSum(v);
}

__device__ float BlockMax(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpMax(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -FLT_MAX;
  return WarpMax(v);
}

template <typename T>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t rows, int64_t cols) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    float m = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, Load(xr, j));
    m = BlockMax(m, scratch);
    float s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(Load(xr, j) - m);
    s = BlockSum(s, scratch);
    const float inv = s > 0 ? 1.0f / s : 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      Store(yr, j, __expf(Load(xr, j) - m) * inv);
    }
  }
}

template <typename T>
__global__ void NormKernel(bool rms, const T* x, const T* w, const T* b, T* y, int64_t rows,
                           int64_t cols) {
  __shared__ float scratch[32];
  const float inv_n = 1.0f / static_cast<float>(cols);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    float s = 0, ss = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const float v = Load(xr, j);
      s += v;
      ss += v * v;
    }
    const float mean = rms ? 0.0f : BlockSum(s, scratch) * inv_n;
    ss = BlockSum(ss, scratch) * inv_n;
    const float var = rms ? ss : fmaxf(ss - mean * mean, 0.0f);
    const float rstd = rsqrtf(var + 1e-5f);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      float v = (Load(xr, j) - mean) * rstd;
      if (w != nullptr) v *= Load(w, j);
      if (b != nullptr) v += Load(b, j);
      Store(yr, j, v);
    }
  }
}

template <typename T>
__global__ void EmbeddingKernel(const int64_t* ids, const T* table, T* y, int64_t tokens,
                                int64_t dim) {
  for (int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
    const T* src = table + ids[t] * dim;
    T* dst = y + t * dim;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) dst[j] = src[j];
  }
}

// ---------------------------------------------------------------------------------------------
// Tiled attention.

constexpr int kAttnThreads = 128;

struct Tiles {
  int bq = 0, bk = 0;
};

/// Shared-memory floats: Q [bq x d], K [bk x (d + 1)] (padded: lanes read one column of
/// different rows), V [bk x dv], S [bq x bk], acc [bq x dv], m, l, alpha [bq].
size_t SmemFloats(const AttentionArgs& a, Tiles t) {
  return static_cast<size_t>(t.bq) * a.head_dim + static_cast<size_t>(t.bk) * (a.head_dim + 1) +
         static_cast<size_t>(t.bk) * a.v_dim + static_cast<size_t>(t.bq) * t.bk +
         static_cast<size_t>(t.bq) * a.v_dim + 3u * t.bq;
}

/// The largest tiles (32, then 16, 8, 4 rows) that fit `max_bytes`; bq no larger than q_len
/// needs (decode: 1 query row). {0, 0} when none fits.
Tiles ChooseTiles(const AttentionArgs& a, size_t max_bytes) {
  for (int t = 32; t >= 4; t /= 2) {
    int bq = 1;
    while (bq < t && bq < a.q_len) bq *= 2;
    const Tiles tiles{bq, t};
    if (SmemFloats(a, tiles) * sizeof(float) <= max_bytes) return tiles;
  }
  return {};
}

/// Keys [begin, end) query `q` sees (the CPU runner's VisibleKeys); also called by the host.
__host__ __device__ __forceinline__ void VisibleKeys(const AttentionArgs& a, int64_t q,
                                                     int64_t* begin, int64_t* end) {
  const int64_t kv = a.kv_len;
  const int64_t pos = kv - a.q_len + q;
  if (a.causal) {
    const int64_t e = pos + 1 < 0 ? 0 : (pos + 1 > kv ? kv : pos + 1);
    int64_t b = 0;
    if (a.window > 0) b = e - a.window < 0 ? 0 : e - a.window;
    *begin = b;
    *end = e;
    return;
  }
  if (a.window > 0 && a.window < kv) {
    int64_t b = pos - (a.window - 1) / 2;
    if (b > kv - a.window) b = kv - a.window;
    if (b < 0) b = 0;
    *begin = b;
    *end = b + a.window;
    return;
  }
  *begin = 0;
  *end = kv;
}

template <typename T>
__global__ void __launch_bounds__(kAttnThreads) FlashAttentionKernel(AttentionArgs a, Tiles t) {
  extern __shared__ float smem[];
  const int64_t d = a.head_dim, dv = a.v_dim, ldk = d + 1;
  const int bq = t.bq, bk = t.bk;
  float* qs = smem;
  float* ks = qs + bq * d;
  float* vs = ks + bk * ldk;
  float* s = vs + bk * dv;
  float* acc = s + bq * bk;
  float* mrow = acc + bq * dv;
  float* lrow = mrow + bq;
  float* alpha = lrow + bq;

  const int64_t q0 = static_cast<int64_t>(blockIdx.x) * bq;
  const int64_t h = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int64_t group = a.kv_heads > 0 && a.heads % a.kv_heads == 0 ? a.heads / a.kv_heads : 1;
  int64_t kvh = h / group;
  if (kvh > a.kv_heads - 1) kvh = a.kv_heads - 1;
  const T* q = static_cast<const T*>(a.q) + ((b * a.heads + h) * a.q_len) * d;
  const T* k = static_cast<const T*>(a.k) + (b * a.kv_heads + kvh) * a.kv_len * d;
  const T* v = static_cast<const T*>(a.v) + (b * a.kv_heads + kvh) * a.kv_len * a.v_ld;
  T* o = static_cast<T*>(a.o) + ((b * a.heads + h) * a.q_len) * dv;
  const float scale = rsqrtf(static_cast<float>(d));
  const int rows = static_cast<int>(a.q_len - q0 < bq ? a.q_len - q0 : bq);

  for (int64_t p = threadIdx.x; p < bq * d; p += blockDim.x) {
    const int64_t r = p / d;
    qs[p] = r < rows ? Load(q, (q0 + r) * d + p % d) * scale : 0.0f;
  }
  for (int64_t p = threadIdx.x; p < bq * dv; p += blockDim.x) acc[p] = 0.0f;
  for (int r = threadIdx.x; r < bq; r += blockDim.x) {
    mrow[r] = -FLT_MAX;
    lrow[r] = 0.0f;
  }
  // Visible ranges never move backwards, so the block's keys are [first.begin, last.end).
  int64_t kbegin, kend, unused;
  VisibleKeys(a, q0, &kbegin, &unused);
  VisibleKeys(a, q0 + rows - 1, &unused, &kend);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t k0 = kbegin; k0 < kend; k0 += bk) {
    __syncthreads();  // the previous block of keys is no longer read
    const int64_t cols = kend - k0 < bk ? kend - k0 : bk;
    for (int64_t p = threadIdx.x; p < bk * d; p += blockDim.x) {
      const int64_t j = p / d, c = p % d;
      ks[j * ldk + c] = j < cols ? Load(k, (k0 + j) * d + c) : 0.0f;
    }
    for (int64_t p = threadIdx.x; p < bk * dv; p += blockDim.x) {
      const int64_t j = p / dv, c = p % dv;
      vs[p] = j < cols ? Load(v, (k0 + j) * a.v_ld + c) : 0.0f;
    }
    __syncthreads();
    // Scores: lanes take consecutive keys of one query row (Q broadcast, K rows padded).
    for (int p = threadIdx.x; p < bq * bk; p += blockDim.x) {
      const int i = p / bk, j = p % bk;
      float x = -FLT_MAX;
      int64_t lo, hi;
      VisibleKeys(a, q0 + i, &lo, &hi);
      if (i < rows && j < cols && k0 + j >= lo && k0 + j < hi) {
        const float* qr = qs + i * d;
        const float* kr = ks + j * ldk;
        float dot = 0;
        for (int64_t c = 0; c < d; ++c) dot = fmaf(qr[c], kr[c], dot);
        x = dot;
      }
      s[p] = x;
    }
    __syncthreads();
    // Online softmax, one warp per query row (bk <= 32: lane j holds key j).
    for (int i = warp; i < bq; i += warps) {
      const float x = lane < bk ? s[i * bk + lane] : -FLT_MAX;
      const float m_old = mrow[i];
      const float m_new = fmaxf(m_old, WarpMax(x));
      float pexp = 0.0f;
      if (x > -FLT_MAX) pexp = __expf(x - m_new);
      const float sum = WarpSum(pexp);
      if (lane < bk) s[i * bk + lane] = pexp;
      if (lane == 0) {
        const float al = m_old > -FLT_MAX ? __expf(m_old - m_new) : 0.0f;
        alpha[i] = al;
        lrow[i] = lrow[i] * al + sum;
        mrow[i] = m_new;
      }
    }
    __syncthreads();
    // acc = acc * alpha + P V: lanes take consecutive output columns of one row.
    for (int64_t p = threadIdx.x; p < bq * dv; p += blockDim.x) {
      const int64_t i = p / dv, c = p % dv;
      const float* pr = s + i * bk;
      float y = acc[p] * alpha[i];
      for (int j = 0; j < bk; ++j) y = fmaf(pr[j], vs[j * dv + c], y);
      acc[p] = y;
    }
  }
  __syncthreads();
  for (int64_t p = threadIdx.x; p < bq * dv; p += blockDim.x) {
    const int64_t i = p / dv;
    if (i < rows) Store(o, (q0 + i) * dv + p % dv, lrow[i] > 0 ? acc[p] / lrow[i] : 0.0f);
  }
}

template <typename T>
cudaError_t LaunchAttention(const AttentionArgs& a, Tiles t, cudaStream_t stream) {
  const size_t bytes = SmemFloats(a, t) * sizeof(float);
  // Raising the dynamic shared-memory limit is a host call: do it once per size and device, not
  // before every timed launch.
  static size_t raised_to = 0;
  static int raised_on = -1;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (bytes > 48 * 1024 && (bytes > raised_to || device != raised_on)) {
    err = cudaFuncSetAttribute(FlashAttentionKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(bytes));
    if (err != cudaSuccess) return err;
    raised_to = bytes;
    raised_on = device;
  }
  const dim3 grid(static_cast<unsigned>((a.q_len + t.bq - 1) / t.bq),
                  static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch));
  FlashAttentionKernel<T><<<grid, kAttnThreads, bytes, stream>>>(a, t);
  return cudaGetLastError();
}

// ---------------------------------------------------------------------------------------------
// Decode attention (one query per sequence), split over the keys: the tiled kernel gives one block
// to each (batch, head), too few to keep an H100's 132 SMs reading the cache at batch 1 (it ran a
// Llama-3-8B decode step's attention in 4.4 ms against a 5.7 us bound). Here a block takes one
// (batch, KV head, slice of keys) and every query head of that KV group, so each key and value row
// is read once; each warp streams rows of the slice with kDecodeUnroll rows in flight; a second
// kernel merges the slices' partial softmax states.

constexpr int kDecodeThreads = 128;
constexpr int kDecodeWarps = kDecodeThreads / 32;
constexpr int kDecodeMaxGroup = 8;
constexpr int kDecodeUnroll = 4;
constexpr int64_t kDecodeMinKeysPerSlice = 32;
constexpr int kDecodeMaxSlicesLimit = 1024;  // the combine kernel's shared weights

/// Slices of the visible keys: enough blocks for about 16 per SM, at least 32 keys each. (With 8
/// per SM and 64 keys, an H100 kept 16% of its warp slots busy and read a 4096-key Llama-3-8B
/// cache at 150 GB/s.)
int DecodeSlices(const AttentionArgs& a, int64_t keys, int sms) {
  const int64_t groups = a.batch * a.kv_heads;
  int64_t slices = (16 * static_cast<int64_t>(sms) + groups - 1) / groups;
  const int64_t most = (keys + kDecodeMinKeysPerSlice - 1) / kDecodeMinKeysPerSlice;
  if (slices > most) slices = most;
  if (slices > kDecodeMaxSlicesLimit) slices = kDecodeMaxSlicesLimit;
  return static_cast<int>(slices < 1 ? 1 : slices);
}

/// Partial state of one (batch, head, slice): max score, sum of exponentials, then dv sums.
template <typename T, int DL>
__global__ void __launch_bounds__(kDecodeThreads)
    DecodeAttentionKernel(AttentionArgs a, int group, int64_t begin, int64_t per_slice, int64_t end,
                          float* part) {
  const int slice = blockIdx.x;
  const int64_t kvh = blockIdx.y, b = blockIdx.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t d = a.head_dim, dv = a.v_dim;
  const int64_t s0 = begin + slice * per_slice;
  const int64_t s1 = s0 + per_slice < end ? s0 + per_slice : end;
  const float scale = rsqrtf(static_cast<float>(d));

  float q[kDecodeMaxGroup][DL];
  float m[kDecodeMaxGroup], l[kDecodeMaxGroup], acc[kDecodeMaxGroup][DL];
#pragma unroll
  for (int h = 0; h < kDecodeMaxGroup; ++h) {
    const T* qh = static_cast<const T*>(a.q) + (b * a.heads + kvh * group + h) * d;
#pragma unroll
    for (int i = 0; i < DL; ++i) {
      const int64_t c = lane + 32 * i;
      q[h][i] = h < group && c < d ? Load(qh, c) * scale : 0.0f;
      acc[h][i] = 0.0f;
    }
    m[h] = -FLT_MAX;
    l[h] = 0.0f;
  }
  const T* kb = static_cast<const T*>(a.k) + (b * a.kv_heads + kvh) * a.kv_len * d;
  const T* vb = static_cast<const T*>(a.v) + (b * a.kv_heads + kvh) * a.kv_len * a.v_ld;
  for (int64_t j0 = s0 + warp * kDecodeUnroll; j0 < s1; j0 += kDecodeWarps * kDecodeUnroll) {
    float kr[kDecodeUnroll][DL], vr[kDecodeUnroll][DL];
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      const int64_t j = j0 + u;
#pragma unroll
      for (int i = 0; i < DL; ++i) {
        const int64_t c = lane + 32 * i;
        kr[u][i] = j < s1 && c < d ? Load(kb, j * d + c) : 0.0f;
        vr[u][i] = j < s1 && c < dv ? Load(vb, j * a.v_ld + c) : 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      if (j0 + u >= s1) break;
#pragma unroll
      for (int h = 0; h < kDecodeMaxGroup; ++h) {
        if (h >= group) break;
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < DL; ++i) dot = fmaf(q[h][i], kr[u][i], dot);
        dot = WarpSum(dot);
        const float m_new = fmaxf(m[h], dot);
        const float alpha = m[h] > -FLT_MAX ? __expf(m[h] - m_new) : 0.0f;
        const float p = __expf(dot - m_new);
        l[h] = l[h] * alpha + p;
#pragma unroll
        for (int i = 0; i < DL; ++i) acc[h][i] = fmaf(p, vr[u][i], acc[h][i] * alpha);
        m[h] = m_new;
      }
    }
  }
  // Merge the block's warps through shared memory, then write the slice's state.
  __shared__ float sm[kDecodeWarps][kDecodeMaxGroup], sl[kDecodeWarps][kDecodeMaxGroup];
  __shared__ float sacc[kDecodeWarps][kDecodeMaxGroup][32 * DL];
#pragma unroll
  for (int h = 0; h < kDecodeMaxGroup; ++h) {
    if (lane == 0) {
      sm[warp][h] = m[h];
      sl[warp][h] = l[h];
    }
#pragma unroll
    for (int i = 0; i < DL; ++i) sacc[warp][h][lane + 32 * i] = acc[h][i];
  }
  __syncthreads();
  const int slices = gridDim.x;
  for (int h = 0; h < group; ++h) {
    float mx = -FLT_MAX;
    for (int w = 0; w < kDecodeWarps; ++w) mx = fmaxf(mx, sm[w][h]);
    float* out = part + ((b * a.heads + kvh * group + h) * slices + slice) * (dv + 2);
    for (int64_t c = threadIdx.x; c < dv; c += blockDim.x) {
      float y = 0.0f;
      for (int w = 0; w < kDecodeWarps; ++w) {
        if (sm[w][h] > -FLT_MAX) y += sacc[w][h][c] * __expf(sm[w][h] - mx);
      }
      out[2 + c] = y;
    }
    if (threadIdx.x == 0) {
      float sum = 0.0f;
      for (int w = 0; w < kDecodeWarps; ++w) {
        if (sm[w][h] > -FLT_MAX) sum += sl[w][h] * __expf(sm[w][h] - mx);
      }
      out[0] = mx;
      out[1] = sum;
    }
  }
}

/// o[b, h] = merge of the slices' partial states: the slices' weights exp(m_s - M) / L first
/// (threads over slices), then each output column as a weighted sum (threads over columns).
constexpr int kDecodeMaxSlices = kDecodeMaxSlicesLimit;

template <typename T>
__global__ void DecodeCombineKernel(AttentionArgs a, int slices, const float* part) {
  __shared__ float weight[kDecodeMaxSlices];
  __shared__ float scratch[32];
  const int64_t h = blockIdx.x, b = blockIdx.y, dv = a.v_dim, stride = dv + 2;
  const float* ph = part + (b * a.heads + h) * slices * stride;
  float mx = -FLT_MAX;
  for (int s = threadIdx.x; s < slices; s += blockDim.x) mx = fmaxf(mx, ph[s * stride]);
  mx = BlockMax(mx, scratch);
  float sum = 0.0f;
  for (int s = threadIdx.x; s < slices; s += blockDim.x) {
    const float ms = ph[s * stride];
    const float w = ms > -FLT_MAX ? __expf(ms - mx) : 0.0f;
    weight[s] = w;
    sum += ph[s * stride + 1] * w;
  }
  sum = BlockSum(sum, scratch);  // its barriers also publish `weight`
  const float inv = sum > 0 ? 1.0f / sum : 0.0f;
  T* o = static_cast<T*>(a.o) + (b * a.heads + h) * dv;
  for (int64_t c = threadIdx.x; c < dv; c += blockDim.x) {
    float y = 0.0f;
    for (int s = 0; s < slices; ++s) y = fmaf(weight[s], ph[s * stride + 2 + c], y);
    Store(o, c, y * inv);
  }
}

/// Lanes' share of the head dims (1, 2, 4 or 8 elements: dims up to 256); 0 when the decode
/// kernel does not apply.
int DecodeLaneElems(const AttentionArgs& a) {
  if (a.q_len != 1 || a.kv_heads <= 0 || a.heads % a.kv_heads != 0) return 0;
  if (a.heads / a.kv_heads > kDecodeMaxGroup || a.kv_heads > 65535 || a.batch > 65535) return 0;
  const int64_t widest = a.head_dim > a.v_dim ? a.head_dim : a.v_dim;
  for (int dl = 1; dl <= 8; dl *= 2) {
    if (widest <= 32 * dl) return dl;
  }
  return 0;
}

/// The slices' partial states, kept across launches (grown, never shrunk).
float* DecodeWorkspace(size_t floats, cudaError_t* err) {
  static float* buffer = nullptr;
  static size_t size = 0;
  static int device_of = -1;
  int device = 0;
  *err = cudaGetDevice(&device);
  if (*err != cudaSuccess) return nullptr;
  if (floats > size || device != device_of) {
    if (buffer != nullptr && device == device_of) (void)cudaFree(buffer);
    buffer = nullptr;
    size = 0;
    *err = cudaMalloc(&buffer, floats * sizeof(float));
    if (*err != cudaSuccess) return nullptr;
    size = floats;
    device_of = device;
  }
  return buffer;
}

template <typename T, int DL>
cudaError_t LaunchDecodeDl(const AttentionArgs& a, cudaStream_t stream) {
  int64_t begin = 0, end = 0;
  VisibleKeys(a, 0, &begin, &end);  // the one query
  const int64_t keys = end - begin > 0 ? end - begin : 0;
  int device = 0, sms = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  const int slices = DecodeSlices(a, keys, sms);
  const int64_t per_slice = keys > 0 ? (keys + slices - 1) / slices : 1;
  float* part = DecodeWorkspace(
      static_cast<size_t>(a.batch * a.heads * slices) * static_cast<size_t>(a.v_dim + 2), &err);
  if (part == nullptr) return err;
  const int group = static_cast<int>(a.heads / a.kv_heads);
  const dim3 grid(static_cast<unsigned>(slices), static_cast<unsigned>(a.kv_heads),
                  static_cast<unsigned>(a.batch));
  DecodeAttentionKernel<T, DL>
      <<<grid, kDecodeThreads, 0, stream>>>(a, group, begin, per_slice, end, part);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  const dim3 combine(static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch));
  DecodeCombineKernel<T><<<combine, kDecodeThreads, 0, stream>>>(a, slices, part);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchDecode(const AttentionArgs& a, cudaStream_t stream) {
  switch (DecodeLaneElems(a)) {
    case 1:
      return LaunchDecodeDl<T, 1>(a, stream);
    case 2:
      return LaunchDecodeDl<T, 2>(a, stream);
    case 4:
      return LaunchDecodeDl<T, 4>(a, stream);
    default:
      return LaunchDecodeDl<T, 8>(a, stream);
  }
}

}  // namespace

cudaError_t Elementwise(EwFn fn, Elem e, const EwArgs& args, cudaStream_t stream) {
  if (args.n <= 0) return cudaSuccess;
  const int grid = GridFor(fn == EwFn::kRope ? (args.n + 1) / 2 : args.n, kThreads);
  switch (e) {
    case Elem::kF32:
      if (fn == EwFn::kRope) {
        RopeKernel<float><<<grid, kThreads, 0, stream>>>(static_cast<const float*>(args.in[0]),
                                                         static_cast<float*>(args.out), args.n);
      } else {
        ElementwiseKernel<float><<<grid, kThreads, 0, stream>>>(fn, args);
      }
      break;
    case Elem::kF16:
      if (fn == EwFn::kRope) {
        RopeKernel<__half><<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(args.in[0]),
                                                          static_cast<__half*>(args.out), args.n);
      } else {
        ElementwiseKernel<__half><<<grid, kThreads, 0, stream>>>(fn, args);
      }
      break;
    case Elem::kBf16:
      if (fn == EwFn::kRope) {
        RopeKernel<__nv_bfloat16>
            <<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(args.in[0]),
                                            static_cast<__nv_bfloat16*>(args.out), args.n);
      } else {
        ElementwiseKernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(fn, args);
      }
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t Softmax(Elem e, const void* x, void* y, int64_t rows, int64_t cols,
                    cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const int grid = GridFor(rows, 1);
  switch (e) {
    case Elem::kF32:
      SoftmaxKernel<float><<<grid, kThreads, 0, stream>>>(static_cast<const float*>(x),
                                                          static_cast<float*>(y), rows, cols);
      break;
    case Elem::kF16:
      SoftmaxKernel<__half><<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(x),
                                                           static_cast<__half*>(y), rows, cols);
      break;
    case Elem::kBf16:
      SoftmaxKernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y), rows, cols);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t Norm(Elem e, bool rms, const void* x, const void* w, const void* b, void* y,
                 int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const int grid = GridFor(rows, 1);
  switch (e) {
    case Elem::kF32:
      NormKernel<float><<<grid, kThreads, 0, stream>>>(
          rms, static_cast<const float*>(x), static_cast<const float*>(w),
          static_cast<const float*>(b), static_cast<float*>(y), rows, cols);
      break;
    case Elem::kF16:
      NormKernel<__half><<<grid, kThreads, 0, stream>>>(
          rms, static_cast<const __half*>(x), static_cast<const __half*>(w),
          static_cast<const __half*>(b), static_cast<__half*>(y), rows, cols);
      break;
    case Elem::kBf16:
      NormKernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
          rms, static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w),
          static_cast<const __nv_bfloat16*>(b), static_cast<__nv_bfloat16*>(y), rows, cols);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t Embedding(Elem e, const int64_t* ids, const void* table, void* y, int64_t tokens,
                      int64_t dim, cudaStream_t stream) {
  if (tokens <= 0 || dim <= 0) return cudaSuccess;
  const int grid = GridFor(tokens, 1);
  switch (e) {
    case Elem::kF32:
      EmbeddingKernel<float><<<grid, kThreads, 0, stream>>>(ids, static_cast<const float*>(table),
                                                            static_cast<float*>(y), tokens, dim);
      break;
    case Elem::kF16:
      EmbeddingKernel<__half><<<grid, kThreads, 0, stream>>>(ids, static_cast<const __half*>(table),
                                                             static_cast<__half*>(y), tokens, dim);
      break;
    case Elem::kBf16:
      EmbeddingKernel<__nv_bfloat16>
          <<<grid, kThreads, 0, stream>>>(ids, static_cast<const __nv_bfloat16*>(table),
                                          static_cast<__nv_bfloat16*>(y), tokens, dim);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

bool UsesDecodeAttention(const AttentionArgs& a) { return DecodeLaneElems(a) > 0; }

size_t FlashAttentionSmemBytes(const AttentionArgs& a, size_t max_smem_bytes) {
  const Tiles t = ChooseTiles(a, max_smem_bytes);
  return t.bq == 0 ? 0 : SmemFloats(a, t) * sizeof(float);
}

cudaError_t FlashAttention(Elem e, const AttentionArgs& a, size_t max_smem_bytes,
                           cudaStream_t stream) {
  if (a.batch <= 0 || a.heads <= 0 || a.q_len <= 0 || a.kv_len <= 0) return cudaSuccess;
  if (a.heads > 65535 || a.batch > 65535) return cudaErrorInvalidConfiguration;
  if (UsesDecodeAttention(a)) {
    switch (e) {
      case Elem::kF32:
        return LaunchDecode<float>(a, stream);
      case Elem::kF16:
        return LaunchDecode<__half>(a, stream);
      case Elem::kBf16:
        return LaunchDecode<__nv_bfloat16>(a, stream);
      default:
        return cudaErrorInvalidValue;
    }
  }
  const Tiles t = ChooseTiles(a, max_smem_bytes);
  if (t.bq == 0) return cudaErrorInvalidConfiguration;
  switch (e) {
    case Elem::kF32:
      return LaunchAttention<float>(a, t, stream);
    case Elem::kF16:
      return LaunchAttention<__half>(a, t, stream);
    case Elem::kBf16:
      return LaunchAttention<__nv_bfloat16>(a, t, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace roofline::cuda_kernels
