// Memory footprint of an LLM on one device: weights, KV cache and workspace.
#include <algorithm>
#include <vector>

#include "roofline/flip.h"
#include "roofline/llm.h"
#include "roofline/model_analysis.h"

namespace roofline {
namespace {

/// Bytes of every weight tensor (quantized ones with their scales), each once.
double WeightBytes(const Graph& g) {
  double bytes = 0;
  std::vector<char> seen(g.tensors().size());
  std::vector<Operand> operands;
  for (const Op& op : g.ops()) {
    OperandsOf(op.spec, operands);
    for (size_t j = 0; j < operands.size(); ++j) {
      if (operands[j].role != TensorRole::kWeight) continue;
      const int id = op.operands[j];
      if (seen[id]) continue;
      seen[id] = 1;
      bytes += g.tensors()[id].bytes() * static_cast<double>(op.repeat);
    }
  }
  return bytes;
}

/// The largest activation traffic of any single op (inputs + outputs, no weights or KV cache).
double Workspace(const Graph& g) {
  double best = 0;
  for (const Op& op : g.ops()) {
    double bytes = 0;
    for (int id : op.operands) {
      const Tensor& t = g.tensors()[id];
      if (t.role == TensorRole::kActivation || t.role == TensorRole::kIndex) bytes += t.bytes();
    }
    best = std::max(best, bytes);
  }
  return best;
}

}  // namespace

MemoryFootprint FootprintFromGraph(const TransformerConfig& c, const Workload& w,
                                   const Device& device, const Graph& decode, int64_t batch,
                                   int64_t context) {
  MemoryFootprint m;
  m.devices = w.tp;
  m.capacity_bytes = device.device_memory().total_capacity_bytes();
  m.weights_bytes = WeightBytes(decode);
  // KV cache: per token and layer, what the decode step's attention reads per key.
  const DType act = w.dtype.value_or(c.torch_dtype);
  const double ekv = BytesOf(w.kv_dtype.value_or(act));
  const double kv_heads = static_cast<double>(std::max<int64_t>(1, c.kv_heads / w.tp));
  double per_token_layer = 0;
  if (c.mla) {
    // Both MLA forms cache the latent and the shared rope key.
    per_token_layer = static_cast<double>(c.kv_lora_rank + c.qk_rope_dim) * ekv;
  } else {
    per_token_layer = 2 * kv_heads * static_cast<double>(c.head_dim) * ekv;
  }
  for (const LayerKind& k : c.layer_kinds) {
    m.kv_bytes_per_token += per_token_layer;
    const int64_t kept = k.window > 0 ? std::min(context, k.window) : context;
    m.kv_cache_bytes += per_token_layer * static_cast<double>(kept) * static_cast<double>(batch);
  }
  m.workspace_bytes = Workspace(decode);
  return m;
}

Result<MemoryFootprint> Footprint(const TransformerConfig& c, const Workload& w,
                                  const Device& device, int64_t batch, int64_t context) {
  Workload wb = w;
  wb.batch = batch;
  wb.context = context;
  Result<LlmGraph> decode = BuildLlmGraph(c, wb, Phase::kDecode);
  if (!decode.ok()) return decode.status();
  return FootprintFromGraph(c, w, device, decode->graph, batch, context);
}

double PrefillWorkspace(const TransformerConfig& c, const Workload& w) {
  Result<LlmGraph> prefill = BuildLlmGraph(c, w, Phase::kPrefill);
  return prefill.ok() ? Workspace(prefill->graph) : 0;
}

int64_t LargestBatch(const TransformerConfig& c, const Workload& w, const Device& d,
                     int64_t context) {
  auto fits = [&](int64_t b) {
    Result<MemoryFootprint> f = Footprint(c, w, d, b, context);
    return f.ok() && f->fits();
  };
  if (!fits(1)) return 0;
  const Flip<bool> f = FindFlip<bool>(fits, 1, kMaxBatch);
  return f.found ? f.value - 1 : kMaxBatch;
}

}  // namespace roofline
