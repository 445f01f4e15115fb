// SRAM-only and wafer-scale accelerators: the device fields (model_split, a level holding only
// weights), the fewest pipeline stages that hold a model, the pipeline hop, weight streaming, the
// chip count in sweeps and plans, and the published rows that check the bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "roofline/efficiency.h"
#include "roofline/llm.h"
#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/plan.h"
#include "roofline/published.h"
#include "roofline/report.h"
#include "roofline/sweep.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace sram_accelerators_test {

using testing::Dev;
using testing::CliOutput;
using testing::RunCli;
using testing::SweepOne;

TransformerConfig Model(const std::string& id) {
  static const ModelRegistry registry = [] {
    Result<ModelRegistry> r = ModelRegistry::LoadDefault();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ModelRegistry{};
  }();
  Result<TransformerConfig> c = ResolveModel(id, registry);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

// A device with one SRAM level and a link, optionally split and optionally streaming weights.
std::string SramJson(const std::string& memory, const std::string& extra) {
  return R"({"schema_version": 1, "id": "t", "name": "T", "vendor": "v", "kind": "accelerator",
    "compute": {"tensor.fp16": {"value": 1e14, "unit": "FLOP/s", "provenance": "spec",
                                "source": "test"}},
    "memory": )" +
         memory + R"(,
    "links": [{"name": "c2c", "bandwidth": {"value": 1e11, "unit": "B/s", "provenance": "spec",
               "source": "test"}}])" +
         extra + "}";
}
const char* kOneSram = R"([{"level": "sram", "capacity": {"value": 2e8, "unit": "B",
    "provenance": "spec", "source": "test"}, "bandwidth": {"value": 8e13, "unit": "B/s",
    "provenance": "spec", "source": "test"}}])";
const char* kSplit = R"(, "model_split": {"source": "test vendor paper"})";

TEST(SramDevices, TheShippedFilesCarryTheirMemoryModel) {
  const Device& groq = Dev("groq-lpu");
  ASSERT_TRUE(groq.model_split.has_value());
  EXPECT_EQ(groq.memory.size(), 1u);  // no off-chip memory
  // ISCA 2022: 220 MiB of SRAM per chip.
  EXPECT_DOUBLE_EQ(groq.device_memory().capacity.value, 220.0 * 1024 * 1024);
  for (const char* id : {"cerebras-cs2", "cerebras-cs3"}) {
    EXPECT_TRUE(Dev(id).model_split.has_value()) << id;
  }
  const Device& ws = Dev("cerebras-cs3-memoryx");
  EXPECT_FALSE(ws.model_split.has_value());
  EXPECT_TRUE(ws.memory[0].weights_only);
  EXPECT_FALSE(ws.memory[1].weights_only);
  // 1.2 Tb/s of system I/O = 150 GB/s (Argonne/Cerebras SC24 tutorial).
  EXPECT_DOUBLE_EQ(ws.memory[0].bandwidth_bytes_per_s(), 1.2e12 / 8);
  // Round trip keeps both fields.
  for (const Device* d : {&groq, &ws}) {
    Result<Device> again = ParseDevice(DeviceToJson(*d), "roundtrip");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->model_split.has_value(), d->model_split.has_value());
    EXPECT_EQ(again->memory[0].weights_only, d->memory[0].weights_only);
  }
}

TEST(SramDevices, BadFieldsAreRefusedWithTheirName) {
  struct Case {
    std::string json, field;
  };
  const std::string two_levels_holds_second =
      R"([{"level": "hbm", "capacity": {"value": 8e10, "unit": "B", "provenance": "spec",
      "source": "t"}, "bandwidth": {"value": 3e12, "unit": "B/s", "provenance": "spec",
      "source": "t"}}, {"level": "sram", "holds": "weights", "capacity": {"value": 5e7,
      "unit": "B", "provenance": "spec", "source": "t"}}])";
  const std::string holds_alone =
      R"([{"level": "x", "holds": "weights", "capacity": {"value": 8e10, "unit": "B",
      "provenance": "spec", "source": "t"}, "bandwidth": {"value": 3e12, "unit": "B/s",
      "provenance": "spec", "source": "t"}}])";
  const std::string holds_what =
      R"([{"level": "x", "holds": "kv", "capacity": {"value": 8e10, "unit": "B",
      "provenance": "spec", "source": "t"}, "bandwidth": {"value": 3e12, "unit": "B/s",
      "provenance": "spec", "source": "t"}}])";
  const Case cases[] = {
      {SramJson(two_levels_holds_second, ""), "memory[1].holds"},
      {SramJson(holds_alone, ""), "memory[0].holds"},
      {SramJson(holds_what, ""), "memory[0].holds"},
      {SramJson(kOneSram, R"(, "model_split": {"source": ""})"), "model_split.source"},
      {SramJson(kOneSram, R"(, "model_split": {"source": "x", "chips": 4})"), "model_split"},
      {SramJson(kOneSram, R"(, "model_split": 3)"), "model_split"},
  };
  for (const Case& c : cases) {
    Result<Device> d = ParseDevice(c.json, "bad.json");
    ASSERT_FALSE(d.ok()) << c.field;
    EXPECT_NE(d.status().ToString().find(c.field), std::string::npos) << d.status().ToString();
    EXPECT_EQ(d.status().ToString().find('\n'), std::string::npos);
  }
  // A split needs a link between the chips.
  const std::string no_link = std::string(R"({"schema_version": 1, "id": "t", "name": "T",
    "vendor": "v", "kind": "accelerator", "compute": {"tensor.fp16": {"value": 1e14,
    "unit": "FLOP/s", "provenance": "spec", "source": "test"}}, "memory": )") +
                              kOneSram + kSplit + "}";
  Result<Device> d = ParseDevice(no_link, "nolink.json");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().ToString().find("model_split"), std::string::npos) << d.status().ToString();
}

TEST(SramDevices, FewestStagesIsTheSmallestCountThatHolds) {
  // Hand arithmetic: 1000 B of weights + KV over chips of 100 B with 10 B of workspace each:
  // 1000 / 90 = 11.1 -> 12 chips (11 would hold 90.9 + 10 > 100).
  MemoryFootprint one;
  one.weights_bytes = 900;
  one.kv_cache_bytes = 100;
  one.workspace_bytes = 10;
  one.capacity_bytes = 100;
  EXPECT_EQ(FewestStages(one), 12);
  one.capacity_bytes = 1010;  // everything on one chip
  EXPECT_EQ(FewestStages(one), 1);
  // The workspace alone overflows a chip: no count can hold it. The count the weights and cache
  // fill (1000 / 5 = 200), whose footprint then reports the overflow.
  one.capacity_bytes = 5;
  EXPECT_EQ(FewestStages(one), 200);
  MemoryFootprint at = one;
  at.weights_bytes /= 200;
  at.kv_cache_bytes /= 200;
  EXPECT_FALSE(at.fits());
  // More than kMaxStagesCount would be needed: capped.
  one.capacity_bytes = 10.5;
  one.weights_bytes = 1e9;
  EXPECT_EQ(FewestStages(one), kMaxStagesCount);
}

TEST(SramDevices, ABatchWhoseWorkspaceOverflowsAChipDoesNotFitRatherThanFail) {
  // llama-3-70b decode at batch 1024: the largest op (lm_head, with its logits) alone moves more
  // activations than a GroqChip's 220 MiB, so no stage count holds it. The sweep marks the
  // point, not an error, and the chips column has no count there.
  const TransformerConfig c = Model("llama-3-70b");
  const CostModel m(Dev("groq-lpu"));
  Workload base;
  base.prompt = 2048;
  Result<SweepResult> r = SweepOne(c, base, m, PhaseSelection::kDecode, "batch=256:4096:x4");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->points.size(), 3u);
  EXPECT_TRUE(r->points[0].fits);
  EXPECT_FALSE(r->points[2].fits);
  EXPECT_GT(r->points[2].phases.front().time_s, 0);
  EXPECT_GT(r->points[0].chips, 1);
  for (const Crossover& x : r->crossovers) {
    if (x.signal.kind == SignalKind::kChips && x.to.count < 0) {
      EXPECT_GT(x.int_value, 256);
      EXPECT_LE(x.int_value, 4096);
    }
  }
  const std::string table = RenderSweepTable(*r, "t");
  EXPECT_NE(table.find("no count of pipeline stages (up to 100000) holds the model"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("to none"), std::string::npos) << table;
  bool capacity_flip = false;
  for (const Crossover& x : r->crossovers) {
    capacity_flip |= x.signal.kind == SignalKind::kCapacity;
  }
  EXPECT_TRUE(capacity_flip);
}

TEST(SramDevices, Llama70bOnGroqNeedsHundredsOfChips) {
  const TransformerConfig c = Model("llama-3-70b");
  const Device& d = Dev("groq-lpu");
  Workload w;
  w.batch = 1;
  w.prompt = 2048;
  Result<Workload> staged = ResolveStages(c, w, d);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  // Independent floor: 70.55 G parameters of 2 bytes (the preset's own count) over 220 MiB.
  const double params = static_cast<double>(CountParameters(c).total);
  const double floor_chips = std::ceil(params * 2 / d.device_memory().capacity.value);
  EXPECT_GE(staged->pp, static_cast<int64_t>(floor_chips));
  EXPECT_LE(staged->pp, static_cast<int64_t>(floor_chips) + 10);  // KV + workspace are small
  // The count holds the model and one fewer does not.
  Result<MemoryFootprint> at = Footprint(c, *staged, d, 1, 2048);
  ASSERT_TRUE(at.ok());
  EXPECT_TRUE(at->fits());
  Workload fewer = *staged;
  fewer.pp -= 1;
  EXPECT_FALSE(Footprint(c, fewer, d, 1, 2048)->fits());
  // A GPU keeps one stage unless --pp is given.
  EXPECT_EQ(ResolveStages(c, w, Dev("h100-sxm"))->pp, 1);
  Workload given = w;
  given.pp = 3;
  EXPECT_EQ(ResolveStages(c, given, d)->pp, 3);
}

TEST(SramDevices, PipelineHopsCostTheirBytesAndLatency) {
  const TransformerConfig c = Model("llama-3-8b");
  const Device& d = Dev("groq-lpu");
  Workload w;
  w.batch = 2;
  w.prompt = 512;
  w.pp = 5;
  const CostModel m(d);
  Result<PhaseResult> r = AnalyzePhase(c, w, m, Phase::kDecode);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool found = false;
  for (const KernelCost& k : r->costs) {
    if (k.name != "pipeline_send") continue;
    found = true;
    EXPECT_EQ(k.repeat, 4);  // stage boundaries
    // Two tokens of 4096 bf16 activations cross each boundary, in one latency step.
    const double bytes = 2.0 * 4096 * 2;
    EXPECT_DOUBLE_EQ(k.comm_bytes, bytes);
    const Link& link = *d.PrimaryLink();
    EXPECT_DOUBLE_EQ(k.comm_time_s, bytes / link.bandwidth.value + link.latency_s());
    EXPECT_EQ(k.bound.kind, BoundKind::kComm);
  }
  EXPECT_TRUE(found);
  // One stage: no hop.
  w.pp = 1;
  Result<PhaseResult> one = AnalyzePhase(c, w, m, Phase::kDecode);
  ASSERT_TRUE(one.ok());
  for (const KernelCost& k : one->costs) {
    EXPECT_NE(k.name, "pipeline_send");
  }
}

TEST(SramDevices, WeightStreamingMovesOnlyWeightsThroughTheStore) {
  const TransformerConfig c = Model("llama-3-8b");
  const Device& d = Dev("cerebras-cs3-memoryx");
  Workload w;
  w.batch = 4;
  w.prompt = 4096;
  const CostModel m(d);
  Result<ModelAnalysis> a = AnalyzeModel(c, w, m, PhaseSelection::kDecode);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const PhaseResult& dec = a->phases.front();
  // The store carries the weights, each read once per step (the embedding table only for its
  // gathered rows); the KV cache and the activations cross only the SRAM.
  const double table = static_cast<double>(c.vocab) * static_cast<double>(c.hidden) * 2;
  EXPECT_LE(dec.totals.bytes[0], a->memory.weights_bytes * (1 + 1e-12));
  EXPECT_GE(dec.totals.bytes[0], a->memory.weights_bytes - table);
  EXPECT_GT(dec.totals.bytes[1], dec.totals.bytes[0]);
  EXPECT_EQ(dec.totals.verdict.kind, BoundKind::kMemory);
  EXPECT_EQ(dec.totals.verdict.index, 0);  // the stream
  // 150 GB/s: the step is at least the streamed bytes over the stream.
  EXPECT_GE(dec.totals.time_s, dec.totals.bytes[0] / 150e9 * (1 - 1e-12));
  // The weights live in the store; the SRAM holds the cache and workspace.
  EXPECT_DOUBLE_EQ(a->memory.weights_store_bytes, 1.2e15);
  EXPECT_DOUBLE_EQ(a->memory.capacity_bytes, 44e9);
  EXPECT_TRUE(a->memory.fits());
  EXPECT_DOUBLE_EQ(a->memory.resident_bytes(),
                   a->memory.kv_cache_bytes + a->memory.workspace_bytes);
}

TEST(SramDevices, SweepsFollowTheChipCountAndFindWhereItChanges) {
  const TransformerConfig c = Model("llama-3-8b");
  const Device& d = Dev("groq-lpu");
  const CostModel m(d);
  Workload base;
  base.prompt = 128;
  const std::string axis = "context=1024:65536:x4";
  Result<SweepResult> r = SweepOne(c, base, m, PhaseSelection::kDecode, axis);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->chips_tracked);
  int chip_changes = 0;
  for (const Crossover& x : r->crossovers) {
    if (x.signal.kind != SignalKind::kChips) continue;
    ++chip_changes;
    EXPECT_GT(x.to.count, x.from.count);  // a longer cache needs more chips
    ASSERT_TRUE(x.exact);
    // Exact: one context below the change keeps the old count.
    auto chips_at = [&](int64_t context) {
      Workload w = base;
      w.context = context;
      return ResolveStages(c, w, d)->Chips();
    };
    EXPECT_EQ(chips_at(x.int_value), x.to.count);
    EXPECT_EQ(chips_at(x.int_value - 1), x.from.count);
  }
  EXPECT_GT(chip_changes, 0);
  // On a GPU the count is not tracked.
  const CostModel gpu(Dev("h100-sxm"));
  Result<SweepResult> g = SweepOne(c, base, gpu, PhaseSelection::kDecode, axis);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->chips_tracked);
}

TEST(SramDevices, PublishedSpeedsAreBelowTheBoundAndKeptOutOfTheErrors) {
  Result<std::vector<PublishedRun>> runs = LoadDefaultPublishedRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  ASSERT_TRUE(registry.ok());
  Result<EfficiencyData> eff = LoadDefaultEfficiencyData();
  ASSERT_TRUE(eff.ok());
  Result<PublishedValidation> v = ValidatePublished(
      *runs, testing::Db(), *registry, std::make_shared<const EfficiencyData>(*eff));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  int sram_rows = 0;
  for (const PublishedCheck& c : v->checks) {
    const Device& d = Dev(c.run.scenario.hw);
    if (!d.model_split && !d.device_memory().weights_only) continue;
    ++sram_rows;
    // The vendors' and benchmarkers' tokens/s (groq-*: Groq, TechPowerUp, Anyscale LLMPerf;
    // cerebras-*: Cerebras, Tom's Hardware) must not beat the ideal bound.
    EXPECT_LE(c.bound_s, c.run.measured_s) << c.run.id;
    EXPECT_FALSE(c.has_expected) << c.run.id;
    EXPECT_GE(c.run.scenario.workload.pp, 1) << c.run.id;
  }
  EXPECT_EQ(sram_rows, 7);  // groq-01..04, cerebras-01..03
  EXPECT_EQ(v->bound_only, sram_rows);
  EXPECT_EQ(v->all.rows, static_cast<int>(v->checks.size()) - sram_rows);
}

TEST(SramDevicesCli, ModelPrintsTheChipsAndTheBindingResource) {
  CliOutput r = RunCli({"model", "llama-3-70b", "--hw", "groq-lpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("chips per replica: "), std::string::npos);
  EXPECT_NE(r.out.find("memory:sram"), std::string::npos);
  EXPECT_EQ(r.out.find("expected:"), std::string::npos);  // bounds only on these devices
  EXPECT_EQ(r.out.find("tokens/s; expected"), std::string::npos);
  for (const char* hw : {"cerebras-cs3", "cerebras-cs2"}) {
    CliOutput c = RunCli({"model", "llama-3-70b", "--hw", hw});
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_NE(c.out.find("chips per replica: 4 = tp 1 x 4 pipeline stages"), std::string::npos)
        << c.out;
  }
  CliOutput s = RunCli({"model", "llama-3-70b", "--hw", "cerebras-cs3-memoryx"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("memory:memoryx"), std::string::npos);
  EXPECT_NE(s.out.find("streamed in once per step"), std::string::npos);
  CliOutput bad = RunCli({"model", "llama-3-70b", "--hw", "groq-lpu", "--pp", "-2"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--pp"), std::string::npos);
  EXPECT_TRUE(bad.out.empty());
  CliOutput plan = RunCli({"plan", "llama-3-8b", "--hw", "groq-lpu", "--gpus", "10"});
  EXPECT_EQ(plan.status, 2);  // one replica needs more chips than given
  EXPECT_NE(plan.err.find("chips"), std::string::npos) << plan.err;
  CliOutput ok = RunCli({"plan", "llama-3-8b", "--hw", "groq-lpu", "--gpus", "200"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("pipeline stages"), std::string::npos);
}

TEST(SramDevices, LargestBatchesLetTheChipCountGrow) {
  // On chips that hold what they are given, `model` reports the largest batch on the chips it
  // chose and, beyond it, the batch where one op's decode workspace fills a chip.
  const TransformerConfig c = Model("llama-3-70b");
  const Device& d = Dev("groq-lpu");
  const CostModel m(d);
  Workload w;
  w.prompt = 2048;
  Result<ModelAnalysis> a = AnalyzeModel(c, w, m, PhaseSelection::kDecode);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->stages_chosen);
  EXPECT_GE(a->max_batch, 1);
  EXPECT_GT(a->max_batch_more_chips, a->max_batch);
  // The limit: no count of stages up to kMaxStagesCount holds the next batch beside its decode
  // workspace, and one does hold this one.
  auto fits_on_fewest = [&](int64_t b) {
    Workload wb = w;
    wb.pp = 1;
    const MemoryFootprint one = *Footprint(c, wb, d, b, 2048);
    wb.pp = FewestStages(one);
    return Footprint(c, wb, d, b, 2048)->fits();
  };
  EXPECT_TRUE(fits_on_fewest(a->max_batch_more_chips));
  EXPECT_FALSE(fits_on_fewest(a->max_batch_more_chips + 1));

  // The count at that batch is reported and within the cap.
  Workload at = w;
  at.batch = a->max_batch_more_chips;
  EXPECT_EQ(ResolveStages(c, at, d)->Chips(), a->chips_more_chips);
  EXPECT_LE(a->chips_more_chips, kMaxStagesCount);

  // plan: replicas are laid out for one sequence, and the largest batch is on those chips (one
  // more sequence does not fit them).
  PlanRequest r;
  r.gpus = 1000;
  Result<Plan> p = MakePlan(c, Workload{}, d, r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const PlanVariant& v = p->variants.front();
  EXPECT_EQ(v.batch1.chips, v.tp * v.pp);
  EXPECT_EQ(v.largest.chips, v.batch1.chips);
  EXPECT_EQ(v.replicas, r.gpus / v.batch1.chips);
  Workload more;
  more.prompt = r.prompt;
  more.tp = v.tp;
  more.pp = v.pp;
  EXPECT_TRUE(Footprint(c, more, d, v.max_batch, r.prompt + r.output)->fits());
  EXPECT_FALSE(Footprint(c, more, d, v.max_batch + 1, r.prompt + r.output)->fits());
  EXPECT_FALSE(p->gpu);
}

TEST(SramDevices, FlopsWithNoCeilingAreNamed) {
  // The GroqChip lists no fp32 vector figure: the norms' FLOPs are not timed, and `model` says
  // so; an H100 times them all.
  const TransformerConfig c = Model("llama-3-8b");
  Workload w;
  w.prompt = 512;
  const CostModel groq(Dev("groq-lpu"));
  Result<PhaseResult> r = AnalyzePhase(c, w, groq, Phase::kDecode);
  ASSERT_TRUE(r.ok());
  const auto untimed = UntimedFlops(r->costs);
  ASSERT_EQ(untimed.size(), 1u);
  EXPECT_EQ(untimed[0].first, "vector.fp32");
  double vector = 0;
  for (const KernelCost& k : r->costs) {
    for (int e = 0; e < k.num_engines; ++e) {
      if (k.engines[e].ceiling < 0) vector += k.engines[e].flops * static_cast<double>(k.repeat);
    }
  }
  EXPECT_DOUBLE_EQ(untimed[0].second, vector);
  EXPECT_GT(vector, 0);
  const CostModel h100(Dev("h100-sxm"));
  EXPECT_TRUE(UntimedFlops(AnalyzePhase(c, w, h100, Phase::kDecode)->costs).empty());
}

TEST(SramDevicesCli, FlagsForExpectedTimesAreRefusedWhereThereAreNone) {
  for (const char* flag : {"--runtime", "--ceilings", "--efficiency"}) {
    const char* value = std::string(flag) == "--runtime"    ? "cuda-graph"
                        : std::string(flag) == "--ceilings" ? "spec"
                                                            : "matmul=0.5";
    CliOutput r = RunCli({"model", "llama-3-8b", "--hw", "groq-lpu", flag, value});
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no expected times"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  // The same flag on a GPU is taken.
  EXPECT_EQ(RunCli({"model", "llama-3-8b", "--hw", "h100-sxm", "--runtime", "cuda-graph"}).status,
            0);
  // A batch no chip count can hold is reported, not refused.
  CliOutput big = RunCli({"model", "llama-3-70b", "--hw", "groq-lpu", "--batch", "20000"});
  ASSERT_EQ(big.status, 0) << big.err;
  EXPECT_NE(big.out.find("DOES NOT FIT"), std::string::npos);
  EXPECT_NE(big.out.find("no stage count holds it"), std::string::npos);
  // Weight streaming: --explain says which bytes the store does not carry.
  CliOutput ex = RunCli({"model", "llama-3-8b", "--hw", "cerebras-cs3-memoryx", "--phase",
                         "decode", "--explain", "o_proj"});
  ASSERT_EQ(ex.status, 0) << ex.err;
  EXPECT_NE(ex.out.find("memoryx holds only weights"), std::string::npos);
}

}  // namespace sram_accelerators_test
}  // namespace roofline
