// Step graphs of decoder-only transformers (prefill and decode), per device.
#include "roofline/llm.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "roofline/units.h"

namespace roofline {
namespace {

double ActFlops(const std::string& act) {
  if (act == "relu") return 1;
  if (act.rfind("gelu", 0) == 0) return 8;  // tanh or erf approximation
  return 4;                                 // silu / swish: x / (1 + exp(-x))
}

/// Builds the ops of one step into a graph. Every helper returns the op index.
class Builder {
 public:
  Builder(const TransformerConfig& c, const Workload& w, Phase phase, LlmGraph& out)
      : c_(c), w_(w), phase_(phase), out_(out), g_(out.graph) {}

  Status Build();

 private:
  /// Throws nothing: errors are collected in status_ and later calls become no-ops.
  int Add(const std::string& name, OpSpec spec, std::initializer_list<int> inputs = {}) {
    return AddSpan(name, std::move(spec), std::span<const int>(inputs.begin(), inputs.size()));
  }
  int AddSpan(const std::string& name, OpSpec spec, std::span<const int> inputs) {
    if (!status_.ok()) return -1;
    Result<int> r = g_.AddOp(name, std::move(spec), inputs, repeat_, group_);
    if (!r.ok()) {
      status_ = r.status();
      return -1;
    }
    return *r;
  }
  int Out(int op) const { return op < 0 ? Graph::kNew : g_.OutputOf(op); }

  int Linear(const std::string& name, int input_op, int64_t m, int64_t k, int64_t n, bool bias,
             bool quantizable = true, DType out = DType::kBf16, bool out_set = false) {
    MatmulSpec s = WeightMatmul(m, k, n);
    if (!quantizable) {
      s.b_dtype = act_;
      s.group_size = 0;
      s.zero_dtype.reset();
    }
    if (out_set) s.out_dtype = out;
    s.bias = bias;
    return Add(name, s, {Out(input_op)});
  }
  int Norm(const std::string& name, int input_op, int64_t rows, int64_t cols) {
    NormSpec s;
    s.rows = rows;
    s.cols = cols;
    s.kind = c_.layer_norm ? NormKind::kLayer : NormKind::kRms;
    s.dtype = act_;
    return Add(name, s, {Out(input_op)});
  }
  int Elementwise(const std::string& name, std::initializer_list<int> input_ops, double elements,
                  double flops, int fresh_inputs = 0) {
    ElementwiseSpec s;
    s.elements = elements;
    s.inputs = static_cast<int>(input_ops.size()) + fresh_inputs;
    s.flops_per_element = flops;
    s.dtype = act_;
    s.function = name;
    std::array<int, 16> ids{};
    size_t n = 0;
    for (int op : input_ops) ids[n++] = Out(op);
    return AddSpan(name, s, std::span<const int>(ids.data(), n));
  }
  void AllReduce(const std::string& name) {
    if (w_.tp <= 1) return;
    CollectiveSpec s;
    s.kind = CollectiveKind::kAllReduce;
    s.message_bytes = static_cast<double>(tokens_) * static_cast<double>(c_.hidden) * BytesOf(act_);
    s.devices = w_.tp;
    s.dtype = act_;
    Add(name, s);
  }

  /// Decode: a sliding-window layer's cache keeps only the last `window` keys (as HF's and
  /// serving engines' caches do), so the new token attends min(context, window) keys.
  void LimitToWindow(AttentionSpec& a) const {
    if (phase_ == Phase::kDecode && a.window > 0 && a.kv_len > a.window) a.kv_len = a.window;
  }
  /// The step's attention shape (heads per device, lengths, window, dtypes); callers adjust the
  /// head dims.
  AttentionSpec StepAttention() const {
    AttentionSpec a;
    a.batch = batch_;
    a.heads = heads_;
    a.kv_heads = kv_heads_;
    a.q_len = q_len_;
    a.kv_len = kv_len_;
    a.causal = true;
    a.window = kind_.window;
    a.dtype = act_;
    a.kv_dtype = kv_;
    LimitToWindow(a);
    return a;
  }
  /// A mixed step's prefill chunks: `a` (the decode rows' attention) for the chunk's queries,
  /// each of which sees the cached prefix and the chunk up to itself.
  AttentionSpec ChunkAttention(AttentionSpec a) const {
    a.batch = w_.chunk_seqs;
    a.q_len = w_.chunk;
    a.kv_len = w_.chunk_offset + w_.chunk;
    return a;
  }
  /// Appends attention in the workload's implementation; returns the op producing its output.
  /// In a mixed step the prefill chunks' attention follows as a kernel of its own, and the
  /// output projection reads the rows of both (a fresh tensor: -1).
  int AttentionWithChunks(const AttentionSpec& a) {
    const int att = AttentionOps(a);
    if (!mixed_) return att;
    AttentionOps(ChunkAttention(a));
    return -1;
  }
  int AttentionOps(const AttentionSpec& a) {
    if (!status_.ok()) return -1;
    Result<int> att = AppendAttention(g_, a, w_.attention, "", Graph::kNew, Graph::kNew,
                                      Graph::kNew, repeat_, group_);
    if (!att.ok()) {
      status_ = att.status();
      return -1;
    }
    return *att;
  }
  /// A matmul whose B is a decoder weight in the weight dtype (4-bit: grouped scales).
  MatmulSpec WeightMatmul(int64_t m, int64_t k, int64_t n) const {
    MatmulSpec s;
    s.m = m;
    s.k = k;
    s.n = n;
    s.a_dtype = s.out_dtype = act_;
    s.b_dtype = wdt_;
    s.group_size = (BitsOf(wdt_) == 4 && k % w_.group_size == 0) ? w_.group_size : 0;
    // Zero points belong to integer formats (GPTQ, AWQ, tinygemm); float8/float4 have none.
    if (BitsOf(wdt_) < BitsOf(act_) && IsInteger(wdt_)) {
      s.zero_dtype = w_.zero_dtype;
    }
    return s;
  }
  int Attention(int x_norm);
  int MlaAttention(int x_norm);
  int DenseMlp(int x_norm, int64_t width, const std::string& prefix);
  int MoeMlp(int x_norm);
  void Layer(const LayerKind& kind);
  void Embed();
  void Head();

  const TransformerConfig& c_;
  const Workload& w_;
  Phase phase_;
  LlmGraph& out_;
  Graph& g_;
  Status status_;
  DType act_ = DType::kBf16, wdt_ = DType::kBf16, kv_ = DType::kBf16;
  int64_t batch_ = 1, q_len_ = 1, kv_len_ = 1, tokens_ = 1;
  int64_t heads_ = 1, kv_heads_ = 1;  // per device
  int64_t repeat_ = 1;
  std::string group_;
  LayerKind kind_;
  bool absorbed_ = false;
  bool mixed_ = false;  ///< a decode step with prefill chunks (Workload::chunk)
  int embed_ = -1;
};

int Builder::Attention(int xn) {
  const int64_t d = c_.head_dim;
  const int64_t t = tokens_;
  int q = -1, k = -1;
  const bool merged = c_.fused_qkv || w_.MergesQkv();
  if (merged) {
    Linear(c_.names.qkv, xn, t, c_.hidden, (heads_ + 2 * kv_heads_) * d, c_.qkv_bias);
  } else {
    q = Linear(c_.names.q, xn, t, c_.hidden, heads_ * d, c_.qkv_bias);
    k = Linear(c_.names.k, xn, t, c_.hidden, kv_heads_ * d, c_.qkv_bias, true, kv_, true);
    Linear(c_.names.v, xn, t, c_.hidden, kv_heads_ * d, c_.qkv_bias, true, kv_, true);
  }
  if (c_.qk_norm) {
    Norm("q_norm", q, t * heads_, d);
    NormSpec s;
    s.rows = t * kv_heads_;
    s.cols = d;
    // Apart, k_proj writes the KV dtype its norm reads; a merged product writes the activations'.
    s.dtype = merged ? act_ : kv_;
    Add("k_norm", s, {Out(k)});
  }
  if (c_.rotary_fraction > 0) {
    Elementwise("rope", {}, static_cast<double>(t * (heads_ + kv_heads_) * d) * c_.rotary_fraction,
                3, 1);
  }
  AttentionSpec a = StepAttention();
  a.head_dim = d;
  const int att = AttentionWithChunks(a);
  return Linear(c_.names.o, att, t, heads_ * d, c_.hidden, c_.o_bias);
}

int Builder::MlaAttention(int xn) {
  const int64_t t = tokens_;
  const int64_t qk = c_.qk_nope_dim + c_.qk_rope_dim;
  if (c_.q_lora_rank > 0) {
    const int qa = Linear("q_a_proj", xn, t, c_.hidden, c_.q_lora_rank, false);
    const int qn = Norm("q_a_layernorm", qa, t, c_.q_lora_rank);
    Linear("q_b_proj", qn, t, c_.q_lora_rank, heads_ * qk, false);
  } else {
    Linear("q_proj", xn, t, c_.hidden, heads_ * qk, false);
  }
  // The latent c_kv and the shared rope key; this is what the KV cache stores.
  Linear("kv_a_proj_with_mqa", xn, t, c_.hidden, c_.kv_lora_rank + c_.qk_rope_dim, false, true, kv_,
         true);
  NormSpec kn;
  kn.rows = t;
  kn.cols = c_.kv_lora_rank;
  kn.dtype = kv_;
  Add("kv_a_layernorm", kn);
  Elementwise("rope", {}, static_cast<double>(t * (heads_ + 1) * c_.qk_rope_dim), 3, 1);
  AttentionSpec a = StepAttention();
  if (!absorbed_) {
    // The cache holds the latent: every step up-projects all cached positions to per-head K, V.
    const int64_t cached =
        batch_ * a.kv_len + (mixed_ ? w_.chunk_seqs * (w_.chunk_offset + w_.chunk) : 0);
    MatmulSpec up =
        WeightMatmul(cached, c_.kv_lora_rank, heads_ * (c_.qk_nope_dim + c_.v_head_dim));
    up.a_dtype = kv_;  // the cached latent, in the KV dtype
    Add("kv_b_proj", up);
    a.kv_heads = heads_;
    a.head_dim = qk;
    a.v_head_dim = c_.v_head_dim;
    a.kv_dtype = act_;
    const int att = AttentionWithChunks(a);
    return Linear(c_.names.o, att, t, heads_ * c_.v_head_dim, c_.hidden, false);
  }
  // Absorbed: q_nope . W_UK per head, attention over the latent (V is the latent too), then
  // W_UV per head. In a mixed step under --mla auto only the decode rows absorb: the prompt
  // chunks run naive, as engines run prefill (their cached latent up-projected to per-head K
  // and V); under --mla absorbed they absorb too.
  const bool naive_chunks = mixed_ && w_.mla == MlaForm::kAuto;
  const int64_t absorbing = naive_chunks ? batch_ : t;
  MatmulSpec uk = WeightMatmul(absorbing, c_.qk_nope_dim, c_.kv_lora_rank);
  uk.batch = heads_;
  Add("q_absorb (W_UK)", uk);
  AttentionSpec naive = a;
  a.kv_heads = 1;
  a.head_dim = c_.kv_lora_rank + c_.qk_rope_dim;
  a.v_head_dim = c_.kv_lora_rank;
  a.kv_dtype = kv_;
  a.v_in_k = true;
  const int att = naive_chunks ? AttentionOps(a) : AttentionWithChunks(a);
  MatmulSpec uv = WeightMatmul(absorbing, c_.kv_lora_rank, c_.v_head_dim);
  uv.batch = heads_;
  const int o = Add("o_absorb (W_UV)", uv, {Out(att)});
  if (naive_chunks) {
    MatmulSpec up = WeightMatmul(w_.chunk_seqs * (w_.chunk_offset + w_.chunk), c_.kv_lora_rank,
                                 heads_ * (c_.qk_nope_dim + c_.v_head_dim));
    up.a_dtype = kv_;
    Add("kv_b_proj (prefill chunks)", up);
    naive.kv_heads = heads_;
    naive.head_dim = qk;
    naive.v_head_dim = c_.v_head_dim;
    naive.kv_dtype = act_;
    AttentionOps(ChunkAttention(naive));
  }
  // The output projection reads the rows of both (a fresh tensor in a mixed step).
  return Linear(c_.names.o, mixed_ ? -1 : o, t, heads_ * c_.v_head_dim, c_.hidden, false);
}

int Builder::DenseMlp(int xn, int64_t width, const std::string& prefix) {
  const int64_t t = tokens_;
  const int64_t i = width / w_.tp;
  const double af = ActFlops(c_.activation);
  if (!c_.gated_mlp) {
    const int up = Linear(prefix + c_.names.up, xn, t, c_.hidden, i, c_.mlp_bias);
    const int act = Elementwise(prefix + "act", {up}, static_cast<double>(t * i), af);
    return Linear(prefix + c_.names.down, act, t, i, c_.hidden, c_.mlp_bias);
  }
  int mul = -1;
  if (c_.fused_gate_up || w_.MergesGateUp()) {
    const int gate_up = Linear(prefix + c_.names.gate_up, xn, t, c_.hidden, 2 * i, c_.mlp_bias);
    if (w_.fusion == FusionMode::kFused) {
      // One op reads both halves of the merged product and writes the gated activation (vLLM's
      // SiluAndMul, GeluAndMul): a kernel of its own in a fused step too, as the engines that
      // merge the product run it (Fuse), while act and gate_mul fold into gate_proj when the two
      // products are apart.
      ElementwiseSpec s;
      s.elements = static_cast<double>(t * i);
      s.inputs = 1;
      s.input_per_output = 2;
      s.flops_per_element = af + 1;
      s.dtype = act_;
      s.function = c_.activation.rfind("gelu", 0) == 0 ? "act_mul:gelu" : "act_mul";
      mul = Add(prefix + "act_mul", s, {Out(gate_up)});
    } else {
      // Eagerly, the activation of one half and the product with the other (HF's Phi-3 MLP).
      const int act = Elementwise(prefix + "act", {}, static_cast<double>(t * i), af, 1);
      mul = Elementwise(prefix + "gate_mul", {act}, static_cast<double>(t * i), 1, 1);
    }
  } else {
    const int gate = Linear(prefix + c_.names.gate, xn, t, c_.hidden, i, c_.mlp_bias);
    const int up = Linear(prefix + c_.names.up, xn, t, c_.hidden, i, c_.mlp_bias);
    const int act = Elementwise(prefix + "act", {gate}, static_cast<double>(t * i), af);
    mul = Elementwise(prefix + "gate_mul", {act, up}, static_cast<double>(t * i), 1);
  }
  return Linear(prefix + c_.names.down, mul, t, i, c_.hidden, c_.mlp_bias);
}

int Builder::MoeMlp(int xn) {
  const int64_t t = tokens_;
  const int64_t e = c_.experts;
  const int64_t top = c_.experts_per_token;
  const int64_t i = c_.expert_intermediate / w_.tp;
  const int router = Linear(c_.names.router, xn, t, c_.hidden, e, false, false);
  Elementwise("router_topk", {router}, static_cast<double>(t * e), 5);
  const std::string p = c_.names.experts + ".";
  auto expert = [&](const std::string& name, int input_op, int64_t k, int64_t n) {
    MatmulSpec s = WeightMatmul(t * top, k, n);
    s.experts = e;
    s.expert_top_k = top;
    return Add(name, s, {Out(input_op)});
  };
  const double rows = static_cast<double>(t * top * i);
  const int gate = expert(p + c_.names.gate, -1, c_.hidden, i);
  const int up = expert(p + c_.names.up, -1, c_.hidden, i);
  const int act = Elementwise(p + "act", {gate}, rows, ActFlops(c_.activation));
  const int mul = Elementwise(p + "gate_mul", {act, up}, rows, 1);
  expert(p + c_.names.down, mul, i, c_.hidden);
  // Weighted sum of each token's top-k expert outputs.
  int out = Elementwise(p + "combine", {}, static_cast<double>(t * c_.hidden),
                        2.0 * static_cast<double>(top), static_cast<int>(top));
  if (c_.shared_intermediate > 0) {
    const int shared = DenseMlp(xn, c_.shared_intermediate, c_.names.shared + ".");
    int shared_out = shared;
    if (c_.shared_expert_gate) {
      const int sg = Linear("shared_expert_gate", xn, t, c_.hidden, 1, false, false);
      (void)sg;
      shared_out =
          Elementwise("shared_expert_gate_mul", {shared}, static_cast<double>(t * c_.hidden), 2, 0);
    }
    out = Elementwise("moe_add", {out, shared_out}, static_cast<double>(t * c_.hidden), 1);
  }
  return out;
}

void Builder::Layer(const LayerKind& kind) {
  kind_ = kind;
  const int64_t t = tokens_;
  const double th = static_cast<double>(t * c_.hidden);
  // x: the residual stream entering the layer (a fresh tensor per layer group).
  const int xn = Norm(c_.names.input_norm, -1, t, c_.hidden);
  const int x = Graph::kNew;
  (void)x;
  int attn = c_.mla ? MlaAttention(xn) : Attention(xn);
  AllReduce("attn_all_reduce");
  if (c_.sandwich_norms) attn = Norm(c_.names.post_attn_norm, attn, t, c_.hidden);
  int mlp_in = -1;
  int resid = -1;
  if (c_.parallel_residual) {
    mlp_in = Norm(c_.names.post_attn_norm, -1, t, c_.hidden);
  } else {
    resid = Elementwise("attn_residual", {attn}, th, 1, 1);
    mlp_in = Norm(c_.sandwich_norms ? "pre_feedforward_layernorm" : c_.names.post_attn_norm, resid,
                  t, c_.hidden);
  }
  int mlp = kind.moe ? MoeMlp(mlp_in) : DenseMlp(mlp_in, c_.intermediate, "");
  AllReduce("mlp_all_reduce");
  if (c_.sandwich_norms) mlp = Norm("post_feedforward_layernorm", mlp, t, c_.hidden);
  if (c_.parallel_residual) {
    Elementwise("residual", {attn, mlp}, th, 2, 1);
  } else {
    Elementwise("mlp_residual", {resid, mlp}, th, 1);
  }
}

void Builder::Embed() {
  const int64_t t = tokens_;
  repeat_ = 1;
  group_.clear();
  EmbeddingSpec e;
  e.tokens = t;
  e.vocab = c_.vocab / w_.tp;
  e.dim = c_.hidden;
  e.dtype = act_;
  embed_ = Add(c_.names.embed, e);
  // Vocab-parallel: each device holds vocab/tp rows and the partial lookups are summed.
  AllReduce("embed_all_reduce");
  if (c_.learned_positions) {
    EmbeddingSpec p = e;
    p.vocab = std::max<int64_t>(c_.max_positions, 1);
    const int wpe = Add("wpe", p);
    Elementwise("embed_add", {embed_, wpe}, static_cast<double>(t * c_.hidden), 1);
  }
  if (c_.scaled_embedding) {
    Elementwise("embed_scale", {embed_}, static_cast<double>(t * c_.hidden), 1);
  }
}

void Builder::Head() {
  const int64_t t = tokens_;
  const int64_t vocab = c_.vocab / w_.tp;
  repeat_ = 1;
  group_.clear();
  const int norm = Norm(c_.names.final_norm, -1, t, c_.hidden);
  // Prefill samples the last position of each sequence; a mixed step each decode row and the
  // last position of each chunk (sampled when it ends its prompt).
  int64_t logit_rows = (phase_ == Phase::kPrefill && !w_.all_logits) ? batch_ : t;
  if (mixed_ && !w_.all_logits) logit_rows = batch_ + w_.chunk_seqs;
  MatmulSpec lm;
  lm.m = logit_rows;
  lm.k = c_.hidden;
  lm.n = vocab;
  lm.a_dtype = lm.b_dtype = lm.out_dtype = act_;
  if (w_.quantize_lm_head) lm = WeightMatmul(logit_rows, c_.hidden, vocab);
  // A tied head reads the embedding table, unless quantized into a table of its own.
  const int table = (c_.tie_embeddings && lm.b_dtype == act_ && status_.ok() && embed_ >= 0)
                        ? g_.TensorOf(embed_, 1)
                        : Graph::kNew;
  // The head reads the final norm's output directly when it covers the same rows.
  const int input = (logit_rows == t && norm >= 0) ? Out(norm) : Graph::kNew;
  const int head = Add(c_.names.lm_head, lm, {input, table});
  if (c_.logit_softcap) {
    Elementwise("logit_softcap", {head}, static_cast<double>(logit_rows * vocab), 3);
  }
  if (w_.tp > 1) {
    // Vocab-parallel logits are gathered onto every device.
    CollectiveSpec s;
    s.kind = CollectiveKind::kAllGather;
    s.message_bytes =
        static_cast<double>(logit_rows) * static_cast<double>(c_.vocab) * BytesOf(act_);
    s.devices = w_.tp;
    s.dtype = act_;
    Add("logits_all_gather", s);
  }
}

Status Builder::Build() {
  act_ = w_.dtype.value_or(c_.torch_dtype);
  wdt_ = w_.weight_dtype.value_or(act_);
  kv_ = w_.kv_dtype.value_or(act_);
  batch_ = w_.batch;
  if (phase_ == Phase::kPrefill) {
    q_len_ = kv_len_ = w_.prompt;
  } else {
    q_len_ = 1;
    kv_len_ = w_.DecodeContext();
  }
  mixed_ = phase_ == Phase::kDecode && w_.chunk > 0;
  tokens_ = batch_ * q_len_ + (mixed_ ? w_.chunk_seqs * w_.chunk : 0);
  out_.tokens = tokens_;
  out_.layer_groups.clear();  // a replay builds them again
  g_.Reserve(32 * 8, 96 * 8);
  heads_ = c_.heads / w_.tp;
  kv_heads_ = std::max<int64_t>(1, c_.kv_heads / w_.tp);
  absorbed_ = c_.mla && (w_.mla == MlaForm::kAbsorbed ||
                         (w_.mla == MlaForm::kAuto && phase_ == Phase::kDecode));

  // Group layers by kind, in order of first appearance.
  std::vector<std::pair<LayerKind, std::vector<int64_t>>> groups;
  for (int64_t i = 0; i < c_.layers; ++i) {
    const LayerKind& k = c_.layer_kinds[i];
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& gr) { return gr.first == k; });
    if (it == groups.end()) {
      groups.push_back({k, {i}});
    } else {
      it->second.push_back(i);
    }
  }
  const bool windows_vary = std::any_of(groups.begin(), groups.end(), [&](const auto& gr) {
    return gr.first.window != groups.front().first.window;
  });
  const bool moe_varies = std::any_of(groups.begin(), groups.end(), [&](const auto& gr) {
    return gr.first.moe != groups.front().first.moe;
  });
  Embed();
  for (const auto& [kind, indices] : groups) {
    repeat_ = static_cast<int64_t>(indices.size());
    // "layers 3-60 (moe)" when contiguous, else "21 layers (sliding 4096)".
    const bool contiguous = indices.back() - indices.front() + 1 == repeat_;
    std::string what;
    if (moe_varies) what += kind.moe ? "moe" : "dense";
    if (windows_vary) {
      what += std::string(what.empty() ? "" : ", ") +
              (kind.window > 0 ? fmt::format("sliding {}", kind.window) : "global");
    }
    group_ = contiguous ? fmt::format("layers {}-{}", indices.front(), indices.back())
                        : fmt::format("{} layers", repeat_);
    if (!what.empty()) group_ += " (" + what + ")";
    out_.layer_groups.push_back({group_, indices});
    Layer(kind);
  }
  Head();
  if (w_.Stages() > 1) {
    // Pipeline stages: the step's activations cross from each stage to the next once.
    repeat_ = w_.Stages() - 1;
    group_ = kPipelineGroup;
    CollectiveSpec s;
    s.kind = CollectiveKind::kSend;
    s.message_bytes = static_cast<double>(tokens_) * static_cast<double>(c_.hidden) * BytesOf(act_);
    s.devices = 2;
    s.dtype = act_;
    Add("pipeline_send", s);
  }
  return status_;
}

/// The workload's own checks and those against the config (tp must divide the split widths).
Status CheckWorkload(const TransformerConfig& c, const Workload& w) {
  Status s = Validate(w);
  if (!s.ok()) return s;
  if (c.heads % w.tp != 0) {
    return Status::Invalid("--tp", fmt::format("tensor parallelism {} must divide the {} attention "
                                               "heads",
                                               w.tp, c.heads));
  }
  if (c.kv_heads >= w.tp ? c.kv_heads % w.tp != 0 : w.tp % c.kv_heads != 0) {
    return Status::Invalid("--tp", fmt::format("tensor parallelism {} and the {} key/value heads "
                                               "must divide one another",
                                               w.tp, c.kv_heads));
  }
  for (const auto& [width, what] : {std::pair{c.intermediate, "intermediate_size"},
                                    std::pair{c.expert_intermediate, "moe_intermediate_size"},
                                    std::pair{c.shared_intermediate, "shared expert width"},
                                    std::pair{c.vocab, "vocab_size"}}) {
    if (width > 0 && width % w.tp != 0) {
      return Status::Invalid(
          "--tp", fmt::format("tensor parallelism {} must divide {} = {}", w.tp, what, width));
    }
  }
  return Status::Ok();
}

/// What was assumed building the graph.
void AddNotes(const TransformerConfig& c, const Workload& w, Phase phase, LlmGraph& out) {
  out.notes.clear();
  const DType act = w.dtype.value_or(c.torch_dtype);
  if (w.tp > 1) {
    out.notes.push_back(fmt::format(
        "tensor parallel {}: heads, MLP width and vocabulary split; two ring all-reduces of the "
        "activations per layer, one after the vocab-parallel embedding, an all-gather of the "
        "logits; none overlapped with compute",
        w.tp));
    if (c.kv_heads < w.tp) {
      out.notes.push_back(fmt::format("{} key/value heads < tp {}: each device keeps a copy of one",
                                      c.kv_heads, w.tp));
    }
  }
  if (w.Stages() > 1) {
    out.notes.push_back(fmt::format(
        "{} pipeline stages: layers split over chips in sequence; each step's activations cross "
        "{} stage boundaries on the first link; a token's step is the sum of the stages (no "
        "overlap of micro-batches)",
        w.Stages(), w.Stages() - 1));
  }
  if (phase == Phase::kDecode && w.chunk > 0) {
    out.notes.push_back(fmt::format(
        "mixed step (continuous batching): {} decode rows and {} prefill chunk{} of {} tokens "
        "(after {} cached) through the same matmuls; the chunks' attention is a kernel of its own",
        w.batch, w.chunk_seqs, w.chunk_seqs == 1 ? "" : "s", w.chunk, w.chunk_offset));
  }
  const int64_t longest = std::max(w.prompt, w.DecodeContext());
  if (c.max_positions > 0 && longest > c.max_positions) {
    out.notes.push_back(fmt::format("context {} exceeds the model's max_position_embeddings {}",
                                    longest, c.max_positions));
  }
  if (c.mla) {
    const bool absorbed =
        w.mla == MlaForm::kAbsorbed || (w.mla == MlaForm::kAuto && phase == Phase::kDecode);
    out.notes.push_back(
        absorbed
            ? "MLA absorbed: attention over the cached latent (kv_lora_rank + rope dims, one "
              "KV head); W_UK folded into q, W_UV applied after attention"
            : "MLA naive: the cache holds the latent; kv_b_proj up-projects every cached position "
              "to per-head K and V each step (as HF transformers does)");
  }
  if (c.experts > 0) {
    out.notes.push_back(fmt::format(
        "MoE: {}, each routed to the top {} of {} experts; expert weights read for the "
        "E(1-(1-k/E)^T) experts touched under uniform routing",
        Count(static_cast<double>(out.tokens), "token"), c.experts_per_token, c.experts));
  }
  if (BitsOf(w.weight_dtype.value_or(act)) < BitsOf(act)) {
    out.notes.push_back(fmt::format(
        "weight-only {} quantization of the decoder's linear layers{} (embeddings{} stay {}); "
        "compute at {}",
        NameOf(*w.weight_dtype), w.quantize_lm_head ? " and lm_head" : "",
        w.quantize_lm_head ? " and router" : ", router and lm_head", NameOf(act), NameOf(act)));
  }
}

}  // namespace

Result<LlmGraph> BuildLlmGraph(const TransformerConfig& c, const Workload& w, Phase phase) {
  Status s = CheckWorkload(c, w);
  if (!s.ok()) return s;
  LlmGraph out;
  out.phase = phase;
  Builder b(c, w, phase, out);
  s = b.Build();
  if (!s.ok()) return s;
  AddNotes(c, w, phase, out);
  return out;
}

Status ReplayLlmGraph(const TransformerConfig& c, const Workload& w, LlmGraph& graph) {
  Status s = CheckWorkload(c, w);
  if (!s.ok()) return s;
  graph.graph.BeginReplay();
  Builder b(c, w, graph.phase, graph);
  s = b.Build();
  const Status replayed = graph.graph.EndReplay();
  if (!s.ok()) return s;
  if (!replayed.ok()) return replayed;
  AddNotes(c, w, graph.phase, graph);
  return Status::Ok();
}

}  // namespace roofline
