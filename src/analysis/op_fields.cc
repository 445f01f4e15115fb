#include "roofline/op_fields.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "roofline/dtype.h"
#include "roofline/scenario.h"
#include "roofline/workload.h"

namespace roofline {
namespace {

using T = OpFieldType;

constexpr std::array<std::string_view, 2> kImpls = {"flash", "eager"};
constexpr std::array<std::string_view, 2> kNormKinds = {"rms", "layer"};

constexpr OpField kMatmul[] = {
    {"m", T::kSize, true, "", "rows of A and C (tokens x batch)"},
    {"n", T::kSize, true, "", "columns of B and C (output features)"},
    {"k", T::kSize, true, "", "reduction dimension (input features)"},
    {"batch", T::kCount, false, "1", "independent products, each with its own B"},
    {"weight-dtype", T::kDType, false, "",
     "dtype of B (default: --dtype); int8/int4/fp8 with bf16 activations is weight-only "
     "quantization"},
    {"out-dtype", T::kDType, false, "", "dtype of C (default: --dtype; bf16 for 8-bit)"},
    {"group-size", T::kCount, false, "",
     "quantized weights: one scale per this many k elements (default 128 for 4-bit, else one "
     "scale per column; 0 = per column)"},
    {"scale-dtype", T::kDType, false, "fp16", "dtype of quantization scales"},
    {"zero-dtype", T::kDType, false, "",
     "quantized weights: a zero point beside each scale, in this dtype (bf16: tinygemm's format; "
     "fp16: TinyChat's; int4: GPTQ's and AWQ's packed qzeros); default: none"},
    {"activation-b", T::kFlag, false, "", "B is an activation, not a weight"},
    {"bias", T::kFlag, false, "", "add a bias vector"},
};

constexpr OpField kAttention[] = {
    {"batch", T::kCount, false, "1", "sequences"},
    {"heads", T::kCount, true, "", "query heads"},
    {"kv-heads", T::kCount, false, "", "key/value heads (default: --heads)"},
    {"head-dim", T::kSize, true, "", "d of Q and K"},
    {"v-head-dim", T::kSize, false, "", "d of V (default: --head-dim)"},
    {"q-len", T::kSize, true, "", "query positions per sequence (1 = decode)"},
    {"kv-len", T::kSize, false, "", "key/value positions (default: --q-len)"},
    {"impl", T::kChoice, false, "flash", "flash (fused, on-chip scores) or eager (3 kernels)",
     kImpls},
    {"causal", T::kFlag, false, "", "causal mask (queries at the end of the sequence)"},
    {"window", T::kSize, false, "0", "sliding window in keys (0 = none)"},
    {"kv-dtype", T::kDType, false, "", "dtype of K and V (default: --dtype)"},
};

constexpr OpField kElementwise[] = {
    {"elements", T::kSize, true, "", "elements of the output"},
    {"inputs", T::kCount, false, "2", "input tensors"},
    {"flops-per-element", T::kReal, false, "1", "FLOP per element"},
};

constexpr OpField kConv2d[] = {
    {"batch", T::kCount, false, "1", "N"},
    {"in-channels", T::kCount, true, "", "C"},
    {"out-channels", T::kCount, true, "", "K"},
    {"height", T::kCount, true, "", "H"},
    {"width", T::kCount, true, "", "W"},
    {"kernel", T::kText, true, "", "R or RxS"},
    {"stride", T::kCount, false, "1", "stride"},
    {"padding", T::kCount, false, "0", "zero padding on each side"},
    {"dilation", T::kCount, false, "1", "dilation"},
    {"groups", T::kCount, false, "1", "groups (C for depthwise)"},
    {"bias", T::kFlag, false, "", "add a bias per output channel"},
};

constexpr OpField kNorm[] = {
    {"rows", T::kSize, true, "", "rows (tokens)"},
    {"cols", T::kSize, true, "", "normalized dimension"},
    {"kind", T::kChoice, false, "rms", "rms or layer", kNormKinds},
};

constexpr OpField kSoftmax[] = {
    {"rows", T::kSize, true, "", "rows"},
    {"cols", T::kSize, true, "", "softmax dimension"},
};

constexpr OpField kEmbedding[] = {
    {"tokens", T::kSize, true, "", "tokens looked up"},
    {"vocab", T::kSize, true, "", "table rows"},
    {"dim", T::kSize, true, "", "row width"},
};

constexpr OpKindInfo kKinds[] = {
    {"matmul",
     "C[m,n] = A[m,k] . B[k,n]; m is the token/batch dimension, B the weight.\n"
     "example: roofline op matmul --m 2048 --n 4096 --k 4096 --dtype fp16 --hw a100-sxm-80gb",
     kMatmul},
    {"attention",
     "softmax(Q K^T) V for one layer. example: roofline op attention --batch 1 --heads 32 "
     "--kv-heads 8 --head-dim 128 --q-len 1 --kv-len 8192 --hw h100-sxm",
     kAttention},
    {"elementwise",
     "out = f(in...) per element. example: roofline op elementwise --elements 16777216 --inputs 2 "
     "--hw h100-sxm",
     kElementwise},
    {"conv2d",
     "2-D convolution, NCHW, as an implicit GEMM. example: roofline op conv2d --batch 32 "
     "--in-channels 64 --out-channels 64 --height 56 --width 56 --kernel 3 --padding 1 --hw "
     "a100-sxm-80gb",
     kConv2d},
    {"norm", "RMSNorm or LayerNorm over rows. example: roofline op norm --rows 2048 --cols 4096",
     kNorm},
    {"softmax", "softmax over rows. example: roofline op softmax --rows 65536 --cols 4096",
     kSoftmax},
    {"embedding",
     "token embedding gather. example: roofline op embedding --tokens 2048 --vocab 128256 --dim "
     "4096",
     kEmbedding},
};

/// The given fields of one kind, read on demand with the table's defaults.
class Values {
 public:
  Values(const OpKindInfo& kind, const std::map<std::string, std::string, std::less<>>& given)
      : kind_(kind), given_(given) {}

  /// Given, and not empty (an empty text takes the default, as an option left out does).
  bool Has(std::string_view name) const {
    const auto it = given_.find(name);
    return it != given_.end() && !it->second.empty();
  }

  /// The text given, else the table's default ("" when none).
  std::string_view Text(std::string_view name) const {
    if (Has(name)) return given_.find(name)->second;
    return Field(name).fallback;
  }
  bool Flag(std::string_view name) const { return Text(name) == "true"; }

  Result<int64_t> Int(std::string_view name) const {
    const std::string_view text = Text(name);
    if (text.empty()) return int64_t{0};
    // Every integer takes k and M; the range is the spec's own check (Validate: dimensions up
    // to 2^40, counts of elements or rows up to 1e18), here only what 64 bits hold.
    return ParseSize(text, "--" + std::string(name), std::numeric_limits<int64_t>::max());
  }

  Result<double> Real(std::string_view name) const {
    const std::string_view text = Text(name);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return Status::Invalid("--" + std::string(name),
                             "'" + std::string(text) + "' is not a number");
    }
    return v;
  }

  /// The dtype given, else `fallback` (a name).
  Result<DType> Dtype(std::string_view name, std::string_view fallback) const {
    const std::string_view text = Has(name) ? Text(name) : fallback;
    return ParseDType(text, "--" + std::string(name));
  }

 private:
  const OpField& Field(std::string_view name) const {
    for (const OpField& f : kind_.fields) {
      if (f.name == name) return f;
    }
    static constexpr OpField kNone{"", T::kText, false, "", ""};
    return kNone;
  }
  const OpKindInfo& kind_;
  const std::map<std::string, std::string, std::less<>>& given_;
};

// The integer fields of `names` read into `out` in order; the first error returned.
Status Ints(const Values& v, std::initializer_list<std::pair<std::string_view, int64_t*>> fields) {
  for (const auto& [name, out] : fields) {
    Result<int64_t> n = v.Int(name);
    if (!n.ok()) return n.status();
    *out = *n;
  }
  return Status::Ok();
}

Result<OpRequest> Matmul(const Values& v, std::string_view dtype) {
  MatmulSpec s;
  int64_t group = 0;
  if (Status st = Ints(v, {{"m", &s.m}, {"n", &s.n}, {"k", &s.k}, {"batch", &s.batch},
                           {"group-size", &group}});
      !st.ok()) {
    return st;
  }
  Result<DType> a = ParseDType(dtype, "--dtype");
  if (!a.ok()) return a.status();
  Result<DType> b = v.Dtype("weight-dtype", dtype);
  if (!b.ok()) return b.status();
  // 8-bit and narrower activations write bf16 unless told otherwise.
  Result<DType> out = v.Dtype("out-dtype", BitsOf(*a) < 16 ? "bf16" : dtype);
  if (!out.ok()) return out.status();
  Result<DType> scales = v.Dtype("scale-dtype", "fp16");
  if (!scales.ok()) return scales.status();
  s.a_dtype = *a;
  s.b_dtype = *b;
  s.out_dtype = *out;
  s.scale_dtype = *scales;
  if (v.Has("zero-dtype")) {
    Result<DType> zeros = v.Dtype("zero-dtype", "");
    if (!zeros.ok()) return zeros.status();
    s.zero_dtype = *zeros;
  }
  s.b_is_weight = !v.Flag("activation-b");
  s.bias = v.Flag("bias");
  // Not given: groups of 128 along K for 4-bit weights where K divides into them, else one
  // scale per output column.
  if (v.Has("group-size") && group >= 0) {  // a negative one asks for the default
    s.group_size = group;
  } else {
    s.group_size = BitsOf(*b) == 4 && s.k % 128 == 0 ? 128 : 0;
  }
  return OpRequest{s};
}

Result<OpRequest> Attention(const Values& v, std::string_view dtype) {
  AttentionSpec s;
  if (Status st = Ints(v, {{"batch", &s.batch}, {"heads", &s.heads}, {"kv-heads", &s.kv_heads},
                           {"head-dim", &s.head_dim}, {"v-head-dim", &s.v_head_dim},
                           {"q-len", &s.q_len}, {"kv-len", &s.kv_len}, {"window", &s.window}});
      !st.ok()) {
    return st;
  }
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.kv_len == 0) s.kv_len = s.q_len;
  s.causal = v.Flag("causal");
  Result<DType> d = ParseDType(dtype, "--dtype");
  if (!d.ok()) return d.status();
  Result<DType> kv = v.Dtype("kv-dtype", dtype);
  if (!kv.ok()) return kv.status();
  // The KV-cache dtypes that are modelled are the workload's (Validate): one rule for all.
  Workload cache;
  cache.kv_dtype = *kv;
  if (Status st = Validate(cache); !st.ok()) return st;
  s.dtype = *d;
  s.kv_dtype = *kv;
  OpRequest r{s};
  r.attention_impl = v.Text("impl") == "eager" ? AttentionImpl::kEager : AttentionImpl::kFlash;
  return r;
}

Result<OpRequest> Elementwise(const Values& v, std::string_view dtype) {
  ElementwiseSpec s;
  int64_t elements = 0, inputs = 0;
  if (Status st = Ints(v, {{"elements", &elements}, {"inputs", &inputs}}); !st.ok()) return st;
  if (inputs != static_cast<int>(inputs)) {  // the spec's own check says the range
    return Status::Invalid("--inputs", "must be 0..16, got " + std::to_string(inputs));
  }
  Result<double> flops = v.Real("flops-per-element");
  if (!flops.ok()) return flops.status();
  Result<DType> d = ParseDType(dtype, "--dtype");
  if (!d.ok()) return d.status();
  s.elements = static_cast<double>(elements);
  s.inputs = static_cast<int>(inputs);
  s.flops_per_element = *flops;
  s.dtype = *d;
  return OpRequest{s};
}

// conv2d's --kernel: "R" or "RxS", positive integers.
Status KernelShape(std::string_view k, Conv2dSpec& s) {
  const size_t x = k.find('x');
  auto read = [](std::string_view t, int64_t& out) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return !t.empty() && ec == std::errc() && end == t.data() + t.size();
  };
  const bool ok = x == std::string_view::npos
                      ? read(k, s.kernel_h) && ((s.kernel_w = s.kernel_h), true)
                      : read(k.substr(0, x), s.kernel_h) && read(k.substr(x + 1), s.kernel_w);
  if (!ok) {
    return Status::Invalid("--kernel",
                           "expected R or RxS (e.g. 3 or 3x3), got '" + std::string(k) + "'");
  }
  return Status::Ok();
}

Result<OpRequest> Conv2d(const Values& v, std::string_view dtype) {
  Conv2dSpec s;
  if (Status st = Ints(v, {{"batch", &s.batch}, {"in-channels", &s.in_channels},
                           {"out-channels", &s.out_channels}, {"height", &s.height},
                           {"width", &s.width}, {"stride", &s.stride}, {"padding", &s.padding},
                           {"dilation", &s.dilation}, {"groups", &s.groups}});
      !st.ok()) {
    return st;
  }
  if (Status st = KernelShape(v.Text("kernel"), s); !st.ok()) return st;
  s.bias = v.Flag("bias");
  Result<DType> d = ParseDType(dtype, "--dtype");
  if (!d.ok()) return d.status();
  s.dtype = *d;
  return OpRequest{s};
}

Result<OpRequest> Rows(const Values& v, std::string_view dtype, bool norm) {
  int64_t rows = 0, cols = 0;
  if (Status st = Ints(v, {{"rows", &rows}, {"cols", &cols}}); !st.ok()) return st;
  Result<DType> d = ParseDType(dtype, "--dtype");
  if (!d.ok()) return d.status();
  if (norm) {
    NormSpec s;
    s.rows = rows;
    s.cols = cols;
    s.kind = v.Text("kind") == "layer" ? NormKind::kLayer : NormKind::kRms;
    s.dtype = *d;
    return OpRequest{s};
  }
  SoftmaxSpec s;
  s.rows = static_cast<double>(rows);
  s.cols = cols;
  s.dtype = *d;
  return OpRequest{s};
}

Result<OpRequest> Embedding(const Values& v, std::string_view dtype) {
  EmbeddingSpec s;
  if (Status st = Ints(v, {{"tokens", &s.tokens}, {"vocab", &s.vocab}, {"dim", &s.dim}});
      !st.ok()) {
    return st;
  }
  Result<DType> d = ParseDType(dtype, "--dtype");
  if (!d.ok()) return d.status();
  s.dtype = *d;
  return OpRequest{s};
}

}  // namespace

std::span<const OpKindInfo> OpKinds() { return kKinds; }

const OpKindInfo* FindOpKind(std::string_view name) {
  for (const OpKindInfo& k : kKinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Result<OpRequest> BuildOpRequest(const OpKindInfo& kind,
                                 const std::map<std::string, std::string, std::less<>>& given,
                                 std::string_view dtype) {
  // Every field given belongs to the kind, every required one is given, a choice is one of its
  // names.
  for (const auto& [name, text] : given) {
    const OpField* f = nullptr;
    for (const OpField& g : kind.fields) {
      if (g.name == name) f = &g;
    }
    if (f == nullptr) {
      return Status::Invalid("--" + name, "op " + std::string(kind.name) + " takes no --" + name);
    }
    if (f->type == T::kChoice &&
        std::find(f->choices.begin(), f->choices.end(), text) == f->choices.end()) {
      std::string list;
      for (std::string_view c : f->choices) list += (list.empty() ? "" : " or ") + std::string(c);
      return Status::Invalid("--" + name, "'" + text + "': expected " + list);
    }
  }
  for (const OpField& f : kind.fields) {
    if (f.required && given.find(f.name) == given.end()) {
      return Status::Invalid("--" + std::string(f.name), "is required");
    }
  }
  const Values v(kind, given);
  Result<OpRequest> r = Status::Invalid("op", "unknown operator '" + std::string(kind.name) + "'");
  if (kind.name == "matmul") r = Matmul(v, dtype);
  if (kind.name == "attention") r = Attention(v, dtype);
  if (kind.name == "elementwise") r = Elementwise(v, dtype);
  if (kind.name == "conv2d") r = Conv2d(v, dtype);
  if (kind.name == "norm" || kind.name == "softmax") r = Rows(v, dtype, kind.name == "norm");
  if (kind.name == "embedding") r = Embedding(v, dtype);
  if (!r.ok()) return r;
  // The spec's own checks, named by the flag of the field they are about.
  if (Status st = Validate(r->spec); !st.ok()) return Status::Invalid("--" + st.where(), st.what());
  return r;
}

}  // namespace roofline
