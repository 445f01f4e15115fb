// Operator IR: one operation with its shapes and dtypes. FLOP and byte rules live in cost/.
#ifndef ROOFLINE_OP_H_
#define ROOFLINE_OP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "roofline/dtype.h"
#include "roofline/status.h"

namespace roofline {

/// Largest accepted size of any one dimension (2^40); larger values are rejected as absurd.
inline constexpr int64_t kMaxDim = int64_t{1} << 40;

/// C[b] = A[b] (m x k) . B[b] (k x n), b < batch. FLOPs = 2 * batch * m * n * k.
struct MatmulSpec {
  int64_t batch = 1;               ///< independent products
  int64_t m = 1;                   ///< rows of A and C (tokens)
  int64_t n = 1;                   ///< columns of B and C
  int64_t k = 1;                   ///< reduction dimension
  DType a_dtype = DType::kBf16;    ///< activations
  DType b_dtype = DType::kBf16;    ///< B (the weight when b_is_weight)
  DType out_dtype = DType::kBf16;  ///< C
  bool b_is_weight = true;         ///< B is a parameter (counted once per step, not per token)
  int64_t b_broadcast = 1;  ///< each B serves this many consecutive batch entries (GQA group)
  /// Quantized weights (b_dtype int8/int4/fp8/fp4): one scale per `group_size` elements of K per
  /// column; 0 means one scale per output column.
  int64_t group_size = 0;
  DType scale_dtype = DType::kFp16;  ///< dtype of the quantization scales
  /// Asymmetric quantization: a zero point beside each scale, in this dtype (tinygemm's and
  /// HQQ's format: bf16; GPTQ's and AWQ's packed `qzeros`: int4). None: symmetric.
  std::optional<DType> zero_dtype;
  bool bias = false;  ///< adds a bias vector of n elements (out_dtype)
  /// Routed experts (mixture of experts): B holds `experts` weight matrices, each row of A (a
  /// token routed to one of its `expert_top_k` experts; m = tokens x top-k) is multiplied by one
  /// of them. Only the experts the batch touches are read: E * (1 - (1 - k/E)^tokens) expected
  /// under uniform routing. 0 = a dense product.
  int64_t experts = 0;
  int64_t expert_top_k = 0;

  /// Tokens routed (m / expert_top_k) and the expected number of distinct experts they touch.
  double ExpertsTouched() const;

  friend bool operator==(const MatmulSpec&, const MatmulSpec&) = default;
};

/// Fused (FlashAttention-style) attention: softmax(Q K^T / sqrt(d)) V in one kernel.
/// Eager attention is three ops (see AppendAttention in graph.h).
struct AttentionSpec {
  int64_t batch = 1;
  int64_t heads = 1;           ///< query heads
  int64_t kv_heads = 1;        ///< key/value heads (== heads: MHA, 1: MQA, else GQA)
  int64_t head_dim = 64;       ///< d of Q and K
  int64_t v_head_dim = 0;      ///< d of V and O; 0 means head_dim
  int64_t q_len = 1;           ///< query positions per sequence (1 in decode)
  int64_t kv_len = 1;          ///< key/value positions per sequence (the context)
  bool causal = false;         ///< queries sit at the end of the kv sequence and see only the past
  int64_t window = 0;          ///< sliding window (keys per query), 0 = unlimited
  DType dtype = DType::kBf16;  ///< Q, O (and S, P in eager)
  DType kv_dtype = DType::kBf16;  ///< K, V (the KV cache)
  /// V is a slice of K (MLA with absorbed up-projections: both are the cached latent), so only
  /// K is read.
  bool v_in_k = false;

  int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }

  friend bool operator==(const AttentionSpec&, const AttentionSpec&) = default;
};

/// out = f(in_0, ..., in_{inputs-1}) element by element.
struct ElementwiseSpec {
  double elements = 1;           ///< elements of the output (and of each input)
  int inputs = 2;                ///< input tensors of the same size
  double flops_per_element = 1;  ///< arithmetic per output element
  DType dtype = DType::kBf16;
  std::string function;  ///< "add", "silu", "rope", ... (for display)
  /// General networks: elements of each input when they differ from `elements` (broadcast
  /// operands, pooling, resize and reduction inputs, copies); empty: every input has `elements`.
  /// When given, its size is `inputs`.
  std::vector<double> input_elements;
  /// Dtype of each input when it differs from `dtype` (parallel to input_elements; may be empty).
  std::vector<DType> input_dtypes;
  /// Without input_elements: elements of each input per output element (a gated activation
  /// reads both halves of a merged gate-up product, 2, and writes one).
  double input_per_output = 1;

  friend bool operator==(const ElementwiseSpec&, const ElementwiseSpec&) = default;
};

enum class NormKind { kRms, kLayer };

/// RMSNorm or LayerNorm over the last dimension.
struct NormSpec {
  int64_t rows = 1;
  int64_t cols = 1;
  NormKind kind = NormKind::kRms;
  DType dtype = DType::kBf16;
  bool affine = true;  ///< has a weight (and for LayerNorm a bias) of `cols` elements

  friend bool operator==(const NormSpec&, const NormSpec&) = default;
};

/// Softmax over the last dimension.
struct SoftmaxSpec {
  double rows = 1;
  int64_t cols = 1;
  DType dtype = DType::kBf16;

  friend bool operator==(const SoftmaxSpec&, const SoftmaxSpec&) = default;
};

/// Row gather from a table (token embeddings).
struct EmbeddingSpec {
  int64_t tokens = 1;
  int64_t vocab = 1;
  int64_t dim = 1;
  DType dtype = DType::kBf16;

  friend bool operator==(const EmbeddingSpec&, const EmbeddingSpec&) = default;
};

/// 2-D convolution, NCHW, as an implicit GEMM.
struct Conv2dSpec {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
  DType dtype = DType::kBf16;
  bool bias = false;
  /// Output height and width when given (general networks take them from the graph: per-axis
  /// strides, asymmetric padding, 1-D and folded 3-D convolutions); 0: derived from the fields.
  int64_t out_h = 0;
  int64_t out_w = 0;

  int64_t out_height() const;
  int64_t out_width() const;

  friend bool operator==(const Conv2dSpec&, const Conv2dSpec&) = default;
};

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSend,  ///< point to point: one device sends the message to the next (a pipeline hop)
};

/// A collective over `devices` peers on a named link, ring algorithm.
struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double message_bytes = 0;  ///< all-reduce: the buffer; all-gather: the gathered output;
                             ///< reduce-scatter: the input; all-to-all: each device's buffer;
                             ///< send: what one device sends
  int64_t devices = 2;
  std::string link;  ///< empty: the device's primary link
  DType dtype = DType::kBf16;

  friend bool operator==(const CollectiveSpec&, const CollectiveSpec&) = default;
};

using OpSpec = std::variant<MatmulSpec, AttentionSpec, ElementwiseSpec, NormSpec, SoftmaxSpec,
                            EmbeddingSpec, Conv2dSpec, CollectiveSpec>;

enum class OpKind {
  kMatmul,
  kAttention,
  kElementwise,
  kNorm,
  kSoftmax,
  kEmbedding,
  kConv2d,
  kCollective
};

inline OpKind KindOf(const OpSpec& spec) { return static_cast<OpKind>(spec.index()); }
std::string_view NameOf(OpKind kind);
std::string_view NameOf(CollectiveKind kind);
std::string_view NameOf(NormKind kind);

/// What a tensor holds; decides how it is counted in memory footprints.
enum class TensorRole { kActivation, kWeight, kKvCache, kIndex };

/// One operand of an op as its rule sees it.
struct Operand {
  const char* name = "";  ///< "A", "B", "Q", "K", "x", ... (static storage)
  double elements = 0;
  DType dtype = DType::kBf16;
  double bytes_per_element = 2;  ///< usually BytesOf(dtype); 8 for int64 indices
  TensorRole role = TensorRole::kActivation;
  bool is_output = false;

  double bytes() const { return elements * bytes_per_element; }
};

/// The operands of an op: inputs first (in a fixed per-kind order), then outputs.
std::vector<Operand> OperandsOf(const OpSpec& spec);
/// The same into `out` (cleared first), reusing its storage: the allocation-free form for loops.
void OperandsOf(const OpSpec& spec, std::vector<Operand>& out);

/// Checks every dimension (>= 1, <= kMaxDim) and every cross-field rule. Errors name the field
/// as a command-line flag would ("m", "kv-heads").
Status Validate(const OpSpec& spec);

/// Pairs of (query, key) positions actually scored. `skip_masked`: a kernel that skips masked
/// blocks (flash) scores only visible pairs; otherwise (eager) the full q_len x kv_len square.
double AttentionPairs(const AttentionSpec& a, bool skip_masked);

}  // namespace roofline

#endif  // ROOFLINE_OP_H_
