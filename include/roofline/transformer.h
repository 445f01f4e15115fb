// Decoder-only transformer LLMs: a normalized structure read from a HuggingFace config.json.
#ifndef ROOFLINE_TRANSFORMER_H_
#define ROOFLINE_TRANSFORMER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/dtype.h"
#include "roofline/status.h"

namespace roofline {

/// What one decoder layer does differently from its neighbours.
struct LayerKind {
  int64_t window = 0;  ///< sliding-window size in keys; 0 = full (global) attention
  bool moe = false;    ///< routed-expert MLP instead of a dense one

  bool operator==(const LayerKind& o) const { return window == o.window && moe == o.moe; }
};

/// HF module names of the parts of a layer (they differ between families).
struct ModuleNames {
  std::string embed = "embed_tokens";
  std::string q = "q_proj", k = "k_proj", v = "v_proj", o = "o_proj";
  std::string qkv = "qkv_proj";  ///< when the projection is fused
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
  std::string gate_up = "gate_up_proj";  ///< when gate and up are fused
  std::string input_norm = "input_layernorm";
  std::string post_attn_norm = "post_attention_layernorm";
  std::string final_norm = "norm";
  std::string lm_head = "lm_head";
  std::string router = "gate";
  std::string experts = "experts";
  std::string shared = "shared_expert";  ///< "shared_experts" in DeepSeek
};

/// The structure of a decoder-only transformer, independent of the config dialect it came from.
struct TransformerConfig {
  std::string architecture;  ///< "LlamaForCausalLM", ...
  std::string model_type;    ///< "llama", ...
  std::string origin;        ///< file it was read from

  int64_t hidden = 0;  ///< d_model
  int64_t layers = 0;
  int64_t heads = 0;         ///< query heads
  int64_t kv_heads = 0;      ///< key/value heads (GQA/MQA)
  int64_t head_dim = 0;      ///< per head, for Q and K (and V unless v_head_dim is set)
  int64_t intermediate = 0;  ///< dense MLP width
  int64_t vocab = 0;
  int64_t max_positions = 0;  ///< 0 when not stated

  bool layer_norm = false;  ///< LayerNorm (with bias) instead of RMSNorm
  bool gated_mlp = true;    ///< act(gate) * up (SwiGLU/GeGLU) vs act(fc)
  std::string activation = "silu";
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;            ///< RMSNorm of q and k per head (Qwen3, Gemma3)
  bool fused_qkv = false;          ///< one projection for q, k, v (Phi-3, GPT-2, GPT-NeoX)
  bool fused_gate_up = false;      ///< one projection for gate and up (Phi-3)
  bool learned_positions = false;  ///< position embedding table (GPT-2)
  double rotary_fraction = 1.0;    ///< share of head_dim rotated by RoPE (0 without RoPE)
  bool tie_embeddings = false;
  bool parallel_residual = false;  ///< attention and MLP read the same input (GPT-NeoX)
  bool sandwich_norms = false;     ///< extra post-attention and pre/post-MLP norms (Gemma 2/3)
  bool scaled_embedding = false;   ///< embeddings multiplied by sqrt(hidden) (Gemma)
  bool logit_softcap = false;      ///< tanh soft-capping of the final logits (Gemma 2)
  DType torch_dtype = DType::kBf16;

  std::vector<LayerKind> layer_kinds;  ///< one per layer

  // Mixture of experts.
  int64_t experts = 0;              ///< routed experts (0: dense model)
  int64_t experts_per_token = 0;    ///< top-k
  int64_t expert_intermediate = 0;  ///< width of one routed expert
  int64_t shared_intermediate = 0;  ///< total width of the shared expert(s), 0 if none
  bool shared_expert_gate = false;  ///< sigmoid gate on the shared expert (Qwen2-MoE)

  // Multi-head latent attention (DeepSeek-V2/V3).
  bool mla = false;
  int64_t q_lora_rank = 0;  ///< 0: q is projected directly
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_dim = 0;
  int64_t qk_rope_dim = 0;
  int64_t v_head_dim = 0;

  ModuleNames names;
};

/// Architectures ParseHfConfig understands, comma separated.
std::string SupportedArchitectures();

/// Reads a HuggingFace config.json (text). Unknown architectures, missing or inconsistent fields
/// are errors naming `origin` and the field.
Result<TransformerConfig> ParseHfConfig(std::string_view json_text, const std::string& origin);

/// Parameter counts: every weight, and those a single token uses (routed experts: top-k of them).
struct ParameterCount {
  double total = 0;
  double active = 0;
};

}  // namespace roofline

#endif  // ROOFLINE_TRANSFORMER_H_
