// `roofline model GRAPH.json` and `roofline sweep GRAPH.json` through cli::Run: the table, the
// JSON contract, sweeps over a symbolic dimension and the bad-input contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "roofline/network.h"
#include "tools/roofline/commands.h"

namespace roofline {
namespace network_cli_test {

struct Output {
  int status;
  std::string out;
  std::string err;
};

Output RunCli(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = cli::Run(args, out, err);
  return {status, out.str(), err.str()};
}

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/graphs/" + name;
}

TEST(NetworkCli, ModelTable) {
  const Output o = RunCli({"model", Fixture("small_cnn.json"), "--hw", "h100-sxm"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(o.err.empty());
  EXPECT_NE(o.out.find("small_cnn on NVIDIA H100"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("dims: batch=1; 9 nodes: 8 kernels, 1 views (no kernel), 0 uncosted"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("parameters 5.43 k"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("conv1"), std::string::npos);
  EXPECT_NE(o.out.find("memory:hbm"), std::string::npos);
  EXPECT_NE(o.out.find("total: "), std::string::npos);
  EXPECT_NE(o.out.find("not costed: none"), std::string::npos);
}

TEST(NetworkCli, ModelJsonContract) {
  const Output o =
      RunCli({"model", Fixture("all_ops.json"), "--hw", "h100-sxm", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["network"]["name"], "all_ops");
  EXPECT_EQ(j["network"]["nodes"], 18);
  EXPECT_GT(j["network"]["parameters"].get<double>(), 0);
  EXPECT_GT(j["network"]["weight_bytes"].get<double>(), 0);
  EXPECT_EQ(j["network"]["uncosted"]["count"], 1);
  EXPECT_EQ(j["network"]["uncosted"]["output_bytes"].get<double>(), 4096);
  EXPECT_DOUBLE_EQ(j["network"]["uncosted"]["share_of_nodes"].get<double>(), 1.0 / 17);
  EXPECT_DOUBLE_EQ(j["network"]["uncosted"]["share_of_bytes"].get<double>(), 4096.0 / 41672);
  EXPECT_EQ(j["network"]["uncosted"]["by_op"]["aten::nonzero"], 1);
  EXPECT_EQ(j["device"], "h100-sxm");
  EXPECT_TRUE(j["dims"].is_object());
  for (const char* key : {"flops", "matrix_flops", "bytes", "time_s"}) {
    EXPECT_GT(j["totals"][key].get<double>(), 0) << key;
  }
  EXPECT_TRUE(j["totals"]["bound"].is_string());
  ASSERT_EQ(j["kernels"].size(), 16u);
  double flops = 0;
  for (const auto& k : j["kernels"]) flops += k["flops"].get<double>();
  EXPECT_DOUBLE_EQ(flops, j["totals"]["flops"].get<double>());
  EXPECT_EQ(j["kernels"][0]["name"], "mm");
  EXPECT_EQ(j["kernels"][0]["op"], "matmul");
  EXPECT_EQ(j["kernels"][0]["matrix_flops"].get<double>(), 2.0 * 8 * 16 * 24 * 32);
}

TEST(NetworkCli, DimBindsTheBatch) {
  const Output o = RunCli({"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--dim",
                           "batch=8", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["dims"]["batch"], 8);
  // 8 x (conv1 + conv2 + fc) matrix FLOPs of batch 1.
  EXPECT_EQ(j["totals"]["matrix_flops"].get<double>(),
            8 * (2.0 * 16 * 1024 * 27 + 2.0 * 32 * 64 * 144 + 2.0 * 320));
}

TEST(NetworkCli, PlotAndReport) {
  const auto dir = std::filesystem::temp_directory_path() / "roofline_network_cli";
  std::filesystem::create_directories(dir);
  const std::string svg = (dir / "net.svg").string();
  const std::string html = (dir / "net.html").string();
  const Output o = RunCli({"model", Fixture("transformer_block.json"), "--hw", "h100-sxm", "--plot",
                           svg, "--report", html});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(std::filesystem::file_size(svg) > 0);
  EXPECT_TRUE(std::filesystem::file_size(html) > 0);
  std::filesystem::remove_all(dir);
}

TEST(NetworkCli, SweepOverBatchReportsTheCrossover) {
  const Output o = RunCli({"sweep", Fixture("transformer_block.json"), "--hw", "a100-sxm-80gb",
                           "--vary", "batch=1:64:x2"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("sweep batch"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Crossovers (exact values, found by bisection between grid points):"),
            std::string::npos);
  // Exact (bisected): the A100 ridge is reached between the grid points 8 and 16.
  EXPECT_NE(o.out.find("matrix kernels: memory-bound (hbm) until batch 8, compute-bound "
                       "(tensor.bf16) from batch 9 on"),
            std::string::npos)
      << o.out;
  const Output j = RunCli({"sweep", Fixture("transformer_block.json"), "--hw", "a100-sxm-80gb",
                           "--vary", "batch=1:64:x2", "--format", "json", "--json-layout", "rows"});
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["variable"], "batch");
  ASSERT_EQ(doc["points"].size(), 7u);
  EXPECT_EQ(doc["points"][6]["batch"], 64);
  ASSERT_FALSE(doc["crossovers"].empty());
  EXPECT_EQ(doc["crossovers"][0]["variable"], "batch");
}

TEST(NetworkCli, SweepPlotMarksTheCrossover) {
  const auto dir = std::filesystem::temp_directory_path() / "roofline_network_sweep_plot";
  std::filesystem::create_directories(dir);
  const std::string svg = (dir / "sweep.svg").string();
  const std::string html = (dir / "sweep.html").string();
  const Output o = RunCli({"sweep", Fixture("transformer_block.json"), "--hw", "a100-sxm-80gb",
                           "--vary", "batch=1:64:x2", "--plot", svg, "--report", html});
  ASSERT_EQ(o.status, 0) << o.err;
  std::ifstream in(svg);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(doc.rfind("<?xml", 0), 0u);
  EXPECT_NE(doc.find("compute-bound kernels"), std::string::npos);
  EXPECT_NE(doc.find("batch (log scale)"), std::string::npos);  // 1..64: log x axis
  // The crossover of the table above (batch 9, bisected) is labelled on the chart.
  EXPECT_NE(doc.find("matrix kernels: compute-bound from batch 9"), std::string::npos) << doc;
  std::ifstream page(html);
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  std::filesystem::remove_all(dir);
}

struct BadCase {
  std::vector<std::string> args;
  std::string expected;  ///< part of the one error line
};

// --dtype re-types a graph and --tf32 puts its fp32 products on TF32 tensor cores; each says so
// in a note. Neither is accepted where it means nothing.
TEST(NetworkCli, DtypeAndTf32RetypeAGraph) {
  const Output bf16 = RunCli({"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--dtype",
                              "bf16", "--format", "json"});
  ASSERT_EQ(bf16.status, 0) << bf16.err;
  const Output fp32 =
      RunCli({"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--format", "json"});
  ASSERT_EQ(fp32.status, 0) << fp32.err;
  const nlohmann::json a = nlohmann::json::parse(bf16.out), b = nlohmann::json::parse(fp32.out);
  EXPECT_DOUBLE_EQ(2 * a["network"]["weight_bytes"].get<double>(),
                   b["network"]["weight_bytes"].get<double>());
  EXPECT_NE(bf16.out.find("--dtype bf16: "), std::string::npos);
  const Output tf32 = RunCli({"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--tf32"});
  ASSERT_EQ(tf32.status, 0) << tf32.err;
  EXPECT_NE(tf32.out.find("tensor.tf32"), std::string::npos) << tf32.out;
  EXPECT_NE(tf32.out.find("note: --tf32: "), std::string::npos) << tf32.out;
  const Output sweep = RunCli({"sweep", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--vary",
                               "batch=1:64:x4", "--dtype", "fp16", "--format", "json",
                               "--json-layout", "rows"});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const Output sweep32 = RunCli({"sweep", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--vary",
                                 "batch=1:64:x4", "--format", "json", "--json-layout", "rows"});
  ASSERT_EQ(sweep32.status, 0) << sweep32.err;
  const nlohmann::json s16 = nlohmann::json::parse(sweep.out);
  const nlohmann::json s32 = nlohmann::json::parse(sweep32.out);
  ASSERT_EQ(s16["points"].size(), s32["points"].size());
  EXPECT_LT(s16["points"][0]["bytes"].get<double>(), s32["points"][0]["bytes"].get<double>());
  const Output sweep_table = RunCli({"sweep", Fixture("small_cnn.json"), "--hw", "h100-sxm",
                                     "--vary", "batch=1:64:x4", "--tf32"});
  ASSERT_EQ(sweep_table.status, 0) << sweep_table.err;
  EXPECT_NE(sweep_table.out.find("sweep batch (--tf32)"), std::string::npos) << sweep_table.out;
  struct Bad {
    std::vector<std::string> args;
    std::string flag;
  };
  for (const Bad& bad :
       {Bad{{"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--dtype", "int8"}, "--dtype"},
        Bad{{"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--dtype", "bf17"}, "--dtype"},
        Bad{{"model", Fixture("small_cnn.json"), "--hw", "h100-sxm", "--dtype", "bf16", "--tf32"},
            "--tf32"},
        Bad{{"model", "llama-3-8b", "--hw", "h100-sxm", "--tf32"}, "--tf32"}}) {
    const Output o = RunCli(bad.args);
    EXPECT_EQ(o.status, 2) << bad.flag;
    EXPECT_TRUE(o.out.empty());
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find(bad.flag), std::string::npos) << o.err;
  }
}

TEST(NetworkCli, BadInputExitsTwoWithOneLine) {
  const std::string f = Fixture("");
  const std::vector<BadCase> cases = {
      {{"model", f + "bad_malformed.json"}, "bad_malformed.json:"},
      {{"model", f + "bad_unknown_tensor.json"},
       "bad_unknown_tensor.json: nodes[3].inputs[0]: unknown tensor 't9'"},
      {{"model", f + "bad_unknown_op.json"}, "bad_unknown_op.json: nodes[2].op: node 'relu'"},
      {{"model", f + "bad_version2.json"}, "bad_version2.json: version: version 2"},
      {{"model", f + "bad_unbound_dim.json"}, "bad_unbound_dim.json: dims.batch: "},
      {{"model", f + "bad_overflow.json"}, "bad_overflow.json: tensors.x: "},
      {{"model", f + "small_cnn.json", "--dim", "height=3"}, "--dim height: "},
      {{"model", f + "small_cnn.json", "--dim", "batch=-1"}, "--dim batch=-1: "},
      {{"model", f + "small_cnn.json", "--dim", "batch=2000000000000000"}, "--dim batch="},
      {{"model", f + "small_cnn.json", "--batch", "8"}, "--batch: applies to LLM configs"},
      {{"model", "llama-3-8b", "--dim", "batch=2"}, "--dim: applies to graph files"},
      {{"sweep", f + "small_cnn.json", "--vary", "height=1:4"}, "--vary height: "},
      {{"sweep", f + "small_cnn.json", "--vary", "batch=8:2"}, "--vary batch=8:2: "},
      {{"sweep", f + "bad_version2.json", "--vary", "batch=1:4"}, "bad_version2.json: version"},
      // The launch overhead is checked once, in CostOptions, for graph files as for LLMs.
      {{"model", f + "small_cnn.json", "--launch-overhead-us", "-5"}, "--launch-overhead-us: "},
      {{"sweep", f + "small_cnn.json", "--vary", "batch=1:4", "--launch-overhead-us", "2e6"},
       "--launch-overhead-us: must be between 0 and 1e6 microseconds"},
  };
  for (const BadCase& c : cases) {
    const Output o = RunCli(c.args);
    EXPECT_EQ(o.status, 2) << c.args[1];
    EXPECT_TRUE(o.out.empty()) << c.args[1] << ": " << o.out;
    EXPECT_EQ(o.err.rfind("error: ", 0), 0u) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find(c.expected), std::string::npos) << o.err;
  }
}

TEST(NetworkCli, NoPartialOutputFileOnError) {
  const auto dir = std::filesystem::temp_directory_path() / "roofline_network_cli_bad";
  std::filesystem::create_directories(dir);
  const std::string svg = (dir / "bad.svg").string();
  const Output o = RunCli({"model", Fixture("bad_unbound_dim.json"), "--plot", svg});
  EXPECT_EQ(o.status, 2);
  EXPECT_FALSE(std::filesystem::exists(svg));
  std::filesystem::remove_all(dir);
}

TEST(NetworkCli, OnnxWithoutTheLibraryOrBadFileFails) {
  const auto dir = std::filesystem::temp_directory_path() / "roofline_network_cli_onnx";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "not.onnx").string();
  { std::ofstream(path) << "this is not an ONNX model"; }
  const Output o = RunCli({"model", path, "--hw", "h100-sxm"});
  EXPECT_EQ(o.status, 2);
  EXPECT_TRUE(o.out.empty());
  EXPECT_NE(o.err.find(path), std::string::npos) << o.err;
  std::filesystem::remove_all(dir);
}

// An ONNX model's why section reloads it at each batch it searches: re-typed like the table.
TEST(NetworkCli, ARetypedOnnxModelsWhyReloadsItRetyped) {
  if (!OnnxFrontendAvailable()) GTEST_SKIP() << "built without the ONNX library";
  const std::string onnx =
      std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/onnx/resnet50_shapes.onnx";
  const Output o = RunCli({"model", onnx, "--hw", "a100-sxm-80gb", "--dim", "batch=1", "--tf32"});
  ASSERT_EQ(o.status, 0) << o.err;
  const size_t why = o.out.find("== why ==");
  ASSERT_NE(why, std::string::npos) << o.out;
  const std::string text = o.out.substr(why);
  EXPECT_NE(text.find("compute:tensor.tf32"), std::string::npos) << text;
  EXPECT_EQ(text.find("vector.fp32"), std::string::npos) << text;
  // The same in a sweep: every reload re-typed.
  const Output s = RunCli({"sweep", onnx, "--hw", "a100-sxm-80gb", "--vary", "batch=1,64",
                           "--dtype", "bf16", "--format", "json", "--json-layout", "rows"});
  ASSERT_EQ(s.status, 0) << s.err;
  const Output s32 =
      RunCli({"sweep", onnx, "--hw", "a100-sxm-80gb", "--vary", "batch=1,64", "--format", "json",
              "--json-layout", "rows"});
  ASSERT_EQ(s32.status, 0) << s32.err;
  const nlohmann::json a = nlohmann::json::parse(s.out), b = nlohmann::json::parse(s32.out);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_LT(a["points"][i]["bytes"].get<double>(), 0.6 * b["points"][i]["bytes"].get<double>());
  }
}

TEST(NetworkCli, SweepAnOnnxModelReloadsItPerValue) {
  if (!OnnxFrontendAvailable()) GTEST_SKIP() << "built without the ONNX library";
  // dynamic_shapes.onnx (tools/fixtures/make_onnx_fixtures.py): 1680 matrix FLOPs per batch
  // entry (two [5, 8] x [8, 8] projections and 2 heads of [5, 4] x [4, 5]), every value a
  // fresh load with the batch bound before shape inference.
  const std::string onnx =
      std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/onnx/dynamic_shapes.onnx";
  const Output o =
      RunCli({"sweep", onnx, "--hw", "h100-sxm", "--vary", "batch=1,3,8", "--format", "json",
              "--json-layout", "rows"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json doc = nlohmann::json::parse(o.out);
  ASSERT_EQ(doc["points"].size(), 3u);
  for (const auto& p : doc["points"]) {
    EXPECT_EQ(p["matrix_flops"].get<double>(), 1680.0 * p["batch"].get<double>()) << p;
  }
  // A dimension the model does not have: one line naming it.
  const Output bad =
      RunCli({"sweep", onnx, "--hw", "h100-sxm", "--dim", "batch=1", "--vary", "height=1:4"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("no symbolic input dimension 'height'"), std::string::npos) << bad.err;
}

}  // namespace network_cli_test
}  // namespace roofline

namespace roofline {
namespace network_cli_test {

// Review finding: a graph whose symbolic dimension is named like a column of the sweep's table
// ("time_s") crashed the text view. The dimension's column is then `dim_time_s`.
TEST(NetworkCli, ADimensionNamedLikeAColumnIsSweptUnderAnotherId) {
  std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/graphs/small_cnn.json");
  nlohmann::json g = nlohmann::json::parse(in);
  nlohmann::json dims;
  for (auto& [k, v] : g["dims"].items()) dims[k == "batch" ? "time_s" : k] = v;
  g["dims"] = dims;
  for (auto& [name, t] : g["tensors"].items()) {
    for (auto& x : t["shape"]) {
      if (x.is_string() && x == "batch") x = "time_s";
    }
  }
  const std::string path = ::testing::TempDir() + "/roofline_dim_time_s.json";
  std::ofstream(path) << g.dump();
  const Output csv = RunCli({"sweep", path, "--vary", "time_s=1:4", "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find(',')), "dim_time_s");
  const Output table = RunCli({"sweep", path, "--vary", "time_s=1:4"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("\n     4  "), std::string::npos) << table.out;
}

}  // namespace network_cli_test
}  // namespace roofline
