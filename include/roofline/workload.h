// What is being run: phase, batch, lengths, dtypes, parallelism, kernel implementations.
#ifndef ROOFLINE_WORKLOAD_H_
#define ROOFLINE_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>

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
  bool all_logits = false;  ///< prefill computes logits for every position, not the last
  MlaForm mla = MlaForm::kAuto;
  /// The fraction of each device's memory the engine may fill with weights, KV cache and
  /// workspace (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static); 1: all of it.
  double memory_fraction = 1;

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
