// The fusion pass: ops -> kernels.
//
// eager: every op is a kernel.
// fused: a matmul, conv2d or attention op anchors a kernel. An elementwise op joins the kernel
//   that produced one of its inputs when that input has no other consumer and that kernel has an
//   anchor (epilogue fusion: bias, activation, residual add, gating multiply). An elementwise
//   op whose output is read by exactly one matmul/conv2d joins that op's kernel (prologue
//   fusion: its output is produced tile by tile on chip). A norm stays a kernel of its own (with
//   the elementwise ops fused into it): none of the stacks the tool costs folds a norm into the
//   next product (vLLM's and SGLang's fused_add_rms_norm, TensorRT-LLM's RMSNorm, inductor's
//   Triton reduction before an extern matmul), and a product read by one merged q-k-v projection
//   does not fold it where three separate ones would not. Ops only fuse when they run the same
//   number of times per step. A gated activation that reads both halves of a merged gate-up
//   product (act_mul) stays a kernel of its own: the engines that merge the product run it as one
//   (vLLM's and SGLang's silu_and_mul, TensorRT-LLM's gated activation kernel), neither an
//   epilogue of the product nor a prologue of down_proj.
#include <numeric>

#include "roofline/graph.h"

namespace roofline {
namespace {

bool IsAnchor(OpKind k) {
  return k == OpKind::kMatmul || k == OpKind::kConv2d || k == OpKind::kAttention;
}

/// An elementwise op that may join a product's kernel: not one whose input_per_output is above 1
/// (a merged gate-up's act_mul, which reads both halves of the product).
bool Foldable(const Op& op) {
  const auto* e = std::get_if<ElementwiseSpec>(&op.spec);
  return e != nullptr && e->input_per_output == 1;
}

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

}  // namespace

std::vector<Kernel> Fuse(const Graph& graph, FusionMode mode) {
  const auto& ops = graph.ops();
  const auto& tensors = graph.tensors();
  const int n = static_cast<int>(ops.size());
  std::vector<int> group(n);
  std::iota(group.begin(), group.end(), 0);
  std::vector<bool> has_anchor(n);
  for (int i = 0; i < n; ++i) has_anchor[i] = IsAnchor(ops[i].kind());

  if (mode == FusionMode::kFused) {
    // Epilogues, in graph order so chains (act -> mul) follow their producer.
    for (int i = 0; i < n; ++i) {
      if (!Foldable(ops[i])) continue;
      const std::vector<Operand> operands = OperandsOf(ops[i].spec);
      for (size_t o = 0; o < operands.size(); ++o) {
        if (operands[o].is_output) continue;
        const Tensor& t = tensors[ops[i].operands[o]];
        if (t.producer < 0 || t.consumers.size() != 1) continue;
        const int g = Find(group, t.producer);
        if (!has_anchor[g] || ops[t.producer].repeat != ops[i].repeat ||
            ops[t.producer].group != ops[i].group) {
          continue;
        }
        const int mine = Find(group, i);
        if (mine == g) continue;
        if (has_anchor[mine]) continue;  // already joined another anchor's kernel
        group[mine] = g;
        break;
      }
    }
    // Prologues: an elementwise op whose output feeds exactly one matmul/conv.
    for (int i = 0; i < n; ++i) {
      if (!Foldable(ops[i])) continue;
      if (Find(group, i) != i || has_anchor[i]) continue;
      const int out = graph.OutputOf(i);
      const Tensor& t = tensors[out];
      if (t.consumers.size() != 1) continue;
      const int c = t.consumers[0];
      const OpKind ck = ops[c].kind();
      if (ck != OpKind::kMatmul && ck != OpKind::kConv2d) continue;
      if (ops[c].repeat != ops[i].repeat || ops[c].group != ops[i].group) continue;
      // Only when the consumer reads it as its activation operand (A / x: operand 0).
      if (ops[c].operands[0] != out) continue;
      const int g = Find(group, c);
      // Move this op (and anything already attached to it) under the consumer's group.
      group[i] = g;
    }
  }

  std::vector<Kernel> kernels;
  std::vector<int> kernel_of_group(n, -1);
  for (int i = 0; i < n; ++i) {
    const int g = Find(group, i);
    if (kernel_of_group[g] < 0) {
      kernel_of_group[g] = static_cast<int>(kernels.size());
      Kernel k;
      k.repeat = ops[i].repeat;
      k.group = ops[i].group;
      kernels.push_back(std::move(k));
    }
    kernels[kernel_of_group[g]].ops.push_back(i);
  }
  for (Kernel& k : kernels) {
    k.name = ops[k.ops.front()].name;
    for (int o : k.ops) {
      if (IsAnchor(ops[o].kind())) {
        k.name = ops[o].name;
        break;
      }
    }
  }
  // Kernels are in the order of their first op.
  return kernels;
}

}  // namespace roofline
