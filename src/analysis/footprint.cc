// Memory footprint of an LLM on one device: weights, KV cache and workspace.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "roofline/flip.h"
#include "roofline/llm.h"
#include "roofline/model_analysis.h"
#include "roofline/pipeline.h"
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

/// Weights and KV cache of the fullest pipeline stage when the layers are split as vLLM splits
/// them (StageLayers): a layer group's weights once per layer it holds, the embedding's on the
/// first stage, the final norm's and output layer's on the last (a tied embedding on both).
struct StageMemory {
  double weights = 0, kv_per_token = 0, kv_cache = 0;
};
std::optional<StageMemory> FullestStage(const TransformerConfig& c, const Graph& g,
                                        const std::vector<LayerGroup>& groups, int64_t stages,
                                        double per_token_layer, int64_t batch, int64_t context) {
  const std::vector<int64_t> split = StageLayers(c.layers, stages);
  if (split.empty() || groups.empty()) return std::nullopt;
  std::vector<int> group_of(static_cast<size_t>(c.layers), -1);
  for (size_t k = 0; k < groups.size(); ++k) {
    for (int64_t layer : groups[k].layers) {
      if (layer < 0 || layer >= c.layers) return std::nullopt;
      group_of[static_cast<size_t>(layer)] = static_cast<int>(k);
    }
  }
  if (std::count(group_of.begin(), group_of.end(), -1) > 0) return std::nullopt;
  // Per layer of each group, and before and after the layers: each tensor once in each.
  std::vector<double> per_layer(groups.size(), 0);
  double before = 0, after = 0;
  std::vector<std::vector<char>> seen(groups.size() + 2, std::vector<char>(g.tensors().size(), 0));
  bool in_layers = false;
  for (const Op& op : g.ops()) {
    if (op.group == kPipelineGroup) continue;
    size_t where = 0;  // 0: before the layers, 1: after, 2 + k: group k
    if (!op.group.empty()) {
      const auto it = std::find_if(groups.begin(), groups.end(),
                                   [&](const LayerGroup& lg) { return lg.name == op.group; });
      if (it == groups.end()) return std::nullopt;
      where = 2 + static_cast<size_t>(it - groups.begin());
      in_layers = true;
    } else if (in_layers) {
      where = 1;
    }
    for (size_t j = 0; j < op.roles.size(); ++j) {
      if (op.roles[j] != TensorRole::kWeight) continue;
      const int id = op.operands[j];
      if (seen[where][static_cast<size_t>(id)]) continue;
      seen[where][static_cast<size_t>(id)] = 1;
      const double bytes = g.tensors()[id].bytes();
      (where == 0 ? before : where == 1 ? after : per_layer[where - 2]) += bytes;
    }
  }
  std::optional<StageMemory> fullest;
  int64_t layer = 0;
  for (size_t st = 0; st < split.size(); ++st) {
    StageMemory m;
    if (st == 0) m.weights += before;
    if (st + 1 == split.size()) m.weights += after;
    for (int64_t i = 0; i < split[st]; ++i, ++layer) {
      const auto idx = static_cast<size_t>(layer);
      m.weights += per_layer[static_cast<size_t>(group_of[idx])];
      const int64_t window = c.layer_kinds[idx].window;
      const int64_t kept = window > 0 ? std::min(context, window) : context;
      m.kv_per_token += per_token_layer;
      m.kv_cache += per_token_layer * static_cast<double>(kept) * static_cast<double>(batch);
    }
    if (!fullest || m.weights + m.kv_cache > fullest->weights + fullest->kv_cache) fullest = m;
  }
  return fullest;
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
                                   int64_t context, const WeightUses* weights,
                                   const std::vector<LayerGroup>* layer_groups) {
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
  // Balanced stages: each chip holds an equal share of the layers' weights and cache; on GPUs
  // with the decode graph's layer groups, the fullest stage of vLLM's split instead.
  std::optional<StageMemory> fullest;
  if (m.stages > 1 && !device.model_split && layer_groups != nullptr) {
    fullest = FullestStage(c, decode, *layer_groups, m.stages, per_token_layer, batch, context);
  }
  if (fullest) {
    m.weights_bytes = fullest->weights;
    m.kv_bytes_per_token = fullest->kv_per_token;
    m.kv_cache_bytes = fullest->kv_cache;
  } else {
    m.kv_bytes_per_token /= stages;
    m.kv_cache_bytes /= stages;
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
  return FootprintFromGraph(c, w, device, decode->graph, batch, context, nullptr,
                            &decode->layer_groups);
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
  if (w.pp != 0) {
    // On a GPU each stage holds whole layers (vLLM's split): at least one.
    if (!d.model_split && w.pp > c.layers) {
      return Status::Invalid("--pp", fmt::format("{} pipeline stages need {} decoder layers at "
                                                 "least; the model has {}",
                                                 w.pp, w.pp, c.layers));
    }
    return out;
  }
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
