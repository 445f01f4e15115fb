#include "roofline/op.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

Status CheckDim(int64_t value, const char* field) {
  if (value < 1) {
    return Status::Invalid(field, fmt::format("must be a positive integer, got {}", value));
  }
  if (value > kMaxDim) {
    return Status::Invalid(field,
                           fmt::format("{} is absurdly large (at most 2^40 = {})", value, kMaxDim));
  }
  return Status::Ok();
}

Status CheckCount(double value, const char* field) {
  if (!(value >= 1) || value > 1e18) {
    return Status::Invalid(field, fmt::format("must be between 1 and 1e18, got {}", value));
  }
  return Status::Ok();
}

#define ROOFLINE_RETURN_IF_ERROR(expr) \
  do {                                 \
    Status _s = (expr);                \
    if (!_s.ok()) return _s;           \
  } while (0)

bool IsQuantized(DType t) {
  return t == DType::kInt8 || t == DType::kInt4 || t == DType::kFp8 || t == DType::kFp4;
}

Operand Make(const char* name, double elements, DType dtype, TensorRole role, bool output) {
  Operand o;
  o.name = name;
  o.elements = elements;
  o.dtype = dtype;
  o.bytes_per_element = BytesOf(dtype);
  o.role = role;
  o.is_output = output;
  return o;
}

double D(int64_t v) { return static_cast<double>(v); }

}  // namespace

double MatmulSpec::ExpertsTouched() const {
  if (experts <= 0) return 0;
  const double e = D(experts);
  const double tokens = D(m) / D(expert_top_k);
  return e * (1 - std::pow(1 - D(expert_top_k) / e, tokens));
}

int64_t Conv2dSpec::out_height() const {
  if (out_h > 0) return out_h;
  return (height + 2 * padding - dilation * (kernel_h - 1) - 1) / stride + 1;
}
int64_t Conv2dSpec::out_width() const {
  if (out_w > 0) return out_w;
  return (width + 2 * padding - dilation * (kernel_w - 1) - 1) / stride + 1;
}

std::string_view NameOf(OpKind kind) {
  switch (kind) {
    case OpKind::kMatmul:
      return "matmul";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kNorm:
      return "norm";
    case OpKind::kSoftmax:
      return "softmax";
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kConv2d:
      return "conv2d";
    case OpKind::kCollective:
      return "collective";
  }
  return "?";
}

std::string_view NameOf(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kSend:
      return "send";
  }
  return "?";
}

std::string_view NameOf(NormKind kind) { return kind == NormKind::kRms ? "rmsnorm" : "layernorm"; }

void OperandsOf(const OpSpec& spec, std::vector<Operand>& v) {
  v.clear();
  std::visit(
      Overloaded{
          [&v](const MatmulSpec& s) {
            v.push_back(
                Make("A", D(s.batch) * D(s.m) * D(s.k), s.a_dtype, TensorRole::kActivation, false));
            const double b_sets = s.experts > 0 ? D(s.experts) : D(s.batch / s.b_broadcast);
            v.push_back(Make("B", b_sets * D(s.k) * D(s.n), s.b_dtype,
                             s.b_is_weight ? TensorRole::kWeight : TensorRole::kActivation, false));
            if (s.bias) {
              v.push_back(Make("bias",
                               D(s.b_is_weight ? s.batch / s.b_broadcast : s.batch) * D(s.n),
                               s.out_dtype, TensorRole::kWeight, false));
            }
            if (s.b_is_weight && IsQuantized(s.b_dtype)) {
              const double groups = s.group_size > 0 ? D(s.k / s.group_size) : 1.0;
              v.push_back(Make("scales", b_sets * groups * D(s.n), s.scale_dtype,
                               TensorRole::kWeight, false));
              if (s.zero_dtype.has_value()) {
                v.push_back(Make("zeros", b_sets * groups * D(s.n), *s.zero_dtype,
                                 TensorRole::kWeight, false));
              }
            }
            v.push_back(Make("C", D(s.batch) * D(s.m) * D(s.n), s.out_dtype,
                             TensorRole::kActivation, true));
          },
          [&v](const AttentionSpec& s) {
            v.push_back(Make("Q", D(s.batch) * D(s.heads) * D(s.q_len) * D(s.head_dim), s.dtype,
                             TensorRole::kActivation, false));
            v.push_back(Make("K", D(s.batch) * D(s.kv_heads) * D(s.kv_len) * D(s.head_dim),
                             s.kv_dtype, TensorRole::kKvCache, false));
            v.push_back(Make("V", D(s.batch) * D(s.kv_heads) * D(s.kv_len) * D(s.v_dim()),
                             s.kv_dtype, TensorRole::kKvCache, false));
            v.push_back(Make("O", D(s.batch) * D(s.heads) * D(s.q_len) * D(s.v_dim()), s.dtype,
                             TensorRole::kActivation, true));
          },
          [&v](const ElementwiseSpec& s) {
            for (int i = 0; i < s.inputs; ++i) {
              static const char* const kInputs[] = {"in0",  "in1",  "in2",  "in3", "in4",  "in5",
                                                    "in6",  "in7",  "in8",  "in9", "in10", "in11",
                                                    "in12", "in13", "in14", "in15"};
              const size_t u = static_cast<size_t>(i);
              const double elements = u < s.input_elements.size()
                                          ? s.input_elements[u]
                                          : s.elements * s.input_per_output;
              const DType dtype = u < s.input_dtypes.size() ? s.input_dtypes[u] : s.dtype;
              v.push_back(Make(kInputs[i], elements, dtype, TensorRole::kActivation, false));
            }
            v.push_back(Make("out", s.elements, s.dtype, TensorRole::kActivation, true));
          },
          [&v](const NormSpec& s) {
            v.push_back(Make("x", D(s.rows) * D(s.cols), s.dtype, TensorRole::kActivation, false));
            if (s.affine) {
              v.push_back(Make("weight", D(s.cols), s.dtype, TensorRole::kWeight, false));
              if (s.kind == NormKind::kLayer) {
                v.push_back(Make("bias", D(s.cols), s.dtype, TensorRole::kWeight, false));
              }
            }
            v.push_back(Make("y", D(s.rows) * D(s.cols), s.dtype, TensorRole::kActivation, true));
          },
          [&v](const SoftmaxSpec& s) {
            v.push_back(Make("x", s.rows * D(s.cols), s.dtype, TensorRole::kActivation, false));
            v.push_back(Make("y", s.rows * D(s.cols), s.dtype, TensorRole::kActivation, true));
          },
          [&v](const EmbeddingSpec& s) {
            Operand ids = Make("ids", D(s.tokens), DType::kInt8, TensorRole::kIndex, false);
            ids.bytes_per_element = 8;  // int64 token ids
            v.push_back(ids);
            v.push_back(Make("table", D(s.vocab) * D(s.dim), s.dtype, TensorRole::kWeight, false));
            v.push_back(Make("y", D(s.tokens) * D(s.dim), s.dtype, TensorRole::kActivation, true));
          },
          [&v](const Conv2dSpec& s) {
            v.push_back(Make("x", D(s.batch) * D(s.in_channels) * D(s.height) * D(s.width), s.dtype,
                             TensorRole::kActivation, false));
            v.push_back(Make(
                "w",
                D(s.out_channels) * D(s.in_channels / s.groups) * D(s.kernel_h) * D(s.kernel_w),
                s.dtype, TensorRole::kWeight, false));
            if (s.bias) {
              v.push_back(Make("bias", D(s.out_channels), s.dtype, TensorRole::kWeight, false));
            }
            v.push_back(Make("y",
                             D(s.batch) * D(s.out_channels) * D(s.out_height()) * D(s.out_width()),
                             s.dtype, TensorRole::kActivation, true));
          },
          [&v](const CollectiveSpec& s) {
            const double e = BytesOf(s.dtype);
            v.push_back(Make("x", s.message_bytes / e, s.dtype, TensorRole::kActivation, false));
            v.push_back(Make("y", s.message_bytes / e, s.dtype, TensorRole::kActivation, true));
          },
      },
      spec);
}

std::vector<Operand> OperandsOf(const OpSpec& spec) {
  std::vector<Operand> v;
  OperandsOf(spec, v);
  return v;
}

Status Validate(const OpSpec& spec) {
  return std::visit(
      Overloaded{
          [](const MatmulSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.batch, "batch"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.m, "m"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.n, "n"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.k, "k"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.b_broadcast, "b-broadcast"));
            if (s.batch % s.b_broadcast != 0) {
              return Status::Invalid("b-broadcast", fmt::format("{} does not divide the batch {}",
                                                                s.b_broadcast, s.batch));
            }
            if (s.experts > 0) {
              if (s.batch != 1) return Status::Invalid("batch", "expert matmuls take batch 1");
              if (s.expert_top_k < 1 || s.expert_top_k > s.experts) {
                return Status::Invalid("expert-top-k",
                                       fmt::format("must be between 1 and the {} experts, got {}",
                                                   s.experts, s.expert_top_k));
              }
              if (s.m % s.expert_top_k != 0) {
                return Status::Invalid("m", "expert rows must be tokens x top-k");
              }
              if (s.experts > kMaxDim) return Status::Invalid("experts", "absurdly many experts");
            }
            if (s.group_size < 0) {
              return Status::Invalid("group-size", "must be >= 0 (0 = one scale per column)");
            }
            if (s.group_size > 0 && s.k % s.group_size != 0) {
              return Status::Invalid("group-size",
                                     fmt::format("{} does not divide k = {}", s.group_size, s.k));
            }
            return Status::Ok();
          },
          [](const AttentionSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.batch, "batch"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.heads, "heads"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.kv_heads, "kv-heads"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.head_dim, "head-dim"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.v_dim(), "v-head-dim"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.q_len, "q-len"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.kv_len, "kv-len"));
            if (s.heads % s.kv_heads != 0) {
              return Status::Invalid("kv-heads",
                                     fmt::format("{} key/value heads do not divide {} query heads "
                                                 "(GQA needs heads = kv-heads x group)",
                                                 s.kv_heads, s.heads));
            }
            if (s.window < 0) return Status::Invalid("window", "must be >= 0 (0 = no window)");
            if (s.causal && s.kv_len < s.q_len) {
              return Status::Invalid("kv-len",
                                     fmt::format("causal attention needs kv-len >= q-len, got "
                                                 "kv-len {} < q-len {}",
                                                 s.kv_len, s.q_len));
            }
            return Status::Ok();
          },
          [](const ElementwiseSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckCount(s.elements, "elements"));
            if (s.inputs < 0 || s.inputs > 16) {
              return Status::Invalid("inputs", fmt::format("must be 0..16, got {}", s.inputs));
            }
            if (!(s.flops_per_element >= 0) || s.flops_per_element > 1e6) {
              return Status::Invalid("flops-per-element",
                                     fmt::format("must be 0..1e6, got {}", s.flops_per_element));
            }
            if (!(s.input_per_output >= 1) || s.input_per_output > 16) {
              return Status::Invalid("inputs", fmt::format("input elements per output element "
                                                           "must be 1..16, got {}",
                                                           s.input_per_output));
            }
            if (!s.input_elements.empty() &&
                s.input_elements.size() != static_cast<size_t>(s.inputs)) {
              return Status::Invalid("inputs", fmt::format("{} input sizes given for {} inputs",
                                                           s.input_elements.size(), s.inputs));
            }
            for (double e : s.input_elements) {
              if (!(e >= 0) || e > 1e18) {
                return Status::Invalid("elements",
                                       fmt::format("input size must be 0..1e18, got {}", e));
              }
            }
            return Status::Ok();
          },
          [](const NormSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.rows, "rows"));
            return CheckDim(s.cols, "cols");
          },
          [](const SoftmaxSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckCount(s.rows, "rows"));
            return CheckDim(s.cols, "cols");
          },
          [](const EmbeddingSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.tokens, "tokens"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.vocab, "vocab"));
            return CheckDim(s.dim, "dim");
          },
          [](const Conv2dSpec& s) -> Status {
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.batch, "batch"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.in_channels, "in-channels"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.out_channels, "out-channels"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.height, "height"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.width, "width"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.kernel_h, "kernel"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.kernel_w, "kernel"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.stride, "stride"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.dilation, "dilation"));
            ROOFLINE_RETURN_IF_ERROR(CheckDim(s.groups, "groups"));
            if (s.padding < 0 || s.padding > kMaxDim) {
              return Status::Invalid("padding", fmt::format("must be 0..2^40, got {}", s.padding));
            }
            if (s.in_channels % s.groups != 0 || s.out_channels % s.groups != 0) {
              return Status::Invalid("groups",
                                     fmt::format("{} groups must divide in-channels {} and "
                                                 "out-channels {}",
                                                 s.groups, s.in_channels, s.out_channels));
            }
            if (s.out_h < 0 || s.out_w < 0 || s.out_h > kMaxDim || s.out_w > kMaxDim) {
              return Status::Invalid("out", "output sizes must be 0..2^40 (0 = derived)");
            }
            if ((s.out_h == 0 || s.out_w == 0) &&
                (s.height + 2 * s.padding < s.dilation * (s.kernel_h - 1) + 1 ||
                 s.width + 2 * s.padding < s.dilation * (s.kernel_w - 1) + 1)) {
              return Status::Invalid("kernel",
                                     "the (dilated) kernel is larger than the padded input");
            }
            return Status::Ok();
          },
          [](const CollectiveSpec& s) -> Status {
            if (!(s.message_bytes > 0) || s.message_bytes > 1e16) {
              return Status::Invalid("bytes", fmt::format("message size must be in (0, 1e16] "
                                                          "bytes, got {}",
                                                          s.message_bytes));
            }
            if (s.devices < 1 || s.devices > 1000000) {
              return Status::Invalid("devices",
                                     fmt::format("must be 1..1000000, got {}", s.devices));
            }
            return Status::Ok();
          },
      },
      spec);
}

double AttentionPairs(const AttentionSpec& a, bool skip_masked) {
  const double q = D(a.q_len);
  const double kv = D(a.kv_len);
  if (!skip_masked || (!a.causal && a.window == 0)) return q * kv;
  if (!a.causal) return q * std::min(kv, D(a.window));
  // Query i (0-based) sits at position kv - q + i and sees positions <= itself.
  const double first = kv - q + 1;  // keys visible to the first query
  if (a.window == 0 || D(a.window) >= kv) return q * first + q * (q - 1) / 2;
  const double w = D(a.window);
  const double c = std::clamp(w - first, 0.0, q);  // queries that see fewer than w keys
  return c * first + c * (c - 1) / 2 + (q - c) * w;
}

}  // namespace roofline
