#include "roofline/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace roofline {

Result<int> Graph::AddOp(std::string name, OpSpec spec, std::span<const int> inputs, int64_t repeat,
                         std::string group) {
  if (replay_next_ >= 0) return ReplayOp(name, spec, inputs, repeat, group);
  Status s = Validate(spec);
  if (!s.ok()) return s.WithPrefix(name);
  if (repeat < 1) return Status::Invalid(name, "repeat must be >= 1");
  const std::vector<Operand> operands = OperandsOf(spec);
  const int op_index = static_cast<int>(ops_.size());
  Op op;
  op.name = name;
  op.spec = std::move(spec);
  op.operands.reserve(operands.size());
  op.roles.reserve(operands.size());
  op.repeat = repeat;
  op.group = std::move(group);
  size_t input_i = 0;
  for (const Operand& o : operands) {
    int id = kNew;
    if (!o.is_output && input_i < inputs.size()) id = inputs[input_i];
    if (!o.is_output) ++input_i;
    if (id != kNew) {
      if (id < 0 || id >= static_cast<int>(tensors_.size())) {
        return Status::Invalid(name,
                               fmt::format("operand {} bound to unknown tensor {}", o.name, id));
      }
      const Tensor& t = tensors_[id];
      if (std::fabs(t.elements - o.elements) > 0.5 || t.bytes_per_element != o.bytes_per_element) {
        return Status::Invalid(
            name, fmt::format("operand {} expects {} elements of {} B, tensor '{}' has {} of {} B",
                              o.name, o.elements, o.bytes_per_element, TensorName(id), t.elements,
                              t.bytes_per_element));
      }
    } else {
      Tensor t;
      t.origin_op = op_index;
      t.origin_operand = o.name;
      t.elements = o.elements;
      t.bytes_per_element = o.bytes_per_element;
      t.dtype = o.dtype;
      t.role = o.role;
      id = static_cast<int>(tensors_.size());
      tensors_.push_back(std::move(t));
    }
    if (o.is_output) {
      if (op.output < 0) op.output = id;
      tensors_[id].producer = op_index;
    } else {
      tensors_[id].consumers.push_back(op_index);
    }
    if (!o.is_output) {
      op.input_twice = op.input_twice || std::find(op.operands.begin(), op.operands.end(), id) !=
                                             op.operands.end();
      ++op.num_inputs;
    }
    op.operands.push_back(id);
    op.roles.push_back(o.role);
  }
  if (input_i < inputs.size()) {
    return Status::Invalid(
        name, fmt::format("{} inputs bound but the op has only {}", inputs.size(), input_i));
  }
  ops_.push_back(std::move(op));
  return op_index;
}

Result<int> Graph::ReplayOp(const std::string& name, OpSpec& spec, std::span<const int> inputs,
                            int64_t repeat, const std::string& group) {
  auto differs = [&](const char* what) {
    replay_next_ = static_cast<int>(ops_.size()) + 1;  // EndReplay fails too
    return Status::Invalid(name, std::string("replay: ") + what + " differs from the built graph");
  };
  if (replay_next_ >= static_cast<int>(ops_.size())) return differs("the number of ops");
  const int op_index = replay_next_;
  Op& op = ops_[op_index];
  if (op.name != name || op.group != group || op.repeat != repeat || op.kind() != KindOf(spec)) {
    return differs("the op");
  }
  Status s = Validate(spec);
  if (!s.ok()) return s.WithPrefix(name);
  OperandsOf(spec, operands_);
  if (operands_.size() != op.operands.size()) return differs("the operand count");
  size_t input_i = 0;
  for (size_t j = 0; j < operands_.size(); ++j) {
    const Operand& o = operands_[j];
    int bound = kNew;
    if (!o.is_output && input_i < inputs.size()) bound = inputs[input_i];
    if (!o.is_output) ++input_i;
    const int id = op.operands[j];
    Tensor& t = tensors_[id];
    op.roles[j] = o.role;
    if (bound == kNew) {
      // A tensor this op created: it takes the operand's new size.
      if (t.origin_op != op_index ||
          (t.origin_operand != o.name && std::strcmp(t.origin_operand, o.name) != 0)) {
        return differs("a binding");
      }
      t.elements = o.elements;
      t.bytes_per_element = o.bytes_per_element;
      t.dtype = o.dtype;
      t.role = o.role;
    } else {
      // A tensor an earlier op created (and already re-sized): the sizes must still agree.
      if (bound != id) return differs("a binding");
      if (std::fabs(t.elements - o.elements) > 0.5 || t.bytes_per_element != o.bytes_per_element) {
        return Status::Invalid(
            name, fmt::format("operand {} expects {} elements of {} B, tensor '{}' has {} of {} B",
                              o.name, o.elements, o.bytes_per_element, TensorName(id), t.elements,
                              t.bytes_per_element));
      }
    }
  }
  if (input_i < inputs.size()) return differs("the number of inputs");
  op.spec = std::move(spec);
  ++replay_next_;
  return op_index;
}

Status Graph::EndReplay() {
  const bool whole = replay_next_ == static_cast<int>(ops_.size());
  replay_next_ = -1;
  if (!whole) return Status::Invalid("graph", "replay: the ops differ from the built graph");
  return Status::Ok();
}

std::string Graph::TensorName(int tensor) const {
  const Tensor& t = tensors_[tensor];
  if (t.origin_op < 0 || t.origin_op >= static_cast<int>(ops_.size())) return "?";
  return ops_[t.origin_op].name + "." + t.origin_operand;
}

Result<int> AppendAttention(Graph& graph, const AttentionSpec& a, AttentionImpl impl,
                            const std::string& prefix, int q, int k, int v, int64_t repeat,
                            const std::string& group) {
  Status s = Validate(OpSpec(a));
  if (!s.ok()) return s.WithPrefix(prefix + "attention");
  if (impl == AttentionImpl::kFlash) {
    return graph.AddOp(prefix + "attention", a, {q, k, v}, repeat, group);
  }
  const int64_t gqa = a.heads / a.kv_heads;
  // S = Q K^T: per (sequence, head) an [q_len x d] . [d x kv_len] product; K shared by the group.
  MatmulSpec qk;
  qk.batch = a.batch * a.heads;
  qk.m = a.q_len;
  qk.n = a.kv_len;
  qk.k = a.head_dim;
  qk.a_dtype = a.dtype;
  qk.b_dtype = a.kv_dtype;
  qk.out_dtype = a.dtype;
  qk.b_is_weight = false;
  qk.b_broadcast = gqa;
  Result<int> qk_op = graph.AddOp(prefix + "attn_qk", qk, {q, k}, repeat, group);
  if (!qk_op.ok()) return qk_op;
  SoftmaxSpec sm;
  sm.rows =
      static_cast<double>(a.batch) * static_cast<double>(a.heads) * static_cast<double>(a.q_len);
  sm.cols = a.kv_len;
  sm.dtype = a.dtype;
  Result<int> sm_op =
      graph.AddOp(prefix + "attn_softmax", sm, {graph.OutputOf(*qk_op)}, repeat, group);
  if (!sm_op.ok()) return sm_op;
  MatmulSpec pv;
  pv.batch = a.batch * a.heads;
  pv.m = a.q_len;
  pv.n = a.v_dim();
  pv.k = a.kv_len;
  pv.a_dtype = a.dtype;
  pv.b_dtype = a.kv_dtype;
  pv.out_dtype = a.dtype;
  pv.b_is_weight = false;
  pv.b_broadcast = gqa;
  return graph.AddOp(prefix + "attn_pv", pv, {graph.OutputOf(*sm_op), v}, repeat, group);
}

}  // namespace roofline
