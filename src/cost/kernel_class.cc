#include "roofline/kernel_class.h"

namespace roofline {

std::string_view NameOf(KernelClass c) {
  switch (c) {
    case KernelClass::kMatmul:
      return "matmuls";
    case KernelClass::kAttention:
      return "attention";
    case KernelClass::kVector:
      return "norms/elementwise";
    case KernelClass::kComm:
      return "communication";
  }
  return "?";
}

KernelClass ClassOf(const Graph& g, const Kernel& k) {
  bool matmul = false;
  for (int o : k.ops) {
    const Op& op = g.ops()[o];
    switch (op.kind()) {
      case OpKind::kAttention:
        return KernelClass::kAttention;
      case OpKind::kCollective:
        return KernelClass::kComm;
      case OpKind::kMatmul:
      case OpKind::kConv2d:
        if (op.name.rfind("attn_", 0) == 0) return KernelClass::kAttention;
        matmul = true;
        break;
      case OpKind::kSoftmax:
        if (op.name.rfind("attn_", 0) == 0) return KernelClass::kAttention;
        break;
      default:
        break;
    }
  }
  return matmul ? KernelClass::kMatmul : KernelClass::kVector;
}

double EfficiencyOf(const Calibration& c, KernelClass k) {
  switch (k) {
    case KernelClass::kMatmul:
      return c.matmul;
    case KernelClass::kAttention:
      return c.attention;
    case KernelClass::kVector:
      return c.vector;
    case KernelClass::kComm:
      return 1;
  }
  return 1;
}

}  // namespace roofline
