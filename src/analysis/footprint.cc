// Memory footprint of an LLM on one device: weights, KV cache and workspace.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "roofline/flip.h"
#include "roofline/llm.h"
#include "roofline/model_analysis.h"
#include "roofline/units.h"

namespace roofline {
namespace {

/// Bytes of every weight tensor (quantized ones with their scales), each once, in the order of
/// WeightUsesOf.
double WeightBytes(const Graph& g, const WeightUses& uses) {
  double bytes = 0;
  for (const auto& [id, repeat] : uses) bytes += g.tensors()[id].bytes() * repeat;
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

WeightUses WeightUsesOf(const Graph& g) {
  WeightUses uses;
  std::vector<char> seen(g.tensors().size(), 0);
  for (const Op& op : g.ops()) {
    for (size_t j = 0; j < op.roles.size(); ++j) {
      if (op.roles[j] != TensorRole::kWeight) continue;
      const int id = op.operands[j];
      if (seen[id]) continue;
      seen[id] = 1;
      uses.emplace_back(id, static_cast<double>(op.repeat));
    }
  }
  return uses;
}

MemoryFootprint FootprintFromGraph(const TransformerConfig& c, const Workload& w,
                                   const Device& device, const Graph& decode, int64_t batch,
                                   int64_t context, const WeightUses* weights) {
  MemoryFootprint m;
  m.stages = w.Stages();
  m.devices = w.Chips();
  m.capacity_bytes = device.device_memory().total_usable_bytes();
  if (device.device_memory().weights_only) {
    // Weights stream from the external store; the nearer level holds the rest.
    m.weights_store_bytes = m.capacity_bytes;
    m.capacity_bytes = device.memory[1].total_capacity_bytes();
  }
  // What an engine leaves unused (its reserve) is not room for the model.
  m.memory_fraction = w.memory_fraction;
  m.capacity_bytes *= w.memory_fraction;
  const double stages = static_cast<double>(m.stages);
  m.weights_bytes = (weights != nullptr ? WeightBytes(decode, *weights)
                                        : WeightBytes(decode, WeightUsesOf(decode))) /
                    stages;
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
  // Balanced stages: each chip holds an equal share of the layers' weights and cache.
  m.kv_bytes_per_token /= stages;
  m.kv_cache_bytes /= stages;
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

int64_t FewestStages(const MemoryFootprint& one) {
  const double shared = one.weights_bytes + one.kv_cache_bytes;
  const double room = one.capacity_bytes - one.workspace_bytes;
  const double cap = static_cast<double>(kMaxStagesCount);
  if (!(room > 0)) {
    // No count holds it (the largest op alone overflows a chip): the chips the weights and
    // cache fill, so that the footprint reports the overflow.
    return static_cast<int64_t>(
        std::clamp(std::ceil(shared / std::max(one.capacity_bytes, 1.0)), 1.0, cap));
  }
  double stages = std::clamp(std::ceil(shared / room), 1.0, cap);
  // ceil of a quotient of doubles: make sure the count holds it, and is the fewest that does.
  auto fits = [&](double n) { return shared / n + one.workspace_bytes <= one.capacity_bytes; };
  while (stages < cap && !fits(stages)) stages += 1;
  while (stages > 1 && fits(stages - 1)) stages -= 1;
  return static_cast<int64_t>(stages);
}

Result<Workload> ResolveStages(const TransformerConfig& c, const Workload& w, const Device& d) {
  Workload out = w;
  if (w.pp != 0) return out;
  out.pp = 1;
  if (!d.model_split) return out;
  const int64_t context = std::max(w.prompt, w.DecodeContext());
  Result<MemoryFootprint> one = Footprint(c, out, d, w.batch, context);
  if (!one.ok()) return one.status();
  out.pp = FewestStages(*one);
  return out;
}

int64_t LargestBatch(const TransformerConfig& c, const Workload& w, const Device& d,
                     int64_t context) {
  auto fits = [&](int64_t b) {
    Workload wb = w;
    if (w.pp == 0 && d.model_split) {
      // Stages to be chosen: the fewest chips that hold this batch.
      wb.batch = b;
      wb.context = context;
      Result<Workload> staged = ResolveStages(c, wb, d);
      if (!staged.ok()) return false;
      wb = *staged;
    }
    Result<MemoryFootprint> f = Footprint(c, wb, d, b, context);
    return f.ok() && f->fits();
  };
  if (!fits(1)) return 0;
  const Flip<bool> f = FindFlip<bool>(fits, 1, kMaxBatch);
  return f.found ? f.value - 1 : kMaxBatch;
}

}  // namespace roofline
