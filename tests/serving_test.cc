// Continuous batching: mixed steps (decode rows with prefill chunks), the steady-state serving
// arithmetic, and plans under latency targets.
#include "roofline/serving.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/efficiency.h"
#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/plan.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/serving_runs.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace serving_test {

using testing::Dev;

TransformerConfig Preset(const std::string& id) {
  return *ResolveModel(id, ModelRegistry::LoadEmbedded());
}

PhaseResult Step(const TransformerConfig& c, const Workload& w, Phase phase) {
  Result<PhaseResult> r = AnalyzePhase(c, w, CostModel(Dev("h100-sxm")), phase);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

// A mixed step runs the decode rows and a prompt through the same matmuls: its FLOPs are exactly
// those of the decode step plus those of prefilling the prompt alone (every op is per token, the
// prompt's attention is its own kernel, one logit row for the prompt as prefill has), while it
// reads the weights once, so its bytes are below the two steps' sum.
TEST(MixedStep, CostsTheDecodeRowsAndThePromptInOneStep) {
  for (const char* id : {"llama-3-8b", "qwen2.5-7b", "mixtral-8x7b"}) {
    const TransformerConfig c = Preset(id);
    Workload decode;
    decode.batch = 32;
    decode.context = 3000;
    Workload prefill;
    prefill.batch = 1;
    prefill.prompt = 1024;
    Workload mixed = decode;
    mixed.chunk = 1024;
    const PhaseResult d = Step(c, decode, Phase::kDecode);
    const PhaseResult p = Step(c, prefill, Phase::kPrefill);
    const PhaseResult m = Step(c, mixed, Phase::kDecode);
    // (MoE too: the router's top-k and the experts' matmuls are per token.)
    EXPECT_NEAR(m.totals.flops, d.totals.flops + p.totals.flops, 1e-9 * m.totals.flops) << id;
    EXPECT_LT(m.totals.bytes[0], d.totals.bytes[0] + p.totals.bytes[0]) << id;  // device memory
    EXPECT_GT(m.totals.time_s, d.totals.time_s) << id;
  }
}

// A chunk after a cached prefix attends the prefix and itself (causal): its attention FLOPs grow
// with the offset, the matmuls' do not. Chunks of one prompt add up to the prompt's attention.
TEST(MixedStep, AChunksAttentionSeesTheCachedPrefix) {
  const TransformerConfig c = Preset("llama-3-8b");
  Workload w;
  w.batch = 8;
  w.context = 2048;
  w.chunk = 512;
  const PhaseResult first = Step(c, w, Phase::kDecode);
  w.chunk_offset = 1536;
  const PhaseResult last = Step(c, w, Phase::kDecode);
  // Each of the 512 queries sees 1536 more keys, each score 2 x 2 x head_dim FLOPs (QK^T and PV)
  // and 5 of online softmax (op_rules), for every head of every layer.
  const double extra = 512.0 * 1536 * (4.0 * c.head_dim + 5) * c.heads * c.layers;
  EXPECT_NEAR(last.totals.flops - first.totals.flops, extra, 1e-9 * extra);
  // Four chunks of 512 at offsets 0..1536 cost the attention of one 2048-token prefill (plus
  // the matmuls of 2048 tokens): their FLOPs over the plain decode step sum to the prefill's.
  double chunks = 0;
  Workload plain = w;
  plain.chunk = 0;
  const double decode = Step(c, plain, Phase::kDecode).totals.flops;
  for (int64_t offset = 0; offset < 2048; offset += 512) {
    w.chunk_offset = offset;
    chunks += Step(c, w, Phase::kDecode).totals.flops - decode;
  }
  Workload prompt;
  prompt.batch = 1;
  prompt.prompt = 2048;
  const double prefill = Step(c, prompt, Phase::kPrefill).totals.flops;
  // Each chunk samples one logit row (as the prefill's last position): three more rows.
  const double head_row = 2.0 * static_cast<double>(c.hidden * c.vocab);
  EXPECT_NEAR(chunks, prefill + 3 * head_row, 1e-9 * prefill);
}

// How prompts ride on the steps (hand arithmetic of the definitions in serving.h).
TEST(Serving, ShapesPackedAndChunkedPrefill) {
  // 64 requests of 256 output tokens: 0.25 leave and arrive per step; 8192 - 64 = 8128 tokens of
  // room, filled by chunks of 4 prompts of 2048 (2032 tokens each, 8 cached before on average).
  Result<ServingShape> s = ShapeOf({64, 2048, 256, 8192});
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->arrivals_per_step, 0.25);
  EXPECT_FALSE(s->chunked);
  EXPECT_EQ(s->room, 8128);
  EXPECT_EQ(s->one_tokens, 2048);
  EXPECT_EQ(s->full_seqs, 4);
  EXPECT_EQ(s->full_tokens, 2032);
  EXPECT_EQ(s->full_offset, 8);
  EXPECT_DOUBLE_EQ(s->utilization, 0.25 * 2048 / 8128);
  // A 4096-token prompt beside 64 rows in a 2048 budget: 1984 tokens of room, so 3 steps a
  // prompt, each chunk after 1056 cached tokens on average.
  s = ShapeOf({64, 4096, 256, 2048});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->chunked);
  EXPECT_EQ(s->chunk_steps, 3);
  EXPECT_EQ(s->one_tokens, 1984);
  EXPECT_EQ(s->one_offset, 1056);
  EXPECT_DOUBLE_EQ(s->utilization, 0.25 * 4096 / 1984);
  // Utilization (b / 256) x 2048 / (8192 - b) is at most 0.9 up to b = 7372.8 / 8.9 = 828.4.
  EXPECT_EQ(LargestBatchHeld(100000, {1, 2048, 256, 8192}, 0.9), 828);
  EXPECT_EQ(LargestBatchHeld(500, {1, 2048, 256, 8192}, 0.9), 500);
  EXPECT_EQ(LargestBatchHeld(10, {1, 8000, 1, 8192}, 0.9),
            0);                                        // 8000 tokens a step in 8191 of room
  EXPECT_FALSE(ShapeOf({2048, 128, 256, 2048}).ok());  // the rows fill the budget
  EXPECT_FALSE(ShapeOf({0, 128, 256, 2048}).ok());
}

// Every arriving prompt is prefilled (what does not fit a step rides on a later one): when the
// room holds one prompt, the share of steps with prefill is the utilization itself, a x prompt /
// room, not the Poisson chance of an arrival.
TEST(Serving, EveryArrivingPromptIsPrefilled) {
  const ServingLoad load{100, 1000, 125, 1100};  // a = 0.8, room 1000 = one prompt
  const ServingShape s = *ShapeOf(load);
  EXPECT_DOUBLE_EQ(s.utilization, 0.8);
  const StepTimes t{0.010, 0.050, 0.050};
  const ServingFigures f = Serve(load, s, t, 50);
  EXPECT_NEAR(f.mixed_share, 0.8, 1e-9);
  EXPECT_NEAR(f.step_s, 0.2 * 0.010 + 0.8 * 0.050, 1e-12);
  EXPECT_NEAR(f.input_tokens_per_s, 0.8 * 1000 / f.step_s, 1e-6);
}

// The steady state against the formulas written out here: Poisson prompts a step, every one
// prefilled (the room's cap moves the mix by about 1e-5 here), M/D/1 wait (Pollaczek-Khinchine
// with deterministic service: rho S / (2 (1 - rho))) with its exponential tail, the
// length-biased residual of the running step, and the normal quantile of a mean of output - 1
// steps.
TEST(Serving, FiguresFollowTheQueueingFormulas) {
  const ServingLoad load{64, 2048, 256, 8192};
  const ServingShape s = *ShapeOf(load);  // a = 0.25, room 8128, full = 4 x 2032 tokens
  const StepTimes t{0.010, 0.030, 0.070};
  // A step with k prompts: 2048 k tokens, interpolated from one prompt to the room filled.
  auto time = [](double k) {
    if (k == 0) return 0.010;
    const double tokens = std::min(2048 * k, 8128.0);
    return 0.030 + (tokens - 2048) * 0.040 / (8128 - 2048);
  };
  auto mix = [&](double x, double* square) {
    double mean = 0, sq = 0, mass = 0, pk = std::exp(-x);
    for (int k = 0; k < 40; ++k) {
      mean += pk * time(k);
      sq += pk * time(k) * time(k);
      mass += pk;
      pk *= x / (k + 1);
    }
    *square = sq / mass;
    return mean / mass;
  };
  // The steps carry every arriving prompt: their count is Poisson(x') with x' such that the
  // mean prompt tokens a step, E[min(2048 k, 8128)], is x x 2048.
  auto carried = [](double x) {
    auto tokens = [](double y) {
      double sum = 0, pk = std::exp(-y);
      for (int k = 0; k < 40; ++k, pk *= y / k) sum += pk * std::min(2048.0 * k, 8128.0);
      return sum;
    };
    double lo = x, hi = 2 * x + 1;
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      (tokens(mid) < 2048 * x ? lo : hi) = mid;
    }
    return hi;
  };
  const double a = 0.25;
  double square = 0;
  const double mean = mix(carried(a), &square);
  const double sd = std::sqrt(square - mean * mean);
  double seen_square = 0;
  const double seen = mix(carried(63.0 / 256), &seen_square);  // the other 63's successors
  const double seen_sd = std::sqrt(seen_square - seen * seen);
  const ServingFigures f50 = Serve(load, s, t, 50);
  EXPECT_NEAR(f50.step_s, mean, 1e-9 * mean);
  EXPECT_NEAR(f50.step_sd_s, sd, 1e-6 * sd);
  EXPECT_NEAR(f50.mixed_share, 1 - std::exp(-carried(a)), 1e-9);
  const double rho = a * 2048 / 8128;  // below 1 - 0.5: no wait at the median
  const double service = 2048.0 / 8128;
  EXPECT_EQ(f50.queue_s, 0);
  const double own = time(1 + carried(a));  // its step holds it and the others that came along
  EXPECT_NEAR(f50.ttft_s, 0.5 * square / mean + own, 1e-9 * own);
  EXPECT_NEAR(f50.tpot_s, seen, 1e-9 * seen);
  EXPECT_LT(f50.tpot_s, f50.step_s);
  EXPECT_NEAR(f50.e2e_s, f50.ttft_s + 255 * f50.tpot_s, 1e-12);
  EXPECT_NEAR(f50.output_tokens_per_s, 64 / mean, 1e-9 * 64 / mean);
  const double wait = rho * service / (2 * (1 - rho));  // steps
  EXPECT_NEAR(f50.ttft_mean_s, 0.5 * square / mean + wait * mean + own, 1e-9 * own);
  const ServingFigures f99 = Serve(load, s, t, 99);
  EXPECT_NEAR(f99.queue_s, wait / rho * std::log(rho / 0.01) * mean, 1e-9 * f99.queue_s);
  EXPECT_NEAR(f99.tpot_s, seen + 2.3263478740408408 * seen_sd / std::sqrt(255.0), 1e-9 * seen);
  EXPECT_NEAR(f99.ttft_s, 0.99 * square / mean + f99.queue_s + own, 1e-9 * own);
  // At batch 1 no other request's prompt shares the steps: the time per token is the decode
  // step. A request's time per token never exceeds the longest step.
  const ServingLoad one{1, 2048, 256, 8192};
  EXPECT_DOUBLE_EQ(Serve(one, *ShapeOf(one), t, 99).tpot_s, 0.010);
  const ServingLoad short_output{40, 1000, 3, 1100};
  EXPECT_LE(Serve(short_output, *ShapeOf(short_output), t, 99).tpot_s, 0.070);
  EXPECT_TRUE(KnownPercentile(95));
  EXPECT_FALSE(KnownPercentile(101));
}

PlanRequest Fleet() {
  PlanRequest r;
  r.gpus = 8;
  r.prompt = 2048;
  r.output = 256;
  r.price_per_hour = 2.5;
  r.cost.efficiency = std::make_shared<const EfficiencyData>(*LoadDefaultEfficiencyData());
  return r;
}

// The time per output token a serving engine reports holds the prompts of the requests that
// arrive (the serving-plan issue: one decode step at batch = concurrency is 47% below measured
// runs at 128+ requests); the plan's steps carry them.
TEST(PlanServing, StepsCarryTheArrivingPrompts) {
  const Result<Plan> p = MakePlan(Preset("llama-3-70b"), Workload{}, Dev("h100-sxm"), Fleet());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const PlanVariant& v = p->variants[0];
  EXPECT_EQ(v.budget, 8192);  // vLLM's default on an 80 GB H100
  const PlanPoint& big = v.largest;
  EXPECT_GT(big.batch, 128);
  EXPECT_GT(big.serving.prefill_share, 0.1);
  EXPECT_GT(big.serving.mixed_share, 0.5);
  EXPECT_GT(big.expected_tpot_s, big.tpot_s);
  EXPECT_GT(big.ttft_s, 0);
  EXPECT_LE(big.batch, v.hold_limit);
  // Output tokens per second per GPU: batch over the mean step, over the replica's devices.
  EXPECT_NEAR(big.output_tokens_per_s_per_gpu,
              static_cast<double>(big.batch) / big.serving.step_s / static_cast<double>(v.tp),
              1e-9 * big.output_tokens_per_s_per_gpu);
  // On an A100 vLLM's default budget is 2048 tokens: prompts of 2048 beside the decode rows are
  // chunked, and the budget, not the KV room, caps the batch.
  PlanRequest r = Fleet();
  const Result<Plan> a100 = MakePlan(Preset("llama-3-8b"), Workload{}, Dev("a100-sxm-80gb"), r);
  ASSERT_TRUE(a100.ok()) << a100.status().ToString();
  const PlanVariant& av = a100->variants[0];
  EXPECT_EQ(av.budget, 2048);
  EXPECT_TRUE(av.largest.shape.chunked);
  EXPECT_LT(av.hold_limit, av.max_batch);
  EXPECT_LT(av.largest.shape.utilization, 1);
  EXPECT_NE(RenderPlanTable(*a100).find("largest batch the token budget keeps up with"),
            std::string::npos);
}

// Targets: the plan serves the largest batch that meets them all; each target's boundary is the
// largest batch that meets it; when not even batch 1 does, the closest plan is shown with what it
// misses (not an error).
TEST(PlanServing, TargetsBoundTheBatch) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 4;
  const Result<Plan> free = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(free.ok());
  const PlanVariant& fv = free->variants[0];
  // A time-per-token target between batch 1's and the free plan's largest batch's.
  const double target = 0.5 * (fv.batch1.expected_tpot_s + fv.largest.expected_tpot_s);
  r.targets = {{"tpot", target, 50}};
  const Result<Plan> bound = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(bound.ok());
  const PlanVariant& bv = bound->variants[0];
  ASSERT_EQ(bv.boundaries.size(), 1u);
  EXPECT_TRUE(bv.meets_targets);
  EXPECT_GT(bv.largest.batch, 1);
  EXPECT_LT(bv.largest.batch, fv.largest.batch);
  EXPECT_EQ(bv.boundaries[0].largest_batch, bv.largest.batch);
  ASSERT_EQ(bv.largest.checks.size(), 1u);
  EXPECT_TRUE(bv.largest.checks[0].met);
  EXPECT_TRUE(bv.largest.checks[0].expected);
  EXPECT_LE(bv.largest.expected_tpot_s, target);
  // The boundary is exact: one request more misses it (the target set at the next batch's time
  // just below it keeps the boundary where it is).
  r.targets = {{"tpot", bv.largest.expected_tpot_s, 50}};
  const Result<Plan> same = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->variants[0].largest.batch, bv.largest.batch);
  // A 90th-percentile TTFT is above the median one.
  r.targets = {{"ttft", 1e3, 50}, {"ttft", 1e3, 90}};
  const Result<Plan> both = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(both.ok());
  const auto& checks = both->variants[0].largest.checks;
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_GT(checks[1].value_s, checks[0].value_s);
  // Unreachable: 1 ms per token. Exit 0 with the closest plan and what it misses.
  r.targets = {{"tpot", 1e-3, 50}};
  const Result<Plan> none = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(none.ok());
  const PlanVariant& nv = none->variants[0];
  EXPECT_FALSE(nv.meets_targets);
  EXPECT_EQ(nv.largest.batch, 1);
  EXPECT_EQ(nv.boundaries[0].largest_batch, 0);
  EXPECT_FALSE(nv.largest.checks[0].met);
  const std::string text = RenderPlanTable(*none);
  EXPECT_NE(text.find("missed even at batch 1"), std::string::npos) << text;
  EXPECT_NE(text.find("no batch meets every target"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(RenderPlanJson(*none));
  EXPECT_FALSE(j["variants"][0]["meets_targets"].get<bool>());
  EXPECT_FALSE(j["variants"][0]["largest_batch"]["targets"][0]["met"].get<bool>());
}

TEST(PlanServing, BadTargetsAreRefusedWithOneLine) {
  EXPECT_TRUE(ParseLatencyTarget("ttft", "2s", "--ttft").ok());
  EXPECT_DOUBLE_EQ(ParseLatencyTarget("ttft", "500ms@p99", "--ttft")->seconds, 0.5);
  EXPECT_EQ(ParseLatencyTarget("ttft", "500ms@p99", "--ttft")->percentile, 99);
  EXPECT_DOUBLE_EQ(ParseLatencyTarget("tpot", "0.05@P90", "--tpot")->seconds, 0.05);
  for (const char* bad : {"", "abc", "-1", "0", "2s@p101", "2s@p", "2s@90", "1e9", "nan", "2h"}) {
    EXPECT_FALSE(ParseLatencyTarget("ttft", bad, "--ttft").ok()) << bad;
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--ttft", "fast"},
                                               {"--tpot", "50ms@p101"},
                                               {"--max-batched-tokens", "1"},
                                               {"--max-batched-tokens", "0"},
                                               {"--e2e", "-3s"},
                                               {"--ttft", ""},
                                               {"--ttft", "0x10"},
                                               {"--ttft", " 5"},
                                               {"--ttft", "inf"}}) {
    std::vector<std::string> argv = {"plan", "llama-3-8b", "--hw", "h100-sxm"};
    argv.insert(argv.end(), args.begin(), args.end());
    const testing::CliOutput run = testing::RunCli(argv);
    EXPECT_EQ(run.status, 2) << args[0];
    EXPECT_EQ(run.out, "") << args[0];
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// The serving validation (docs/validation.md): published runs at their load (sources in the data
// file, collected without any prediction) beside the plan's point. The ideal bound must hold on
// every one: throughput at least, time per token at most, the measured.
TEST(ServingValidation, TheBoundHoldsOnEveryPublishedRun) {
  Result<std::vector<ServingRun>> runs = LoadDefaultServingRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_GE(runs->size(), 20u);
  Result<ServingValidation> v = ValidateServing(*runs);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->bounds_broken, 0);
  for (const ServingCheck& c : v->checks) {
    EXPECT_TRUE(c.bound_holds) << c.run.id;
    EXPECT_GE(c.batch, 1) << c.run.id;
    if (c.run.offline) {
      EXPECT_LE(c.batch, c.kv_room) << c.run.id;  // an offline run holds what fits
    } else {
      EXPECT_EQ(c.batch, c.run.concurrency) << c.run.id;
    }
  }
  EXPECT_GE(v->throughput.rows, 20);
  EXPECT_GE(v->stacks.size(), 3u);
  const std::string text = RenderServingTable(*v);
  EXPECT_NE(text.find("bounds: 32 of 32 rows hold"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(RenderServingJson(*v));
  EXPECT_EQ(j["runs"].size(), v->checks.size());
}

TEST(ServingValidation, BadRunFilesGetOneLineNamingTheField) {
  const std::string good = R"({"id": "x", "model": "llama-3-8b", "hw": "h100-sxm", "tp": 1,
      "prompt": 1000, "output": 1000, "concurrency": 8, "dtype": "bf16", "weight_dtype": "bf16",
      "kv_dtype": "bf16", "runtime": "cuda-graph", "fusion": "fused", "engine": "vllm",
      "measured": {"output_tokens_per_s": 500}, "stack": "vllm", "framework": "vllm 0.11",
      "source": "a post", "quote": "a line")";
  auto file = [](const std::string& run) {
    return R"({"schema_version": 1, "runs": [)" + run + "}]}";
  };
  ASSERT_TRUE(ParseServingRuns(file(good), "f.json").ok());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"(, "offline": true)", "runs[0] (x).concurrency"},
      {R"(, "num_prompts": -3)", "runs[0] (x).num_prompts"},
      {R"(, "max_batched_tokens": 1)", "runs[0] (x).max_batched_tokens"},
      {R"(, "rate": 3)", "runs[0]"},
  };
  for (const auto& [extra, where] : bad) {
    const Result<std::vector<ServingRun>> r = ParseServingRuns(file(good + extra), "f.json");
    ASSERT_FALSE(r.ok()) << extra;
    EXPECT_NE(r.status().ToString().find("f.json: " + where), std::string::npos)
        << r.status().ToString();
    EXPECT_EQ(r.status().ToString().find('\n'), std::string::npos);
  }
  std::string no_load = good;
  no_load.replace(no_load.find(R"("concurrency": 8,)"), 18, "");
  EXPECT_FALSE(ParseServingRuns(file(no_load), "f.json").ok());
  std::string bad_stat = good;
  const std::string measured = R"({"output_tokens_per_s": 500})";
  bad_stat.replace(bad_stat.find(measured), measured.size(),
                   R"({"tpot_s": 0.01, "statistic": "p99"})");
  const auto st = ParseServingRuns(file(bad_stat), "f.json");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().ToString().find("statistic"), std::string::npos);
  EXPECT_FALSE(ParseServingRuns("{", "f.json").ok());
}

// `plan --plot`: the frontier's points are labelled, and no two labels overlap.
TEST(PlanServing, TheParetoChartLabelsTheFrontierWithoutOverlaps) {
  const Result<Plan> p = MakePlan(Preset("llama-3-70b"), Workload{}, Dev("h100-sxm"), Fleet());
  ASSERT_TRUE(p.ok());
  size_t frontier = 0;
  for (const PlanVariant& v : p->variants) {
    for (const ParetoPoint& q : v.pareto) frontier += q.frontier ? 1 : 0;
    // The frontier is not dominated: along it, per-user speed falls as per-device rises.
    for (const ParetoPoint& a : v.pareto) {
      for (const ParetoPoint& b : v.pareto) {
        if (!a.frontier || !b.frontier || &a == &b) continue;
        EXPECT_FALSE(b.tokens_per_s_per_gpu > a.tokens_per_s_per_gpu &&
                     b.tokens_per_s_per_user > a.tokens_per_s_per_user);
      }
    }
  }
  const Chart chart = PlanParetoChart(*p, "t");
  EXPECT_NE(chart.svg.find("<svg"), std::string::npos);
  EXPECT_GE(chart.labels.size(), frontier / 2);  // most frontier points carry a label
  for (size_t i = 0; i < chart.labels.size(); ++i) {
    for (size_t j = i + 1; j < chart.labels.size(); ++j) {
      const LabelBox& a = chart.labels[i];
      const LabelBox& b = chart.labels[j];
      const bool apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y ||
                         b.y + b.height <= a.y;
      EXPECT_TRUE(apart) << a.text << " / " << b.text;
    }
  }
}

// Every prompt a plan admits is prefilled, so no operating point serves more than the FLOP limit
// (a 4096-token prompt per 64 output tokens fills the steps with prefill); when no layout meets a
// target, the one that misses it least is shown (Llama-3-70B at a 50 ms TTFT: tp 8, 101 ms
// expected, not tp 2 at 249 ms).
TEST(PlanServing, NoPointPassesTheFlopLimitAndTheClosestLayoutIsShown) {
  PlanRequest r = Fleet();
  r.gpus = 1;
  r.prompt = 4096;
  r.output = 64;
  const Result<Plan> p = MakePlan(Preset("llama-3-8b"), Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const PlanVariant& v : p->variants) {
    EXPECT_LE(v.largest.output_tokens_per_s_per_gpu, v.flop_limit.output_tokens_per_s_per_gpu)
        << v.name;
    EXPECT_LE(v.largest.shape.utilization, 0.9 + 1e-12) << v.name;
  }
  r = Fleet();
  r.targets = {{"ttft", 0.050, 50}};
  const Result<Plan> none = MakePlan(Preset("llama-3-70b"), Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(none.ok());
  const PlanVariant& v = none->variants[0];
  EXPECT_FALSE(v.meets_targets);
  double least = 1e300;
  for (const PlanLayout& l : v.layouts) {
    if (l.fits) least = std::min(least, l.worst_miss);
  }
  for (const PlanLayout& l : v.layouts) {
    if (l.tp == v.tp) {
      EXPECT_EQ(l.worst_miss, least);
    }
  }
  EXPECT_EQ(v.tp, 8);
}

// Launch lines start one replica of the chosen layout at the batch it serves, with the plan's
// budget; the pre-flight says when the plan fills more memory than an engine leaves free
// (vLLM's gpu_memory_utilization defaults to 0.9).
TEST(PlanServing, LaunchLinesCarryTheLayoutAndThePreflightChecksMemory) {
  Result<Plan> p = MakePlan(Preset("llama-3-70b"), Workload{}, Dev("h100-sxm"), Fleet());
  ASSERT_TRUE(p.ok());
  p->model = "llama-3-70b";  // as the command names it
  const PlanVariant& v = p->variants[0];
  const std::string text = RenderPlanTable(*p);
  EXPECT_NE(text.find(fmt::format("vllm serve <checkpoint of llama-3-70b> --tensor-parallel-size "
                                  "{} --max-model-len 2304 --max-num-seqs {} "
                                  "--max-num-batched-tokens 8192",
                                  v.tp, v.largest.batch)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("--tp-size {}", v.tp)), std::string::npos);
  EXPECT_NE(text.find(fmt::format("--tp_size {} --max_batch_size {}", v.tp, v.largest.batch)),
            std::string::npos);
  auto memory = [](const PlanVariant& x) {
    for (const PreflightCheck& c : x.preflight) {
      if (c.what == "memory") return c.ok;
    }
    ADD_FAILURE() << "no memory check";
    return false;
  };
  EXPECT_FALSE(memory(v));  // the whole memory: more than vLLM leaves free by default
  Workload reserved;
  reserved.memory_fraction = 0.9;
  const Result<Plan> q = MakePlan(Preset("llama-3-70b"), reserved, Dev("h100-sxm"), Fleet());
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(memory(q->variants[0]));
  EXPECT_LT(q->variants[0].max_batch, v.max_batch);
  const nlohmann::json j = nlohmann::json::parse(RenderPlanJson(*q));
  EXPECT_NE(j["variants"][1]["launch"]["vllm"].get<std::string>().find("--quantization fp8"),
            std::string::npos);
  EXPECT_EQ(j["variants"][0]["preflight"].size(), 4u);
}

// MLA (DeepSeek-V3): under --mla auto a mixed step's decode rows run absorbed and its prompt
// chunk naive, as a decode step and a prefill run them, so the FLOP identity holds; under
// --mla absorbed both absorb, as both steps do.
TEST(MixedStep, MlaPromptsRunAsPrefillRunsThem) {
  const TransformerConfig c = Preset("deepseek-v3");
  for (MlaForm form : {MlaForm::kAuto, MlaForm::kAbsorbed}) {
    Workload decode;
    decode.tp = 8;
    decode.batch = 16;
    decode.context = 3000;
    decode.mla = form;
    Workload prefill = decode;
    prefill.batch = 1;
    prefill.prompt = 1024;
    Workload mixed = decode;
    mixed.chunk = 1024;
    const double d = Step(c, decode, Phase::kDecode).totals.flops;
    const double p = Step(c, prefill, Phase::kPrefill).totals.flops;
    const double m = Step(c, mixed, Phase::kDecode).totals.flops;
    EXPECT_NEAR(m, d + p, 1e-9 * m) << (form == MlaForm::kAuto ? "auto" : "absorbed");
  }
}

// A load the budget cannot prefill has no steady state: refused with one line, not costed.
TEST(PlanServing, APointBeyondThePrefillRoomIsRefused) {
  PlanRequest r = Fleet();
  r.tp = 1;
  r.prompt = 8000;
  r.output = 10;
  const Result<PlanPointAtBatch> ok =
      PlanPointAt(Preset("llama-3-8b"), Workload{}, Dev("h100-sxm"), r, 5);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();  // 4000 prompt tokens a step in 8187 of room
  const Result<PlanPointAtBatch> over =
      PlanPointAt(Preset("llama-3-8b"), Workload{}, Dev("h100-sxm"), r, 100);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().ToString().find("no steady state"), std::string::npos);
}

// A load (PlanRequest::rate or concurrency). A replica's request rate at batch b is b / (output x
// the mean step): requests leave after `output` steps each (Little's law, L = lambda x W, with W
// the output steps a request holds its row for).
double RequestRate(const PlanPoint& p, const PlanRequest& r) {
  return p.expected_serving.output_tokens_per_s / static_cast<double>(r.output);
}

PlanPoint PointAt(const TransformerConfig& c, const PlanRequest& r, int64_t batch) {
  const Result<PlanPointAtBatch> at = PlanPointAt(c, Workload{}, Dev("h100-sxm"), r, batch);
  EXPECT_TRUE(at.ok()) << at.status().ToString();
  return at->point;
}

// Without --gpus a rate sizes the fleet: the fewest replicas whose capacity (requests/s at the
// served batch) reaches it; each replica then runs at the smallest batch whose request rate
// reaches its share, and the fleet completes the whole load.
TEST(PlanLoad, ARateSizesTheFewestReplicasThatCarryIt) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 4;
  r.gpus = 0;
  r.rate = 1;  // first learn a replica's capacity
  const Result<Plan> probe = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  ASSERT_TRUE(probe->variants[0].load.has_value());
  const LoadServed& one = *probe->variants[0].load;
  EXPECT_EQ(one.replicas, 1);
  EXPECT_EQ(one.gpus, 4);
  r.rate = 2.5 * one.capacity_rate;  // three replicas: two carry 2, not 2.5
  const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const PlanVariant& v = p->variants[0];
  ASSERT_TRUE(v.load.has_value());
  const LoadServed& l = *v.load;
  EXPECT_TRUE(l.carried);
  EXPECT_EQ(l.replicas, 3);
  EXPECT_EQ(v.replicas, 3);
  EXPECT_EQ(l.gpus, 12);
  EXPECT_EQ(l.gpus_needed, 12);
  EXPECT_NEAR(l.share, r.rate / 3, 1e-12 * r.rate);
  // The smallest batch that keeps up with the share.
  const int64_t b = l.point.batch;
  ASSERT_GT(b, 1);
  EXPECT_LE(b, v.largest.batch);
  EXPECT_GE(RequestRate(l.point, r), l.share);
  EXPECT_LT(RequestRate(PointAt(c, r, b - 1), r), l.share);
  EXPECT_DOUBLE_EQ(l.fleet_requests_per_s, r.rate);
  // The chart of a sized fleet names no fleet size of 0.
  const std::string svg = PlanParetoChart(*p, "sized").svg;
  EXPECT_EQ(svg.find(" 0 x "), std::string::npos);
  EXPECT_NE(svg.find("(sized fleet)"), std::string::npos);
  EXPECT_DOUBLE_EQ(l.fleet_output_tokens_per_s, r.rate * 256);
  EXPECT_NEAR(l.cost_per_m_output, 2.5 / 3600 * 12 / (r.rate * 256) * 1e6,
              1e-12 * l.cost_per_m_output);
  // Below capacity the requests are faster than at it.
  EXPECT_LT(l.point.expected_request_s, v.largest.expected_request_s);
  // A larger load never takes fewer devices.
  int64_t last = 0;
  for (double rate : {0.5, 2.0, 8.0, 32.0}) {
    r.rate = rate;
    const Result<Plan> q = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    EXPECT_GE(q->variants[0].load->gpus, last) << rate;
    last = q->variants[0].load->gpus;
  }
}

// Concurrency on a fixed fleet: whole requests spread as evenly as they go (10 over 4 replicas:
// two hold 3, two hold 2); the report's point is the most loaded replica; the fleet completes
// what its replicas do.
TEST(PlanLoad, ConcurrencySpreadsWholeRequestsOverTheReplicas) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 2;
  r.concurrency = 10;
  const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const LoadServed& l = *p->variants[0].load;
  EXPECT_EQ(l.replicas, 4);
  EXPECT_EQ(l.gpus, 8);
  EXPECT_EQ(l.point.batch, 3);
  EXPECT_TRUE(l.carried);
  const double expected =
      2 * RequestRate(PointAt(c, r, 3), r) + 2 * RequestRate(PointAt(c, r, 2), r);
  EXPECT_NEAR(l.fleet_requests_per_s, expected, 1e-12 * expected);
  // One replica of tp 2 holds all 10 within its KV room: 2 devices would carry them.
  EXPECT_GE(p->variants[0].largest.batch, 10);
  EXPECT_EQ(l.gpus_needed, 2);
  const nlohmann::json j = nlohmann::json::parse(RenderPlanJson(*p));
  EXPECT_EQ(j["load"]["concurrency"].get<int64_t>(), 10);
  EXPECT_EQ(j["variants"][0]["load"]["gpus"].get<int64_t>(), 8);
  EXPECT_EQ(j["variants"][0]["load"]["at_load"]["batch"].get<int64_t>(), 3);
  EXPECT_TRUE(j["variants"][0]["load"]["carried"].get<bool>());
  // As a table: a fourth row per variant, the load's columns.
  const Table t = PlanTable(*p);
  EXPECT_EQ(t.rows(), 4 * p->variants.size());
  ASSERT_NE(t.Find("fleet_gpus"), nullptr);
  EXPECT_EQ(t.Find("fleet_gpus")->ints[0], 8);
  r.concurrency = 0;
  const Result<Plan> free = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(PlanTable(*free).rows(), 3 * free->variants.size());
  EXPECT_EQ(PlanTable(*free).Find("fleet_gpus"), nullptr);
}

// A fleet too small for its load is not an error: it says what it completes and how many
// devices would carry the load; a target no batch meets says no fleet does.
TEST(PlanLoad, AFleetTooSmallSaysWhatWouldCarryIt) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 4;
  r.rate = 1000;
  const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const PlanVariant& v = p->variants[0];
  const LoadServed& l = *v.load;
  EXPECT_FALSE(l.carried);
  EXPECT_TRUE(l.overloaded);
  EXPECT_EQ(l.point.batch, v.hold_limit);
  EXPECT_NEAR(l.fleet_requests_per_s, 2 * RequestRate(l.point, r), 1e-12 * 1000);
  EXPECT_LT(l.fleet_requests_per_s, 1000);
  const std::string text = RenderPlanTable(*p);
  EXPECT_NE(text.find("not carried"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("carrying it takes {} GPUs", l.gpus_needed)), std::string::npos)
      << text;
  // The fewest that would: that many carry it, four fewer (one replica) do not.
  for (int64_t gpus : {l.gpus_needed, l.gpus_needed - 4}) {
    r.gpus = gpus;
    const Result<Plan> q = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    EXPECT_EQ(q->variants[0].load->carried, gpus == l.gpus_needed) << gpus;
  }
  r.gpus = 8;
  r.rate = 1;
  r.targets = {{"tpot", 1e-3, 50}};
  const Result<Plan> none = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->variants[0].load->carried);
  EXPECT_FALSE(none->variants[0].load->targets_reachable);
  EXPECT_NE(RenderPlanTable(*none).find("no batch meets the targets"), std::string::npos);
}

// The layout search under a load: a sized fleet takes the degree that carries it on the fewest
// devices, and of those the fastest requests; on a fixed fleet, the fastest requests.
TEST(PlanLoad, TheSearchTakesTheFewestDevicesThenTheFastestRequests) {
  const TransformerConfig c = Preset("llama-3-70b");
  for (int64_t gpus : {int64_t{0}, int64_t{8}}) {
    PlanRequest r = Fleet();
    r.gpus = gpus;
    r.rate = 3;
    const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const PlanVariant& v : p->variants) {
      ASSERT_TRUE(v.load.has_value());
      const LoadServed& chosen = *v.load;
      EXPECT_TRUE(chosen.carried);
      int tried = 0;
      for (const PlanLayout& l : v.layouts) {
        if (!l.load.has_value() || !l.load->carried) continue;
        ++tried;
        if (gpus == 0) {
          EXPECT_LE(chosen.gpus, l.load->gpus) << "tp " << l.tp;
        }
        if (gpus > 0 || l.load->gpus == chosen.gpus) {
          EXPECT_LE(chosen.point.expected_request_s, l.load->point.expected_request_s)
              << "tp " << l.tp;
        }
      }
      EXPECT_GE(tried, 2);
    }
  }
}

TEST(PlanLoad, BadLoadsAreRefusedWithOneLine) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--rate", "0"},
                                               {"--rate", "-2"},
                                               {"--rate", "inf"},
                                               {"--rate", "nan"},
                                               {"--rate", "1e10"},
                                               {"--rate", "fast"},
                                               {"--concurrency", "0"},
                                               {"--concurrency", "-1"},
                                               {"--concurrency", "17M"},
                                               {"--rate", "1", "--concurrency", "4"},
                                               {"--gpus", "0", "--rate", "1"},
                                               {"--rate", "1e-7"},
                                               {"--rate", "1e-320"},
                                               {"--gpus", "0"}}) {
    std::vector<std::string> argv = {"plan", "llama-3-8b", "--hw", "h100-sxm"};
    argv.insert(argv.end(), args.begin(), args.end());
    const testing::CliOutput run = testing::RunCli(argv);
    EXPECT_EQ(run.status, 2) << fmt::format("{}", fmt::join(args, " "));
    EXPECT_EQ(run.out, "") << args[0];
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  // A load so large no fleet within a million devices carries it.
  PlanRequest r = Fleet();
  r.gpus = 0;
  r.rate = 1e9;
  const Result<Plan> huge = MakePlan(Preset("llama-3-70b"), Workload{}, Dev("h100-sxm"), r);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().where(), "--rate");
}

// A prefix cache: the cached tokens of a prompt are attended to, not prefilled. Prefilling the
// fresh tokens after c cached ones costs exactly what prefilling the whole prompt costs less
// what prefilling its first c tokens costs (every op is per token; causal attention's work per
// query grows with its position), plus the one logit row the shorter prefill also computes.
TEST(PrefixCache, TheFreshTokensCostTheWholePromptLessItsCachedStart) {
  const TransformerConfig c = Preset("llama-3-8b");
  Workload decode;
  decode.batch = 4;
  decode.context = 3000;
  Workload mixed = decode;
  mixed.chunk = 1536;
  mixed.chunk_offset = 512;
  Workload whole;
  whole.batch = 1;
  whole.prompt = 2048;
  Workload start = whole;
  start.prompt = 512;
  const double fresh =
      Step(c, mixed, Phase::kDecode).totals.flops - Step(c, decode, Phase::kDecode).totals.flops;
  const double logit_row = 2.0 * static_cast<double>(c.hidden) * static_cast<double>(c.vocab);
  const double expected = Step(c, whole, Phase::kPrefill).totals.flops -
                          Step(c, start, Phase::kPrefill).totals.flops + logit_row;
  EXPECT_NEAR(fresh, expected, 1e-12 * expected);
  // The shape: only fresh tokens use the room; offsets count the cached ones.
  const ServingShape s = *ShapeOf({64, 2048, 256, 8192, 1536});
  EXPECT_DOUBLE_EQ(s.utilization, 64.0 / 256 * 512 / (8192 - 64));
  EXPECT_EQ(s.one_tokens, 512);
  EXPECT_EQ(s.one_offset, 1536);
  EXPECT_EQ(s.full_seqs, 16);  // 8128 tokens of room over prompts of 512
  EXPECT_EQ(s.full_offset, 1536 + (512 - s.full_tokens) / 2);
  EXPECT_FALSE(ShapeOf({64, 2048, 256, 8192, 2048}).ok());  // nothing left to prefill
}

// In a plan, a prefix cache shortens the time to first token and the steps that carry prompts,
// leaves the KV room alone, and lowers the FLOPs of a request (so its FLOP limit rises).
TEST(PrefixCache, APlanPrefillsOnlyTheFreshTokens) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 4;
  r.prompt = 4096;
  double last_ttft = 1e9, last_flops = 1e30;
  int64_t room = 0;
  for (double hit : {0.0, 0.5, 0.9}) {
    r.prefix_hit = hit;
    const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const PlanVariant& v = p->variants[0];
    if (room == 0) room = v.max_batch;
    EXPECT_EQ(v.max_batch, room) << hit;
    EXPECT_LT(v.batch1.expected_ttft_s, last_ttft) << hit;
    EXPECT_LT(v.flops_per_request, last_flops) << hit;
    last_ttft = v.batch1.expected_ttft_s;
    last_flops = v.flops_per_request;
    // No operating point passes the FLOP limit.
    EXPECT_LE(v.largest.output_tokens_per_s_per_gpu, v.flop_limit.output_tokens_per_s_per_gpu);
  }
  EXPECT_EQ(r.CachedTokens(), 3686);  // floor(0.9 x 4096)
  for (const char* bad : {"1", "-0.1", "2", "nan"}) {
    const testing::CliOutput run =
        testing::RunCli({"plan", "llama-3-8b", "--hw", "h100-sxm", "--prefix-hit", bad});
    EXPECT_EQ(run.status, 2) << bad;
    EXPECT_EQ(run.out, "") << bad;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// The request rate of a replica does not grow with the batch everywhere (expected times step up
// at tile boundaries), so the batch a rate runs at is where the rate first reaches the share as
// the replica fills from batch 1, found against every batch's rate.
TEST(PlanLoad, TheBatchForARateIsWhereTheReplicaFirstKeepsUp) {
  const TransformerConfig c = Preset("llama-3-8b");
  PlanRequest r = Fleet();
  r.tp = 1;
  r.gpus = 1;
  r.rate = 1;
  const Result<Plan> probe = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  const int64_t hold = probe->variants[0].hold_limit;
  std::vector<double> rates = {0};  // rates[b]: requests/s at batch b
  int dips = 0;
  for (int64_t b = 1; b <= hold; ++b) {
    rates.push_back(RequestRate(PointAt(c, r, b), r));
    if (b > 1 && rates[b] < rates[b - 1]) ++dips;
  }
  EXPECT_GT(dips, 0);  // the case the search must not be fooled by
  std::vector<double> shares;
  for (int64_t b = 2; b <= hold; ++b) {
    if (rates[b] < rates[b - 1]) {
      shares.push_back(rates[b]);  // reached first below the dip
      shares.push_back(0.5 * (rates[b] + rates[b - 1]));
    }
  }
  for (double f : {0.05, 0.3, 0.6, 0.9}) shares.push_back(f * rates[hold]);
  for (double share : shares) {
    r.rate = share;
    const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    int64_t first = 1;
    while (first <= hold && rates[first] < share) ++first;
    const LoadServed& l = *p->variants[0].load;
    ASSERT_LE(first, hold) << share;
    EXPECT_EQ(l.point.batch, first) << share;
    EXPECT_FALSE(l.overloaded) << share;
  }
}

// A sized fleet carries its load, and one replica fewer would not: near whole multiples of a
// replica's capacity, under targets, on two devices.
TEST(PlanLoad, ASizedFleetCarriesItsLoadAndOneReplicaFewerWouldNot) {
  for (const char* device : {"h100-sxm", "a100-sxm-80gb"}) {
    const TransformerConfig c = Preset("llama-3-8b");
    PlanRequest r = Fleet();
    r.tp = 1;
    r.gpus = 0;
    r.targets = {{"tpot", 0.03, 50}};
    r.rate = 1;
    const Result<Plan> probe = MakePlan(c, Workload{}, Dev(device), r);
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    const double capacity = probe->variants[0].load->capacity_rate;
    for (double load :
         {0.97 * capacity, 1.0 * capacity, 1.01 * capacity, 2.99 * capacity, 3.02 * capacity}) {
      r.rate = load;
      r.gpus = 0;
      const Result<Plan> p = MakePlan(c, Workload{}, Dev(device), r);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      const LoadServed& l = *p->variants[0].load;
      EXPECT_TRUE(l.carried) << device << " " << load;
      if (l.replicas < 2) continue;
      r.gpus = l.replicas - 1;  // tp 1: one device a replica
      const Result<Plan> fewer = MakePlan(c, Workload{}, Dev(device), r);
      ASSERT_TRUE(fewer.ok()) << fewer.status().ToString();
      EXPECT_FALSE(fewer->variants[0].load->carried) << device << " " << load;
    }
  }
}

// A fleet given with --gpus too small for a load no million devices carry still exits 0 and
// says so; the smallest rate taken is one request in about 12 days; counts of one are singular.
TEST(PlanLoad, ExtremeLoadsOnAFixedFleetAreReportedNotRefused) {
  const testing::CliOutput huge =
      testing::RunCli({"plan", "llama-3-8b", "--hw", "h100-sxm", "--gpus", "8", "--rate", "1e8"});
  EXPECT_EQ(huge.status, 0) << huge.err;
  EXPECT_NE(huge.out.find("carrying it takes more than a million GPUs"), std::string::npos)
      << huge.out;
  const testing::CliOutput tiny = testing::RunCli(
      {"plan", "llama-3-8b", "--hw", "h100-sxm", "--rate", "1e-6", "--price-per-hour", "2"});
  EXPECT_EQ(tiny.status, 0) << tiny.err;
  const size_t inf = tiny.out.find("inf");
  EXPECT_EQ(inf, std::string::npos)
      << tiny.out.substr(inf == std::string::npos ? 0 : inf - 200, 300);
  const testing::CliOutput one =
      testing::RunCli({"plan", "llama-3-8b", "--hw", "h100-sxm", "--concurrency", "1"});
  EXPECT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find("a load of 1 request in flight"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("a replica's share is 1 request in flight"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find(" 1 requests "), std::string::npos) << one.out;
}

// Request lengths as a spread: the lognormal's moments and percentiles (mean = exp(mu + sigma^2 /
// 2), median = exp(mu), E[X^2] = exp(2 mu + 2 sigma^2): any statistics text), the discrete
// uniform's (variance ((n^2 - 1) / 12) for n values), one value, and what is refused.
TEST(Lengths, MomentsAndPercentilesAreTheDistributions) {
  const Lengths ln = *ParseLengths("lognormal:2048,0.6", "--prompt");
  const double mu = std::log(2048.0) - 0.18;
  EXPECT_DOUBLE_EQ(ln.mean, 2048);
  EXPECT_NEAR(ln.mean_sq, std::exp(2 * mu + 2 * 0.36), 1e-9 * ln.mean_sq);
  EXPECT_NEAR(ln.Cv2(), std::exp(0.36) - 1, 1e-12);
  EXPECT_EQ(ln.AtPercentile(50), std::llround(std::exp(mu)));  // 1711
  EXPECT_EQ(ln.AtPercentile(99), std::llround(std::exp(mu + 0.6 * 2.3263478740408408)));
  EXPECT_EQ(ln.Mean(), 2048);
  EXPECT_EQ(ParseLengths(ln.ToString(), "--prompt")->ToString(), ln.ToString());
  const Lengths u = *ParseLengths("uniform:1k,3072", "--prompt");
  EXPECT_DOUBLE_EQ(u.mean, 2048);
  EXPECT_NEAR(u.mean_sq - u.mean * u.mean, (2049.0 * 2049 - 1) / 12, 1e-9 * u.mean_sq);
  EXPECT_EQ(u.AtPercentile(90), 1024 + 1845 - 1);  // ceil(0.9 x 2049) values from 1024
  EXPECT_EQ(u.ToString(), "uniform:1024,3072");
  const Lengths one = *ParseLengths("2k", "--prompt");
  EXPECT_TRUE(one.fixed());
  EXPECT_EQ(one.AtPercentile(99), 2048);
  EXPECT_DOUBLE_EQ(one.Cv2(), 0);
  for (const char* bad :
       {"", "0", "-5", "20M", "2.5", "lognormal:2048", "lognormal:0,1", "lognormal:2048,-1",
        "lognormal:2048,3", "lognormal:2048,nan", "lognormal:2048,0x1", "lognormal:2048,0.6,1",
        "lognormal:abc,1", "uniform:5,2", "uniform:0,5", "gamma:1,2", ":", "lognormal:,"}) {
    const Result<Lengths> l = ParseLengths(bad, "--prompt");
    EXPECT_FALSE(l.ok()) << bad;
    if (!l.ok()) {
      EXPECT_EQ(l.status().where(), "--prompt") << bad;
    }
  }
}

// The serving figures under a spread of lengths: the wait for prefill room grows by 1 + cv^2
// (M/G/1, Pollaczek-Khinchine), a TTFT at a percentile prefills the prompt at that percentile,
// an E2E at a percentile decodes the output at it; a spread of none changes nothing.
TEST(Serving, ASpreadOfLengthsReachesTheQueueAndTheTails) {
  ServingLoad load{300, 2048, 256, 8192};
  const ServingShape s = *ShapeOf(load);  // utilization 300 / 256 x 2048 / 7892 = 0.30
  const StepTimes t{0.010, 0.030, 0.070};
  const ServingFigures fixed = Serve(load, s, t, 99);
  const Lengths none = *ParseLengths("uniform:2048,2048", "--prompt");
  load.prompts = &none;
  const ServingFigures same = Serve(load, s, t, 99);
  EXPECT_DOUBLE_EQ(same.ttft_s, fixed.ttft_s);
  EXPECT_DOUBLE_EQ(same.ttft_mean_s, fixed.ttft_mean_s);
  const Lengths ln = *ParseLengths("lognormal:2048,0.8", "--prompt");
  load.prompts = &ln;
  const ServingFigures spread = Serve(load, s, t, 99);
  // The mean wait, in steps, M/D/1 without the spread: rho x S / (2 (1 - rho)), S = P / room.
  const double rho = s.utilization, service = 2048.0 / static_cast<double>(s.room);
  const double wait = rho * service / (2 * (1 - rho)) * fixed.step_s;
  EXPECT_NEAR(spread.ttft_mean_s - fixed.ttft_mean_s, ln.Cv2() * wait, 1e-12);
  // At p99 the request's own prompt is the 99th percentile's, longer than the room: a step
  // with the room filled, then one with the rest (between the decode step and a full room).
  const double x = static_cast<double>(ln.AtPercentile(99));
  const double room = static_cast<double>(s.room);
  ASSERT_GT(x, room);
  ASSERT_LT(x, 2 * room);
  EXPECT_NEAR(spread.own_prefill_s, t.full + t.decode + (t.full - t.decode) * (x - room) / room,
              1e-12);
  EXPECT_GT(spread.ttft_s, fixed.ttft_s);
  // At the median the prompt is shorter than the mean: a shorter own prefill (on the chord
  // from the decode step).
  const ServingFigures median = Serve(load, s, t, 50);
  EXPECT_LT(median.own_prefill_s, Serve(ServingLoad{300, 2048, 256, 8192}, s, t, 50).own_prefill_s);
  // E2E at p99: the output at its 99th percentile.
  const Lengths out = *ParseLengths("lognormal:256,0.6", "--output");
  load.outputs = &out;
  const ServingFigures e2e = Serve(load, s, t, 99);
  EXPECT_NEAR(e2e.e2e_s, e2e.ttft_s + static_cast<double>(out.AtPercentile(99) - 1) * e2e.tpot_s,
              1e-12);
}

// In a plan: a spread of outputs moves the decode steps to the running rows' mean context
// (long outputs hold their rows longer), launch lines and the pre-flight take the 99th
// percentiles, and bad lengths are refused with one line.
TEST(PlanServing, SpreadsOfLengthsMoveTheDecodeContextAndTheLaunchLines) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 4;
  r.output_lengths = *ParseLengths("lognormal:256,0.6", "--output");
  r.prompt_lengths = *ParseLengths("uniform:1024,3072", "--prompt");
  const Lengths& g = *r.output_lengths;
  const Result<Plan> p = MakePlan(c, Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Outputs lognormal with sigma 0.6: E[G^2] / E[G] = 256 exp(0.36) = 366.93 (the lognormal's
  // moments), so the rows' mean context is the prompt + (366.93 + 1) / 2, whole: + 183, and
  // their mean final length, which the KV cache holds, the prompt + 367.
  EXPECT_EQ(p->request.MeanDecodeContext(), 2048 + 183);
  EXPECT_EQ(p->request.KvContext(), 2048 + 367);
  PlanRequest plain = Fleet();
  plain.tp = 4;
  const Result<Plan> q = MakePlan(c, Workload{}, Dev("h100-sxm"), plain);
  ASSERT_TRUE(q.ok());
  // Batch 1's decode step reads a longer context: a longer time per token than without.
  EXPECT_GT(p->variants[0].batch1.tpot_s, q->variants[0].batch1.tpot_s);
  const nlohmann::json j = nlohmann::json::parse(RenderPlanJson(*p));
  // The uniform prompt's p99: the 2029th of its 2049 values (ceil(0.99 x 2049)) from 1024.
  const int64_t longest = 1024 + 2029 - 1 + g.AtPercentile(99);
  EXPECT_EQ(r.LongestAtP99(), longest);
  EXPECT_NE(j["variants"][0]["launch"]["vllm"].get<std::string>().find(
                fmt::format("--max-model-len {}", longest)),
            std::string::npos);
  EXPECT_EQ(j["output_lengths"]["p99"].get<int64_t>(), g.AtPercentile(99));
  for (const char* bad : {"lognormal:2048", "uniform:9,3", "weibull:1,2", "0"}) {
    const testing::CliOutput run =
        testing::RunCli({"plan", "llama-3-8b", "--hw", "h100-sxm", "--prompt", bad});
    EXPECT_EQ(run.status, 2) << bad;
    EXPECT_EQ(run.out, "") << bad;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// No served point is faster than the FLOP limit, whatever the room's size or the prefill's
// share: a step whose room is not a whole number of equal chunks is costed up to the room.
TEST(PlanServing, NoPointPassesTheFlopLimitWithShortFreshPrompts) {
  struct Case {
    const char* model;
    const char* device;
    int64_t prompt, output, budget;
    double hit;
  };
  std::vector<Case> cases = {Case{"mixtral-8x7b", "a100-sxm-80gb", 128, 1, 0, 0.99},
                             Case{"llama-3-8b", "h100-sxm", 2, 1, 8191, 0},
                             Case{"llama-3-8b", "a100-sxm-80gb", 300, 1, 4097, 0.99},
                             Case{"mixtral-8x7b", "a100-sxm-80gb", 128, 1, 485, 0.99}};
  // Small odd and even budgets: the room is a few hundred 1-token or 2-token chunks.
  for (int64_t budget = 490; budget <= 500; ++budget) {
    cases.push_back(Case{"llama-3-8b", "h100-sxm", 2, 1, budget, 0});
    cases.push_back(Case{"llama-3-8b", "h100-sxm", 3, 1, budget, 0});
  }
  for (const Case& k : cases) {
    PlanRequest r = Fleet();
    r.gpus = k.model == std::string("llama-3-8b") ? 1 : 4;
    r.prompt = k.prompt;
    r.output = k.output;
    r.budget = k.budget;
    r.prefix_hit = k.hit;
    const Result<Plan> p = MakePlan(Preset(k.model), Workload{}, Dev(k.device), r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const PlanVariant& v : p->variants) {
      const double limit = v.flop_limit.output_tokens_per_s_per_gpu;
      EXPECT_LE(v.largest.output_tokens_per_s_per_gpu, limit) << k.model << " " << v.name;
      EXPECT_LE(v.batch1.output_tokens_per_s_per_gpu, limit) << k.model << " " << v.name;
      for (const ParetoPoint& q : v.pareto) {
        if (q.tp == v.tp) {
          EXPECT_LE(q.tokens_per_s_per_gpu, limit) << k.model << " " << q.batch;
        }
      }
    }
  }
}

// A spread of one value is no spread: the plan is the same, word for word, and a library caller
// that gives only the spreads gets their means.
TEST(PlanServing, ASpreadOfOneValueIsNone) {
  const std::vector<std::string> base = {"plan",     "llama-3-8b", "--hw",
                                         "h100-sxm", "--format",   "json"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), extra.begin(), extra.end());
    const testing::CliOutput out = testing::RunCli(argv);
    EXPECT_EQ(out.status, 0) << out.err;
    return out.out;
  };
  const std::string plain = run({});
  EXPECT_EQ(run({"--output", "uniform:256,256", "--prompt", "uniform:2048,2048"}), plain);
  EXPECT_EQ(run({"--output", "256", "--prompt", "2k", "--prefix-hit", "0"}), plain);
  PlanRequest r = Fleet();
  r.tp = 1;
  r.prompt = 1;  // taken from the spread
  r.prompt_lengths = *ParseLengths("lognormal:1024,0.5", "--prompt");
  const Result<PlanPointAtBatch> at =
      PlanPointAt(Preset("llama-3-8b"), Workload{}, Dev("h100-sxm"), r, 8);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  r.prompt = 1024;
  const Result<PlanPointAtBatch> same =
      PlanPointAt(Preset("llama-3-8b"), Workload{}, Dev("h100-sxm"), r, 8);
  ASSERT_TRUE(same.ok());
  EXPECT_DOUBLE_EQ(at->point.expected_ttft_s, same->point.expected_ttft_s);
}

}  // namespace serving_test
}  // namespace roofline
