// Serving engines (data/engines/*.json, docs/engines.md): every figure has its source, a version
// picks its entry, the host work enters the step as its form says (serial: added; overlapped:
// the longer of it and the GPU), the engine fills only the options not given, and bad engine
// files and specs give one line naming the file and field.
#include "roofline/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "roofline/model_registry.h"
#include "roofline/scenario.h"
#include "roofline/setup.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace engine_test {

TEST(Engines, EveryHostFigureHasAStepLevelSource) {
  Result<std::vector<Engine>> all = ListEngines();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::set<std::string> ids;
  for (const Engine& e : *all) {
    ids.insert(e.id);
    EXPECT_FALSE(e.source.empty()) << e.id << " " << e.versions;
    EXPECT_FALSE(e.calibrated) << e.id;  // the embedded files are never fitted
    for (const HostPart& p : e.host) {
      for (const auto& f : p.per) {
        if (!f) continue;
        // The ruling of the expected-time issue: step-level measurements published with their
        // engine, version, model, GPU and batch; never an end-to-end fit.
        EXPECT_EQ(f->provenance, "published (step-level)") << e.id << " " << p.name;
        EXPECT_GT(f->source.size(), 40u) << e.id << " " << p.name;
        EXPECT_GT(f->value_s, 0) << e.id << " " << p.name;
        EXPECT_LT(f->value_s, 5e-3) << e.id << " " << p.name;
      }
    }
  }
  for (const char* id : {"vllm", "sglang", "tensorrt-llm", "tensorrt-llm-pytorch", "tgi",
                         "llama.cpp", "transformers", "gpt-fast", "mlc"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
}

TEST(Engines, AVersionPicksItsEntry) {
  struct Case {
    const char* spec;
    const char* versions;
  };
  for (const Case& c : {Case{"vllm@0.4.2", "0.4-0.5"}, Case{"vllm@0.5", "0.4-0.5"},
                        Case{"vllm@0.6.3.post1", "0.6-0.7"}, Case{"vllm@0.7.4", "0.6-0.7"},
                        Case{"vllm@0.10.2", "0.8-"}, Case{"vllm", "0.8-"},
                        Case{"tgi@1.2", "1.0-1.3"}, Case{"tgi@2.3.1", "1.4-"}}) {
    Result<Engine> e = LoadEngine(c.spec);
    ASSERT_TRUE(e.ok()) << c.spec << ": " << e.status().ToString();
    EXPECT_EQ(e->versions, c.versions) << c.spec;
  }
  Result<Engine> old = LoadEngine("vllm@0.3.3");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().where(), "--engine");
  EXPECT_NE(old.status().what().find("0.4-0.5, 0.6-0.7, 0.8-"), std::string::npos);
  Result<Engine> unknown = LoadEngine("vlm");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().what().find("known: "), std::string::npos);
  EXPECT_FALSE(LoadEngine("vllm@").ok());
  EXPECT_FALSE(LoadEngine("vllm@x1").ok());
}

Engine TwoPartEngine(double serial_step, double over_step, double over_request) {
  Engine e;
  e.id = "test";
  e.name = "test";
  HostPart s;
  s.name = "serial part";
  s.per[static_cast<size_t>(HostPer::kStep)] = HostFigure{serial_step, "x", "y"};
  HostPart o;
  o.name = "overlapped part";
  o.mode = HostMode::kOverlapped;
  o.per[static_cast<size_t>(HostPer::kStep)] = HostFigure{over_step, "x", "y"};
  o.per[static_cast<size_t>(HostPer::kRequest)] = HostFigure{over_request, "x", "y"};
  e.host = {s, o};
  return e;
}

TEST(Engines, SerialWorkAddsOverlappedWorkHidesBehindTheGpu) {
  const auto terms = [](const Engine& e) {
    std::vector<std::shared_ptr<const StepTerm>> t = DefaultStepTerms();
    t.push_back(std::make_shared<const EngineHost>(std::make_shared<const Engine>(e)));
    return t;
  };
  StepTime step;
  step.gpu_s = 5e-3;
  step.host_s = 1e-3;
  step.requests = 10;
  // 2 ms overlapped (1 + 10 x 0.1) under a 5 ms GPU step: hidden; 1 ms serial: added.
  StepTime hidden = ApplyStepTerms(step, terms(TwoPartEngine(1e-3, 1e-3, 1e-4)));
  EXPECT_DOUBLE_EQ(hidden.time_s, 6e-3);
  EXPECT_FALSE(hidden.engine_bound);
  EXPECT_DOUBLE_EQ(hidden.engine_host_s, 3e-3);
  EXPECT_DOUBLE_EQ(hidden.engine_exposed_s, 1e-3);
  // 8 ms overlapped (1 + 70 x 0.1) is longer than the GPU's 5 ms: it sets the pace.
  step.requests = 70;
  StepTime paced = ApplyStepTerms(step, terms(TwoPartEngine(1e-3, 1e-3, 1e-4)));
  EXPECT_DOUBLE_EQ(paced.time_s, 9e-3);
  EXPECT_TRUE(paced.engine_bound);
  const EngineHost term(std::make_shared<const Engine>(TwoPartEngine(1e-3, 1e-3, 1e-4)));
  EXPECT_NE(term.Explain(paced).find("sets the pace"), std::string::npos);
}

TEST(Engines, TheStepGrowsByTheEnginesSerialWork) {
  // vLLM 0.4-0.5 is serial throughout: at the same runtime the decode step grows by exactly
  // its per-step and per-request figures (data/engines/vllm.json).
  Result<Engine> e = LoadEngine("vllm@0.4.2");
  ASSERT_TRUE(e.ok());
  const double host = e->HostSeconds(HostMode::kSerial, 16, 32);
  EXPECT_NEAR(host, 60e-6 + 96.8e-6 + 16 * 103.2e-6, 1e-12);
  auto decode = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"model", "llama-3-8b", "--hw", "h100-sxm", "--batch", "16",
                                     "--phase", "decode", "--runtime", "cuda-graph",
                                     "--fusion", "fused", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const testing::CliOutput r = testing::RunCli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json plain = decode({});
  const nlohmann::json vllm = decode({"--engine", "vllm@0.4.2"});
  const auto& p = plain.at("phases").at(0);
  const auto& v = vllm.at("phases").at(0);
  EXPECT_NEAR(v.at("expected").at("time_s").get<double>() -
                  p.at("expected").at("time_s").get<double>(),
              host, 1e-9);
  EXPECT_EQ(v.at("time_s"), p.at("time_s"));  // the bound is unchanged
  EXPECT_NEAR(v.at("expected").at("engine_host_s").get<double>(), host, 1e-12);
  EXPECT_EQ(v.at("expected").at("setup").at("engine").at("versions"), "0.4-0.5");
  EXPECT_FALSE(p.at("expected").contains("engine_host_s"));
}

TEST(Engines, TheEngineFillsOnlyWhatIsNotGiven) {
  Scenario s;
  ASSERT_TRUE(SetField(s, FieldId::kEngine, "transformers").ok());
  Result<std::shared_ptr<const Engine>> e = ApplyEngineFields(s);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(s.expected.modules, "hf-transformers");
  EXPECT_EQ(s.workload.fusion, FusionMode::kEager);
  Scenario fused;
  ASSERT_TRUE(SetField(fused, FieldId::kEngine, "transformers").ok());
  ASSERT_TRUE(SetField(fused, FieldId::kFusion, "fused").ok());
  ASSERT_TRUE(ApplyEngineFields(fused).ok());
  EXPECT_EQ(fused.workload.fusion, FusionMode::kFused);
  EXPECT_TRUE(fused.expected.modules.empty());  // modules run only with eager kernels
  Scenario vllm;
  ASSERT_TRUE(SetField(vllm, FieldId::kEngine, "vllm@0.6.3").ok());
  ASSERT_TRUE(ApplyEngineFields(vllm).ok());
  EXPECT_EQ(vllm.expected.runtime, Runtime::kCudaGraph);
  ASSERT_TRUE(vllm.expected.prefill_runtime.has_value());
  EXPECT_EQ(*vllm.expected.prefill_runtime, Runtime::kEager);
  EXPECT_EQ(vllm.workload.fusion, FusionMode::kFused);
  EXPECT_EQ(vllm.workload.fused_linears, LinearMerge::kAuto);  // qkv and gate-up, as fused
  EXPECT_TRUE(vllm.workload.MergesQkv() && vllm.workload.MergesGateUp());
  // gpt-fast loads wqkv and w1, w3 apart; llama.cpp's GGUF tensors are all apart.
  for (const auto& [engine, qkv, gate_up] : {std::tuple{"gpt-fast", true, false},
                                             std::tuple{"llama.cpp", false, false}}) {
    Scenario e;
    ASSERT_TRUE(SetField(e, FieldId::kEngine, engine).ok());
    ASSERT_TRUE(ApplyEngineFields(e).ok());
    EXPECT_EQ(e.workload.MergesQkv(), qkv) << engine;
    EXPECT_EQ(e.workload.MergesGateUp(), gate_up) << engine;
  }
  Scenario mine;
  ASSERT_TRUE(SetField(mine, FieldId::kEngine, "gpt-fast").ok());
  ASSERT_TRUE(SetField(mine, FieldId::kFusedLinears, "qkv,gate-up").ok());
  ASSERT_TRUE(ApplyEngineFields(mine).ok());
  EXPECT_EQ(mine.workload.fused_linears, LinearMerge::kBoth);  // given: kept
  Scenario given;
  ASSERT_TRUE(SetField(given, FieldId::kEngine, "vllm@0.6.3").ok());
  ASSERT_TRUE(SetField(given, FieldId::kRuntime, "eager").ok());
  ASSERT_TRUE(ApplyEngineFields(given).ok());
  EXPECT_EQ(given.expected.runtime, Runtime::kEager);
  EXPECT_FALSE(given.expected.prefill_runtime.has_value());
  Scenario gptfast;
  ASSERT_TRUE(SetField(gptfast, FieldId::kEngine, "gpt-fast").ok());
  ASSERT_TRUE(SetField(gptfast, FieldId::kWeightDtype, "int4").ok());
  ASSERT_TRUE(ApplyEngineFields(gptfast).ok());
  EXPECT_EQ(gptfast.expected.weight_kernel, "tinygemm");
}

TEST(Engines, ThePrefillRunsUnderTheEnginesPrefillRuntime) {
  // vLLM launches its prefill eagerly and replays decode: the prefill of the engine costs as
  // --runtime eager does (plus its host work), the decode as --runtime cuda-graph.
  auto expected = [](std::vector<std::string> extra, const char* phase) {
    std::vector<std::string> args = {"model", "llama-3-8b", "--prompt", "64", "--fusion",
                                     "fused", "--phase", phase, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const testing::CliOutput r = testing::RunCli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out).at("phases").at(0).at("expected").at("time_s").get<double>();
  };
  Result<Engine> e = LoadEngine("vllm@0.4.2");
  ASSERT_TRUE(e.ok());
  const double host = e->HostSeconds(HostMode::kSerial, 1, 32);
  EXPECT_NEAR(expected({"--engine", "vllm@0.4.2"}, "prefill"),
              expected({"--runtime", "eager"}, "prefill") + host, 1e-9);
  EXPECT_NEAR(expected({"--engine", "vllm@0.4.2"}, "decode"),
              expected({"--runtime", "cuda-graph"}, "decode") + host, 1e-9);
}

TEST(Engines, BadEngineFilesGiveOneLineNamingTheField) {
  struct Case {
    const char* text;
    const char* where;
  };
  const std::string ok_head = R"({"schema_version": 1, "id": "x", "name": "X", "entries": [)";
  for (const Case& c : {
           Case{"{", "bad.json:1"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X"})", "bad.json: entries"},
           Case{R"({"schema_version": 1, "id": "x@1", "name": "X", "entries": [{"versions": "1"}]})",
                "bad.json: id"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "one"}]})",
                "bad.json: entries[0].versions"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "runtime": {"decode": "warp"}}]})",
                "bad.json: entries[0].runtime.decode"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "host": [{"name": "a", "mode": "async", "per_step_s": {"value": 1e-4, "provenance": "p", "source": "s"}}]}]})",
                "bad.json: entries[0].host[0].mode"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "host": [{"name": "a", "mode": "serial", "per_step_s": {"value": 5, "provenance": "p", "source": "s"}}]}]})",
                "bad.json: entries[0].host[0].per_step_s.value"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "host": [{"name": "a", "mode": "serial", "per_step_s": {"value": 1e-4, "provenance": "p"}}]}]})",
                "bad.json: entries[0].host[0].per_step_s"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "host": [{"name": "a", "mode": "serial"}]}]})",
                "bad.json: entries[0].host[0]"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "99999999"}]})",
                "bad.json: entries[0].versions"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "fused_linears": "qkvo"}]})",
                "bad.json: entries[0].fused_linears"},
           Case{R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "fused_linears": "auto"}]})",
                "bad.json: entries[0].fused_linears"},
       }) {
    Result<std::vector<Engine>> r = ParseEngineFile(c.text, "bad.json");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().ToString().find('\n'), std::string::npos);
    EXPECT_EQ(r.status().where().rfind(c.where, 0), 0u) << r.status().ToString();
  }
  (void)ok_head;
  // From the command line: exit 2, one line on stderr, nothing on stdout.
  const std::string path = ::testing::TempDir() + "/engine_bad.json";
  {
    std::ofstream f(path);
    f << R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "fusion": "maybe"}]})";
  }
  const testing::CliOutput r = testing::RunCli({"model", "llama-3-8b", "--engine", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(path + ": entries[0].fusion"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  std::remove(path.c_str());
  // A kernel or modules name the efficiency data does not hold: the engine file is named.
  {
    std::ofstream f(path);
    f << R"({"schema_version": 1, "id": "x", "name": "X", "entries": [{"versions": "1", "weight_kernels": {"int4": "marlin"}}]})";
  }
  const testing::CliOutput kernel = testing::RunCli({"model", "llama-3-8b", "--engine", path});
  EXPECT_EQ(kernel.status, 2);
  EXPECT_NE(kernel.err.find(path + ": entry 1.weight_kernels.int4"), std::string::npos)
      << kernel.err;
  std::remove(path.c_str());
  const testing::CliOutput unknown = testing::RunCli({"model", "llama-3-8b", "--engine", "vlm"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("--engine: unknown engine 'vlm'"), std::string::npos) << unknown.err;
}

TEST(Engines, ListAndShowNameEveryFigureAndItsSource) {
  const testing::CliOutput list = testing::RunCli({"engines", "list"});
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("vllm                   0.6-0.7"), std::string::npos) << list.out;
  const testing::CliOutput show = testing::RunCli({"engines", "show", "vllm@0.6.3"});
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("output processing: overlapped, 103 us per request"), std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("RFC #6913"), std::string::npos);
  const testing::CliOutput json = testing::RunCli({"engines", "show", "sglang", "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("host").at(0).at("mode"), "overlapped");
  const testing::CliOutput bad = testing::RunCli({"engines", "show", "nope"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("NAME: unknown engine"), std::string::npos) << bad.err;
}

}  // namespace engine_test
}  // namespace roofline
