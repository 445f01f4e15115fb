// `roofline calibrate` (docs/calibrate.md): the fit recovers host work exactly where runs lie on
// a line and ignores a stray run; negative terms are set to zero and said; every file form is
// read into the steps it measures; bad files give one line naming file and row; the engine file
// written is the one --engine reads, marked calibrated, and its bands say so.
#include "roofline/calibrate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "roofline/engine.h"
#include "roofline/scenario.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace calibrate_test {

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/calibrate/" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Calibrate, TheFitRecoversHostWorkOnALineAndIgnoresAStrayRun) {
  // Kernels of any length; the measured steps are kernels + 1.2 ms + 0.05 ms per request.
  const std::vector<double> batch = {1, 2, 4, 8, 16, 32, 64};
  std::vector<double> kernels, measured;
  for (size_t i = 0; i < batch.size(); ++i) {
    kernels.push_back(3e-3 + 1e-4 * static_cast<double>(i * i));
    measured.push_back(kernels.back() + 1.2e-3 + 5e-5 * batch[i]);
  }
  HostFit f = FitHostWork(measured, kernels, batch);
  EXPECT_TRUE(f.per_request);
  EXPECT_NEAR(f.per_step_s, 1.2e-3, 1e-12);
  EXPECT_NEAR(f.per_request_s, 5e-5, 1e-14);
  // One run 40% slow (a stray measurement): least absolute error keeps the line.
  measured[3] *= 1.4;
  f = FitHostWork(measured, kernels, batch);
  EXPECT_NEAR(f.per_step_s, 1.2e-3, 1e-12);
  EXPECT_NEAR(f.per_request_s, 5e-5, 1e-14);
}

TEST(Calibrate, OneBatchSizeFitsAStepTermOnly) {
  // At one batch size the two terms cannot be told apart: the step term is the weighted median
  // of the gaps (weights 1 / measured).
  const HostFit f = FitHostWork({10e-3, 11e-3, 12e-3}, {8e-3, 8e-3, 8e-3}, {4, 4, 4});
  EXPECT_FALSE(f.per_request);
  EXPECT_NEAR(f.per_step_s, 3e-3, 1e-15);
  EXPECT_EQ(f.per_request_s, 0);
}

TEST(Calibrate, ANegativeTermIsSetToZeroAndKeptAsFitted) {
  // Gaps that shrink with the batch: the best line has a negative per-request term.
  const HostFit f = FitHostWork({5e-3, 5e-3, 5e-3}, {2e-3, 3e-3, 4e-3}, {1, 8, 16});
  EXPECT_LT(f.raw_per_request_s, 0);
  EXPECT_EQ(f.per_request_s, 0);
  EXPECT_GE(f.per_step_s, 0);
}

TEST(Calibrate, EveryFileFormIsReadIntoTheStepsItMeasures) {
  Scenario defaults;
  ASSERT_TRUE(SetField(defaults, FieldId::kModel, "llama-3-8b").ok());
  ASSERT_TRUE(SetField(defaults, FieldId::kHw, "h100-sxm").ok());
  struct Step {
    Phase phase;
    int64_t batch, prompt, context;
    double measured_s;
  };
  struct Case {
    const char* file;
    std::vector<Step> steps;
  };
  // vllm bench serve: 200 requests of 1024 + 128 tokens at 16 concurrent: a prefill of one
  // 1024-token prompt (mean TTFT) and a decode step of 16 at context 1024 + 64 (mean TPOT).
  for (const Case& c : {
           Case{"vllm_bench.json",
                {{Phase::kPrefill, 1, 1024, 0, 61.4e-3}, {Phase::kDecode, 16, 1024, 1088, 9.63e-3}}},
           Case{"sglang_bench.jsonl",
                {{Phase::kPrefill, 1, 3200, 0, 0.21},
                 {Phase::kDecode, 4, 3200, 3600, 9.75e-3},
                 {Phase::kPrefill, 1, 3200, 0, 0.35},
                 {Phase::kDecode, 16, 3200, 3600, 11.6e-3}}},
           Case{"genai_perf.json",
                {{Phase::kPrefill, 1, 1024, 0, 48.2e-3}, {Phase::kDecode, 8, 1024, 1152, 8.9e-3}}},
           Case{"runs.csv",
                {{Phase::kDecode, 1, 1024, 1536, 7.1e-3},
                 {Phase::kDecode, 8, 1024, 1536, 8.2e-3},
                 {Phase::kPrefill, 32, 1024, 1536, 95.5e-3},
                 {Phase::kDecode, 32, 1024, 1536, 11.9e-3}}},
           Case{"runs.json",
                {{Phase::kDecode, 4, 512, 640, 7.2e-3},
                 {Phase::kDecode, 16, 512, 640, 6.1e-3},
                 {Phase::kPrefill, 1, 512, 0, 41e-3}}},
       }) {
    Result<std::vector<CalibrationRun>> runs =
        ReadCalibrationRuns(Slurp(Fixture(c.file)), c.file, defaults);
    ASSERT_TRUE(runs.ok()) << c.file << ": " << runs.status().ToString();
    ASSERT_EQ(runs->size(), c.steps.size()) << c.file;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const CalibrationRun& r = (*runs)[i];
      const Step& s = c.steps[i];
      EXPECT_EQ(r.phase, s.phase) << c.file << " " << i;
      EXPECT_EQ(r.scenario.workload.batch, s.batch) << c.file << " " << i;
      EXPECT_EQ(r.scenario.workload.prompt, s.prompt) << c.file << " " << i;
      if (s.phase == Phase::kDecode) {
        EXPECT_EQ(r.scenario.workload.context, s.context) << c.file << " " << i;
      }
      EXPECT_NEAR(r.measured_s, s.measured_s, 1e-12) << c.file << " " << i;
    }
  }
  // The published runs' own schema is read as published.
  Result<std::vector<CalibrationRun>> published = ReadCalibrationRuns(
      Slurp(std::string(ROOFLINE_SOURCE_DIR) + "/data/validation/published_runs.json"),
      "published_runs.json", Scenario{});
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  EXPECT_GT(published->size(), 200u);
}

TEST(Calibrate, BadFilesGiveOneLineNamingFileAndRow) {
  Scenario with_model;
  ASSERT_TRUE(SetField(with_model, FieldId::kModel, "llama-3-8b").ok());
  ASSERT_TRUE(SetField(with_model, FieldId::kHw, "h100-sxm").ok());
  struct Case {
    const char* text;
    bool model_given;
    const char* where;
    const char* what;
  };
  for (const Case& c : {
           Case{"", true, "f", "empty"},
           Case{"model,hw,tpot_ms\nllama-3-8b,h100-sxm\n", false, "f: line 2", "cells"},
           Case{"model,hw,speed\nllama-3-8b,h100-sxm,3\n", false, "f: line 2.speed", "unknown column"},
           Case{"model,hw,tpot_ms\nllama-3-8b,h100-sxm,-3\n", false, "f: line 2.tpot_ms", "positive"},
           Case{"model,hw,tpot_ms\nllama-3-8b,h100-sxm,fast\n", false, "f: line 2.tpot_ms", "not a number"},
           Case{"tpot_ms\n3\n", false, "f: line 2", "no model"},
           Case{"model,hw,batch,tpot_ms\nllama-3-8b,h100-sxm,0,3\n", false, "f: line 2", "batch"},
           Case{R"({"completed": 10, "total_input_tokens": 100, "total_output_tokens": 100, "mean_tpot_ms": 9})",
                true, "f: result.max_concurrency", "--batch"},
           Case{R"({"completed": 10, "total_input_tokens": 100, "total_output_tokens": 100, "max_concurrency": 4, "mean_tpot_ms": 9})",
                false, "f: result", "--model"},
           Case{R"({"completed": 10, "total_input_tokens": 100, "max_concurrency": 4, "mean_tpot_ms": 9})",
                true, "f: result.total_output_tokens", "missing"},
           Case{R"({"time_to_first_token": {"avg": 5, "unit": "parsecs"}, "input_sequence_length": {"avg": 9}, "output_sequence_length": {"avg": 9}})",
                true, "f: result.time_to_first_token.unit", "unknown unit"},
           Case{R"({"runs": [{"model": "llama-3-8b", "hw": "h100-sxm", "tpot_s": [1]}]})", false,
                "f: runs[0].tpot_s", "expected a string or a number"},
           Case{R"({"something": 1})", false, "f", "not a file calibrate reads"},
           Case{"model,hw,tpot_s\nllama-3-8b,h100-sxm,1e-320\n", false, "f: line 2.tpot_s",
                "under a microsecond"},
           Case{R"({"time_to_first_token": {"avg": 50, "unit": "ms"}, "inter_token_latency": {"avg": 9, "unit": "ms"}, "input_sequence_length": {"avg": 9, "unit": "ms"}, "output_sequence_length": {"avg": 9}})",
                true, "f: result.input_sequence_length.unit", "tokens"},
           Case{R"({"runs": [)", false, "f:1", ""},
       }) {
    Result<std::vector<CalibrationRun>> r =
        ReadCalibrationRuns(c.text, "f", c.model_given ? with_model : Scenario{});
    ASSERT_FALSE(r.ok()) << c.text << " gave " << (r.ok() ? r->size() : 0) << " runs";
    const std::string msg = r.status().ToString();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(r.status().where().rfind(c.where, 0), 0u) << c.text << " -> " << msg;
    EXPECT_NE(msg.find(c.what), std::string::npos) << c.text << " -> " << msg;
  }
}

TEST(Calibrate, TheEngineFileWrittenIsTheOneEngineReadsAndItsBandsSaySo) {
  const std::string out = ::testing::TempDir() + "/calibrated_vllm.json";
  std::remove(out.c_str());
  const testing::CliOutput r = testing::RunCli(
      {"calibrate", Fixture("runs.csv"), "-o", out, "--engine", "vllm@0.6.3", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // Three decode runs at batch 1, 8 and 32: a step and a per-request term, and errors that
  // could only be smaller after the fit than before (the fit minimizes them).
  const nlohmann::json& decode = j.at("phases").at(0);
  EXPECT_EQ(decode.at("phase"), "decode");
  EXPECT_EQ(decode.at("runs"), 3);
  EXPECT_LE(decode.at("after").at("median_abs_error").get<double>(),
            decode.at("before").at("median_abs_error").get<double>());
  Result<std::vector<Engine>> file = ParseEngineFile(Slurp(out), out);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->size(), 1u);
  const Engine& e = file->front();
  EXPECT_TRUE(e.calibrated);
  EXPECT_EQ(e.id, "vllm");
  ASSERT_FALSE(e.host.empty());
  for (const HostPart& p : e.host) {
    for (const auto& f : p.per) {
      if (f) {
        EXPECT_EQ(f->provenance.rfind("calibrated (", 0), 0u) << f->provenance;
      }
    }
  }
  // Written and read back, the file is the same text (EngineFileText round-trips).
  EXPECT_EQ(EngineFileText(e), Slurp(out));
  // With it, a decode step carries exactly the fitted host work at its batch, and its trust
  // band names the calibration as an override (no range: no published run was costed so).
  const double step = decode.at("per_step_s").get<double>();
  const double per_request = decode.at("per_request_s").get<double>();
  const testing::CliOutput m = testing::RunCli({"model", "llama-3-8b", "--hw", "h100-sxm",
                                                "--phase", "decode", "--batch", "8", "--engine",
                                                out, "--format", "json"});
  ASSERT_EQ(m.status, 0) << m.err;
  const nlohmann::json mj = nlohmann::json::parse(m.out);
  const nlohmann::json& ph = mj.at("phases").at(0);
  EXPECT_NEAR(ph.at("expected").at("engine_host_s").get<double>(), step + 8 * per_request, 1e-12);
  EXPECT_FALSE(ph.at("expected_band").at("validated").get<bool>());
  // The bound is the kernels' alone: the same as without the engine (at the fusion it runs),
  // and below the expected time.
  const testing::CliOutput plain = testing::RunCli({"model", "llama-3-8b", "--hw", "h100-sxm",
                                                    "--phase", "decode", "--batch", "8",
                                                    "--fusion", "fused", "--format", "json"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  const nlohmann::json plain_json = nlohmann::json::parse(plain.out);
  const nlohmann::json& pp = plain_json.at("phases").at(0);
  EXPECT_EQ(ph.at("time_s"), pp.at("time_s"));
  EXPECT_GE(ph.at("expected").at("time_s").get<double>(), ph.at("time_s").get<double>());
  EXPECT_NE(ph.at("expected_band").at("overridden").get<std::string>().find("a calibrated engine"),
            std::string::npos);
  std::remove(out.c_str());
}

TEST(Calibrate, RunsTheToolCannotCostNameTheirFileAndRow) {
  const std::string path = ::testing::TempDir() + "/calibrate_unknown_model.csv";
  std::ofstream(path) << "model,hw,batch,tpot_ms\nllama-3-8b,h100-sxm,1,7\nno-such-model,h100-sxm,1,7\n";
  const std::string out = ::testing::TempDir() + "/calibrate_unknown_model_engine.json";
  std::remove(out.c_str());
  const testing::CliOutput r = testing::RunCli({"calibrate", path, "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(path + ": line 3.model"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(out).good());  // nothing written
  std::remove(path.c_str());
}

TEST(Calibrate, HostWorkNoEngineCouldHaveIsRefusedAndNothingWritten) {
  // Two 5-second prefills of a 512-token prompt: the fitted "host work" would be seconds a
  // step, which no engine file takes (at most 1 s): refused, no file.
  const std::string path = ::testing::TempDir() + "/calibrate_slow.csv";
  std::ofstream(path) << "model,hw,batch,prompt,ttft_s\nllama-3-8b,h100-sxm,1,512,5\n"
                         "llama-3-8b,h100-sxm,1,512,5.2\n";
  const std::string out = ::testing::TempDir() + "/calibrate_slow_engine.json";
  std::remove(out.c_str());
  const testing::CliOutput r = testing::RunCli({"calibrate", path, "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not host work"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(out).good());
  std::remove(path.c_str());
}

TEST(Calibrate, CheckRunsArePredictedNotFitted) {
  // Half of Qwen's vLLM 0.4.2 runs (QwenLM/Qwen2.5 speed benchmark, data/validation) fit the host
  // work; the other half are predicted: their rows are marked check and carry no one-out error.
  std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) + "/data/validation/published_runs.json");
  const nlohmann::json all = nlohmann::json::parse(in);
  nlohmann::json fit = nlohmann::json::array(), check = nlohmann::json::array();
  std::vector<nlohmann::json> rows;
  for (const auto& r : all.at("runs")) {
    if (r.at("id").get<std::string>().rfind("qwen2-vllm-", 0) == 0) rows.push_back(r);
  }
  ASSERT_GE(rows.size(), 12u);
  for (size_t i = 0; i < rows.size(); ++i) (i % 2 ? check : fit).push_back(rows[i]);
  const std::string dir = ::testing::TempDir();
  for (const auto& [name, part] : {std::pair{"fit", fit}, std::pair{"check", check}}) {
    std::ofstream(dir + "/qwen_" + name + ".json")
        << nlohmann::json{{"schema_version", 1}, {"comment", ""}, {"runs", part}}.dump();
  }
  const testing::CliOutput r = testing::RunCli(
      {"calibrate", dir + "/qwen_fit.json", "--check", dir + "/qwen_check.json", "-o",
       dir + "/qwen_engine.json", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  int checked = 0;
  for (const auto& row : j.at("runs")) {
    if (!row.at("check").get<bool>()) continue;
    ++checked;
    EXPECT_TRUE(row.at("leave_one_out_s").is_null());
    EXPECT_GT(row.at("after_s").get<double>(), row.at("kernels_s").get<double>());
  }
  EXPECT_EQ(checked, static_cast<int>(check.size()));
  EXPECT_EQ(j.at("phases").at(0).at("check_after").at("runs"), static_cast<int>(check.size()));
  EXPECT_EQ(j.at("base_engine"), "vllm@0.4.2");  // the runs' own engine
}

}  // namespace calibrate_test
}  // namespace roofline
