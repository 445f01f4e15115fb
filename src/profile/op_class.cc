// Kernel and aten-op classification by name. The rule lists are documented in docs/profiles.md;
// keep the two in step.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "roofline/profile.h"

namespace roofline {

std::string_view NameOf(OpClass c) {
  switch (c) {
    case OpClass::kGemm:
      return "gemm";
    case OpClass::kAttention:
      return "attention";
    case OpClass::kConv:
      return "conv";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kNorm:
      return "norm";
    case OpClass::kSoftmax:
      return "softmax";
    case OpClass::kReduction:
      return "reduction";
    case OpClass::kCopy:
      return "copy";
    case OpClass::kComm:
      return "comm";
    case OpClass::kOther:
      return "other";
  }
  return "other";
}

namespace {

struct Rule {
  OpClass op_class;
  std::array<std::string_view, 28> patterns;  ///< lower-case substrings; empty entries unused
};

bool Contains(std::string_view haystack, std::string_view needle) {
  return !needle.empty() && haystack.find(needle) != std::string_view::npos;
}

bool MatchesAny(std::string_view lower, const Rule& rule) {
  for (std::string_view p : rule.patterns) {
    if (Contains(lower, p)) return true;
  }
  return false;
}

std::string Lower(std::string_view s) {
  std::string out(s.substr(0, 4096));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// First match wins. The order matters: a flash-attention kernel's name holds "gemm"-like parts,
// a convolution's "implicit_gemm", a cuBLAS split-K kernel "reduce", a dtype cast is launched
// through an "elementwise_kernel" wrapper but is a copy.
const std::array<Rule, 9>& KernelRules() {
  static const std::array<Rule, 9> kRules = {{
      {OpClass::kComm,
       {"nccl", "all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
        "reducescatter", "alltoall", "cross_device_reduce"}},
      {OpClass::kAttention,
       {"flash", "fmha", "attention", "attn_fwd", "attn_bwd", "sdpa", "mha_fwd", "mha_bwd", "_attn",
        "xformers", "paged_attention", "mla_decode", "flashinfer"}},
      {OpClass::kConv,
       {"convolution", "convolve", "conv1d", "conv2d", "conv3d", "conv_fwd", "_conv_", "fprop",
        "dgrad", "wgrad", "winograd", "im2col", "col2im"}},
      {OpClass::kGemm,
       {"gemm", "gemv", "cublas", "cutlass", "nvjet", "matmul", "splitkreduce", "wgmma",
        "triton_tem_fused_mm", "triton_tem_fused_addmm", "triton_tem_fused_bmm", "dot_kernel",
        "_mm_kernel", "mma_"}},
      {OpClass::kNorm,
       {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm", "bn_fw",
        "bn_bw", "group_norm", "groupnorm", "instance_norm", "rowwisemoments", "cuapplylayernorm",
        "cuapplyrmsnorm", "_norm_kernel", "fused_add_rms"}},
      {OpClass::kSoftmax, {"softmax"}},
      {OpClass::kReduction,
       {"reduce", "argmax", "argmin", "topk", "sort", "radix", "cub::", "scan", "pool",
        "sum_kernel", "mean_kernel", "triton_red_", "triton_per_", "cumsum", "histogram"}},
      {OpClass::kCopy,
       {"copy", "memcpy", "memset", "catarray", "cat_", "transpose", "permute", "index_select",
        "indexselect", "gather", "scatter", "embedding", "fill", "concat", "clone", "nhwctonchw",
        "nchwtonhwc", "autocast_to", "_to_copy"}},
      {OpClass::kElementwise,
       {"elementwise", "functor",  "activation",  "gelu",       "silu",        "relu",
        "act_and_mul", "rotary",   "rope",        "pointwise",  "triton_poi_", "dropout",
        "sigmoid",     "tanh",     "add_kernel",  "mul_kernel", "bias",        "quantize",
        "scale",       "upsample", "interpolate", "resize"}},
  }};
  return kRules;
}

}  // namespace

OpClass ClassifyKernel(std::string_view kernel_name) {
  const std::string lower = Lower(kernel_name);
  // Triton kernels say what they are in a prefix; inductor's fused names list the fused ops, so
  // a prefix decides before the content rules see them ("triton_red_fused_add_mean" reduces).
  if (lower.rfind("triton_red_", 0) == 0 || lower.rfind("triton_per_", 0) == 0) {
    if (Contains(lower, "softmax")) return OpClass::kSoftmax;
    // Inductor spells a decomposed RMS / layer norm by its parts: mean (or var_mean) + rsqrt.
    if (Contains(lower, "norm") || Contains(lower, "rsqrt")) return OpClass::kNorm;
    return OpClass::kReduction;
  }
  if (lower.rfind("triton_poi_", 0) == 0) return OpClass::kElementwise;
  for (const Rule& rule : KernelRules()) {
    if (MatchesAny(lower, rule)) return rule.op_class;
  }
  return OpClass::kOther;
}

OpClass ClassifyAtenOp(std::string_view op_name) {
  std::string name = Lower(op_name);
  for (std::string_view prefix : {"aten::", "c10d::", "_c10d_functional::", "torch::"}) {
    if (name.rfind(prefix, 0) == 0) {
      if (prefix != "aten::") return OpClass::kComm;
      name.erase(0, prefix.size());
      break;
    }
  }
  if (!name.empty() && name.back() == '_' && name != "copy_") name.pop_back();  // in-place
  static const std::array<std::pair<OpClass, std::array<std::string_view, 28>>, 8> kOps = {{
      {OpClass::kGemm,
       {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "einsum",
        "_scaled_mm", "_int_mm", "addbmm", "tensordot", "_addmm_activation"}},
      {OpClass::kAttention,
       {"scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
        "_flash_attention_forward", "_efficient_attention_forward",
        "_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention_for_cpu",
        "_cudnn_attention_forward"}},
      {OpClass::kConv,
       {"conv1d", "conv2d", "conv3d", "convolution", "_convolution", "cudnn_convolution",
        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cudnn_convolution_transpose",
        "mkldnn_convolution", "convolution_overrideable"}},
      {OpClass::kNorm,
       {"layer_norm", "native_layer_norm", "rms_norm", "_fused_rms_norm", "group_norm",
        "native_group_norm", "batch_norm", "native_batch_norm", "_batch_norm_impl_index",
        "cudnn_batch_norm", "instance_norm", "_native_batch_norm_legit",
        "_native_batch_norm_legit_no_training"}},
      {OpClass::kSoftmax, {"softmax", "_softmax", "log_softmax", "_log_softmax", "_safe_softmax"}},
      {OpClass::kReduction,
       {"sum",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "argmax",
        "argmin",
        "topk",
        "sort",
        "cumsum",
        "var",
        "std",
        "norm",
        "linalg_vector_norm",
        "max_pool2d",
        "max_pool2d_with_indices",
        "avg_pool2d",
        "adaptive_avg_pool2d",
        "_adaptive_avg_pool2d",
        "prod",
        "any",
        "all",
        "logsumexp"}},
      {OpClass::kCopy, {"copy_",         "to",           "_to_copy",    "contiguous",
                        "clone",         "cat",          "stack",       "index_select",
                        "embedding",     "gather",       "scatter",     "index",
                        "fill",          "zero",         "zeros",       "ones",
                        "full",          "repeat",       "expand_copy", "masked_fill",
                        "slice_scatter", "_unsafe_view", "pad",         "constant_pad_nd",
                        "index_copy",    "arange"}},
      {OpClass::kElementwise,
       {"add",     "sub",   "mul",       "div",       "gelu",           "silu",     "relu",
        "sigmoid", "tanh",  "exp",       "pow",       "rsqrt",          "sqrt",     "neg",
        "where",   "clamp", "clamp_min", "dropout",   "native_dropout", "hardtanh", "leaky_relu",
        "erf",     "abs",   "log",       "reciprocal"}},
  }};
  for (const auto& [op_class, names] : kOps) {
    for (std::string_view n : names) {
      if (!n.empty() && name == n) return op_class;
    }
  }
  return OpClass::kOther;
}

}  // namespace roofline
