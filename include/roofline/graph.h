// Graph of ops over named tensors, and the fusion pass that groups ops into kernels.
#ifndef ROOFLINE_GRAPH_H_
#define ROOFLINE_GRAPH_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "roofline/op.h"
#include "roofline/status.h"

namespace roofline {

/// A tensor of the graph. Its size comes from the operand of the op that first used it.
struct Tensor {
  int origin_op = -1;               ///< the op that created it (its producer or first consumer)
  const char* origin_operand = "";  ///< that op's operand name
  double elements = 0;
  double bytes_per_element = 2;
  DType dtype = DType::kBf16;
  TensorRole role = TensorRole::kActivation;
  int producer = -1;           ///< op index that writes it, -1 for graph inputs
  std::vector<int> consumers;  ///< op indices that read it

  double bytes() const { return elements * bytes_per_element; }
};

/// One op placed in a graph: its spec and the tensors bound to its operands.
struct Op {
  std::string name;  ///< "q_proj", "attention", ...
  OpSpec spec;
  std::vector<int> operands;  ///< tensor ids, in OperandsOf(spec) order (inputs, then outputs)
  std::vector<TensorRole> roles;  ///< the role the spec gives each operand, parallel to operands
  int num_inputs = 0;        ///< operands [0, num_inputs) are read; the rest are its outputs
  bool input_twice = false;  ///< one tensor is bound to two of its inputs (x * x)
  int64_t repeat = 1;         ///< how many times the op runs per step (identical layers)
  std::string group;          ///< the layers it stands for ("layers 0-31"); empty: model-level
  int output = -1;            ///< tensor id of its first output

  OpKind kind() const { return KindOf(spec); }
};

/// Ops in execution order over tensors. Build it with AddOp; it checks that connected operands
/// agree in size and dtype.
class Graph {
 public:
  static constexpr int kNew = -1;  ///< "make a fresh tensor for this operand"

  /// Appends an op. `inputs[i]` binds input operand i to an existing tensor id or kNew (missing
  /// entries are kNew). Outputs always get fresh tensors named "<op>.<operand>".
  /// Returns the op index, or an error if the spec is invalid or a bound tensor does not match.
  Result<int> AddOp(std::string name, OpSpec spec, std::span<const int> inputs, int64_t repeat = 1,
                    std::string group = "");
  Result<int> AddOp(std::string name, OpSpec spec, std::initializer_list<int> inputs = {},
                    int64_t repeat = 1, std::string group = "") {
    return AddOp(std::move(name), std::move(spec),
                 std::span<const int>(inputs.begin(), inputs.size()), repeat, std::move(group));
  }
  /// Replaying re-sizes a built graph for new dimensions without building it again (a sweep's
  /// graph keeps its structure from point to point). Between BeginReplay() and EndReplay(),
  /// AddOp appends nothing: its n-th call must describe the graph's n-th op again (same name,
  /// group, kind, repeat and bindings), and it updates that op's spec and the size and dtype of
  /// the tensors the op created. Any difference is an error, and the graph is then unusable:
  /// build it anew.
  void BeginReplay() { replay_next_ = 0; }
  /// Ends a replay: an error unless every op was described again.
  Status EndReplay();
  /// Reserves room for `ops` ops and `tensors` tensors.
  void Reserve(size_t ops, size_t tensors) {
    ops_.reserve(ops);
    tensors_.reserve(tensors);
  }

  /// The tensor bound to operand `operand` of op `op` (e.g. its output).
  int TensorOf(int op, int operand) const { return ops_[op].operands[operand]; }
  /// The first output tensor of op `op`.
  int OutputOf(int op) const { return ops_[op].output; }
  /// "<op>.<operand>" of the op that created the tensor, e.g. "q_proj.C".
  std::string TensorName(int tensor) const;

  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  Result<int> ReplayOp(const std::string& name, OpSpec& spec, std::span<const int> inputs,
                       int64_t repeat, const std::string& group);

  std::vector<Op> ops_;
  std::vector<Tensor> tensors_;
  int replay_next_ = -1;           ///< the next op a replay describes; -1: not replaying
  std::vector<Operand> operands_;  ///< scratch of ReplayOp

  friend class AffineGraph;  // re-sizes specs and tensors in place (src/graph/affine_graph.h)
};

/// How ops become kernels.
enum class FusionMode {
  kEager,  ///< one op per kernel; every intermediate goes through device memory (PyTorch eager)
  kFused,  ///< elementwise ops fold into a neighbouring matmul/conv/attention kernel (norms stay)
};

/// A group of ops that runs as one launch.
struct Kernel {
  std::string name;      ///< name of the anchor op (the matmul of a fused group)
  std::vector<int> ops;  ///< op indices, in graph order
  int64_t repeat = 1;
  std::string group;  ///< the group of its ops (see Op::group)
};

/// Groups ops into kernels (see docs/cost-model.md, "Fusion").
std::vector<Kernel> Fuse(const Graph& graph, FusionMode mode);

/// Attention implementation.
enum class AttentionImpl {
  kFlash,  ///< one fused kernel, scores stay on chip, masked blocks skipped
  kEager,  ///< QK^T, softmax and PV as three kernels through device memory
};

/// Appends attention: one `attention` op (flash) or `attn_qk`, `attn_softmax`, `attn_pv`
/// (eager; the full score square is computed and masked). `q`, `k`, `v` bind existing tensors
/// (or Graph::kNew). Returns the index of the op producing the output.
Result<int> AppendAttention(Graph& graph, const AttentionSpec& spec, AttentionImpl impl,
                            const std::string& prefix = "", int q = Graph::kNew,
                            int k = Graph::kNew, int v = Graph::kNew, int64_t repeat = 1,
                            const std::string& group = "");

}  // namespace roofline

#endif  // ROOFLINE_GRAPH_H_
