// FLOP and byte rules per op kind. See docs/cost-model.md for the conventions and worked
// examples; every rule writes its derivation into the trace when one is given.
#include "src/cost/op_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/units.h"
#include "src/cost/round_whole.h"

namespace roofline {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

double CeilDiv(double a, double b) { return CeilWhole(a / b); }

double Pow2Floor(double x) {
  double p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

const EngineKey kVectorFp32{false, DType::kFp32};

/// The wider of two dtypes (the one a mixed-precision product is computed in).
DType ComputeDType(DType a, DType b) { return BitsOf(b) > BitsOf(a) ? b : a; }

/// Sets every level of operand j to `bytes` (streamed once through each level).
void Stream(OpWork& w, int j, double bytes, int levels) {
  for (int l = 0; l < levels; ++l) w.bytes[j][l] = bytes;
}

/// Copies level l-1 into level l for every operand (nearest level: every byte staged there is
/// read from it once).
void CopyPrevious(OpWork& w, int l) {
  for (int j = 0; j < w.num_operands; ++j) w.bytes[j][l] = w.bytes[j][l - 1];
}

void TraceOperands(const Graph& g, const Op& op, Trace* t) {
  if (t == nullptr) return;
  const std::vector<Operand> operands = OperandsOf(op.spec);
  for (size_t j = 0; j < operands.size(); ++j) {
    const Tensor& tensor = g.tensors()[op.operands[j]];
    t->Add(fmt::format("  {} {:<7} {} elements x {} B = {} B ({})",
                       operands[j].is_output ? "write" : "read ", operands[j].name,
                       Sci(tensor.elements), Num(tensor.bytes_per_element), Sci(tensor.bytes()),
                       Si(tensor.bytes(), "B")));
  }
}

/// Re-read factors at level l of a tiled product C[m x n] = A[m x k] B[k x n] whose tiles live in
/// the nearer level (lv.next_capacity[l] bytes per instance); a1 and b1 are the bytes of one A and
/// one B. Returns {A reads, B reads}.
std::array<double, 2> TileRereads(double m, double n, double a1, double b1, double ea, double eb,
                                  const LevelModel& lv, int l, double* tile) {
  *tile = 0;
  const double capacity = lv.next_capacity[l];
  if (std::min(a1, b1) <= capacity / 2) return {1, 1};  // the smaller operand stays resident
  const double t = lv.TileSide(l, ea + eb);
  *tile = t;
  return {CeilDiv(n, std::min(n, t)), CeilDiv(m, std::min(m, t))};
}

void MatmulRule(const Graph& g, const Op& op, const MatmulSpec& s, const LevelModel& lv, OpWork& w,
                Trace* t) {
  const std::vector<int>& ids = op.operands;
  w.num_operands = static_cast<int>(ids.size());
  const DType cd = ComputeDType(s.a_dtype, s.b_dtype);
  const double flops = 2 * D(s.batch) * D(s.m) * D(s.n) * D(s.k);
  w.AddFlops({true, cd}, flops);
  if (s.bias) w.AddFlops(kVectorFp32, D(s.batch) * D(s.m) * D(s.n));
  if (t) {
    t->Add(fmt::format("FLOPs = 2 * batch * m * n * k = 2 * {} * {} * {} * {} = {} FLOP", s.batch,
                       s.m, s.n, s.k, Sci(flops)));
    t->Add(fmt::format("  computed in {} (the wider of A {} and B {}) on tensor.{}", NameOf(cd),
                       NameOf(s.a_dtype), NameOf(s.b_dtype), NameOf(cd)));
    if (s.bias)
      t->Add(fmt::format("  + bias add: batch*m*n = {} FLOP (vector.fp32)",
                         Sci(D(s.batch) * D(s.m) * D(s.n))));
    t->Add(fmt::format("Bytes at {} (each operand once{}):", lv.name[0],
                       s.b_is_weight ? "; the weight once per call, not per token" : ""));
    TraceOperands(g, op, t);
  }
  const int nb = 1;  // operand index of B
  const bool quantized = s.b_dtype == DType::kInt8 || s.b_dtype == DType::kInt4 ||
                         s.b_dtype == DType::kFp8 || s.b_dtype == DType::kFp4;
  const int scales = (s.b_is_weight && quantized) ? (s.bias ? 3 : 2) : -1;
  const int zeros = (scales >= 0 && s.zero_dtype.has_value()) ? scales + 1 : -1;
  const double ea = BytesOf(s.a_dtype);
  const double eb = BytesOf(s.b_dtype);
  // Routed experts: only the touched experts' weights are read; each multiplies m / touched rows.
  const double touched = s.experts > 0 ? s.ExpertsTouched() : 0;
  const double b_frac = s.experts > 0 ? touched / D(s.experts) : 1.0;
  const double m_each = s.experts > 0 ? D(s.m) / touched : D(s.m);
  if (t && s.experts > 0) {
    t->Add(fmt::format(
        "  routed experts: {}, each routed to the top {} of {} experts, touch "
        "E*(1-(1-k/E)^T) = {} of them (uniform routing): B read for those only, ~{} rows each",
        Count(D(s.m) / D(s.expert_top_k), "token"), s.expert_top_k, s.experts, Num(touched),
        Num(m_each)));
  }
  for (int l = 0; l < lv.num_levels; ++l) {
    if (l > 0 && lv.next_capacity[l] == 0) {
      CopyPrevious(w, l);
      if (t)
        t->Add(
            fmt::format("Bytes at {} = bytes at {} (nearest level: each staged byte read "
                        "once)",
                        lv.name[l], lv.name[l - 1]));
      continue;
    }
    double ra = 1;
    double rb = 1;
    double tile = 0;
    if (lv.next_capacity[l] > 0) {
      const auto r = TileRereads(m_each, D(s.n), m_each * D(s.k) * ea, D(s.k) * D(s.n) * eb, ea, eb,
                                 lv, l, &tile);
      ra = r[0];
      rb = r[1];
      const double b_unique = D(s.k) * D(s.n) * eb;
      if (s.b_broadcast > 1 && b_unique > lv.next_capacity[l] / 2) rb *= D(s.b_broadcast);
    }
    for (int j = 0; j < w.num_operands; ++j) {
      double r = 1;
      if (j == 0) r = ra;
      // Quantization scales and zero points travel with B.
      if (j == nb || j == scales || j == zeros) r = rb * b_frac;
      w.bytes[j][l] = g.tensors()[ids[j]].bytes() * r;
    }
    if (t && l > 0) {
      if (tile > 0) {
        t->Add(
            fmt::format("Bytes at {}: tiles of {}x{} sized by {} ({} per instance): A read {}x, "
                        "B read {}x",
                        lv.name[l], Num(std::min(D(s.m), tile)), Num(std::min(D(s.n), tile)),
                        lv.next_name[l], Si(lv.next_capacity[l], "B"), Num(ra), Num(rb)));
      } else {
        t->Add(
            fmt::format("Bytes at {}: the smaller operand fits {} ({} per instance), each "
                        "operand crosses once{}",
                        lv.name[l], lv.next_name[l], Si(lv.next_capacity[l], "B"),
                        rb > 1 ? fmt::format(" (B re-read by each of {} heads)", Num(rb)) : ""));
      }
    } else if (t && l == 0 && tile > 0) {
      t->Add(fmt::format("  neither A nor B fits half of {} ({}): tiles of {} re-read A {}x, B {}x",
                         lv.next_name[0], Si(lv.next_capacity[0], "B"), Num(tile), Num(ra),
                         Num(rb)));
    }
  }
}

void AttentionRule(const Graph& g, const Op& op, const AttentionSpec& a, const LevelModel& lv,
                   OpWork& w, Trace* t) {
  w.num_operands = 4;
  const double pairs = AttentionPairs(a, true);
  const double d = D(a.head_dim);
  const double dv = D(a.v_dim());
  const double bh = D(a.batch) * D(a.heads);
  const double tensor_flops = 2 * bh * pairs * (d + dv);
  const double vector_flops = 5 * bh * pairs;
  w.AddFlops({true, a.dtype}, tensor_flops);
  w.AddFlops(kVectorFp32, vector_flops);
  // Keys actually read per sequence: a sliding window limits them.
  const double kv_read = AttentionKeysRead(a);
  const double kv_frac = kv_read / D(a.kv_len);
  if (t) {
    t->Add(
        fmt::format("Scored (query, key) pairs per head = {}{} = {}",
                    a.causal ? "visible pairs (causal, masked blocks skipped)" : "q_len * kv_len",
                    a.window > 0 ? fmt::format(", window {}", a.window) : "", Sci(pairs)));
    t->Add(fmt::format(
        "FLOPs (QK^T + PV) = 2 * batch * heads * pairs * (d + dv) = 2 * {} * {} * "
        "{} * ({} + {}) = {} FLOP (tensor.{})",
        a.batch, a.heads, Sci(pairs), a.head_dim, a.v_dim(), Sci(tensor_flops), NameOf(a.dtype)));
    t->Add(
        fmt::format("  + online softmax: 5 FLOP per score (scale, max, exp, sum, rescale) = {} "
                    "FLOP (vector.fp32)",
                    Sci(vector_flops)));
    t->Add(fmt::format(
        "Bytes at {} (flash: Q, K, V read once, O written once; K/V use {} kv "
        "heads{}):",
        lv.name[0], a.kv_heads,
        kv_frac < 1 ? fmt::format(", only the last {} keys are read", Num(kv_read)) : ""));
    TraceOperands(g, op, t);
  }
  const double e = BytesOf(a.dtype);
  const double ekv = BytesOf(a.kv_dtype);
  for (int l = 0; l < lv.num_levels; ++l) {
    if (l > 0 && lv.next_capacity[l] == 0) {
      CopyPrevious(w, l);
      continue;
    }
    double kv_mult = kv_frac;
    if (l > 0 && lv.next_capacity[l] > 0) {
      // Q tile of tq rows and double-buffered K/V tiles of tq rows in the nearer level.
      const double tq =
          std::clamp(Pow2Floor(lv.next_capacity[l] / (d * e + 2 * (d + dv) * ekv)), 16.0, 256.0);
      const double group = D(a.heads / a.kv_heads);
      const double tiles = CeilDiv(D(a.q_len) * group, tq);  // query heads of a group packed
      const double keys_per_query = pairs / D(a.q_len);
      kv_mult = std::max(kv_frac, tiles * keys_per_query / D(a.kv_len));
      if (t) {
        t->Add(
            fmt::format("Bytes at {}: query tiles of {} rows (from {} {} per instance, "
                        "double-buffered K/V); {} tiles per kv head each re-read K/V for "
                        "~{} keys: K/V {}x",
                        lv.name[l], Num(tq), lv.next_name[l], Si(lv.next_capacity[l], "B"),
                        Num(tiles), Num(keys_per_query), Num(kv_mult)));
      }
    }
    for (int j = 0; j < 4; ++j) {
      const double bytes = g.tensors()[op.operands[j]].bytes();
      double mult = (j == 1 || j == 2) ? kv_mult : 1.0;
      if (j == 2 && a.v_in_k) mult = 0;  // V is the latent already read as part of K
      w.bytes[j][l] = bytes * mult;
    }
  }
}

void StreamingRule(const Graph& g, const Op& op, const LevelModel& lv, OpWork& w) {
  w.num_operands = static_cast<int>(op.operands.size());
  for (int j = 0; j < w.num_operands; ++j) {
    Stream(w, j, g.tensors()[op.operands[j]].bytes(), lv.num_levels);
  }
}

void Conv2dRule(const Graph& g, const Op& op, const Conv2dSpec& s, const LevelModel& lv, OpWork& w,
                Trace* t) {
  const std::vector<int>& ids = op.operands;
  w.num_operands = static_cast<int>(ids.size());
  const double ho = D(s.out_height());
  const double wo = D(s.out_width());
  const double cg = D(s.in_channels / s.groups);
  const double flops =
      2 * D(s.batch) * D(s.out_channels) * ho * wo * cg * D(s.kernel_h) * D(s.kernel_w);
  w.AddFlops({true, s.dtype}, flops);
  if (s.bias) w.AddFlops(kVectorFp32, D(s.batch) * D(s.out_channels) * ho * wo);
  // Implicit GEMM per group: M = N*Ho*Wo, N = K/g, K = C/g*R*S.
  const double gm = D(s.batch) * ho * wo;
  const double gn = D(s.out_channels / s.groups);
  const double gk = cg * D(s.kernel_h) * D(s.kernel_w);
  const double e = BytesOf(s.dtype);
  if (t) {
    t->Add(fmt::format("Output {}x{}: Ho = (H + 2p - dil*(R-1) - 1)/stride + 1 = {}, Wo = {}",
                       Num(ho), Num(wo), Num(ho), Num(wo)));
    t->Add(
        fmt::format("FLOPs = 2 * N * K * Ho * Wo * (C/groups) * R * S = 2 * {} * {} * {} * {} "
                    "* {} * {} * {} = {} FLOP (tensor.{})",
                    s.batch, s.out_channels, Num(ho), Num(wo), Num(cg), s.kernel_h, s.kernel_w,
                    Sci(flops), NameOf(s.dtype)));
    t->Add(
        fmt::format("  as an implicit GEMM per group: M = N*Ho*Wo = {}, N = K/groups = {}, "
                    "K = C/groups*R*S = {}",
                    Num(gm), Num(gn), Num(gk)));
    t->Add(fmt::format("Bytes at {} (input, weights, output once):", lv.name[0]));
    TraceOperands(g, op, t);
  }
  for (int l = 0; l < lv.num_levels; ++l) {
    if (l > 0 && lv.next_capacity[l] == 0) {
      CopyPrevious(w, l);
      continue;
    }
    double rx = 1;
    double rw = 1;
    if (lv.next_capacity[l] > 0) {
      double tile = 0;
      // The fit test uses the real per-group input and weight bytes (not the im2col matrix).
      const double x_group = D(s.batch) * cg * D(s.height) * D(s.width) * e;
      const auto r = TileRereads(gm, gn, x_group, gk * gn * e, e, e, lv, l, &tile);
      rx = r[0];
      rw = r[1];
      if (t && l > 0) {
        t->Add(fmt::format("Bytes at {}: input read {}x, weights read {}x (tiles sized by {})",
                           lv.name[l], Num(rx), Num(rw), lv.next_name[l]));
      }
    }
    for (int j = 0; j < w.num_operands; ++j) {
      const double bytes = g.tensors()[ids[j]].bytes();
      w.bytes[j][l] = bytes * (j == 0 ? rx : (j == 1 ? rw : 1));
    }
  }
}

}  // namespace

double Floor16(double x) { return std::max(16.0, FloorWhole(x / 16) * 16); }

double LevelModel::TileSideOf(double capacity, double ea_plus_eb) {
  return Floor16(std::sqrt(capacity / ea_plus_eb));
}

void ApplyRule(const Graph& g, int op_index, const LevelModel& lv, OpWork& w, Trace* t) {
  const Op& op = g.ops()[op_index];
  switch (op.kind()) {
    case OpKind::kMatmul:
      MatmulRule(g, op, *std::get_if<MatmulSpec>(&op.spec), lv, w, t);
      return;
    case OpKind::kAttention:
      AttentionRule(g, op, *std::get_if<AttentionSpec>(&op.spec), lv, w, t);
      return;
    case OpKind::kConv2d:
      Conv2dRule(g, op, *std::get_if<Conv2dSpec>(&op.spec), lv, w, t);
      return;
    case OpKind::kElementwise: {
      const auto& s = *std::get_if<ElementwiseSpec>(&op.spec);
      const double flops = s.elements * s.flops_per_element;
      if (flops > 0) w.AddFlops(kVectorFp32, flops);
      StreamingRule(g, op, lv, w);
      if (t) {
        t->Add(
            fmt::format("FLOPs = elements * flops_per_element = {} * {} = {} FLOP "
                        "(vector.fp32: elementwise math runs in fp32)",
                        Sci(s.elements), Num(s.flops_per_element), Sci(flops)));
        t->Add(fmt::format("Bytes at every level ({} inputs read once, output written once):",
                           s.inputs));
        TraceOperands(g, op, t);
      }
      return;
    }
    case OpKind::kNorm: {
      const auto& s = *std::get_if<NormSpec>(&op.spec);
      // LayerNorm: mean 1, variance 3 (subtract, square, sum), normalize 2 (subtract, scale),
      // affine 2 (weight, bias); the profile's FLOP counter uses the same 8.
      const double per = s.kind == NormKind::kRms ? 4 : 8;
      const double flops = per * D(s.rows) * D(s.cols);
      w.AddFlops(kVectorFp32, flops);
      StreamingRule(g, op, lv, w);
      if (t) {
        t->Add(fmt::format("FLOPs = {} per element ({}) * rows * cols = {} * {} * {} = {} FLOP",
                           Num(per),
                           s.kind == NormKind::kRms ? "square, sum, scale, weight"
                                                    : "sum, subtract, square, sum, subtract, "
                                                      "scale, weight, bias",
                           Num(per), s.rows, s.cols, Sci(flops)));
        TraceOperands(g, op, t);
      }
      return;
    }
    case OpKind::kSoftmax: {
      const auto& s = *std::get_if<SoftmaxSpec>(&op.spec);
      const double flops = 5 * s.rows * D(s.cols);
      w.AddFlops(kVectorFp32, flops);
      StreamingRule(g, op, lv, w);
      if (t) {
        t->Add(fmt::format("FLOPs = 5 per element (max, subtract, exp, sum, divide) * {} = {} FLOP",
                           Sci(s.rows * D(s.cols)), Sci(flops)));
        TraceOperands(g, op, t);
      }
      return;
    }
    case OpKind::kEmbedding: {
      const auto& s = *std::get_if<EmbeddingSpec>(&op.spec);
      StreamingRule(g, op, lv, w);
      // Only the gathered rows of the table are read.
      const double rows = std::min(D(s.tokens), D(s.vocab));
      for (int l = 0; l < lv.num_levels; ++l) w.bytes[1][l] *= rows / D(s.vocab);
      if (t) {
        t->Add("FLOPs = 0 (a gather)");
        t->Add(fmt::format("Bytes: ids (8 B each), {} gathered table rows of {} elements, output",
                           Num(rows), s.dim));
      }
      return;
    }
    case OpKind::kCollective: {
      const auto& s = *std::get_if<CollectiveSpec>(&op.spec);
      w.num_operands = 2;  // buffers: no device-memory traffic is modelled for collectives
      for (int j = 0; j < 2; ++j) w.bytes[j].fill(0);
      const double n = D(s.devices);
      const double frac = (n - 1) / n;
      w.comm_calls = 1;
      if (s.kind == CollectiveKind::kAllReduce) {
        w.comm_bytes = 2 * frac * s.message_bytes;
        w.comm_steps = static_cast<int>(2 * (s.devices - 1));
      } else if (s.kind == CollectiveKind::kSend) {
        w.comm_bytes = s.message_bytes;
        w.comm_steps = 1;
      } else {
        w.comm_bytes = frac * s.message_bytes;
        w.comm_steps = static_cast<int>(s.devices - 1);
      }
      w.link = &s.link;
      if (t && s.kind == CollectiveKind::kSend) {
        t->Add(fmt::format("Send of a {} message to the next device: {} B in 1 step",
                           Si(s.message_bytes, "B"), Sci(w.comm_bytes)));
      } else if (t) {
        t->Add(
            fmt::format("Ring {} over {} devices of a {} message: each device sends {} * "
                        "message = {} B in {} steps",
                        NameOf(s.kind), s.devices, Si(s.message_bytes, "B"),
                        s.kind == CollectiveKind::kAllReduce ? "2(n-1)/n" : "(n-1)/n",
                        Sci(w.comm_bytes), w.comm_steps));
      }
      return;
    }
  }
}

}  // namespace roofline
