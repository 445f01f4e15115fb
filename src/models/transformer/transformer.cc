// HuggingFace config.json -> TransformerConfig, one dialect per architecture family.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "roofline/suggest.h"
#include "roofline/transformer.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

using nlohmann::json;

/// Reads fields with the config's file name and the key in every error.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}

  bool Has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  int64_t Int(const std::string& key) const {
    if (!Has(key)) throw JsonFieldError(key, "missing (required for this architecture)");
    return IntValue(key);
  }
  int64_t Int(const std::string& key, int64_t fallback) const {
    return Has(key) ? IntValue(key) : fallback;
  }
  /// A non-negative integer that may be 0.
  int64_t Count(const std::string& key, int64_t fallback) const {
    if (!Has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kLimit) {
      throw JsonFieldError(key, "expected an integer >= 0, got " + v.dump());
    }
    return v.get<int64_t>();
  }
  double Number(const std::string& key, double fallback) const {
    if (!Has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) throw JsonFieldError(key, "expected a number, got " + v.dump());
    return v.get<double>();
  }
  bool Bool(const std::string& key, bool fallback) const {
    if (!Has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) throw JsonFieldError(key, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string String(const std::string& key, const std::string& fallback) const {
    if (!Has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) throw JsonFieldError(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  const json& Raw(const std::string& key) const { return j_.at(key); }

 private:
  static constexpr int64_t kLimit = int64_t{1} << 40;
  int64_t IntValue(const std::string& key) const {
    const json& v = j_.at(key);
    if (!v.is_number_integer()) {
      throw JsonFieldError(key, "expected a positive integer, got " + v.dump());
    }
    const int64_t x = v.get<int64_t>();
    if (x < 1 || x > kLimit) {
      throw JsonFieldError(key,
                           fmt::format("expected a positive integer (at most 2^40), got {}", x));
    }
    return x;
  }
  const json& j_;
};

DType TorchDType(const Fields& f) {
  const std::string t = f.String("torch_dtype", f.String("dtype", "bfloat16"));
  if (t == "bfloat16") return DType::kBf16;
  if (t == "float16") return DType::kFp16;
  if (t == "float32") return DType::kFp32;
  throw JsonFieldError("torch_dtype",
                       "unknown torch_dtype '" + t + "' (expected bfloat16, float16 or float32)");
}

/// hidden / heads, which must divide exactly (`field` names the heads key in the error).
int64_t HeadDimOf(int64_t hidden, int64_t heads, const std::string& field,
                  const std::string& hidden_field) {
  if (hidden % heads != 0) {
    throw JsonFieldError(field,
                         fmt::format("{} heads do not divide {} {}", heads, hidden_field, hidden));
  }
  return hidden / heads;
}

/// Fields every Llama-like family shares.
void ReadCommon(const Fields& f, TransformerConfig& c, bool tie_default) {
  c.hidden = f.Int("hidden_size");
  c.layers = f.Int("num_hidden_layers");
  c.heads = f.Int("num_attention_heads");
  c.kv_heads = f.Int("num_key_value_heads", c.heads);
  if (f.Has("head_dim")) {
    c.head_dim = f.Int("head_dim");
  } else {
    c.head_dim =
        HeadDimOf(c.hidden, c.heads, "num_attention_heads", "hidden_size (and no head_dim)");
  }
  c.intermediate = f.Int("intermediate_size");
  c.vocab = f.Int("vocab_size");
  c.max_positions = f.Int("max_position_embeddings", 0);
  c.tie_embeddings = f.Bool("tie_word_embeddings", tie_default);
  c.activation = f.String("hidden_act", "silu");
  c.qkv_bias = f.Bool("attention_bias", false);
  c.o_bias = c.qkv_bias;
  c.mlp_bias = f.Bool("mlp_bias", false);
  c.rotary_fraction = f.Number("partial_rotary_factor", 1.0);
  c.torch_dtype = TorchDType(f);
}

/// Per-layer attention windows: `layer_types` when present, else the family's rule.
void ReadWindows(const Fields& f, TransformerConfig& c,
                 const std::function<bool(int64_t)>& sliding_rule) {
  c.layer_kinds.assign(c.layers, LayerKind{});
  const int64_t window = f.Has("sliding_window") ? f.Int("sliding_window") : 0;
  if (f.Has("layer_types")) {
    const json& types = f.Raw("layer_types");
    if (!types.is_array() || static_cast<int64_t>(types.size()) != c.layers) {
      throw JsonFieldError("layer_types", fmt::format("expected an array of {} entries "
                                                      "(num_hidden_layers)",
                                                      c.layers));
    }
    for (int64_t i = 0; i < c.layers; ++i) {
      const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
      if (t == "sliding_attention") {
        if (window == 0)
          throw JsonFieldError("sliding_window", "missing for sliding_attention layers");
        c.layer_kinds[i].window = window;
      } else if (t != "full_attention") {
        throw JsonFieldError(
            fmt::format("layer_types[{}]", i),
            "expected \"full_attention\" or \"sliding_attention\", got " + types[i].dump());
      }
    }
    return;
  }
  if (window == 0) return;
  for (int64_t i = 0; i < c.layers; ++i) {
    if (sliding_rule(i)) c.layer_kinds[i].window = window;
  }
}

void Check(const TransformerConfig& c) {
  if (c.heads % c.kv_heads != 0) {
    throw JsonFieldError(
        "num_key_value_heads",
        fmt::format("{} key/value heads do not divide {} attention heads", c.kv_heads, c.heads));
  }
  if (c.experts > 0 && (c.experts_per_token < 1 || c.experts_per_token > c.experts)) {
    throw JsonFieldError("num_experts_per_tok",
                         fmt::format("top-k must be between 1 and the {} experts, got {}",
                                     c.experts, c.experts_per_token));
  }
  if (c.rotary_fraction < 0 || c.rotary_fraction > 1) {
    throw JsonFieldError("partial_rotary_factor", "expected a fraction between 0 and 1");
  }
}

TransformerConfig Llama(const Fields& f) {
  TransformerConfig c;
  ReadCommon(f, c, false);
  ReadWindows(f, c, [](int64_t) { return false; });
  return c;
}

TransformerConfig Mistral(const Fields& f) {
  TransformerConfig c;
  ReadCommon(f, c, false);
  ReadWindows(f, c, [](int64_t) { return true; });  // every layer when sliding_window is set
  return c;
}

/// Qwen2 / Qwen3: sliding windows only with use_sliding_window, from layer max_window_layers on.
void QwenWindows(const Fields& f, TransformerConfig& c) {
  const bool use = f.Bool("use_sliding_window", false);
  const int64_t from = f.Count("max_window_layers", c.layers);
  if (!use && !f.Has("layer_types")) {
    c.layer_kinds.assign(c.layers, LayerKind{});
    return;
  }
  ReadWindows(f, c, [from](int64_t i) { return i >= from; });
}

TransformerConfig Qwen2(const Fields& f) {
  TransformerConfig c;
  ReadCommon(f, c, false);
  c.qkv_bias = true;  // Qwen2 projects q, k, v with a bias and o without
  c.o_bias = false;
  QwenWindows(f, c);
  return c;
}

TransformerConfig Qwen3(const Fields& f) {
  TransformerConfig c;
  ReadCommon(f, c, false);
  c.qk_norm = true;
  QwenWindows(f, c);
  return c;
}

TransformerConfig Gemma(const Fields& f, bool gemma3) {
  TransformerConfig c;
  ReadCommon(f, c, true);
  c.activation = f.String("hidden_activation", f.String("hidden_act", "gelu_pytorch_tanh"));
  c.sandwich_norms = true;
  c.scaled_embedding = true;
  c.qk_norm = gemma3;
  c.logit_softcap = f.Has("final_logit_softcapping");
  if (gemma3) {
    const int64_t pattern = f.Int("sliding_window_pattern", 6);
    ReadWindows(f, c, [pattern](int64_t i) { return (i + 1) % pattern != 0; });
  } else {
    ReadWindows(f, c, [](int64_t i) { return i % 2 == 0; });
  }
  return c;
}

TransformerConfig Phi3(const Fields& f) {
  TransformerConfig c;
  ReadCommon(f, c, false);
  c.fused_qkv = true;
  c.fused_gate_up = true;
  ReadWindows(f, c, [](int64_t) { return true; });
  return c;
}

TransformerConfig Mixtral(const Fields& f) {
  TransformerConfig c = Mistral(f);
  c.experts = f.Int("num_local_experts");
  c.experts_per_token = f.Int("num_experts_per_tok");
  c.expert_intermediate = c.intermediate;
  for (auto& k : c.layer_kinds) k.moe = true;
  c.names.gate = "w1";
  c.names.up = "w3";
  c.names.down = "w2";
  return c;
}

TransformerConfig QwenMoe(const Fields& f, bool qwen3) {
  TransformerConfig c = qwen3 ? Qwen3(f) : Qwen2(f);
  c.experts = f.Int("num_experts");
  c.experts_per_token = f.Int("num_experts_per_tok");
  c.expert_intermediate = f.Int("moe_intermediate_size");
  if (!qwen3) {
    c.shared_intermediate = f.Count("shared_expert_intermediate_size", 0);
    c.shared_expert_gate = c.shared_intermediate > 0;
  }
  const int64_t step = f.Int("decoder_sparse_step", 1);
  std::vector<int64_t> mlp_only;
  if (f.Has("mlp_only_layers")) {
    const json& v = f.Raw("mlp_only_layers");
    if (!v.is_array())
      throw JsonFieldError("mlp_only_layers", "expected an array of layer indices");
    for (const auto& x : v) {
      if (!x.is_number_integer()) throw JsonFieldError("mlp_only_layers", "expected integers");
      mlp_only.push_back(x.get<int64_t>());
    }
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    const bool only_mlp = std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end();
    c.layer_kinds[i].moe = !only_mlp && (i + 1) % step == 0;
  }
  return c;
}

TransformerConfig DeepseekV3(const Fields& f) {
  TransformerConfig c;
  ReadCommon(f, c, false);
  c.mla = true;
  c.q_lora_rank = f.Count("q_lora_rank", 0);
  c.kv_lora_rank = f.Int("kv_lora_rank");
  c.qk_nope_dim = f.Int("qk_nope_head_dim");
  c.qk_rope_dim = f.Int("qk_rope_head_dim");
  c.v_head_dim = f.Int("v_head_dim");
  c.head_dim = c.qk_nope_dim + c.qk_rope_dim;
  c.kv_heads = c.heads;  // after the up-projection every head has its own K and V
  c.experts = f.Int("n_routed_experts");
  c.experts_per_token = f.Int("num_experts_per_tok");
  c.expert_intermediate = f.Int("moe_intermediate_size");
  c.shared_intermediate = f.Count("n_shared_experts", 0) * c.expert_intermediate;
  const int64_t first_dense = f.Count("first_k_dense_replace", 0);
  const int64_t freq = f.Int("moe_layer_freq", 1);
  c.layer_kinds.assign(c.layers, LayerKind{});
  for (int64_t i = 0; i < c.layers; ++i) c.layer_kinds[i].moe = i >= first_dense && i % freq == 0;
  c.names.shared = "shared_experts";
  return c;
}

TransformerConfig Gpt2(const Fields& f) {
  TransformerConfig c;
  c.hidden = f.Int("n_embd");
  c.layers = f.Int("n_layer");
  c.heads = f.Int("n_head");
  c.kv_heads = c.heads;
  c.head_dim = HeadDimOf(c.hidden, c.heads, "n_head", "n_embd");
  c.intermediate = f.Int("n_inner", 4 * c.hidden);
  c.vocab = f.Int("vocab_size");
  c.max_positions = f.Int("n_positions", 0);
  c.layer_norm = true;
  c.gated_mlp = false;
  c.activation = f.String("activation_function", "gelu_new");
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.fused_qkv = true;
  c.learned_positions = true;
  c.rotary_fraction = 0;
  c.tie_embeddings = f.Bool("tie_word_embeddings", true);
  c.torch_dtype = (f.Has("torch_dtype") || f.Has("dtype")) ? TorchDType(f) : DType::kFp32;
  c.layer_kinds.assign(c.layers, LayerKind{});
  ModuleNames& n = c.names;
  n.embed = "wte";
  n.qkv = "attn.c_attn";
  n.o = "attn.c_proj";
  n.up = "mlp.c_fc";
  n.down = "mlp.c_proj";
  n.input_norm = "ln_1";
  n.post_attn_norm = "ln_2";
  n.final_norm = "ln_f";
  return c;
}

TransformerConfig GptNeoX(const Fields& f) {
  TransformerConfig c;
  c.hidden = f.Int("hidden_size");
  c.layers = f.Int("num_hidden_layers");
  c.heads = f.Int("num_attention_heads");
  c.kv_heads = c.heads;
  c.head_dim = HeadDimOf(c.hidden, c.heads, "num_attention_heads", "hidden_size");
  c.intermediate = f.Int("intermediate_size");
  c.vocab = f.Int("vocab_size");
  c.max_positions = f.Int("max_position_embeddings", 0);
  c.layer_norm = true;
  c.gated_mlp = false;
  c.activation = f.String("hidden_act", "gelu");
  c.qkv_bias = c.o_bias = f.Bool("attention_bias", true);
  c.mlp_bias = true;
  c.fused_qkv = true;
  c.rotary_fraction = f.Number("rotary_pct", 0.25);
  c.parallel_residual = f.Bool("use_parallel_residual", true);
  c.tie_embeddings = f.Bool("tie_word_embeddings", false);
  c.torch_dtype = TorchDType(f);
  c.layer_kinds.assign(c.layers, LayerKind{});
  ModuleNames& n = c.names;
  n.embed = "embed_in";
  n.qkv = "attention.query_key_value";
  n.o = "attention.dense";
  n.up = "mlp.dense_h_to_4h";
  n.down = "mlp.dense_4h_to_h";
  n.final_norm = "final_layer_norm";
  n.lm_head = "embed_out";
  return c;
}

using Reader = std::function<TransformerConfig(const Fields&)>;

const std::map<std::string, Reader>& Readers() {
  static const std::map<std::string, Reader> kReaders = {
      {"LlamaForCausalLM", Llama},
      {"MistralForCausalLM", Mistral},
      {"Qwen2ForCausalLM", Qwen2},
      {"Qwen3ForCausalLM", Qwen3},
      {"Gemma2ForCausalLM", [](const Fields& f) { return Gemma(f, false); }},
      {"Gemma3ForCausalLM", [](const Fields& f) { return Gemma(f, true); }},
      {"Phi3ForCausalLM", Phi3},
      {"MixtralForCausalLM", Mixtral},
      {"Qwen2MoeForCausalLM", [](const Fields& f) { return QwenMoe(f, false); }},
      {"Qwen3MoeForCausalLM", [](const Fields& f) { return QwenMoe(f, true); }},
      {"DeepseekV3ForCausalLM", DeepseekV3},
      {"GPT2LMHeadModel", Gpt2},
      {"GPTNeoXForCausalLM", GptNeoX},
  };
  return kReaders;
}

}  // namespace

std::string SupportedArchitectures() {
  std::string out;
  for (const auto& [name, reader] : Readers()) {
    (void)reader;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

Result<TransformerConfig> ParseHfConfig(std::string_view json_text, const std::string& origin) {
  Result<json> parsed = ParseJsonText(json_text, origin);
  if (!parsed.ok()) return parsed.status();
  const json& j = *parsed;
  if (!j.is_object()) return Status::Invalid(origin, "expected a JSON object (a config.json)");
  std::string arch;
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string()) {
    arch = j["architectures"][0].get<std::string>();
  } else {
    return Status::Invalid(origin + ": architectures",
                           "missing (expected e.g. [\"LlamaForCausalLM\"]; supported: " +
                               SupportedArchitectures() + ")");
  }
  const auto& readers = Readers();
  const auto it = readers.find(arch);
  if (it == readers.end()) {
    std::vector<std::string> names;
    for (const auto& [name, r] : readers) {
      (void)r;
      names.push_back(name);
    }
    return Status::Unsupported(origin + ": architectures",
                               "unsupported architecture '" + arch + "'" + DidYouMean(arch, names) +
                                   " (supported: " + SupportedArchitectures() + ")");
  }
  try {
    const Fields f(j);
    TransformerConfig c = it->second(f);
    c.architecture = arch;
    c.model_type = f.String("model_type", "");
    c.origin = origin;
    if (static_cast<int64_t>(c.layer_kinds.size()) != c.layers) c.layer_kinds.resize(c.layers);
    Check(c);
    return c;
  } catch (const JsonFieldError& e) {
    return Status::Invalid(origin + ": " + e.field(), e.what());
  }
}

}  // namespace roofline
