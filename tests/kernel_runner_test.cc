// The CPU kernel runner: the tiled attention kernel against a naive reference, and every op
// kind of a small graph timed (or skipped with a reason). Shapes are small: the suite also runs
// under AddressSanitizer. Timings are only checked to be positive.
#include "roofline/kernel_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "roofline/graph.h"
#include "roofline/op.h"
#include "src/measure/cpu/attention_kernel.h"

namespace roofline {
namespace kernel_runner_test {

std::vector<float> RandomValues(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// The mask written from its definition (see VisibleKeys): query i sits at position
// p = kv_len - q_len + i.
bool Visible(const AttentionSpec& a, int64_t i, int64_t j) {
  const int64_t p = a.kv_len - a.q_len + i;
  if (a.causal) return j <= p && (a.window == 0 || j > p - a.window);
  if (a.window == 0 || a.window >= a.kv_len) return true;
  const int64_t lo = std::clamp<int64_t>(p - (a.window - 1) / 2, 0, a.kv_len - a.window);
  return j >= lo && j < lo + a.window;
}

// softmax(Q K^T / sqrt(d)) V in double, one query at a time.
std::vector<double> NaiveAttention(const AttentionSpec& a, const std::vector<float>& q,
                                   const std::vector<float>& k, const std::vector<float>& v) {
  const int64_t d = a.head_dim;
  const int64_t dv = a.v_dim();
  const int64_t group = a.heads / a.kv_heads;
  std::vector<double> o(static_cast<size_t>(a.batch * a.heads * a.q_len * dv), 0.0);
  std::vector<double> s(static_cast<size_t>(a.kv_len));
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const int64_t kvh = h / group;
      for (int64_t i = 0; i < a.q_len; ++i) {
        const float* qi = &q[static_cast<size_t>(((b * a.heads + h) * a.q_len + i) * d)];
        double mx = -INFINITY;
        for (int64_t j = 0; j < a.kv_len; ++j) {
          if (!Visible(a, i, j)) continue;
          const float* kj = &k[static_cast<size_t>(((b * a.kv_heads + kvh) * a.kv_len + j) * d)];
          double dot = 0;
          for (int64_t t = 0; t < d; ++t) dot += static_cast<double>(qi[t]) * kj[t];
          s[static_cast<size_t>(j)] = dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, s[static_cast<size_t>(j)]);
        }
        double sum = 0;
        double* oi = &o[static_cast<size_t>(((b * a.heads + h) * a.q_len + i) * dv)];
        for (int64_t j = 0; j < a.kv_len; ++j) {
          if (!Visible(a, i, j)) continue;
          const double p = std::exp(s[static_cast<size_t>(j)] - mx);
          sum += p;
          const int64_t row = (b * a.kv_heads + kvh) * a.kv_len + j;
          const float* vj =
              a.v_in_k ? &k[static_cast<size_t>(row * d)] : &v[static_cast<size_t>(row * dv)];
          for (int64_t t = 0; t < dv; ++t) oi[t] += p * vj[t];
        }
        for (int64_t t = 0; t < dv; ++t) oi[t] = sum > 0 ? oi[t] / sum : 0.0;
      }
    }
  }
  return o;
}

struct AttentionCase {
  const char* name;
  int64_t batch, heads, kv_heads, head_dim, v_head_dim, q_len, kv_len;
  bool causal;
  int64_t window;
  bool v_in_k;

  AttentionSpec Spec() const {
    AttentionSpec a;
    a.batch = batch;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.head_dim = head_dim;
    a.v_head_dim = v_head_dim;
    a.q_len = q_len;
    a.kv_len = kv_len;
    a.causal = causal;
    a.window = window;
    a.v_in_k = v_in_k;
    return a;
  }
};

// Lengths are chosen around the 64-query / 64-key blocks: partial blocks, several blocks.
const AttentionCase kCases[] = {
    {"mha_noncausal", 2, 3, 3, 16, 0, 70, 70, false, 0, false},
    {"mha_causal", 1, 2, 2, 32, 0, 130, 130, true, 0, false},
    {"gqa_causal", 1, 4, 2, 16, 0, 100, 100, true, 0, false},
    {"mqa_causal_q_lt_kv", 2, 4, 1, 8, 0, 5, 200, true, 0, false},
    {"gqa_noncausal_q_lt_kv", 1, 6, 2, 16, 0, 3, 150, false, 0, false},
    {"noncausal_q_gt_kv", 1, 2, 2, 16, 0, 90, 40, false, 0, false},
    {"decode", 2, 4, 2, 16, 0, 1, 129, true, 0, false},
    {"causal_window", 1, 2, 1, 16, 0, 150, 150, true, 20, false},
    {"causal_window_q_lt_kv", 1, 2, 2, 8, 0, 10, 300, true, 16, false},
    {"causal_window_wider_than_block", 1, 1, 1, 8, 0, 200, 260, true, 90, false},
    {"noncausal_window", 1, 2, 2, 16, 0, 100, 100, false, 33, false},
    {"v_head_dim", 1, 2, 2, 16, 24, 70, 90, true, 0, false},
    {"v_in_k", 1, 4, 1, 24, 8, 66, 80, true, 0, true},
};

class KernelRunnerAttentionTest : public ::testing::TestWithParam<AttentionCase> {};

void ExpectClose(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  double largest = 0;
  for (double w : want) largest = std::max(largest, std::fabs(w));
  ASSERT_GT(largest, 0);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << "at " << i;
    const double tol = 1e-4 * std::max(std::fabs(want[i]), 0.1 * largest);
    ASSERT_NEAR(got[i], want[i], tol) << "at " << i;
  }
}

TEST_P(KernelRunnerAttentionTest, TiledMatchesNaiveReference) {
  const AttentionSpec a = GetParam().Spec();
  ASSERT_TRUE(Validate(OpSpec(a)).ok());
  const size_t q_n = static_cast<size_t>(a.batch * a.heads * a.q_len * a.head_dim);
  const size_t k_n = static_cast<size_t>(a.batch * a.kv_heads * a.kv_len * a.head_dim);
  const size_t v_n = static_cast<size_t>(a.batch * a.kv_heads * a.kv_len * a.v_dim());
  const size_t o_n = static_cast<size_t>(a.batch * a.heads * a.q_len * a.v_dim());
  const std::vector<float> q = RandomValues(q_n, 1);
  const std::vector<float> k = RandomValues(k_n, 2);
  const std::vector<float> v = a.v_in_k ? std::vector<float>() : RandomValues(v_n, 3);
  const std::vector<double> want = NaiveAttention(a, q, k, v);
  const float* vp = a.v_in_k ? nullptr : v.data();  // V is not read when it is a slice of K
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    std::vector<float> tiled(o_n, NAN);
    TiledAttentionFp32(a, q.data(), k.data(), vp, tiled.data(), threads);
    ExpectClose(tiled, want);
    std::vector<float> untiled(o_n, NAN);
    UntiledAttentionFp32(a, q.data(), k.data(), vp, untiled.data(), threads);
    ExpectClose(untiled, want);
  }
}

TEST_P(KernelRunnerAttentionTest, VisibleKeysCountTheCostModelPairs) {
  const AttentionSpec a = GetParam().Spec();
  double pairs = 0;
  KeyRange previous;
  for (int64_t i = 0; i < a.q_len; ++i) {
    const KeyRange r = VisibleKeys(a, i);
    ASSERT_LE(0, r.begin);
    ASSERT_LE(r.begin, r.end);
    ASSERT_LE(r.end, a.kv_len);
    if (i > 0) {  // the kernel relies on ranges that never move backwards
      EXPECT_GE(r.begin, previous.begin);
      EXPECT_GE(r.end, previous.end);
    }
    for (int64_t j = 0; j < a.kv_len; ++j) {
      EXPECT_EQ(Visible(a, i, j), j >= r.begin && j < r.end) << "query " << i << " key " << j;
    }
    pairs += static_cast<double>(r.end - r.begin);
    previous = r;
  }
  EXPECT_DOUBLE_EQ(pairs, AttentionPairs(a, /*skip_masked=*/true));
}

INSTANTIATE_TEST_SUITE_P(KernelRunner, KernelRunnerAttentionTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<AttentionCase>& info) {
                           return std::string(info.param.name);
                         });

// A graph with every op kind, small shapes.
Graph SmallGraph() {
  Graph g;
  auto add = [&g](const std::string& name, const OpSpec& spec) {
    Result<int> r = g.AddOp(name, spec);
    EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
  };
  MatmulSpec proj;
  proj.m = 16;
  proj.n = 32;
  proj.k = 24;
  proj.bias = true;
  add("proj", proj);
  MatmulSpec quant = proj;
  quant.b_dtype = DType::kInt4;
  quant.group_size = 8;
  add("quantized_proj", quant);
  MatmulSpec batched;
  batched.batch = 4;
  batched.b_broadcast = 2;
  batched.m = 8;
  batched.n = 8;
  batched.k = 8;
  batched.b_is_weight = false;
  batched.bias = true;
  add("batched", batched);
  MatmulSpec moe;
  moe.experts = 8;
  moe.expert_top_k = 2;
  moe.m = 32;
  moe.n = 16;
  moe.k = 16;
  moe.bias = true;
  add("experts", moe);
  auto ew = [&](const std::string& function, double elements, int inputs, double flops,
                double input_per_output = 1) {
    ElementwiseSpec e;
    e.elements = elements;
    e.inputs = inputs;
    e.flops_per_element = flops;
    e.input_per_output = input_per_output;
    e.function = function;
    add(function, e);
  };
  ew("add", 1000, 2, 1);
  ew("residual_large", 200000, 2, 1);  // above the single-thread threshold
  ew("mlp.act", 1000, 1, 4);
  ew("gate_mul", 1000, 2, 1);
  ew("gelu", 1000, 2, 8);
  ew("rope", 1001, 1, 3);
  ew("logit_softcap", 1000, 1, 3);
  ew("embed_scale", 1000, 1, 1);
  ew("router_topk", 1000, 1, 5);
  ew("combine", 1000, 0, 2);
  // A merged gate-up's gated activation: one input of both halves, 2000 elements in, 1000 out.
  ew("act_mul", 1000, 1, 5, 2);
  ew("act_mul:gelu", 1000, 1, 9, 2);  // a GeGLU model's (gemma-2-9b)
  NormSpec rms;
  rms.rows = 8;
  rms.cols = 70;
  add("rmsnorm", rms);
  NormSpec ln = rms;
  ln.kind = NormKind::kLayer;
  add("layernorm", ln);
  NormSpec bare = rms;
  bare.affine = false;
  add("bare_norm", bare);
  SoftmaxSpec sm;
  sm.rows = 12;
  sm.cols = 33;
  add("softmax", sm);
  EmbeddingSpec emb;
  emb.tokens = 10;
  emb.vocab = 100;
  emb.dim = 16;
  add("embedding", emb);
  Conv2dSpec conv;
  conv.batch = 2;
  conv.in_channels = 4;
  conv.out_channels = 6;
  conv.height = 9;
  conv.width = 7;
  conv.kernel_h = 3;
  conv.kernel_w = 3;
  conv.stride = 2;
  conv.padding = 1;
  conv.groups = 2;
  conv.bias = true;
  add("conv3x3", conv);
  Conv2dSpec pw;
  pw.batch = 1;
  pw.in_channels = 8;
  pw.out_channels = 4;
  pw.height = 5;
  pw.width = 5;
  add("conv1x1", pw);
  CollectiveSpec coll;
  coll.message_bytes = 4096;
  coll.devices = 4;
  add("all_reduce", coll);
  AttentionSpec a;
  a.batch = 1;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 16;
  a.q_len = 70;
  a.kv_len = 70;
  a.causal = true;
  EXPECT_TRUE(AppendAttention(g, a, AttentionImpl::kFlash, "flash.").ok());
  EXPECT_TRUE(AppendAttention(g, a, AttentionImpl::kEager, "eager.").ok());
  AttentionSpec mla = a;
  mla.kv_heads = 1;
  mla.head_dim = 24;
  mla.v_head_dim = 16;
  mla.v_in_k = true;
  mla.window = 32;
  EXPECT_TRUE(AppendAttention(g, mla, AttentionImpl::kFlash, "mla.").ok());
  return g;
}

void ExpectEveryOpTimed(const Graph& g, const RunOptions& options) {
  Result<std::vector<OpTiming>> r = RunGraphOnCpu(g, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), g.ops().size());
  for (size_t i = 0; i < r->size(); ++i) {
    const OpTiming& t = (*r)[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.op, static_cast<int>(i));
    EXPECT_EQ(t.name, g.ops()[i].name);
    if (g.ops()[i].kind() == OpKind::kCollective) {
      EXPECT_TRUE(t.skipped);
      EXPECT_NE(t.why_skipped.find("single host"), std::string::npos) << t.why_skipped;
      EXPECT_EQ(t.seconds, 0);
      continue;
    }
    EXPECT_FALSE(t.skipped) << t.why_skipped;
    EXPECT_GT(t.seconds, 0);
    EXPECT_GE(t.spread, 0);
    EXPECT_GE(t.repetitions, 1);
    EXPECT_LE(t.repetitions, options.repetitions);
    EXPECT_FALSE(t.implementation.empty());
  }
}

TEST(KernelRunnerTest, EveryOpKindIsTimedOrSkipped) {
  RunOptions options;
  options.threads = 2;
  options.repetitions = 3;
  options.max_seconds = 0.5;
  ExpectEveryOpTimed(SmallGraph(), options);
}

TEST(KernelRunnerTest, EveryOpKindIsTimedSingleThreadedAndUntiled) {
  RunOptions options;
  options.threads = 1;
  options.repetitions = 2;
  options.max_seconds = 0.5;
  options.tiled_attention = false;
  ExpectEveryOpTimed(SmallGraph(), options);
}

TEST(KernelRunnerTest, AttentionImplementationsAreNamed) {
  const Graph g = SmallGraph();
  RunOptions options;
  options.repetitions = 1;
  Result<std::vector<OpTiming>> r = RunGraphOnCpu(g, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const OpTiming& t : *r) {
    if (t.name == "flash.attention") {
      EXPECT_EQ(t.implementation, "tiled attention (fp32)");
    }
    if (t.name == "eager.attn_qk" || t.name == "eager.attn_pv") {
      EXPECT_NE(t.implementation.find("cblas_sgemm"), std::string::npos) << t.implementation;
    }
    if (t.name == "eager.attn_softmax") {
      EXPECT_EQ(t.implementation, "loop (softmax)");
    }
    if (t.name == "experts") {
      EXPECT_NE(t.implementation.find("per touched expert"), std::string::npos) << t.implementation;
    }
    if (t.name == "act_mul") {  // silu of the gate half times the up half, as it is predicted
      EXPECT_EQ(t.implementation, "loop (silu(gate) x up, both halves of one input)");
    }
    if (t.name == "act_mul:gelu") {
      EXPECT_EQ(t.implementation, "loop (gelu(gate) x up, both halves of one input)");
    }
  }
}

TEST(KernelRunnerTest, MatmulRunsThroughCblasSgemm) {
  Graph g;
  MatmulSpec mm;
  mm.m = 64;
  mm.n = 48;
  mm.k = 32;
  ASSERT_TRUE(g.AddOp("mm", mm).ok());
  RunOptions options;
  options.repetitions = 3;
  Result<std::vector<OpTiming>> r = RunGraphOnCpu(g, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  const OpTiming& t = r->front();
  EXPECT_EQ(t.op, 0);
  EXPECT_EQ(t.name, "mm");
  EXPECT_FALSE(t.skipped);
  EXPECT_GT(t.seconds, 0);
  EXPECT_NE(t.implementation.find("cblas_sgemm"), std::string::npos) << t.implementation;
}

TEST(KernelRunnerTest, OpsOverTheByteLimitAreSkipped) {
  Graph g;
  MatmulSpec mm;
  mm.m = 64;
  mm.n = 64;
  mm.k = 64;
  ASSERT_TRUE(g.AddOp("mm", mm).ok());
  ElementwiseSpec tiny;
  tiny.elements = 8;
  ASSERT_TRUE(g.AddOp("tiny", tiny).ok());
  RunOptions options;
  options.max_bytes = 1000;  // the matmul needs 48 kB in fp32, the add 96 B
  Result<std::vector<OpTiming>> r = RunGraphOnCpu(g, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].skipped);
  EXPECT_NE((*r)[0].why_skipped.find("over the limit"), std::string::npos) << (*r)[0].why_skipped;
  EXPECT_EQ((*r)[0].seconds, 0);
  EXPECT_FALSE((*r)[1].skipped);
  EXPECT_GT((*r)[1].seconds, 0);
}

TEST(KernelRunnerTest, HugeOpsAreSkippedNotRun) {
  // Valid but far too big for any host: skipped before anything is allocated.
  Graph g;
  MatmulSpec mm;
  mm.m = int64_t{1} << 30;
  mm.n = int64_t{1} << 20;
  mm.k = int64_t{1} << 20;
  ASSERT_TRUE(g.AddOp("huge", mm).ok());
  AttentionSpec a;
  a.heads = 64;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.q_len = int64_t{1} << 24;
  a.kv_len = int64_t{1} << 24;
  a.causal = true;
  ASSERT_TRUE(AppendAttention(g, a, AttentionImpl::kFlash).ok());
  Conv2dSpec conv;  // output pixels x kernel taps overflow 64-bit integers
  conv.height = conv.width = int64_t{1} << 40;
  conv.kernel_h = conv.kernel_w = int64_t{1} << 39;
  ASSERT_TRUE(g.AddOp("conv", conv).ok());
  ElementwiseSpec ew;
  ew.elements = 1e18;
  ASSERT_TRUE(g.AddOp("ew", ew).ok());
  RunOptions options;
  options.max_bytes = 1e30;
  Result<std::vector<OpTiming>> r = RunGraphOnCpu(g, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const OpTiming& t : *r) {
    EXPECT_TRUE(t.skipped) << t.name;
    EXPECT_FALSE(t.why_skipped.empty());
  }
}

TEST(KernelRunnerTest, MaxSecondsZeroStillTimesOnce) {
  Graph g;
  ElementwiseSpec e;
  e.elements = 4096;
  e.function = "add";
  ASSERT_TRUE(g.AddOp("add", e).ok());
  RunOptions options;
  options.repetitions = 50;
  options.max_seconds = 0;
  Result<std::vector<OpTiming>> r = RunGraphOnCpu(g, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->front().repetitions, 1);
  EXPECT_GT(r->front().seconds, 0);
  EXPECT_EQ(r->front().spread, 0);
}

TEST(KernelRunnerTest, RejectsBadOptions) {
  const Graph g;
  RunOptions options;
  options.threads = -1;
  EXPECT_FALSE(RunGraphOnCpu(g, options).ok());
  options = RunOptions();
  options.repetitions = 0;
  EXPECT_FALSE(RunGraphOnCpu(g, options).ok());
  options = RunOptions();
  options.max_seconds = NAN;
  EXPECT_FALSE(RunGraphOnCpu(g, options).ok());
  Result<std::vector<OpTiming>> empty = RunGraphOnCpu(g, RunOptions());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace kernel_runner_test
}  // namespace roofline
