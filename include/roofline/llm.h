// LLM graphs per phase, parameter counts and memory footprint.
#ifndef ROOFLINE_LLM_H_
#define ROOFLINE_LLM_H_

#include <string>
#include <vector>

#include "roofline/graph.h"
#include "roofline/transformer.h"
#include "roofline/workload.h"

namespace roofline {

/// The graph of one step, per device under tensor parallelism, and what was assumed building it.
/// Decoder layers built as one group of ops (Kernel::group and Op::group name it): identical
/// layers appear once in the graph with a repeat of layers.size().
struct LayerGroup {
  std::string name;
  std::vector<int64_t> layers;  ///< the decoder layers it stands for, ascending from 0
};

struct LlmGraph {
  Graph graph;
  Phase phase = Phase::kPrefill;
  int64_t tokens = 0;  ///< tokens processed in the step (all sequences)
  std::vector<std::string> notes;
  /// The decoder layers' groups, in graph order. Ops of no group come before them (the
  /// embedding) or after them (the final norm, the output layer); the pipeline's sends are the
  /// group kPipelineGroup.
  std::vector<LayerGroup> layer_groups;
};

/// The group of a pipeline's stage-to-stage sends (one op, repeated stages - 1 times).
inline constexpr const char* kPipelineGroup = "pipeline";

/// Builds the step graph. Identical layers appear once with a repeat count; layers that differ
/// (dense vs MoE, sliding vs global attention) form separate groups. Errors name the workload
/// field (e.g. "--tp").
Result<LlmGraph> BuildLlmGraph(const TransformerConfig& config, const Workload& workload,
                               Phase phase);

/// Re-sizes `graph` (built by BuildLlmGraph for the same config and phase) for another workload
/// without building it anew: the fast path of sweeps. An error when the workload is invalid or
/// changes the graph's structure (tp, attention or MLA form, a prompt of one token, ...); the
/// graph is then unusable and BuildLlmGraph gives the new one (or the same error).
Status ReplayLlmGraph(const TransformerConfig& config, const Workload& workload, LlmGraph& graph);

/// Total and active parameters (one device, no tensor parallelism), counted from the graph's
/// weight tensors.
ParameterCount CountParameters(const TransformerConfig& config);

/// Memory on one device for a workload.
struct MemoryFootprint {
  double weights_bytes = 0;       ///< per device
  double kv_bytes_per_token = 0;  ///< one token of one sequence, all layers, per device
  double kv_cache_bytes = 0;      ///< batch x context (sliding layers keep only their window)
  double workspace_bytes = 0;     ///< decode step: activations of the largest op (in + out)
  /// Prefilling the whole batch in one step: activations of its largest op. Informational:
  /// serving engines prefill in chunks, so this is not part of total_bytes().
  double prefill_workspace_bytes = 0;
  double capacity_bytes = 0;  ///< device memory of one device the engine may fill
  /// The fraction of it that is (Workload::memory_fraction; 1: all of the device's memory).
  double memory_fraction = 1;
  /// Where the weights stream from an external store (a first memory level that holds only
  /// weights): its capacity; the weights then take no room in `capacity_bytes`. 0: no store.
  double weights_store_bytes = 0;
  int64_t devices = 1;  ///< chips per replica: tensor-parallel degree x pipeline stages
  int64_t stages = 1;   ///< pipeline stages (weights and KV cache split over them)

  double total_bytes() const { return weights_bytes + kv_cache_bytes + workspace_bytes; }
  /// What must fit in `capacity_bytes`.
  double resident_bytes() const {
    return weights_store_bytes > 0 ? kv_cache_bytes + workspace_bytes : total_bytes();
  }
  bool fits() const {
    return resident_bytes() <= capacity_bytes &&
           (weights_store_bytes <= 0 || weights_bytes <= weights_store_bytes);
  }
};

}  // namespace roofline

#endif  // ROOFLINE_LLM_H_
