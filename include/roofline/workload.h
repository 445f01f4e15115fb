// What is being run: phase, batch, lengths, dtypes, parallelism, kernel implementations.
#ifndef ROOFLINE_WORKLOAD_H_
#define ROOFLINE_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "roofline/dtype.h"
#include "roofline/graph.h"
#include "roofline/status.h"

namespace roofline {

/// One step of LLM inference.
enum class Phase {
  kPrefill,  ///< batch x prompt tokens, causal, the whole prompt in one step
  kDecode,   ///< batch sequences, one new token each, attending to `context` keys
};

std::string_view NameOf(Phase p);

/// Which phases to analyze.
enum class PhaseSelection { kPrefill, kDecode, kBoth };

/// How DeepSeek-style multi-head latent attention is evaluated.
enum class MlaForm {
  kAuto,      ///< naive (up-projected K/V) in prefill, absorbed in decode (as serving engines do)
  kNaive,     ///< always up-project K and V per head (HF transformers' implementation)
  kAbsorbed,  ///< always attend over the latent with the up-projections folded into q and o
};

/// Which of a layer's linear layers that read the same input run as one matmul (the weights
/// concatenated along N), as serving engines load them: vLLM's QKVParallelLinear and
/// MergedColumnParallelLinear, TGI's and TensorRT-LLM's fused QKV and gate-up projections.
/// A config whose checkpoint already holds them fused (Phi-3, GPT-2) is built fused whatever this
/// says.
enum class LinearMerge {
  kAuto,    ///< both under --fusion fused, none under eager
  kNone,    ///< q, k, v and gate, up as separate matmuls (PyTorch eager, llama.cpp)
  kQkv,     ///< one q-k-v matmul; gate and up separate (gpt-fast's wqkv, w1 and w3)
  kGateUp,  ///< one gate-up matmul; q, k, v separate
  kBoth,    ///< one q-k-v matmul and one gate-up matmul
};
/// The names of LinearMerge's values, in its order (`--fused-linears`, engine files).
inline constexpr std::string_view kLinearMergeNames[] = {"auto", "none", "qkv", "gate-up",
                                                         "qkv,gate-up"};
/// The value named `text`, or none.
std::optional<LinearMerge> ParseLinearMerge(std::string_view text);

/// Workload knobs. Defaults are what `roofline model` uses.
struct Workload {
  int64_t batch = 1;                  ///< sequences per step
  int64_t prompt = 2048;              ///< prefill: prompt tokens per sequence
  int64_t context = 0;                ///< decode: keys each new token attends to; 0 means `prompt`
  std::optional<DType> dtype;         ///< activations; default: the config's torch_dtype
  std::optional<DType> weight_dtype;  ///< decoder linear weights; default: `dtype`
  /// The output layer (lm_head) in `weight_dtype` too, as quantizers that replace every linear
  /// layer leave it (gpt-fast's, torchao's `quantize_`); by default it stays in `dtype`.
  bool quantize_lm_head = false;
  int64_t group_size = 128;  ///< scale group for 4-bit weights (8-bit: one scale per column)
  /// Quantized weights: a zero point beside each scale (MatmulSpec::zero_dtype); none: symmetric.
  std::optional<DType> zero_dtype;
  std::optional<DType> kv_dtype;  ///< KV cache; default: `dtype`
  int64_t tp = 1;                 ///< tensor-parallel degree (weights and heads split)
  /// Pipeline stages (layers split over chips in sequence). 0: one, or, on a device with a
  /// model split (SRAM-only chips), the fewest that hold the model (ResolveStages).
  int64_t pp = 0;
  AttentionImpl attention = AttentionImpl::kFlash;
  FusionMode fusion = FusionMode::kEager;
  LinearMerge fused_linears = LinearMerge::kAuto;
  bool all_logits = false;  ///< prefill computes logits for every position, not the last
  MlaForm mla = MlaForm::kAuto;
  /// The fraction of each device's memory the engine may fill with weights, KV cache and
  /// workspace (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static); 1: all of it.
  double memory_fraction = 1;
  /// A decode step with prefill riding along (continuous batching with chunked prefill, as
  /// serving engines run it): besides the `batch` decode rows, `chunk_seqs` sequences each
  /// prefill `chunk` prompt tokens, the ones after their first `chunk_offset` (already cached).
  /// 0: a plain decode step. Prefill steps ignore it.
  int64_t chunk = 0;
  int64_t chunk_seqs = 1;
  int64_t chunk_offset = 0;

  /// Whether q, k, v (gate, up) run as one matmul: `fused_linears`, resolved by `fusion`.
  bool MergesQkv() const {
    return fused_linears == LinearMerge::kQkv || fused_linears == LinearMerge::kBoth ||
           (fused_linears == LinearMerge::kAuto && fusion == FusionMode::kFused);
  }
  bool MergesGateUp() const {
    return fused_linears == LinearMerge::kGateUp || fused_linears == LinearMerge::kBoth ||
           (fused_linears == LinearMerge::kAuto && fusion == FusionMode::kFused);
  }

  int64_t DecodeContext() const { return context > 0 ? context : prompt; }
  /// Pipeline stages as set (0 counts as one).
  int64_t Stages() const { return pp > 0 ? pp : 1; }
  /// Chips per model replica: tensor-parallel degree times pipeline stages.
  int64_t Chips() const { return tp * Stages(); }

  friend bool operator==(const Workload&, const Workload&) = default;
};

/// Checks the knobs on their own (positive sizes, sane ranges). Fields are named as flags.
Status Validate(const Workload& w);

}  // namespace roofline

#endif  // ROOFLINE_WORKLOAD_H_
