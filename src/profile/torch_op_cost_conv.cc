// Convolution costs: FLOPs as torch.utils.flop_counter counts them,
// 2 · batch · prod(weight shape) · prod(output spatial) (transposed: input spatial), and minimum
// bytes from the output size that stride / padding / dilation ("Concrete Inputs") give.
#include <fmt/format.h>

#include <array>

#include "src/profile/torch_op_cost_args.h"

namespace roofline::torch_cost {
namespace {

/// Where an op's schema puts the conv arguments (-1: not an argument of this op).
struct ConvSchema {
  std::string_view name;
  int bias, stride, padding, dilation, transposed, output_padding, groups;
  bool always_transposed;
};

constexpr std::array<ConvSchema, 10> kConvs = {{
    {"conv1d", 2, 3, 4, 5, -1, -1, 6, false},
    {"conv2d", 2, 3, 4, 5, -1, -1, 6, false},
    {"conv3d", 2, 3, 4, 5, -1, -1, 6, false},
    {"convolution", 2, 3, 4, 5, 6, 7, 8, false},
    {"_convolution", 2, 3, 4, 5, 6, 7, 8, false},
    {"cudnn_convolution", -1, 3, 2, 4, -1, -1, 5, false},
    {"cudnn_convolution_transpose", -1, 4, 2, 5, -1, 3, 6, true},
    {"conv_transpose1d", 2, 3, 4, 7, -1, 5, 6, true},
    {"conv_transpose2d", 2, 3, 4, 7, -1, 5, 6, true},
    {"conv_transpose3d", 2, 3, 4, 7, -1, 5, 6, true},
}};

/// A per-spatial-dim parameter: "[2, 2]" or "2" broadcast to `n` dims; empty when not recorded.
std::vector<int64_t> PerDim(const Args& a, int index, size_t n) {
  if (index < 0) return {};
  std::vector<int64_t> v = IntList(a.Concrete(index));
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n) return {};
  return v;
}

}  // namespace

TorchOpCost Conv(std::string_view op, const Args& a) {
  const ConvSchema* schema = nullptr;
  for (const ConvSchema& s : kConvs) {
    if (s.name == op) schema = &s;
  }
  if (!schema) return None(fmt::format("no cost rule for aten::{}", op));
  const std::vector<int64_t>&x = a.Dims(0), &w = a.Dims(1);
  if (x.size() < 3 || w.size() != x.size()) {
    return None(fmt::format("{}: input {} weight {} are not conv shapes", op, Shape(x), Shape(w)));
  }
  const size_t nsp = x.size() - 2;
  bool transposed = schema->always_transposed;
  if (schema->transposed >= 0) transposed = Flag(a.Concrete(schema->transposed)).value_or(false);
  const std::vector<int64_t> in_sp(x.begin() + 2, x.end()), k_sp(w.begin() + 2, w.end());
  const double prod_w = Elems(w), batch = x[0];

  // Output spatial size; the padding argument of conv{1,2,3}d may be "same" / "valid".
  const std::string_view pad_text = a.Concrete(schema->padding);
  std::vector<int64_t> stride = PerDim(a, schema->stride, nsp),
                       dil = PerDim(a, schema->dilation, nsp),
                       pad = PerDim(a, schema->padding, nsp),
                       opad = PerDim(a, schema->output_padding, nsp);
  if (schema->output_padding < 0) opad.assign(nsp, 0);
  std::vector<int64_t> out_sp;
  if (pad_text.find("same") != std::string_view::npos) {
    out_sp = in_sp;
  } else {
    if (pad_text.find("valid") != std::string_view::npos) pad.assign(nsp, 0);
    if (!stride.empty() && !dil.empty() && !pad.empty() && !opad.empty()) {
      for (size_t i = 0; i < nsp; ++i) {
        const int64_t span = dil[i] * (k_sp[i] - 1);
        out_sp.push_back(transposed ? (in_sp[i] - 1) * stride[i] - 2 * pad[i] + span + opad[i] + 1
                                    : (in_sp[i] + 2 * pad[i] - span - 1) / stride[i] + 1);
      }
    }
  }
  const int64_t groups = schema->groups >= 0 && !IntList(a.Concrete(schema->groups)).empty()
                             ? IntList(a.Concrete(schema->groups))[0]
                             : 1;
  const double c_out = transposed ? static_cast<double>(w[1]) * groups : w[0];

  std::optional<double> flops;
  std::string note;
  if (transposed) {
    flops = 2 * batch * prod_w * Elems(in_sp);
    note = fmt::format(
        "{} (transposed) input {} weight {}: 2·N·prod(weight)·prod(input spatial)"
        " = {} FLOP",
        op, Shape(x), Shape(w), *flops);
  } else if (!out_sp.empty()) {
    flops = 2 * batch * prod_w * Elems(out_sp);
    note = fmt::format(
        "{} input {} weight {} output spatial {}: 2·N·prod(weight)·prod(output "
        "spatial) = {} FLOP",
        op, Shape(x), Shape(w), Shape(out_sp), *flops);
  }
  note += " (torch.utils.flop_counter, bias add not counted)";
  if (out_sp.empty()) {
    TorchOpCost c;
    c.flops = flops;
    c.note = fmt::format(
        "{} input {} weight {}: output size unknown (stride / padding / "
        "dilation not in Concrete Inputs)",
        op, Shape(x), Shape(w));
    if (flops) c.note += "; " + note;
    return c;
  }
  Bytes bytes;
  bytes.AddArg(a, 0);
  bytes.AddArg(a, 1);
  if (schema->bias >= 0) bytes.AddArg(a, schema->bias);
  bytes.Add(batch * c_out * Elems(out_sp), a.Type(0));
  return Done(flops, bytes, note);
}

}  // namespace roofline::torch_cost
