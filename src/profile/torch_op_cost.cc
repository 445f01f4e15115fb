// FLOPs and minimum bytes of aten ops from recorded shapes.
//
// Conventions (each cost's note repeats the one it used):
// * 2 FLOP per multiply-accumulate. mm / addmm / bmm / baddbmm / matmul / linear: 2·M·N·K per
//   batch, bias and beta/alpha terms not counted (as torch.utils.flop_counter).
// * Convolution: 2 · batch · prod(weight shape) · prod(output spatial) (flop_counter; transposed:
//   input spatial). The output size needs stride / padding / dilation from "Concrete Inputs";
//   without them a non-transposed conv gets no figures.
// * Attention (sdpa, its flash / efficient / cuDNN ops and the kernel-level _flash / _efficient /
//   _cudnn_attention_forward): QK^T + PV = 2·B·H·Sq·Sk·(D + Dv) over the query heads,
//   softmax not counted, causal masks counted full (flop_counter); the note names the causal flag
//   because such a kernel does about half of that work.
// * Pointwise ops: elements of the broadcast output × a per-op count (kPointwise below; a
//   transcendental function counts 1). Softmax 5 per element (max, subtract, exp, sum, divide);
//   norms per element: layer / group norm 8, RMS norm 4, batch norm 8 training, 2 inference.
// * Reductions (sum, mean, amax, amin): 1 FLOP per input element.
// * Copies, casts, concatenation, embedding, index_select, index_copy, arange: 0 FLOP, bytes
//   only.
// * Minimum bytes: every tensor input read once + the output written once, dtype sizes from
//   "Input type" (the output takes the first tensor input's dtype unless the op says otherwise).
#include "src/profile/torch_op_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "src/profile/torch_op_cost_args.h"

namespace roofline {
namespace torch_cost {
namespace {

// ----------------------------------------------------------------------------------- GEMM

TorchOpCost Gemm(std::string_view op, const Args& a) {
  const bool has_bias = op == "addmm" || op == "baddbmm";
  const bool batched = op == "bmm" || op == "baddbmm";
  const size_t ia = has_bias ? 1 : 0, ib = ia + 1;
  const std::vector<int64_t>&x = a.Dims(ia), &w = a.Dims(ib);
  const size_t rank = batched ? 3 : 2;
  if (x.size() != rank || w.size() != rank || x[rank - 1] != w[rank - 2] ||
      (batched && x[0] != w[0])) {
    return None(
        fmt::format("{} shapes {} x {} are not a {}D matmul", op, Shape(x), Shape(w), rank));
  }
  const double b = batched ? x[0] : 1, m = x[rank - 2], k = x[rank - 1], n = w[rank - 1];
  Bytes bytes;
  if (has_bias) bytes.AddArg(a, 0);
  bytes.AddArg(a, ia);
  bytes.AddArg(a, ib);
  bytes.Add(b * m * n, a.Type(ia));
  return Done(2 * b * m * n * k, bytes,
              fmt::format("{} {} x {}: 2·{}M·N·K = {} FLOP{} (torch.utils.flop_counter)", op,
                          Shape(x), Shape(w), batched ? "B·" : "", 2 * b * m * n * k,
                          has_bias ? ", bias add not counted" : ""));
}

TorchOpCost Matmul(const Args& a) {
  std::vector<int64_t> x = a.Dims(0), w = a.Dims(1);
  if (x.empty() || w.empty()) return None("matmul without operand shapes");
  const bool xv = x.size() == 1, wv = w.size() == 1;
  if (xv) x.insert(x.begin(), 1);
  if (wv) w.push_back(1);
  const double m = x[x.size() - 2], k = x.back(), n = w.back();
  if (k != w[w.size() - 2]) return None("matmul shapes do not agree: " + Shape(a.Dims(0)));
  // Batch dims broadcast from the right.
  double batch = 1;
  const size_t bx = x.size() - 2, bw = w.size() - 2, nb = std::max(bx, bw);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t dx = i < bx ? x[bx - 1 - i] : 1, dw = i < bw ? w[bw - 1 - i] : 1;
    batch *= static_cast<double>(std::max(dx, dw));
  }
  Bytes bytes;
  bytes.AddArg(a, 0);
  bytes.AddArg(a, 1);
  bytes.Add(batch * m * n, a.Type(0));
  const double flops = 2 * batch * m * n * k;
  return Done(flops, bytes,
              fmt::format("matmul {} x {}: 2·batch·M·N·K = {} FLOP", Shape(a.Dims(0)),
                          Shape(a.Dims(1)), flops));
}

TorchOpCost Linear(const Args& a) {
  const std::vector<int64_t>&x = a.Dims(0), &w = a.Dims(1);
  if (x.empty() || w.size() != 2 || x.back() != w[1]) {
    return None(fmt::format("linear shapes {} x {}^T do not agree", Shape(x), Shape(w)));
  }
  const double rows = Elems(x) / static_cast<double>(x.back()), n = w[0], k = w[1];
  Bytes bytes;
  for (size_t i = 0; i < 3; ++i) bytes.AddArg(a, i);
  bytes.Add(rows * n, a.Type(0));
  return Done(2 * rows * n * k, bytes,
              fmt::format("linear {} x {}^T: 2·rows·N·K = {} FLOP (bias add not counted, "
                          "torch.utils.flop_counter)",
                          Shape(x), Shape(w), 2 * rows * n * k));
}

// ------------------------------------------------------------------------------ attention

TorchOpCost Attention(std::string_view op, const Args& a) {
  // Argument positions per op (PyTorch's native_functions.yaml). The kernel-level ops lay their
  // tensors out [B, S, H, D] (flash, efficient) or [B, H, S, D] (cuDNN, and every sdpa op);
  // `causal` is a bool, or for the efficient kernel its custom_mask_type (0: none, 1 and 2: causal
  // from the top left / bottom right).
  struct Layout {
    std::string_view name;
    int causal, mask;  // argument indices, -1: none
    bool bshd = false, mask_type = false;
    int packed = -1;  // the cumulative sequence lengths of packed (varlen) inputs, -1: none
  };
  static constexpr std::array<Layout, 7> kOps = {{
      {"scaled_dot_product_attention", 5, 3},
      {"_scaled_dot_product_flash_attention", 4, -1},
      {"_scaled_dot_product_efficient_attention", 6, 3},
      {"_scaled_dot_product_cudnn_attention", 6, 3},
      {"_cudnn_attention_forward", 10, 3, false, false, 4},
      {"_flash_attention_forward", 8, -1, true, false, 3},
      {"_efficient_attention_forward", 9, 3, true, true, 4},
  }};
  Layout l{"", -1, -1};  // an sdpa variant not listed: no causal flag or mask known
  for (const Layout& k : kOps) {
    if (k.name == op) l = k;
  }
  if (l.packed >= 0 && (a.IsTensor(l.packed) || a.IsTensor(l.packed + 1))) {
    // Sequences packed one after another: q and k hold every sequence's tokens, and the pairs
    // are per sequence (their lengths are in the cumulative-length tensors, not recorded).
    return None(fmt::format("{}: packed sequences (cumulative lengths given): pairs per sequence "
                            "unknown",
                            op));
  }
  const std::vector<int64_t>&q = a.Dims(0), &k = a.Dims(1), &v = a.Dims(2);
  const size_t seq = l.bshd ? 3 : 2;  // the sequence axis, from the right
  if (q.size() < seq || k.size() < seq || v.size() < seq || q.back() != k.back()) {
    return None(fmt::format("{}: q {} k {} v {} are not attention shapes", op, Shape(q), Shape(k),
                            Shape(v)));
  }
  const double sq = q[q.size() - seq], d = q.back(), sk = k[k.size() - seq], dv = v.back();
  const double bh = Elems(q) / (sq * d);  // batch x query heads (a grouped K/V has fewer)
  const double flops = 2 * bh * sq * sk * (d + dv);
  Bytes bytes;
  for (size_t i = 0; i < 3; ++i) bytes.AddArg(a, i);
  if (l.mask >= 0) bytes.AddArg(a, l.mask);
  bytes.Add(bh * sq * dv, a.Type(0));
  std::string causal = "causal flag not recorded";
  std::optional<bool> c;
  if (l.causal >= 0 && l.mask_type) {
    const std::vector<int64_t> t = IntList(a.Concrete(l.causal));
    if (t.size() == 1) c = t[0] != 0;
  } else if (l.causal >= 0) {
    c = Flag(a.Concrete(l.causal));
  }
  if (c) causal = *c ? "causal=True, counted full: the kernel does about half" : "causal=False";
  return Done(flops, bytes,
              fmt::format("{} q {} k {} v {}: QK^T + PV = 2·B·H·Sq·Sk·(D+Dv) = {} FLOP, softmax "
                          "not counted (torch.utils.flop_counter); {}",
                          op, Shape(q), Shape(k), Shape(v), flops, causal));
}

}  // namespace
}  // namespace torch_cost

TorchOpCost CostTorchOp(std::string_view op_name, const TorchOpShapes& shapes) {
  namespace tc = torch_cost;
  const std::string_view op = tc::BaseName(op_name);
  if (shapes.dims.empty()) return tc::None("no shapes recorded (record_shapes=False)");
  const tc::Args a(shapes);
  if (op == "index_copy") {
    const bool in_place = !op_name.empty() && op_name.back() == '_';
    return tc::IndexCopy(a, in_place);
  }
  if (op == "mm" || op == "addmm" || op == "bmm" || op == "baddbmm") return tc::Gemm(op, a);
  if (op == "matmul") return tc::Matmul(a);
  if (op == "linear") return tc::Linear(a);
  if (op.find("scaled_dot_product") != std::string_view::npos ||
      op == "_cudnn_attention_forward" || op == "_flash_attention_forward" ||
      op == "_efficient_attention_forward") {
    return tc::Attention(op, a);
  }
  if (op.find("conv") != std::string_view::npos) return tc::Conv(op, a);
  return tc::Pointwise(op, a);
}

std::optional<int> TorchDtypeBytes(std::string_view t) {
  static constexpr std::array<std::pair<std::string_view, int>, 19> kSizes = {{
      {"float", 4},
      {"double", 8},
      {"c10::Half", 2},
      {"c10::BFloat16", 2},
      {"long int", 8},
      {"long", 8},
      {"int", 4},
      {"short int", 2},
      {"short", 2},
      {"bool", 1},
      {"unsigned char", 1},
      {"signed char", 1},
      {"unsigned int", 4},
      {"c10::complex<float>", 8},
      {"c10::complex<double>", 16},
      {"c10::complex<c10::Half>", 4},
      {"c10::qint8", 1},
      {"c10::quint8", 1},
      {"c10::qint32", 4},
  }};
  for (const auto& [name, bytes] : kSizes) {
    if (t == name) return bytes;
  }
  if (t.rfind("c10::Float8_", 0) == 0) return 1;
  return std::nullopt;
}

}  // namespace roofline
