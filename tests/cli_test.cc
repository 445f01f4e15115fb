// The command line: outputs of the user-visible behaviour and the bad-input contract
// (one line on stderr starting with "error: ", exit status 2, nothing on stdout).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "roofline/device_db.h"
#include "roofline/op_fields.h"
#include "roofline/views.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace cli_test {

using Output = testing::CliOutput;
using testing::RunCli;

// `model`, `sweep` and `profile` are one library call each (roofline/views.h): the views a
// caller gets from a Scenario are what the command prints, and the combinations a command
// refuses are refused by the library with the same line.
TEST(Views, ALibraryCallGivesWhatTheCommandPrints) {
  Result<DeviceDatabase> loaded = DeviceDatabase::LoadDefault();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const DatabaseSource db = [&]() -> Result<const DeviceDatabase*> { return &*loaded; };
  auto scenario = [](std::vector<std::pair<std::string, std::string>> fields) {
    Scenario s;
    for (const auto& [name, text] : fields) {
      const Field* f = FindField(name);
      EXPECT_NE(f, nullptr) << name;
      if (f != nullptr) {
        EXPECT_TRUE(SetField(s, f->id, text).ok()) << name;
      }
    }
    ApplyDerivedDefaults(s);
    return s;
  };
  auto printed = [](const Result<Views>& v) {
    std::ostringstream out;
    if (v.ok()) v->out(out);
    return out.str();
  };
  ViewRequest csv;
  csv.format = OutputFormat::kCsv;
  const Scenario llm = scenario({{"model", "llama-3-8b"}, {"batch", "4"}});
  const Result<Views> model = ModelViews(llm, {}, csv, db);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Output cli = RunCli({"model", "llama-3-8b", "--batch", "4", "--format", "csv"});
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(printed(model), cli.out);
  SweepViewOptions vary;
  vary.vary = {"context=2k:8k"};
  const Result<Views> sweep = SweepViews(llm, vary, csv, db);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  const Output swept =
      RunCli({"sweep", "llama-3-8b", "--batch", "4", "--vary", "context=2k:8k", "--format", "csv"});
  ASSERT_EQ(swept.status, 0) << swept.err;
  EXPECT_EQ(printed(sweep), swept.out);
  ProfileViewOptions nsys;
  nsys.kind = ProfileKind::kNsys;
  nsys.file = std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/profiles/nsys_kern_sum.csv";
  nsys.model.hw = "h100-sxm";
  const Result<Views> profile = ProfileViews(nsys, {}, db);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  const Output read = RunCli({"profile", "nsys", nsys.file, "--hw", "h100-sxm"});
  ASSERT_EQ(read.status, 0) << read.err;
  EXPECT_EQ(printed(profile), read.out);
  // Refused by the library, before anything runs, as the command refuses it.
  const Result<Views> network_csv = ModelViews(scenario({{"model", "resnet-50"}}), {}, csv, db);
  ASSERT_FALSE(network_csv.ok());
  EXPECT_EQ("error: " + network_csv.status().ToString() + "\n",
            RunCli({"model", "resnet-50", "--format", "csv"}).err);
  ViewRequest plot;
  plot.plot = "never-written.svg";
  const Result<Views> nothing = ProfileViews(nsys, plot, db);
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().ToString().find("nothing to plot"), std::string::npos);
  // Flags are checked before the device database is loaded, and a profile that needs no device
  // never loads it (a broken ROOFLINE_DATA_DIR does not hide a flag error or stop a summary).
  int loads = 0;
  const DatabaseSource counted = [&]() -> Result<const DeviceDatabase*> {
    ++loads;
    return &*loaded;
  };
  ModelViewOptions top;
  top.top = 3;
  ViewRequest json;
  json.format = OutputFormat::kJson;
  EXPECT_FALSE(ModelViews(llm, top, json, counted).ok());
  EXPECT_EQ(loads, 0);
  ProfileViewOptions summary = nsys;
  summary.model.hw.clear();
  EXPECT_TRUE(ProfileViews(summary, {}, counted).ok());
  EXPECT_EQ(loads, 0);
}

// `op`, `plan` and `validate` are one library call each too: the same output as the command,
// the same refusals, and a validation that stores a calibration hands the device file back as a
// view (written by whoever writes the views; the library writes nothing itself).
TEST(Views, OpPlanAndValidateAreLibraryCalls) {
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  Result<DeviceDatabase> loaded = DeviceDatabase::LoadDefault();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const DatabaseSource db = [&]() -> Result<const DeviceDatabase*> { return &*loaded; };
  auto printed = [](const Result<Views>& v) {
    std::ostringstream out;
    if (v.ok()) v->out(out);
    return out.str();
  };
  ViewRequest json;
  json.format = OutputFormat::kJson;
  const Result<OpRequest> matmul =
      BuildOpRequest(*FindOpKind("matmul"), {{"m", "2k"}, {"n", "4096"}, {"k", "4096"}}, "bf16");
  ASSERT_TRUE(matmul.ok()) << matmul.status().ToString();
  OpViewOptions explained;
  explained.explain = true;
  const Result<Views> op = OpViews(*matmul, explained, {}, db);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  const Output op_cli =
      RunCli({"op", "matmul", "--m", "2k", "--n", "4096", "--k", "4096", "--explain"});
  ASSERT_EQ(op_cli.status, 0) << op_cli.err;
  EXPECT_EQ(printed(op), op_cli.out);
  EXPECT_FALSE(op->chart);  // an op offers no chart: Emit refuses --plot for it

  Scenario fleet_model;
  fleet_model.model = "llama-3-70b";
  PlanRequest fleet;
  fleet.gpus = 8;
  const Result<Views> plan = PlanViews(fleet_model, fleet, json, db);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const Output plan_cli = RunCli({"plan", "llama-3-70b", "--gpus", "8", "--format", "json"});
  ASSERT_EQ(plan_cli.status, 0) << plan_cli.err;
  EXPECT_EQ(printed(plan), plan_cli.out);

  // A published run far faster than any bound: the check fails (exit status 1 from the tool),
  // and the table still says why.
  const std::string runs = ::testing::TempDir() + "/roofline_fast_run.json";
  {
    nlohmann::json doc = nlohmann::json::parse(
        read(std::string(ROOFLINE_SOURCE_DIR) + "/data/validation/published_runs.json"));
    nlohmann::json run = doc["runs"][0];
    run["id"] = "impossible-01";
    run["measured"] = {{"metric", "decode_tokens_per_s_per_user"}, {"value", 1e6}};
    doc["runs"] = nlohmann::json::array({run});
    std::ofstream(runs) << doc.dump();
  }
  const Result<Views> published = PublishedViews(runs, {});
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  EXPECT_TRUE(published->check_failed);
  EXPECT_NE(printed(published).find("THE BOUND IS ABOVE 1 MEASUREMENT"), std::string::npos);
  const Output published_cli = RunCli({"validate", "published", runs});
  EXPECT_EQ(published_cli.status, 1);
  EXPECT_EQ(printed(published), published_cli.out);

  // --save-calibration: refused for a database id, before anything runs; for a file, the
  // device with its calibration is a view, and the file is untouched until it is written.
  const std::string profile = ::testing::TempDir() + "/roofline_views_profile.json";
  const std::string original = DeviceToJson(**loaded->Find("cpu-generic"));
  std::ofstream(profile) << original;
  ValidateViewOptions save;
  save.save_calibration = true;
  save.run.repetitions = 1;
  save.run.threads = 1;
  const Result<OpRequest> small =
      BuildOpRequest(*FindOpKind("matmul"), {{"m", "64"}, {"n", "64"}, {"k", "64"}}, "fp32");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  const Result<Views> by_id = ValidateOpViews(*small, "cpu-generic", save, {}, db);
  ASSERT_FALSE(by_id.ok());
  EXPECT_EQ(by_id.status().where(), "--save-calibration");
  const Result<Views> validated = ValidateOpViews(*small, profile, save, {}, db);
  ASSERT_TRUE(validated.ok()) << validated.status().ToString();
  ASSERT_EQ(validated->files.size(), 1u);
  EXPECT_EQ(validated->files[0].first, profile);
  EXPECT_EQ(read(profile), original);
  const std::string stored = validated->files[0].second();
  EXPECT_NE(stored.find("\"calibration\""), std::string::npos);
  EXPECT_NE(stored.find("roofline validate --device cpu: matmul"), std::string::npos);
  EXPECT_NE(printed(validated).find("saved the calibration in " + profile), std::string::npos);
}

TEST(Cli, OpSizesTakeKAndM) {
  const Output a =
      RunCli({"op", "matmul", "--m", "2k", "--n", "4k", "--k", "1M", "--format", "json"});
  const Output b =
      RunCli({"op", "matmul", "--m", "2048", "--n", "4096", "--k", "1048576", "--format", "json"});
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("\"flops\""), std::string::npos);
}

// The operator's own fields are checked before the expected-time choices: a bad size is named
// even when --runtime is bad too.
TEST(Cli, OpNamesABadSizeBeforeABadExpectedTimeOption) {
  const Output o =
      RunCli({"op", "matmul", "--m", "abc", "--n", "64", "--k", "64", "--efficiency", "matmul=2"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--m"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("--efficiency"), std::string::npos) << o.err;
  const Output e =
      RunCli({"op", "matmul", "--m", "64", "--n", "64", "--k", "64", "--efficiency", "matmul=2"});
  EXPECT_EQ(e.status, 2);
  EXPECT_NE(e.err.find("--efficiency"), std::string::npos) << e.err;
}

TEST(Cli, OpMatmulJsonHasTheContractFields) {
  const Output o = RunCli({"op", "matmul", "--m", "2048", "--n", "4096", "--k", "4096", "--dtype",
                           "fp16", "--hw", "h100-sxm", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(o.err.empty());
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_DOUBLE_EQ(j["flops"].get<double>(), 68719476736.0);
  EXPECT_DOUBLE_EQ(j["bytes"]["hbm"].get<double>(), 67108864.0);
  EXPECT_DOUBLE_EQ(j["intensity"]["hbm"].get<double>(), 1024.0);
  EXPECT_EQ(j["bound"], "compute:tensor.fp16");
  EXPECT_GT(j["time_s"].get<double>(), 0);
  EXPECT_NEAR(j["attainable_flops_per_s"].get<double>(), 989.4e12, 1e9);
  EXPECT_EQ(j["flip"]["flips_below_at"], 346);  // 4096m / (2m + 4096) >= 295.3
}

TEST(Cli, ExplainShowsTheDerivation) {
  const Output o = RunCli({"op", "matmul", "--m", "1", "--n", "4096", "--k", "4096", "--hw",
                           "a100-sxm-80gb", "--explain"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("FLOPs = 2 * batch * m * n * k = 2 * 1 * 1 * 4096 * 4096"),
            std::string::npos);
  EXPECT_NE(o.out.find("Verdict: memory:hbm"), std::string::npos);
  EXPECT_NE(o.out.find("above: at m >= "), std::string::npos);
  EXPECT_NE(o.out.find("spec: "), std::string::npos);  // provenance of the figures used
}

TEST(Cli, AttentionEagerListsThreeKernels) {
  const Output o = RunCli({"op", "attention", "--heads", "32", "--head-dim", "128", "--q-len",
                           "2048", "--causal", "--impl", "eager", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["kernels"].size(), 3u);
  EXPECT_EQ(j["kernels"][1]["name"], "attn_softmax");
}

TEST(Cli, HwListAndShow) {
  const Output list = RunCli({"hw", "list"});
  ASSERT_EQ(list.status, 0);
  EXPECT_NE(list.out.find("h100-sxm"), std::string::npos);
  EXPECT_NE(list.out.find("tpu-v5e"), std::string::npos);
  const Output show = RunCli({"hw", "show", "h100-sxm", "--format", "json"});
  ASSERT_EQ(show.status, 0) << show.err;
  const nlohmann::json j = nlohmann::json::parse(show.out);
  EXPECT_NEAR(j["ridge_points"]["tensor.bf16"]["hbm"].get<double>(), 295.3, 0.1);
  const Output table = RunCli({"hw", "show", "tpu-v5e"});
  EXPECT_NE(table.out.find("Ridge points"), std::string::npos);
}

TEST(Cli, DefaultRunsTheMainJob) {
  const Output o = RunCli({});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("prefill"), std::string::npos);
  EXPECT_NE(o.out.find("decode"), std::string::npos);
}

struct BadArgs {
  std::vector<std::string> args;
  const char* expect;  ///< substring of the error line
};

class CliBadInput : public ::testing::TestWithParam<BadArgs> {};

/// A test name from the arguments ("model_llama_3_8b___batch_0_3").
std::string ArgsName(const ::testing::TestParamInfo<BadArgs>& info) {
  std::string n;
  for (const auto& a : info.param.args) n += a + "_";
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n + std::to_string(info.index);
}

TEST_P(CliBadInput, ExitsTwoWithOneLine) {
  const Output o = RunCli(GetParam().args);
  EXPECT_EQ(o.status, 2);
  EXPECT_TRUE(o.out.empty()) << o.out;
  ASSERT_FALSE(o.err.empty());
  EXPECT_EQ(o.err.rfind("error: ", 0), 0u) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
  EXPECT_NE(o.err.find(GetParam().expect), std::string::npos) << o.err;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

INSTANTIATE_TEST_SUITE_P(
    Contract, CliBadInput,
    ::testing::Values(
        BadArgs{{"op", "matmul", "--m", "0", "--n", "1", "--k", "1"}, "--m: must be a positive"},
        BadArgs{{"op", "matmul", "--m", "-3", "--n", "1", "--k", "1"}, "--m"},
        BadArgs{{"op", "matmul", "--m", "99999999999999999999", "--n", "1", "--k", "1"}, "--m"},
        BadArgs{{"op", "matmul", "--m", "2199023255553", "--n", "1", "--k", "1"}, "absurdly"},
        BadArgs{{"op", "matmul", "--m", "abc", "--n", "1", "--k", "1"}, "--m"},
        BadArgs{{"op", "matmul", "--m", "1", "--n", "1", "--k", "1", "--dtype", "bf61"},
                "did you mean 'bf16'"},
        BadArgs{{"op", "matmul", "--m", "1", "--n", "1", "--k", "1", "--hw", "h100"},
                "did you mean 'h100"},
        BadArgs{{"op", "matmul", "--m", "1", "--n", "1"}, "--k"},
        BadArgs{{"op", "matmul", "--m", "1", "--n", "1", "--k", "1", "--kk", "3"},
                "did you mean '--k'"},
        BadArgs{{"op", "attention", "--heads", "32", "--kv-heads", "5", "--head-dim", "64",
                 "--q-len", "1", "--kv-len", "100"},
                "--kv-heads"},
        BadArgs{{"op", "conv2d", "--in-channels", "3", "--out-channels", "8", "--height", "8",
                 "--width", "8", "--kernel", "3y3"},
                "--kernel"},
        BadArgs{{"op", "elementwise", "--elements", "0"}, "--elements"},
        BadArgs{{"op", "wat"}, "wat"}, BadArgs{{"hw", "show", "tpu-v5"}, "did you mean 'tpu-v5"},
        BadArgs{{"hww"}, "did you mean 'hw'"},
        BadArgs{{"hw", "show", "/nonexistent/device.json"}, "cannot open"}),
    ArgsName);

TEST(Cli, MalformedDeviceFileNamesFileAndLine) {
  const std::string path = WriteTemp("broken.json", "{\n  \"id\": \"x\",\n  \"name\": \n");
  const Output o = RunCli({"op", "matmul", "--m", "1", "--n", "1", "--k", "1", "--hw", path});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find(path + ":"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("malformed JSON"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty());
}

TEST(Cli, DeviceFileWithBadFieldNamesTheField) {
  std::string json = testing::SimpleDeviceJson(1e15, 3e12);
  json.replace(json.find("3000000000000.000000"), 20, "-1");
  const std::string path = WriteTemp("negative.json", json);
  const Output o = RunCli({"hw", "show", path});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("memory[0].bandwidth.value"), std::string::npos) << o.err;
}

TEST(Cli, ModelJsonHasTheContractFields) {
  const Output o = RunCli({"model", "llama-3-70b", "--hw", "h100-sxm", "--tp", "4", "--batch", "8",
                           "--prompt", "1024", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_NEAR(j["model"]["parameters_total"].get<double>(), 70.6e9, 0.01 * 70.6e9);
  EXPECT_GT(j["model"]["parameters_active"].get<double>(), 0);
  EXPECT_GT(j["memory"]["weights_bytes"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["memory"]["kv_cache_bytes_per_token"].get<double>(), 327680.0 / 4);
  EXPECT_GT(j["memory"]["kv_cache_bytes"].get<double>(), 0);
  // The H100's whole memory as the driver reports it: nvidia-smi's 81559 MiB (NVIDIA/nccl issue
  // #1264), not the marketed 80 GB.
  EXPECT_DOUBLE_EQ(j["memory"]["capacity_bytes"].get<double>(), 81559.0 * 1048576);
  ASSERT_EQ(j["phases"].size(), 2u);
  EXPECT_EQ(j["phases"][0]["phase"], "prefill");
  EXPECT_EQ(j["phases"][1]["phase"], "decode");
  for (const auto& p : j["phases"]) {
    EXPECT_GT(p["time_s"].get<double>(), 0);
    double sum = 0;
    for (const auto& k : p["kernels"]) {
      for (const char* field : {"name", "repeat", "flops", "bytes", "time_s", "bound"}) {
        EXPECT_TRUE(k.contains(field)) << field;
      }
      sum += k["time_s"].get<double>() * k["repeat"].get<double>();
    }
    EXPECT_NEAR(sum, p["time_s"].get<double>(), 1e-9 * sum);
  }
  bool comm = false;
  for (const auto& k : j["phases"][1]["kernels"])
    comm = comm || k["bound"] == "comm:nvlink" || k["name"] == "attn_all_reduce";
  EXPECT_TRUE(comm);
}

TEST(Cli, ModelCsvHasOneRowPerKernel) {
  const Output o = RunCli({"model", "gpt2", "--phase", "decode", "--format", "csv"});
  ASSERT_EQ(o.status, 0) << o.err;
  std::istringstream in(o.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("phase,group,kernel,repeat,flops,bytes_hbm", 0), 0u) << line;
  int rows = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(line.rfind("decode,", 0), 0u);
    ++rows;
  }
  EXPECT_GT(rows, 10);
}

TEST(Cli, ModelFromAConfigPathAndADirectory) {
  const std::string dir = ::testing::TempDir() + "/roofline_model_dir";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json")
      << R"({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 256, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
             "intermediate_size": 512, "vocab_size": 1000, "torch_dtype": "bfloat16"})";
  EXPECT_EQ(RunCli({"model", dir, "--phase", "decode"}).status, 0);
  const Output o = RunCli({"model", dir + "/config.json", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["model"]["architecture"], "Qwen3ForCausalLM");
}

TEST(Cli, ModelsListShowsPresetsWithCounts) {
  const Output o = RunCli({"models", "list"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("mixtral-8x7b"), std::string::npos);
  EXPECT_NE(o.out.find("46.70 B"), std::string::npos);
  EXPECT_NE(o.out.find("12.88 B"), std::string::npos);
  EXPECT_EQ(o.out.find("warning"), std::string::npos);
}

// The JSON listings the Python package reads (roofline.models.list(), roofline.hw.list()): the
// same entries as the tables, with the figures in base units.
TEST(Cli, ListingsAsJson) {
  const Output models = RunCli({"models", "list", "--format", "json"});
  ASSERT_EQ(models.status, 0) << models.err;
  const nlohmann::json m = nlohmann::json::parse(models.out);
  const Output table = RunCli({"models", "list"});
  EXPECT_NE(table.out.find(std::to_string(m["models"].size()) + " LLM presets"), std::string::npos);
  EXPECT_TRUE(m["warnings"].empty());
  EXPECT_NE(table.out.find(std::to_string(m["networks"].size()) + " network presets"),
            std::string::npos);
  const auto mixtral =
      std::find_if(m["models"].begin(), m["models"].end(),
                   [](const nlohmann::json& r) { return r["id"] == "mixtral-8x7b"; });
  ASSERT_NE(mixtral, m["models"].end());
  // Mixtral-8x7B: 46.7 B parameters, 12.9 B active (Mistral AI's announcement, to 0.1 B).
  EXPECT_NEAR((*mixtral)["parameters_total"].get<double>(), 46.7e9, 0.05e9);
  EXPECT_NEAR((*mixtral)["parameters_active"].get<double>(), 12.9e9, 0.05e9);
  EXPECT_EQ((*mixtral)["kv_heads"], 8);
  const auto deepseek =
      std::find_if(m["models"].begin(), m["models"].end(),
                   [](const nlohmann::json& r) { return r["id"] == "deepseek-v3"; });
  ASSERT_NE(deepseek, m["models"].end());
  EXPECT_TRUE((*deepseek)["kv_heads"].is_null());
  EXPECT_EQ((*deepseek)["mla"], true);

  const Output hw = RunCli({"hw", "list", "--format", "json"});
  ASSERT_EQ(hw.status, 0) << hw.err;
  const nlohmann::json h = nlohmann::json::parse(hw.out);
  const auto h100 = std::find_if(h["devices"].begin(), h["devices"].end(),
                                 [](const nlohmann::json& r) { return r["id"] == "h100-sxm"; });
  ASSERT_NE(h100, h["devices"].end());
  // NVIDIA H100 datasheet: 989 TFLOP/s dense bf16 (SXM), 3.35 TB/s HBM3, 80 GB.
  EXPECT_NEAR((*h100)["tensor_bf16_flops_per_s"].get<double>(), 989e12, 1e12);
  EXPECT_DOUBLE_EQ((*h100)["memory_bytes_per_s"].get<double>(), 3.35e12);
  EXPECT_DOUBLE_EQ((*h100)["memory_bytes"].get<double>(), 80e9);
  const auto v5e = std::find_if(h["devices"].begin(), h["devices"].end(),
                                [](const nlohmann::json& r) { return r["id"] == "tpu-v5e"; });
  ASSERT_NE(v5e, h["devices"].end());
  EXPECT_TRUE((*v5e)["tensor_fp8_flops_per_s"].is_null());
  EXPECT_EQ(RunCli({"hw", "list", "--format", "csv"}).status, 2);
}

INSTANTIATE_TEST_SUITE_P(
    ModelContract, CliBadInput,
    ::testing::Values(
        BadArgs{{"model", "llama-3-8b", "--batch", "0"}, "--batch"},
        BadArgs{{"model", "llama-3-8b", "--prompt", "-5"}, "--prompt"},
        BadArgs{{"model", "llama-3-8b", "--tp", "3"}, "--tp"},
        BadArgs{{"model", "llama-3-8b", "--kv-dtype", "fp9"}, "did you mean"},
        BadArgs{{"model", "lama-3-8b"}, "did you mean 'llama-3-8b'"},
        BadArgs{{"model", "/nonexistent/config.json"}, "cannot open"},
        BadArgs{{"model", "llama-3-8b", "--hw", "cpu-generic", "--tp", "2"}, "interconnect"},
        BadArgs{{"models", "lst"}, "lst"},
        // Zero keys is no default: an error, as a swept context=0 is.
        BadArgs{{"model", "llama-3-8b", "--context", "0"}, "--context: must be at"},
        // A 4-bit KV cache is refused everywhere (its scales are not modelled), also when it
        // would follow from --dtype.
        BadArgs{{"model", "llama-3-8b", "--kv-dtype", "int4"}, "--kv-dtype"},
        BadArgs{{"model", "llama-3-8b", "--dtype", "fp4"}, "--dtype: a KV cache"},
        BadArgs{{"op", "attention", "--heads", "32", "--head-dim", "128", "--q-len", "1",
                 "--kv-len", "4096", "--kv-dtype", "int4"},
                "--kv-dtype"},
        // A failing point is named by its place on the grid, once.
        BadArgs{{"sweep", "llama-3-8b", "--vary", "kv-dtype=bf16,int4"},
                "error: --vary kv-dtype=int4: a KV cache in int4"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=1,2", "--vary", "kv-dtype=fp8,int4"},
                "error: --vary batch=1, kv-dtype=int4: a KV cache"},
        // A swept tp needs an interconnect as a given one does.
        BadArgs{{"sweep", "llama-3-8b", "--hw", "cpu-generic", "--vary", "tp=1,2"},
                "error: --vary tp=2: device 'cpu-generic' lists no interconnect"},
        // Sizes take k and M in op and plan as in the scenario's fields; the bound applies to
        // the value the suffix makes.
        BadArgs{{"op", "matmul", "--m", "2q", "--n", "1", "--k", "1"}, "--m: '2q' is not a size"},
        BadArgs{{"op", "matmul", "--m", "1073741825k", "--n", "1", "--k", "1"},
                "--m: "
                "1099511628800 is absurdly large"},
        BadArgs{{"ncu-command", "--hw", "nosuch", "--app", ""}, "--app: is empty"},
        BadArgs{{"plan", "llama-3-8b", "--output", "1.5k"},
                "--output: '1.5k' is not a length in tokens"},
        BadArgs{{"plan", "llama-3-8b", "--kv-dtype", "fp4"}, "--kv-dtype"},
        // Every device whose id starts with the one given, the default first.
        BadArgs{{"model", "llama-3-8b", "--hw", "h100"},
                "did you mean 'h100-sxm' (the default) or 'h100-pcie'?"},
        // The main job takes the workload options and refuses others.
        BadArgs{{"--hw", "h200", "--bogus", "1"}, "unknown option '--bogus'"},
        BadArgs{{"--batch", "0"}, "--batch"},
        // --modules: a known framework, run op by op around one fused attention call, on an LLM.
        BadArgs{{"model", "llama-3-8b", "--modules", "hf"}, "did you mean 'hf-transformers'"},
        BadArgs{{"model", "llama-3-8b", "--modules", "hf-transformers", "--fusion", "fused"},
                "--modules: 'hf-transformers' runs its modules op by op: use --fusion eager"},
        BadArgs{{"model", "llama-3-8b", "--modules", "hf-transformers", "--attention", "eager"},
                "use --attention flash"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=1:4:x2", "--modules", "hf-transformers",
                 "--runtime", "compiled"},
                "not compiled"},
        BadArgs{{"model", "vit-b-16", "--modules", "hf-transformers"},
                "--modules: applies to LLM configs"},
        BadArgs{{"op", "attention", "--heads", "32", "--head-dim", "128", "--q-len", "1",
                 "--kv-len", "4096", "--impl", "eager", "--modules", "hf-transformers"},
                "use --impl flash"}),
    ArgsName);

TEST(Cli, BrokenConfigFilesExitTwo) {
  const std::string truncated =
      WriteTemp("truncated_config.json", R"({"architectures": ["LlamaForCausalLM"], "hidd)");
  Output o = RunCli({"model", truncated});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("truncated_config.json:1:"), std::string::npos) << o.err;
  const std::string bert =
      WriteTemp("bert_config.json", R"({"architectures": ["BertForMaskedLM"]})");
  o = RunCli({"model", bert});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("unsupported architecture 'BertForMaskedLM'"), std::string::npos);
  EXPECT_NE(o.err.find("LlamaForCausalLM"), std::string::npos);  // lists what is supported
  EXPECT_TRUE(o.out.empty());
}

INSTANTIATE_TEST_SUITE_P(
    SweepAndPlanContract, CliBadInput,
    ::testing::Values(
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=10:1"}, "backwards"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=0:8"}, "between 1 and"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batchsize=1:8"}, "did you mean 'batch'"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=1:8", "--vary", "batch=1:4"},
                "same variable"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=1:8", "--plot", "/nonexistent/d/x.svg"},
                "cannot open"},
        BadArgs{{"plan", "llama-3-8b", "--gpus", "0"}, "--gpus"},
        BadArgs{{"model", "llama-3-8b", "--memory-fraction", "0"}, "--memory-fraction: must be"},
        BadArgs{{"model", "llama-3-8b", "--memory-fraction", "1.5"}, "--memory-fraction"},
        BadArgs{{"sweep", "llama-3-8b", "--vary", "batch=1:4", "--memory-fraction", "x"},
                "--memory-fraction: 'x' is not a number"},
        BadArgs{{"plan", "llama-3-8b", "--output", "-1"}, "--output"},
        BadArgs{{"plan", "llama-3.1-405b", "--hw", "l4", "--gpus", "2"}, "does not fit"}),
    ArgsName);

TEST(Cli, SweepWritesJsonPlotAndReport) {
  const std::string svg = ::testing::TempDir() + "/roofline_sweep.svg";
  const std::string html = ::testing::TempDir() + "/roofline_sweep.html";
  std::remove(svg.c_str());
  std::remove(html.c_str());
  const Output o = RunCli({"sweep", "llama-3-8b", "--vary", "batch=1:512", "--phase", "decode",
                           "--format", "json", "--plot", svg, "--report", html});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_FALSE(j["crossovers"].empty());
  for (const auto& x : j["crossovers"]) {
    for (const char* f : {"what", "variable", "value", "from", "to", "sentence"}) {
      EXPECT_TRUE(x.contains(f)) << f;
    }
  }
  EXPECT_EQ(j["schema"], 2);
  EXPECT_EQ(j["rows"], 10);  // 10 points of decode, as columns
  EXPECT_EQ(j["data"]["time_s"].size(), 10u);
  std::ifstream s(svg), h(html);
  ASSERT_TRUE(s.good());
  ASSERT_TRUE(h.good());
  std::stringstream hs;
  hs << h.rdbuf();
  EXPECT_NE(hs.str().find("<svg"), std::string::npos);
  EXPECT_NE(hs.str().find("Crossovers"), std::string::npos);
}

// The sweep's and the plan's notes name every choice the expected columns were made under.
TEST(Cli, ExpectedNotesNameTheChoicesMade) {
  const Output sweep =
      RunCli({"sweep", "llama-3-8b", "--vary", "batch=1,8", "--phase", "decode", "--modules",
              "hf-transformers", "--efficiency", "matmul=0.5", "--runtime", "cuda-graph"});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("expected columns: achievable ceilings, runtime cuda-graph, --modules "
                           "hf-transformers, --efficiency matmul=0.5 "),
            std::string::npos)
      << sweep.out;
  const Output plan = RunCli({"plan", "llama-3-8b", "--hw", "rtx-4090", "--accumulate", "fp16"});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_NE(plan.out.find("expected columns: achievable ceilings, runtime eager, --accumulate "
                          "fp16, launch costs per kernel"),
            std::string::npos)
      << plan.out;
}

// --accumulate fp16: the setup names the FP16-accumulate figure only where a matmul ran at it
// (attention keeps FP32 accumulation).
TEST(Cli, Fp16AccumulateFigureOnlyWhereAMatmulTookIt) {
  const std::vector<std::string> attention = {
      "op",         "attention", "--heads",  "32",       "--kv-heads",   "8",
      "--head-dim", "128",       "--kv-len", "4096",     "--q-len",      "512",
      "--dtype",    "fp16",      "--hw",     "rtx-4090", "--accumulate", "fp16"};
  const std::vector<std::string> matmul = {"op",   "matmul",   "--m",          "512",     "--n",
                                           "4096", "--k",      "4096",         "--dtype", "fp16",
                                           "--hw", "rtx-4090", "--accumulate", "fp16"};
  for (const auto& [args, listed] : {std::pair{attention, false}, std::pair{matmul, true}}) {
    const Output text = RunCli(args);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_EQ(text.out.find("matmuls at FP16 accumulate") != std::string::npos, listed) << text.out;
    std::vector<std::string> json_args = args;
    json_args.insert(json_args.end(), {"--format", "json"});
    const Output json = RunCli(json_args);
    ASSERT_EQ(json.status, 0) << json.err;
    EXPECT_EQ(json.out.find("used_ceilings_fp16_accumulate") != std::string::npos, listed)
        << json.out.substr(0, 400);
  }
}

TEST(Cli, ModelPlotAndPlanJson) {
  const std::string svg = ::testing::TempDir() + "/roofline_model.svg";
  ASSERT_EQ(RunCli({"model", "llama-3-8b", "--plot", svg}).status, 0);
  std::ifstream s(svg);
  std::stringstream ss;
  ss << s.rdbuf();
  EXPECT_NE(ss.str().find("Arithmetic intensity"), std::string::npos);
  const Output o = RunCli({"plan", "mixtral-8x7b", "--hw", "h100-sxm", "--gpus", "4", "--prompt",
                           "1024", "--output", "128", "--price-per-hour", "2", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_GE(j["variants"].size(), 1u);
  EXPECT_GT(j["variants"][0]["largest_batch"]["cost_per_million_output_tokens"].get<double>(), 0);
}

// `--device cuda` without a GPU (or without the CUDA backend): tests/cuda_measure_test.cc.
INSTANTIATE_TEST_SUITE_P(
    MeasureAndValidateContract, CliBadInput,
    ::testing::Values(BadArgs{{"measure", "--device", "tpu"}, "expected cpu or cuda"},
                      BadArgs{{"measure", "--threads", "-1"}, "--threads"},
                      BadArgs{{"validate", "op", "matmul", "--m", "8", "--n", "8", "--k", "8",
                               "--hw", "cpu-generic", "--save-calibration"},
                              "device JSON file"},
                      BadArgs{{"validate", "op", "matmul", "--m", "0", "--n", "8", "--k", "8"},
                              "--m"},
                      BadArgs{{"validate", "gpt2", "--repetitions", "0"}, "--repetitions"}),
    ArgsName);

// validate --save-calibration stores the fit in the profile; `model` then shows the calibrated
// expected time beside the bound and names the profile.
TEST(Cli, SavedCalibrationShowsUpInModel) {
  const std::string profile = ::testing::TempDir() + "/roofline_cpu_profile.json";
  {
    Result<DeviceDatabase> db = DeviceDatabase::LoadEmbedded();
    std::ofstream(profile) << DeviceToJson(**db->Find("cpu-generic"));
  }
  const Output v = RunCli({"validate", "op", "matmul", "--m", "64", "--n", "256", "--k", "256",
                           "--hw", profile, "--repetitions", "2", "--save-calibration"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_NE(v.out.find("cblas_sgemm"), std::string::npos);
  Result<Device> saved = LoadDeviceFile(profile);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ASSERT_TRUE(saved->calibration.has_value());
  EXPECT_GT(saved->calibration->matmul, 0);
  const Output m = RunCli({"model", "gpt2", "--hw", profile, "--phase", "decode"});
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_NE(m.out.find("expected (calibrated"), std::string::npos);
  EXPECT_NE(m.out.find(profile), std::string::npos);
}

TEST(Cli, HelpExitsZero) {
  EXPECT_EQ(RunCli({"help"}).status, 0);
  const Output o = RunCli({"op", "matmul", "--help"});
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("--weight-dtype"), std::string::npos);
}

/// `model --top N` keeps the N kernels of each phase with the most time and says so; it is a
/// table option (an error with --format json); every `model` table ends with its why.
TEST(Cli, ModelTopAndWhy) {
  const Output o = RunCli({"model", "deepseek-v3", "--hw", "h200", "--tp", "8", "--batch", "8",
                           "--phase", "decode", "--top", "6"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("(top 6 of "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("by class: matmuls"), std::string::npos) << o.out;
  const std::string table = o.out.substr(0, o.out.find("(top 6 of "));
  const size_t dash = table.rfind("-----\n");
  ASSERT_NE(dash, std::string::npos);
  EXPECT_EQ(std::count(table.begin() + static_cast<std::ptrdiff_t>(dash), table.end(), '\n'), 7);
  EXPECT_NE(o.out.find("\n== why ==\n"), std::string::npos);
  const Output j = RunCli({"model", "llama-3-8b", "--top", "3", "--format", "json"});
  EXPECT_EQ(j.status, 2);
  EXPECT_NE(j.err.find("--top"), std::string::npos) << j.err;
  EXPECT_TRUE(j.out.empty());
}

/// `sweep --vary hw=A,B`: the same workload on each device; each device's point equals `model`
/// on that device, each device's crossover equals its own one-device sweep's, and the CSV and
/// JSON name the device. --hw beside it, an unknown id, an id twice are one-line errors.
TEST(Cli, SweepOverDevices) {
  const Output j = RunCli(
      {"sweep", "llama-3-8b", "--vary", "hw=h100-sxm,h200", "--batch", "16", "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc.at("devices").size(), 2u);
  for (const auto& d : doc.at("devices")) {
    const std::string id = d.at("device");
    const Output m =
        RunCli({"model", "llama-3-8b", "--hw", id, "--batch", "16", "--format", "json"});
    ASSERT_EQ(m.status, 0) << m.err;
    const nlohmann::json model = nlohmann::json::parse(m.out);
    const auto& data = d.at("sweep").at("data");  // rows: point 0's phases, in order
    for (size_t p = 0; p < 2; ++p) {
      EXPECT_EQ(data.at("time_s").at(p).get<double>(),
                model.at("phases").at(p).at("time_s").get<double>())
          << id;
    }
  }
  const Output t = RunCli({"sweep", "llama-3-8b", "--vary", "hw=h100-sxm,h200", "--vary",
                           "batch=1:1024:x4", "--phase", "decode"});
  ASSERT_EQ(t.status, 0) << t.err;
  const Output one = RunCli({"sweep", "llama-3-8b", "--hw", "h200", "--vary", "batch=1:1024:x4",
                             "--phase", "decode", "--format", "json"});
  ASSERT_EQ(one.status, 0) << one.err;
  int64_t h200 = 0;
  const nlohmann::json one_doc = nlohmann::json::parse(one.out);
  for (const auto& x : one_doc.at("crossovers")) {
    if (x.at("what") == "decode matmuls") h200 = x.at("value").get<int64_t>();
  }
  ASSERT_GT(h200, 0);
  EXPECT_NE(t.out.find("decode matmuls become compute-bound (tensor.bf16): h100-sxm batch >= "),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("; h200 batch >= " + std::to_string(h200)), std::string::npos) << t.out;
  const Output csv = RunCli({"sweep", "llama-3-8b", "--vary", "hw=h100-sxm,h200", "--format", "csv",
                             "--phase", "decode"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("device,batch,phase,", 0), 0u) << csv.out.substr(0, 100);
  EXPECT_NE(csv.out.find("\nh200,1,decode,"), std::string::npos) << csv.out;
  // Devices with different columns (an SRAM machine: bounds only, and a chip count): one header
  // for all, "-" or an empty cell where a device has no figure.
  const Output mixed = RunCli({"sweep", "llama-3-8b", "--vary", "hw=cerebras-cs3,h100-sxm",
                               "--phase", "decode", "--format", "csv"});
  ASSERT_EQ(mixed.status, 0) << mixed.err;
  std::vector<size_t> fields;
  std::istringstream lines(mixed.out);
  for (std::string line; std::getline(lines, line);) {
    fields.push_back(static_cast<size_t>(std::count(line.begin(), line.end(), ',')));
  }
  ASSERT_EQ(fields.size(), 3u) << mixed.out;
  EXPECT_EQ(fields[1], fields[0]) << mixed.out;
  EXPECT_EQ(fields[2], fields[0]) << mixed.out;
  EXPECT_NE(mixed.out.find("expected_time_s"), std::string::npos);
  const Output mixed_table =
      RunCli({"sweep", "llama-3-8b", "--vary", "hw=cerebras-cs3,h100-sxm", "--phase", "decode"});
  ASSERT_EQ(mixed_table.status, 0) << mixed_table.err;
  EXPECT_NE(mixed_table.out.find("expected on h100-sxm"), std::string::npos) << mixed_table.out;
  EXPECT_EQ(mixed_table.out.find("expected on cerebras"), std::string::npos) << mixed_table.out;
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"sweep", "llama-3-8b", "--vary", "hw=h100-sxm", "--hw", "h200"},
           {"sweep", "llama-3-8b", "--vary", "hw=h100-sxm,nope"},
           {"sweep", "llama-3-8b", "--vary", "hw=h200,h200"},
           {"sweep", "llama-3-8b", "--vary", "hw=h200,"}}) {
    const Output e = RunCli(bad);
    EXPECT_EQ(e.status, 2) << bad.back();
    EXPECT_TRUE(e.out.empty());
    EXPECT_EQ(e.err.find('\n'), e.err.size() - 1) << e.err;
  }
}

/// `sweep --explain KERNEL` derives the kernel on both sides of its own flip (the same batch the
/// why section of `model` names) and of its class's crossover; bad names and formats are errors.
TEST(Cli, SweepExplainAroundTheFlip) {
  const Output o = RunCli({"sweep", "llama-3-8b", "--vary", "batch=1:1024:x4", "--phase", "decode",
                           "--explain", "gate_proj"});
  ASSERT_EQ(o.status, 0) << o.err;
  const Output m = RunCli({"model", "llama-3-8b", "--phase", "decode"});
  ASSERT_EQ(m.status, 0) << m.err;
  const std::string mark = "largest gate_proj at 0.9997 FLOP/B: memory:hbm until batch ";
  const size_t at = m.out.find(mark);
  ASSERT_NE(at, std::string::npos) << m.out;
  const int64_t last_memory = std::stoll(m.out.substr(at + mark.size()));
  const std::string before = "== batch = " + std::to_string(last_memory) +
                             " (just before gate_proj's own decode verdict flips";
  const std::string after = "== batch = " + std::to_string(last_memory + 1) +
                            " (where gate_proj's own decode verdict flips";
  const size_t b = o.out.find(before), a = o.out.find(after);
  ASSERT_NE(b, std::string::npos) << o.out;
  ASSERT_NE(a, std::string::npos) << o.out;
  EXPECT_NE(o.out.substr(b, a - b).find("Time bound = max of the terms"), std::string::npos);
  EXPECT_NE(o.out.substr(b, a - b).find("-> memory:hbm"), std::string::npos);
  EXPECT_NE(o.out.substr(a).find("-> compute:tensor.bf16"), std::string::npos);
  EXPECT_NE(o.out.find("(at the decode matmuls crossover)"), std::string::npos);
  const Output bad =
      RunCli({"sweep", "llama-3-8b", "--vary", "batch=1:64:x4", "--explain", "gate_prj"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("did you mean 'gate_proj'"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty());
  const Output json = RunCli({"sweep", "llama-3-8b", "--vary", "batch=1:64:x4", "--explain",
                              "gate_proj", "--format", "json"});
  EXPECT_EQ(json.status, 2);
  EXPECT_TRUE(json.out.empty());
}

/// `roofline --hw h200 --batch 4` is the main job with those options; `--why` is not taken for
/// a typo of `--hw`.
TEST(Cli, MainJobTakesTheWorkloadOptions) {
  const Output o = RunCli({"--hw", "h200", "--batch", "4", "--model", "llama-3.2-1b"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("roofline: llama-3.2-1b on NVIDIA H200"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(", batch 4, prompt 2048"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("== why =="), std::string::npos) << o.out;
  // The same numbers as `roofline model` for that workload.
  const Output m = RunCli({"model", "llama-3.2-1b", "--hw", "h200", "--batch", "4"});
  ASSERT_EQ(m.status, 0) << m.err;
  const std::string total = m.out.substr(m.out.find("total: "), 40);
  EXPECT_NE(o.out.find(total), std::string::npos) << total;
  const Output why = RunCli({"model", "llama-3-8b", "--why"});
  EXPECT_EQ(why.status, 2);
  EXPECT_EQ(why.err.find("did you mean '--hw'"), std::string::npos) << why.err;
}

}  // namespace cli_test
}  // namespace roofline
