// The attention ops of the ONNX frontend: ONNX Attention (opset 23) and the com.microsoft
// MultiHeadAttention and Attention contrib ops.
#include <string>

#include "src/onnx/onnx_mapper.h"

namespace roofline::onnx_frontend {

/// ONNX Attention (opset 23): Q, K, V as [B, H, S, D] (or 3-D with q_num_heads / kv_num_heads,
/// viewed as 4-D by a synthetic view node).
bool Mapper::MapAttention(const onnx::NodeProto& n, NetNode& node) {
  if (n.input_size() < 3) return false;
  const auto q = values_.Dims(n.input(0)), k = values_.Dims(n.input(1)),
             v = values_.Dims(n.input(2));
  if (!q || !k || !v || q->size() != k->size() || q->size() != v->size()) return false;
  node.op = "attention";
  SetNumber(node.attrs, "causal", AttrInt(n, "is_causal", 0) != 0 ? 1 : 0);
  if (q->size() == 3) {
    const int64_t hq = AttrInt(n, "q_num_heads", 0), hkv = AttrInt(n, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || (*q)[2] % hq != 0 || (*k)[2] % hkv != 0 || (*v)[2] % hkv != 0) {
      node.op = "unknown";
      return false;
    }
    const int32_t type = Info(n.input(0))->elem_type;
    const std::string base = node.name;
    const Ints q4{(*q)[0], hq, (*q)[1], (*q)[2] / hq};
    const Ints k4{(*k)[0], hkv, (*k)[1], (*k)[2] / hkv};
    const Ints v4{(*v)[0], hkv, (*v)[1], (*v)[2] / hkv};
    const std::string names[3] = {AddSynthetic(base + ".q", q4, type),
                                  AddSynthetic(base + ".k", k4, type),
                                  AddSynthetic(base + ".v", v4, type)};
    for (int i = 0; i < 3; ++i) {
      NetNode view;
      view.name = base + "/heads" + std::to_string(i);
      names_.insert(view.name);
      view.op = "view";
      view.module = node.module;
      view.source = node.source;
      view.inputs = {n.input(i)};
      view.outputs = {names[i]};
      Emit(std::move(view));
      node.inputs[i] = names[i];
    }
  }
  node.inputs.resize(3);  // masks and caches: small next to Q, K, V; not modelled
  node.outputs.resize(1);
  return true;
}

/// com.microsoft Attention (input [B, S, hidden] x weights [hidden, 3 x hidden] -> QKV ->
/// attention) becomes a matmul and an attention node; MultiHeadAttention with 3-D Q, K, V
/// becomes an attention node over 4-D views.
bool Mapper::MapContribAttention(const onnx::NodeProto& n, int index) {
  const int64_t heads = AttrInt(n, "num_heads", 0);
  const auto out = values_.Dims(n.output(0));
  if (heads <= 0 || !out || out->size() != 3 || n.input_size() < 2) return false;
  const int32_t type = Info(n.output(0))->elem_type;
  const std::string base = UniqueName(n, index);
  NetNode attention = Begin(n, index, "attention");
  attention.name = base;
  SetNumber(attention.attrs, "causal", AttrInt(n, "unidirectional", 0) != 0 ? 1 : 0);
  SetNumber(attention.attrs, "num_heads", static_cast<double>(heads));
  Ints q4, k4, v4;
  if (n.op_type() == "Attention") {
    const auto x = values_.Dims(n.input(0)), w = values_.Dims(n.input(1));
    if (!x || !w || x->size() != 3 || w->size() != 2) return false;
    Ints sizes = AttrInts(n, "qkv_hidden_sizes");
    if (sizes.size() != 3) sizes.assign(3, (*w)[1] / 3);
    if (sizes[0] % heads != 0 || sizes[2] % heads != 0) return false;
    const int64_t b = (*x)[0], s = (*x)[1];
    q4 = {b, heads, s, sizes[0] / heads};
    k4 = {b, heads, s, sizes[1] / heads};
    v4 = {b, heads, s, sizes[2] / heads};
    NetNode proj;
    proj.name = base + "/qkv";
    names_.insert(proj.name);
    proj.op = "matmul";
    proj.module = attention.module;
    proj.source = attention.source;
    proj.inputs = {n.input(0), n.input(1)};
    if (n.input_size() > 2 && !n.input(2).empty()) proj.inputs.push_back(n.input(2));
    proj.outputs = {AddSynthetic(base + ".qkv", {b, s, (*w)[1]}, type)};
    Emit(std::move(proj));
    NetNode split;
    split.name = base + "/heads";
    names_.insert(split.name);
    split.op = "view";
    split.module = attention.module;
    split.source = attention.source;
    split.inputs = {base + ".qkv"};
    split.outputs = {AddSynthetic(base + ".q", q4, type), AddSynthetic(base + ".k", k4, type),
                     AddSynthetic(base + ".v", v4, type)};
    Emit(std::move(split));
    attention.inputs = {base + ".q", base + ".k", base + ".v"};
  } else {
    if (n.input_size() < 3) return false;
    const auto q = values_.Dims(n.input(0)), k = values_.Dims(n.input(1)),
               v = values_.Dims(n.input(2));
    if (!q || !k || !v || q->size() != 3 || k->size() != 3 || v->size() != 3) return false;
    if ((*q)[2] % heads != 0 || (*k)[2] % heads != 0 || (*v)[2] % heads != 0) return false;
    q4 = {(*q)[0], heads, (*q)[1], (*q)[2] / heads};
    k4 = {(*k)[0], heads, (*k)[1], (*k)[2] / heads};
    v4 = {(*v)[0], heads, (*v)[1], (*v)[2] / heads};
    const Ints* dims[3] = {&q4, &k4, &v4};
    const char* suffix[3] = {".q", ".k", ".v"};
    attention.inputs.clear();
    for (int i = 0; i < 3; ++i) {
      NetNode view;
      view.name = base + "/heads" + std::to_string(i);
      names_.insert(view.name);
      view.op = "view";
      view.module = attention.module;
      view.source = attention.source;
      view.inputs = {n.input(i)};
      view.outputs = {AddSynthetic(base + suffix[i], *dims[i], type)};
      Emit(std::move(view));
      attention.inputs.push_back(base + suffix[i]);
    }
  }
  attention.outputs.resize(1);
  Emit(std::move(attention));
  return true;
}

}  // namespace roofline::onnx_frontend
