// FLOPs and minimum bytes of an aten op from the shapes a PyTorch profiler trace recorded
// ("Input Dims", "Input type", "Concrete Inputs"). Conventions (docs in torch_op_cost.cc):
// 2 FLOP per multiply-accumulate; matmul / conv / attention counted like torch.utils.flop_counter
// (bias adds ignored, causal attention counted full); minimum bytes = every tensor input read
// once + the output written once.
#ifndef ROOFLINE_SRC_PROFILE_TORCH_OP_COST_H_
#define ROOFLINE_SRC_PROFILE_TORCH_OP_COST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// The recorded arguments of one op, positional (one entry per argument of the aten schema).
struct TorchOpShapes {
  std::vector<std::vector<int64_t>> dims;  ///< "Input Dims"; [] for scalars, None and lists
  /// Member shapes of TensorList arguments (cat, stack), by argument index; empty otherwise.
  std::vector<std::vector<std::vector<int64_t>>> lists;
  std::vector<std::string> types;     ///< "Input type": "float", "c10::BFloat16", "Scalar", ""
  std::vector<std::string> concrete;  ///< "Concrete Inputs": "[1, 1]", "False", "" (not recorded)
};

/// What an op costs. A figure is absent when the shapes do not determine it; `note` then says why.
struct TorchOpCost {
  std::optional<double> flops;
  std::optional<double> min_bytes;
  std::string note;  ///< the formula with its numbers, or why there is none
};

/// Costs an aten op ("aten::addmm", "aten::add_") from its recorded shapes.
TorchOpCost CostTorchOp(std::string_view op_name, const TorchOpShapes& shapes);

/// Bytes per element of a profiler dtype name ("float" 4, "c10::Half" 2, "long int" 8,
/// "c10::Float8_e4m3fn" 1); nullopt for anything else (scalars, lists, unknown dtypes).
std::optional<int> TorchDtypeBytes(std::string_view type);

}  // namespace roofline

#endif  // ROOFLINE_SRC_PROFILE_TORCH_OP_COST_H_
