// The one classification of predicted kernels (matmul, attention, vector, comm), and the
// efficiency a calibration gives each class.
#ifndef ROOFLINE_KERNEL_CLASS_H_
#define ROOFLINE_KERNEL_CLASS_H_

#include <string_view>

#include "roofline/device.h"
#include "roofline/graph.h"

namespace roofline {

/// Kernel classes whose verdicts are tracked separately.
enum class KernelClass { kMatmul, kAttention, kVector, kComm };
inline constexpr int kNumClasses = 4;
/// "matmuls", "attention", "norms/elementwise", "communication".
std::string_view NameOf(KernelClass c);
/// The class of a kernel (by its ops: attention ops and attn_* kernels are attention; other
/// matmuls and convolutions are matmul; collectives are comm; everything else is vector).
KernelClass ClassOf(const Graph& graph, const Kernel& kernel);

/// Efficiency of a class under a calibration (comm: 1, never calibrated).
double EfficiencyOf(const Calibration& c, KernelClass k);

}  // namespace roofline

#endif  // ROOFLINE_KERNEL_CLASS_H_
