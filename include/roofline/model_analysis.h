// A whole LLM step on a device: kernel costs per phase, totals, latency, footprint.
#ifndef ROOFLINE_MODEL_ANALYSIS_H_
#define ROOFLINE_MODEL_ANALYSIS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "roofline/cost.h"
#include "roofline/flip.h"
#include "roofline/graph_analysis.h"
#include "roofline/llm.h"
#include "roofline/op_analysis.h"

namespace roofline {

/// What decides how a step is costed, and so which published runs its trust band comes from
/// (roofline/trust.h): the runtime, whether framework modules are counted (--modules), the phase,
/// whether the step spans several chips (tensor or pipeline parallelism), the device's vendor and
/// whether the model routes tokens to experts.
struct TrustKey {
  /// The serving engine's id ("vllm", "tensorrt-llm"; versions not told apart); empty: none named.
  std::string engine;
  Runtime runtime = Runtime::kEager;
  bool modules = false;
  Phase phase = Phase::kDecode;
  bool parallel = false;
  std::string vendor;
  bool moe = false;
  /// Weight-only quantization: the weights are narrower than the activations (int4 or int8
  /// weights with bf16 activations run dequantizing kernels a dense step does not).
  bool quantized = false;
  /// Not a criterion: the choices that changed the step's figures from the model's own
  /// ("--ceilings spec", "--efficiency", "--launch-overhead-us", "a calibrated device"), which
  /// no published run was costed with; empty when none did.
  std::string overridden;
};

/// How much of a key a band's group matches: the criteria are dropped in this order until the
/// group holds enough runs (kTrustMinRows).
enum class TrustLevel {
  kEngine,      ///< the engine and every criterion of kOwn: the key's own where it names an
                ///< engine
  kOwn,         ///< runtime, modules, phase, parallelism, vendor, dense or MoE: the key's own
                ///< where it names no engine
  kAnyVendor,   ///< ... any vendor, dense or MoE
  kAnyLayout,   ///< ... and one chip or several
  kAnyModules,  ///< runtime and phase only (modules and weight quantization dropped)
  kPhase,       ///< the phase only
  kAll,         ///< every run with an expected time
};

/// Runs a band needs in its group.
inline constexpr int kTrustMinRows = 3;

/// A published run behind a band.
struct TrustRun {
  std::string id, stack, hw;
  double measured_s = 0, expected_s = 0;
  double error = 0;  ///< (expected - measured) / measured
};

/// How far to trust an expected time: the signed errors (expected - measured) / measured of the
/// published runs of the nearest group that has enough of them.
struct TrustBand {
  TrustKey key;
  TrustLevel level = TrustLevel::kOwn;  ///< the group the figures come from
  std::vector<TrustRun> runs;  ///< that group's runs, in file order (none: nothing to go by)
  double median_error = 0, min_error = 0, max_error = 0;

  /// The measured time an expected time `e` suggests, at the group's largest, median and smallest
  /// error: e / (1 + error). An optimistic model (negative errors) gives a range above `e`.
  double Low(double e) const { return e / (1 + max_error); }
  double Central(double e) const { return e / (1 + median_error); }
  double High(double e) const { return e / (1 + min_error); }
  /// The key's own group: by engine where the key names one.
  TrustLevel own_level() const {
    return key.engine.empty() ? TrustLevel::kOwn : TrustLevel::kEngine;
  }
  bool own() const { return level == own_level(); }
  bool empty() const { return runs.empty(); }
};

/// One phase (prefill or decode) of a model on a device.
/// Its kernels, classes, costs (one instance each; `repeat` says how many per step) and totals
/// (per device, repeats included) are the GraphCosts of its graph.
struct PhaseResult : GraphCosts {
  Phase phase = Phase::kPrefill;
  LlmGraph graph;

  double mfu = 0;               ///< FLOPs / (time x peak of the main tensor engine), at the bound
  double mbu = 0;               ///< device-memory bytes / (time x bandwidth), at the bound
  std::string mfu_engine;       ///< the ceiling MFU is relative to
  double ttft_s = 0;            ///< prefill: time to first token (the whole prompt)
  double time_per_token_s = 0;  ///< decode: one step
  double tokens_per_s = 0;      ///< decode: batch / step time (all devices together)
  /// With a calibrated device: sum of bound / efficiency of the kernel's class; else 0.
  double calibrated_s = 0;
  // Expected times (when the cost model has efficiency data; totals.expected_s is the step).
  double expected_ttft_s = 0;            ///< prefill
  double expected_time_per_token_s = 0;  ///< decode
  double expected_tokens_per_s = 0;      ///< decode
  /// How far to trust the expected time (roofline/trust.h AttachBands); none: not attached.
  std::optional<TrustBand> band;
};

/// Everything `roofline model` reports.
struct ModelAnalysis {
  TransformerConfig config;
  Workload workload;
  DType act = DType::kBf16, weight = DType::kBf16, kv = DType::kBf16;  ///< resolved dtypes
  ParameterCount params;
  MemoryFootprint memory;
  int64_t max_batch = 0;  ///< largest batch whose footprint fits (0: not even batch 1)
  /// The stage count was chosen (ResolveStages: the fewest chips that hold the model), not given.
  bool stages_chosen = false;
  /// With chosen stages: the largest batch on the fewest chips that hold each batch (up to
  /// kMaxStagesCount stages); `max_batch` is on this workload's chips.
  int64_t max_batch_more_chips = 0;
  int64_t chips_more_chips = 0;  ///< chips per replica at max_batch_more_chips
  std::vector<PhaseResult> phases;
  std::vector<std::string> notes;
};

/// Analyzes the model for the workload on the device.
Result<ModelAnalysis> AnalyzeModel(const TransformerConfig& config, const Workload& workload,
                                   const CostModel& model, PhaseSelection phases);

/// One phase only: graph, kernel costs and totals (no footprint or batch search).
Result<PhaseResult> AnalyzePhase(const TransformerConfig& config, const Workload& workload,
                                 const CostModel& model, Phase phase);

/// Activations of the largest op when the whole batch is prefilled in one step.
double PrefillWorkspace(const TransformerConfig& config, const Workload& workload);

/// The weight tensors of a graph as the footprint counts them: (tensor, op repeat) at each
/// tensor's first use, in op order.
using WeightUses = std::vector<std::pair<int, double>>;
WeightUses WeightUsesOf(const Graph& graph);

/// The same from a decode graph already built for `workload` at that batch and context.
/// `weights`, when given, is WeightUsesOf(decode) kept from a graph of the same structure (a
/// sweep's row): the same result without walking the ops. With pipeline stages, a model split
/// over SRAM chips holds an equal share of the weights and cache on each; on other devices,
/// given the decode graph's `layer_groups`, a device holds the fullest stage of vLLM's split
/// (StageLayers: its layers' weights and cache, the embedding on the first, the output layer on
/// the last), else an equal share.
MemoryFootprint FootprintFromGraph(const TransformerConfig& config, const Workload& workload,
                                   const Device& device, const Graph& decode, int64_t batch,
                                   int64_t context, const WeightUses* weights = nullptr,
                                   const std::vector<LayerGroup>* layer_groups = nullptr);

/// The batch limit of the largest-batch search (and of --batch).
inline constexpr int64_t kMaxBatch = int64_t{1} << 24;

/// The largest batch (up to kMaxBatch) whose footprint at `context` fits one device, by
/// bisection; 0 when not even batch 1 fits. The one largest-batch search (`model`, `plan`).
/// On a device with a model split and `pp` 0, every batch gets the fewest stages that hold it,
/// so the limit is the decode workspace of one op on one chip.
int64_t LargestBatch(const TransformerConfig& config, const Workload& workload,
                     const Device& device, int64_t context);

/// The most pipeline stages (as --pp allows).
inline constexpr int64_t kMaxStagesCount = 100000;

/// The pipeline stages a device with a model split (SRAM-only chips) needs: the fewest whose
/// equal shares of the weights and KV cache, with the decode workspace, fit one chip. `one` is
/// the footprint at one stage. When no count can (the decode workspace alone overflows a chip, or
/// more than kMaxStagesCount would be needed), the count the weights and cache fill, capped at
/// kMaxStagesCount: the footprint at that count then does not fit.
int64_t FewestStages(const MemoryFootprint& one);

/// `workload` with its pipeline stages set: `pp` as given, else FewestStages on a device with a
/// model split (batch and context as in the workload, the longer of prompt and context), else 1.
Result<Workload> ResolveStages(const TransformerConfig& config, const Workload& workload,
                               const Device& device);

/// Memory on one device (weights, KV cache, decode workspace) for a batch at a context length.
Result<MemoryFootprint> Footprint(const TransformerConfig& config, const Workload& workload,
                                  const Device& device, int64_t batch, int64_t context);

/// A tensor-parallel layout (tp > 1) needs a device that lists an interconnect; the error names
/// --tp.
Status CheckTensorParallel(const Workload& workload, const Device& device);

}  // namespace roofline

#endif  // ROOFLINE_MODEL_ANALYSIS_H_
