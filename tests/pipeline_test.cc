// Pipeline parallelism with micro-batches: vLLM's split of the layers over stages, a step's
// kernels on its stages, and serving plans whose replicas keep a micro-batch in flight per stage.
#include "roofline/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "roofline/efficiency.h"
#include "roofline/model_registry.h"
#include "roofline/plan.h"
#include "roofline/report.h"
#include "tests/test_util.h"

namespace roofline {
namespace pipeline_test {

using testing::Dev;

TransformerConfig Preset(const std::string& id) {
  return *ResolveModel(id, ModelRegistry::LoadEmbedded());
}

CostModel Expected(const Device& d) {
  CostOptions o;
  o.efficiency = std::make_shared<const EfficiencyData>(*LoadDefaultEfficiencyData());
  return CostModel(d, o);
}

// vLLM's get_pp_indices (vllm/distributed/utils.py): layers // stages each, the remainder one
// each on the stages before the last, from the last but one backwards. The cases are worked
// from that rule: 61 layers (DeepSeek-V3) on 2 and 4 stages, 22 on 4, 5 on 3.
TEST(StageLayers, SplitAsVllmSplitsThem) {
  EXPECT_EQ(StageLayers(61, 2), (std::vector<int64_t>{31, 30}));
  EXPECT_EQ(StageLayers(61, 4), (std::vector<int64_t>{15, 15, 16, 15}));
  EXPECT_EQ(StageLayers(22, 4), (std::vector<int64_t>{5, 6, 6, 5}));
  EXPECT_EQ(StageLayers(5, 3), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(StageLayers(80, 1), (std::vector<int64_t>{80}));
  EXPECT_EQ(StageLayers(120, 16).size(), 16u);
  for (int64_t stages = 1; stages <= 16; ++stages) {
    const std::vector<int64_t> s = StageLayers(120, stages);
    EXPECT_EQ(std::accumulate(s.begin(), s.end(), int64_t{0}), 120) << stages;
    EXPECT_LE(*std::max_element(s.begin(), s.end()) - *std::min_element(s.begin(), s.end()), 1);
  }
  EXPECT_TRUE(StageLayers(3, 4).empty());
  EXPECT_TRUE(StageLayers(3, 0).empty());
}

// Every kernel of a step runs on exactly its stages: the stages' bounds add up to the step's
// (dense, MoE with dense first layers, MLA; decode and a mixed step), and the cycle is stages
// times the busiest, so never below the step.
TEST(PipelineCycle, StagesAddUpToTheStep) {
  struct Case {
    const char* model;
    const char* device;
    int64_t tp, pp;
  };
  for (const Case& k :
       {Case{"llama-3-70b", "h100-sxm", 2, 4}, Case{"deepseek-v3", "h200", 8, 2},
        Case{"deepseek-v3", "h200", 4, 4}, Case{"mixtral-8x7b", "a100-sxm-80gb", 1, 4},
        Case{"llama-3.1-405b", "a100-sxm-80gb", 8, 3}}) {
    const TransformerConfig c = Preset(k.model);
    const CostModel m = Expected(Dev(k.device));
    for (int64_t chunk : {int64_t{0}, int64_t{1500}}) {
      Workload w;
      w.tp = k.tp;
      w.pp = k.pp;
      w.batch = 24;
      w.context = 3000;
      w.chunk = chunk;
      Result<PhaseResult> step = AnalyzePhase(c, w, m, Phase::kDecode);
      ASSERT_TRUE(step.ok()) << k.model << ": " << step.status().ToString();
      Result<PipelineCycle> cycle = CycleOf(*step, c.layers, k.pp, m);
      ASSERT_TRUE(cycle.ok()) << cycle.status().ToString();
      const double sum =
          std::accumulate(cycle->stage_bound_s.begin(), cycle->stage_bound_s.end(), 0.0);
      EXPECT_NEAR(sum, step->totals.time_s, 1e-12 * step->totals.time_s) << k.model;
      EXPECT_GE(cycle->bound_s, step->totals.time_s * (1 - 1e-12)) << k.model;
      ASSERT_TRUE(cycle->has_expected);
      // Each stage's expected time is at least its bound.
      for (size_t s = 0; s < cycle->stage_bound_s.size(); ++s) {
        EXPECT_GE(cycle->stage_expected_s[s], cycle->stage_bound_s[s]) << k.model << " " << s;
      }
      EXPECT_GE(cycle->expected_s, cycle->bound_s);
    }
  }
  // 80 layers on 4 stages split evenly: the last stage, which also runs the output layer, is
  // the busiest.
  const TransformerConfig c = Preset("llama-3-70b");
  Workload w;
  w.tp = 2;
  w.pp = 4;
  w.batch = 8;
  w.context = 2000;
  const CostModel m(Dev("h100-sxm"));
  Result<PhaseResult> step = AnalyzePhase(c, w, m, Phase::kDecode);
  ASSERT_TRUE(step.ok());
  Result<PipelineCycle> cycle = CycleOf(*step, c.layers, 4, m);
  ASSERT_TRUE(cycle.ok());
  EXPECT_EQ(cycle->busiest_bound, 3);
  EXPECT_FALSE(cycle->has_expected);  // no efficiency data: bounds only
  EXPECT_FALSE(CycleOf(*step, c.layers, 81, m).ok());
}

// With stages on a GPU, a device holds its stage's layers: the fullest of vLLM's split sets the
// footprint. gpt-4-class (120 layers, one key/value head of 128) on 16 stages at tp 8: stages of
// 8 layers, so 8 x 2 x 128 x 2 B = 4096 B of KV per token on a device (7.5 layers, 3840 B, on an
// even share), and at least an even share of the weights.
TEST(PipelineFootprint, TheFullestStageSetsIt) {
  const TransformerConfig c = Preset("gpt-4-class");
  Workload w;
  w.tp = 8;
  w.pp = 16;
  Result<MemoryFootprint> f = Footprint(c, w, Dev("a100-sxm-80gb"), 4, 8192);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_DOUBLE_EQ(f->kv_bytes_per_token, 8 * 2 * 128 * 2);
  EXPECT_DOUBLE_EQ(f->kv_cache_bytes, 4096.0 * 8192 * 4);
  Workload one = w;
  one.pp = 1;
  Result<MemoryFootprint> whole = Footprint(c, one, Dev("a100-sxm-80gb"), 4, 8192);
  ASSERT_TRUE(whole.ok());
  EXPECT_GE(f->weights_bytes, whole->weights_bytes / 16);
  EXPECT_LT(f->weights_bytes, whole->weights_bytes / 16 * 1.1);
  // 80 layers on 4 stages split evenly: the last stage, with the output layer, is the fullest;
  // its weights are a quarter of the layers' and the output layer's (untied).
  const TransformerConfig l70 = Preset("llama-3-70b");
  Workload w4;
  w4.tp = 2;
  w4.pp = 4;
  Result<MemoryFootprint> f4 = Footprint(l70, w4, Dev("h100-sxm"), 1, 2048);
  Workload w1 = w4;
  w1.pp = 1;
  Result<MemoryFootprint> f1 = Footprint(l70, w1, Dev("h100-sxm"), 1, 2048);
  ASSERT_TRUE(f4.ok() && f1.ok());
  const double vocab_rows = 128256.0 * 8192 * 2 / 2;  // one table at tp 2, bf16
  // Stage 3 holds 20 layers, the final norm and the output layer; the whole holds 80 layers,
  // the embedding, the norm and the output layer.
  const double layers = (f1->weights_bytes - 2 * vocab_rows - 8192 * 2) / 80;
  EXPECT_NEAR(f4->weights_bytes, 20 * layers + vocab_rows + 8192 * 2, 1e-9 * f4->weights_bytes);
}

PlanRequest Fleet() {
  PlanRequest r;
  r.gpus = 8;
  r.prompt = 2048;
  r.output = 256;
  r.cost.efficiency = std::make_shared<const EfficiencyData>(*LoadDefaultEfficiencyData());
  return r;
}

// A replica of tp x pp devices keeps pp micro-batches in flight: its batches are whole numbers
// of micro-batches, a micro-batch's step takes at least its own step through every stage, and
// the served point stays below the FLOP limit.
TEST(PlanPipeline, AReplicaKeepsAMicroBatchPerStage) {
  const TransformerConfig c = Preset("llama-3-70b");
  PlanRequest r = Fleet();
  r.tp = 4;
  Workload w;
  w.pp = 2;
  const Result<Plan> p = MakePlan(c, w, Dev("h100-sxm"), r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const PlanVariant& v : p->variants) {
    EXPECT_EQ(v.pp, 2);
    EXPECT_EQ(v.micro_batches, 2) << v.name;
    EXPECT_EQ(v.batch1.batch, 2);
    EXPECT_EQ(v.largest.batch % 2, 0);
    EXPECT_EQ(v.hold_limit % 2, 0);
    EXPECT_LE(v.hold_limit, v.max_batch);
    for (const ParetoPoint& q : v.pareto) EXPECT_EQ(q.batch % 2, 0);
    EXPECT_LE(v.largest.output_tokens_per_s_per_gpu, v.flop_limit.output_tokens_per_s_per_gpu)
        << v.name;
  }
  // One request a micro-batch: each decodes no faster than its own step through both stages.
  const PlanVariant& v = p->variants[0];
  Workload one = w;
  one.tp = 4;
  one.batch = 1;
  one.context = r.MeanDecodeContext();
  Result<PhaseResult> step =
      AnalyzePhase(c, one, CostModel(Dev("h100-sxm"), r.cost), Phase::kDecode);
  ASSERT_TRUE(step.ok());
  EXPECT_GE(v.batch1.tpot_s, step->totals.time_s * (1 - 1e-9));
  EXPECT_GE(v.batch1.expected_tpot_s, step->totals.expected_s * (1 - 1e-9));
  // A point at a given batch (the serving validation's) is the plan's point there, and takes
  // whole micro-batches only.
  Result<PlanPointAtBatch> at2 = PlanPointAt(c, w, Dev("h100-sxm"), r, 2);
  ASSERT_TRUE(at2.ok()) << at2.status().ToString();
  EXPECT_EQ(at2->point.micro_batches, 2);
  EXPECT_DOUBLE_EQ(at2->point.output_tokens_per_s_per_gpu, v.batch1.output_tokens_per_s_per_gpu);
  EXPECT_FALSE(PlanPointAt(c, w, Dev("h100-sxm"), r, 3).ok());  // not a whole micro-batch each
}

// Where no tensor-parallel degree within a link domain holds the model, the search adds
// pipeline stages (tp within the domain, stages across); where one does, it adds none.
TEST(PlanPipeline, TheSearchAddsStagesWhereNoLinkDomainHoldsTheModel) {
  PlanRequest r = Fleet();
  r.gpus = 16;
  // Llama-3.1-405B in bf16: 810 GB of weights, more than 8 A100s of 80 GB hold.
  const Result<Plan> big = MakePlan(Preset("llama-3.1-405b"), Workload{}, Dev("a100-sxm-80gb"), r);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  const PlanVariant& v = big->variants[0];
  EXPECT_GT(v.pp, 1);
  EXPECT_LE(v.tp, 8);
  EXPECT_EQ(v.micro_batches, v.pp);
  EXPECT_LE(v.tp * v.pp * v.replicas, 16);
  int staged = 0;
  for (const PlanLayout& l : v.layouts) {
    EXPECT_LE(l.tp, 8);  // no tensor parallelism across link domains
    if (l.pp > 1) {
      ++staged;
      EXPECT_TRUE(l.fits);
      EXPECT_LE(l.tp * l.pp, 16);
    }
  }
  EXPECT_GT(staged, 1);
  EXPECT_NE(RenderPlanTable(*big).find("micro-batches in flight"), std::string::npos);
  // DeepSeek-V3 in bf16 fits 8 H100s at tp 8 with room for a handful of requests; with 16
  // (two domains) the search also tries stages, and one of them serves more than any degree on
  // one stage.
  r = Fleet();
  r.gpus = 16;
  const Result<Plan> dsv3 = MakePlan(Preset("deepseek-v3"), Workload{}, Dev("h100-sxm"), r);
  ASSERT_TRUE(dsv3.ok()) << dsv3.status().ToString();
  double best_one_stage = 0, best_staged = 0;
  for (const PlanLayout& l : dsv3->variants[0].layouts) {
    if (!l.fits) continue;
    (l.pp > 1 ? best_staged : best_one_stage) =
        std::max(l.pp > 1 ? best_staged : best_one_stage, l.expected_fleet_output_tokens_per_s);
  }
  EXPECT_GT(best_one_stage, 0);
  EXPECT_GT(best_staged, best_one_stage);
  EXPECT_TRUE(dsv3->variants[0].stages_searched);
  // Llama-3-70B fits 8 H100s at tp 2 to 8: no stages tried, as before.
  const Result<Plan> small = MakePlan(Preset("llama-3-70b"), Workload{}, Dev("h100-sxm"), Fleet());
  ASSERT_TRUE(small.ok());
  for (const PlanLayout& l : small->variants[0].layouts) EXPECT_EQ(l.pp, 1);
}

// A load is split over a replica's micro-batches as over replicas: at a concurrency the
// replica holds its share (its busiest micro-batch one more than the others at most), at a rate
// every micro-batch its equal part.
TEST(PlanPipeline, ALoadIsSplitOverMicroBatches) {
  PlanRequest r = Fleet();
  r.gpus = 16;
  r.concurrency = 300;
  const Result<Plan> byc = MakePlan(Preset("llama-3.1-405b"), Workload{}, Dev("a100-sxm-80gb"), r);
  ASSERT_TRUE(byc.ok()) << byc.status().ToString();
  const PlanVariant& v = byc->variants[0];
  ASSERT_TRUE(v.load.has_value());
  ASSERT_GT(v.micro_batches, 1);
  const int64_t share = (300 + v.load->replicas - 1) / v.load->replicas;
  EXPECT_EQ(v.load->share, share);
  EXPECT_LE(v.load->point.batch, share);
  EXPECT_EQ(v.load->point.micro_batches, v.micro_batches);
  r.concurrency = 0;
  r.rate = 0.5;
  const Result<Plan> byr = MakePlan(Preset("llama-3.1-405b"), Workload{}, Dev("a100-sxm-80gb"), r);
  ASSERT_TRUE(byr.ok()) << byr.status().ToString();
  const PlanVariant& w = byr->variants[0];
  ASSERT_TRUE(w.load.has_value());
  EXPECT_EQ(w.load->point.batch % w.micro_batches, 0);
  EXPECT_LE(w.load->point.batch, w.load->hold_limit);
}

}  // namespace pipeline_test
}  // namespace roofline
