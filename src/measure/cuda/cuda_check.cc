// Numeric check of the kernels `validate --device cuda` times: each runs on random inputs and is
// compared with a float64 host computation of the same function. Compiled only with the CUDA
// backend.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "roofline/cuda_measure.h"
#include "src/measure/cpu/attention_kernel.h"
#include "src/measure/cuda/cuda_plugin_api.h"
#include "src/measure/cuda/cuda_util.h"
#include "src/measure/cuda/kernels.h"

namespace roofline {
namespace {

using cuda_internal::DeviceBuffer;
namespace k = cuda_kernels;

/// A device buffer of n elements of `e`, filled with random values (or poisoned with NaN for
/// outputs), with its host copy as doubles.
struct Tensor {
  k::Elem elem = k::Elem::kF32;
  int64_t n = 0;
  DeviceBuffer buf;
  std::vector<double> host;
};

double ToDouble(const unsigned char* p, k::Elem e) {
  if (e == k::Elem::kBf16) {
    uint16_t bits = 0;
    std::memcpy(&bits, p, 2);
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float f = 0;
    std::memcpy(&f, &wide, 4);
    return f;
  }
  float f = 0;
  std::memcpy(&f, p, 4);
  return f;
}

/// Copies the device buffer to `t.host`.
Status Download(Tensor* t) {
  const int size = k::SizeOf(t->elem);
  std::vector<unsigned char> raw(static_cast<size_t>(t->n) * size);
  ROOFLINE_CUDA_CHECK(cudaMemcpy(raw.data(), t->buf.get(), raw.size(), cudaMemcpyDeviceToHost));
  t->host.resize(static_cast<size_t>(t->n));
  for (int64_t i = 0; i < t->n; ++i) t->host[i] = ToDouble(raw.data() + i * size, t->elem);
  return Status::Ok();
}

/// An input: random on the device, then read back (the reference sees the rounded values).
Status MakeInput(Tensor* t, k::Elem e, int64_t n, uint64_t seed) {
  t->elem = e;
  t->n = n;
  if (Status s = t->buf.Allocate(static_cast<size_t>(n) * k::SizeOf(e)); !s.ok()) return s;
  ROOFLINE_CUDA_CHECK(k::FillRandom(t->buf.get(), n, e, seed, nullptr));
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  return Download(t);
}

uint16_t ToBf16Bits(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

/// Multiplies an input by `factor` (through the host), so attention scores reach tens and the
/// softmax is far from flat; the host copy keeps the stored (rounded) values.
Status Scale(Tensor* t, double factor) {
  const int size = k::SizeOf(t->elem);
  std::vector<unsigned char> raw(static_cast<size_t>(t->n) * size);
  for (int64_t i = 0; i < t->n; ++i) {
    const auto f = static_cast<float>(t->host[i] * factor);
    if (t->elem == k::Elem::kBf16) {
      const uint16_t b = ToBf16Bits(f);
      std::memcpy(raw.data() + i * size, &b, 2);
    } else {
      std::memcpy(raw.data() + i * size, &f, 4);
    }
  }
  ROOFLINE_CUDA_CHECK(cudaMemcpy(t->buf.get(), raw.data(), raw.size(), cudaMemcpyHostToDevice));
  return Download(t);
}

/// An output poisoned with all-ones bytes (NaN in fp32 and bf16), so unwritten elements show.
Status MakeOutput(Tensor* t, k::Elem e, int64_t n) {
  t->elem = e;
  t->n = n;
  if (Status s = t->buf.Allocate(static_cast<size_t>(n) * k::SizeOf(e)); !s.ok()) return s;
  ROOFLINE_CUDA_CHECK(cudaMemset(t->buf.get(), 0xFF, static_cast<size_t>(n) * k::SizeOf(e)));
  return Status::Ok();
}

/// Relative error ||out - ref|| / ||ref|| and the count of non-finite outputs.
CudaKernelCheck Compare(std::string kernel, std::string shape, k::Elem e,
                        const std::vector<double>& out, const std::vector<double>& ref) {
  CudaKernelCheck c;
  c.kernel = std::move(kernel);
  c.shape = std::move(shape);
  c.dtype = e == k::Elem::kBf16 ? "bf16" : "fp32";
  // fp32 arithmetic lands far under 1e-4; bf16 storage rounds each output to 8 bits of mantissa
  // (relative 2^-9 ~ 2e-3), so 1e-2 leaves room for bf16 inputs and outputs but not for a wrong
  // function.
  c.tolerance = e == k::Elem::kBf16 ? 1e-2 : 1e-4;
  c.elements = static_cast<int64_t>(out.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      ++c.unwritten;
      continue;
    }
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  c.relative_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

Status CheckSoftmax(k::Elem e, int64_t rows, int64_t cols, uint64_t seed,
                    std::vector<CudaKernelCheck>* out) {
  Tensor x, y;
  if (Status s = MakeInput(&x, e, rows * cols, seed); !s.ok()) return s;
  if (Status s = MakeOutput(&y, e, rows * cols); !s.ok()) return s;
  ROOFLINE_CUDA_CHECK(k::Softmax(e, x.buf.get(), y.buf.get(), rows, cols, nullptr));
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  if (Status s = Download(&y); !s.ok()) return s;
  std::vector<double> ref(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x.host.data() + r * cols;
    const double m = *std::max_element(xr, xr + cols);
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(xr[j] - m);
    for (int64_t j = 0; j < cols; ++j) ref[r * cols + j] = std::exp(xr[j] - m) / sum;
  }
  out->push_back(Compare("softmax", fmt::format("{} rows x {}", rows, cols), e, y.host, ref));
  return Status::Ok();
}

Status CheckNorm(k::Elem e, bool rms, int64_t rows, int64_t cols, uint64_t seed,
                 std::vector<CudaKernelCheck>* out) {
  Tensor x, w, b, y;
  if (Status s = MakeInput(&x, e, rows * cols, seed); !s.ok()) return s;
  if (Status s = MakeInput(&w, e, cols, seed + 1); !s.ok()) return s;
  if (!rms) {
    if (Status s = MakeInput(&b, e, cols, seed + 2); !s.ok()) return s;
  }
  if (Status s = MakeOutput(&y, e, rows * cols); !s.ok()) return s;
  ROOFLINE_CUDA_CHECK(k::Norm(e, rms, x.buf.get(), w.buf.get(), rms ? nullptr : b.buf.get(),
                              y.buf.get(), rows, cols, nullptr));
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  if (Status s = Download(&y); !s.ok()) return s;
  std::vector<double> ref(static_cast<size_t>(rows * cols));
  constexpr double kEps = 1e-5;  // the eps of Llama's RMSNorm and BERT's LayerNorm
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x.host.data() + r * cols;
    double mean = 0;
    if (!rms) {
      for (int64_t j = 0; j < cols; ++j) mean += xr[j];
      mean /= static_cast<double>(cols);
    }
    double var = 0;
    for (int64_t j = 0; j < cols; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    var /= static_cast<double>(cols);
    const double rstd = 1.0 / std::sqrt(var + kEps);
    for (int64_t j = 0; j < cols; ++j) {
      double v = (xr[j] - mean) * rstd * w.host[j];
      if (!rms) v += b.host[j];
      ref[r * cols + j] = v;
    }
  }
  out->push_back(Compare(rms ? "rmsnorm" : "layernorm", fmt::format("{} rows x {}", rows, cols), e,
                         y.host, ref));
  return Status::Ok();
}

/// `q_scale` multiplies Q: at 1 the scores stay near +-1 (a nearly flat softmax); at 40 they reach
/// tens, so a kernel that skipped the running maximum or the rescaling would fail.
Status CheckAttention(k::Elem e, k::AttentionArgs a, double q_scale, size_t smem_limit,
                      uint64_t seed, std::vector<CudaKernelCheck>* out) {
  Tensor q, kk, v, o;
  const int64_t nq = a.batch * a.heads * a.q_len * a.head_dim;
  const int64_t nk = a.batch * a.kv_heads * a.kv_len * a.head_dim;
  const int64_t nv = a.batch * a.kv_heads * a.kv_len * a.v_ld;
  const int64_t no = a.batch * a.heads * a.q_len * a.v_dim;
  if (Status s = MakeInput(&q, e, nq, seed); !s.ok()) return s;
  if (q_scale != 1) {
    if (Status s = Scale(&q, q_scale); !s.ok()) return s;
  }
  if (Status s = MakeInput(&kk, e, nk, seed + 1); !s.ok()) return s;
  if (Status s = MakeInput(&v, e, nv, seed + 2); !s.ok()) return s;
  if (Status s = MakeOutput(&o, e, no); !s.ok()) return s;
  a.q = q.buf.get();
  a.k = kk.buf.get();
  a.v = v.buf.get();
  a.o = o.buf.get();
  ROOFLINE_CUDA_CHECK(k::FlashAttention(e, a, smem_limit, nullptr));
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  if (Status s = Download(&o); !s.ok()) return s;

  // The mask of the CPU runner, which both GPU kernels follow.
  AttentionSpec spec;
  spec.q_len = a.q_len;
  spec.kv_len = a.kv_len;
  spec.causal = a.causal;
  spec.window = a.window;
  std::vector<double> ref(static_cast<size_t>(no));
  const int64_t group = a.heads / a.kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.head_dim));
  std::vector<double> p(static_cast<size_t>(a.kv_len));
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const int64_t kvh = h / group;
      const double* kb = kk.host.data() + (b * a.kv_heads + kvh) * a.kv_len * a.head_dim;
      const double* vb = v.host.data() + (b * a.kv_heads + kvh) * a.kv_len * a.v_ld;
      for (int64_t i = 0; i < a.q_len; ++i) {
        const double* qi = q.host.data() + ((b * a.heads + h) * a.q_len + i) * a.head_dim;
        double* oi = ref.data() + ((b * a.heads + h) * a.q_len + i) * a.v_dim;
        const KeyRange keys = VisibleKeys(spec, i);
        const int64_t begin = keys.begin, end = keys.end;
        double m = -INFINITY;
        for (int64_t j = begin; j < end; ++j) {
          double dot = 0;
          for (int64_t t = 0; t < a.head_dim; ++t) dot += qi[t] * kb[j * a.head_dim + t];
          p[j] = dot * scale;
          m = std::max(m, p[j]);
        }
        double sum = 0;
        for (int64_t j = begin; j < end; ++j) sum += p[j] = std::exp(p[j] - m);
        for (int64_t t = 0; t < a.v_dim; ++t) {
          double acc = 0;
          for (int64_t j = begin; j < end; ++j) acc += p[j] * vb[j * a.v_ld + t];
          oi[t] = end > begin ? acc / sum : 0.0;
        }
      }
    }
  }
  std::string shape = fmt::format("b{} h{}/{} d{} q{} kv{}", a.batch, a.heads, a.kv_heads,
                                  a.head_dim, a.q_len, a.kv_len);
  if (a.v_dim != a.head_dim) shape += fmt::format(" dv{}", a.v_dim);
  if (a.causal) shape += " causal";
  if (a.window > 0) shape += fmt::format(" window {}", a.window);
  if (q_scale != 1) shape += fmt::format(" q x{:g}", q_scale);
  out->push_back(Compare("attention", shape, e, o.host, ref));
  return Status::Ok();
}

}  // namespace

Result<std::vector<CudaKernelCheck>> cuda_plugin::CheckCudaKernels(int device) {
  CudaDeviceInfo info;
  if (Status s = cuda_internal::SelectDevice(device, &info); !s.ok()) return s;
  const size_t smem = static_cast<size_t>(info.smem_per_block_optin_bytes);
  std::vector<CudaKernelCheck> checks;
  uint64_t seed = 7001;
  for (k::Elem e : {k::Elem::kF32, k::Elem::kBf16}) {
    // Rows longer and shorter than a block, and a length that is no multiple of 32.
    if (Status s = CheckSoftmax(e, 37, 4099, seed += 10, &checks); !s.ok()) return s;
    if (Status s = CheckSoftmax(e, 300, 77, seed += 10, &checks); !s.ok()) return s;
    if (Status s = CheckNorm(e, true, 19, 4096, seed += 10, &checks); !s.ok()) return s;
    if (Status s = CheckNorm(e, false, 23, 1000, seed += 10, &checks); !s.ok()) return s;
    // Decode with grouped queries (Llama-3-8B's 32/8 heads of 128), a causal prefill whose
    // length is no multiple of a tile, a sliding window, a bidirectional window, and a value
    // width unlike the key width inside a wider row (MLA-like).
    k::AttentionArgs decode;
    decode.batch = 2, decode.heads = 8, decode.kv_heads = 2, decode.head_dim = 128;
    decode.v_dim = decode.v_ld = 128, decode.q_len = 1, decode.kv_len = 1029;
    decode.causal = true;
    k::AttentionArgs prefill;
    prefill.batch = 1, prefill.heads = 4, prefill.kv_heads = 4, prefill.head_dim = 64;
    prefill.v_dim = prefill.v_ld = 64, prefill.q_len = prefill.kv_len = 301;
    prefill.causal = true;
    k::AttentionArgs window = prefill;
    window.window = 64;
    k::AttentionArgs band = prefill;
    band.causal = false, band.window = 33, band.q_len = 101, band.kv_len = 157;
    k::AttentionArgs mla = prefill;
    mla.head_dim = 96, mla.v_dim = 64, mla.v_ld = 96, mla.q_len = 40, mla.kv_len = 170;
    // Decode shapes for the split-key kernel besides `decode`: 8 query heads per KV head over
    // 5000 keys (many slices), a causal window of 100, a value width unlike the key width, and
    // one query head per KV head.
    k::AttentionArgs wide_group = decode;
    wide_group.batch = 1, wide_group.heads = 16, wide_group.kv_heads = 2, wide_group.head_dim = 64;
    wide_group.v_dim = wide_group.v_ld = 64, wide_group.kv_len = 5000;
    k::AttentionArgs decode_window = decode;
    decode_window.window = 100;
    k::AttentionArgs decode_mla = mla;
    decode_mla.q_len = 1, decode_mla.heads = 8, decode_mla.kv_heads = 1, decode_mla.kv_len = 333;
    k::AttentionArgs decode_mha = decode;
    decode_mha.heads = decode_mha.kv_heads = 3, decode_mha.kv_len = 77;
    for (const k::AttentionArgs& a :
         {decode, prefill, window, band, mla, wide_group, decode_window, decode_mla, decode_mha}) {
      if (Status s = CheckAttention(e, a, 1, smem, seed += 10, &checks); !s.ok()) return s;
    }
    // Peaked softmax (Q x 40) with a head dim off a multiple of 32 (80), through both kernels,
    // and a decode without a causal mask.
    k::AttentionArgs decode80 = decode;
    decode80.head_dim = decode80.v_dim = decode80.v_ld = 80, decode80.kv_len = 500;
    k::AttentionArgs prefill80 = prefill;
    prefill80.head_dim = prefill80.v_dim = prefill80.v_ld = 80, prefill80.q_len = 70;
    prefill80.kv_len = 90;
    k::AttentionArgs decode_open = decode;
    decode_open.causal = false;
    for (const k::AttentionArgs& a : {decode80, prefill80, decode_open}) {
      if (Status s = CheckAttention(e, a, 40, smem, seed += 10, &checks); !s.ok()) return s;
    }
  }
  return checks;
}

}  // namespace roofline
