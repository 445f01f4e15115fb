// `roofline profile ncu|nsys|torch` from the command line: the figures a user sees, the JSON
// contract, the join with a prediction, the plot, and the bad-input contract (one line on stderr
// naming the file, exit status 2, nothing on stdout, no output file left behind).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "roofline/plot.h"
#include "roofline/profile.h"
#include "tests/cli_runner.h"
#include "tests/shared_samples.h"
#include "tests/test_util.h"

namespace roofline {
namespace profile_cli_test {

using Output = testing::CliOutput;
using testing::RunCli;

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/profiles/" + name;
}

std::string Sample(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/../shared/samples/profiles/" + name;
}

std::filesystem::path TempPath(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         (std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" + name);
}

void ExpectOneLineError(const Output& o, const std::string& mentions) {
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_TRUE(o.out.empty()) << o.out;
  ASSERT_FALSE(o.err.empty());
  EXPECT_EQ(o.err.rfind("error: ", 0), 0u) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "more than one line: " << o.err;
  EXPECT_NE(o.err.find(mentions), std::string::npos) << o.err;
}

// The real sgemm profile (../shared/samples/profiles/SOURCES.md): three kernels on CC 8.0 without
// gpu__time_duration, so the durations come from cycles / clock rate; the values below are the
// file's own numbers with thousands separators removed.
TEST(ProfileCli, NcuSgemmSampleGivesTheFilesFigures) {
  const std::string path = Sample("ncu_metrics_sgemm_a100.csv");
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  const Output o = RunCli({"profile", "ncu", path, "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["device"], "a100-sxm-40gb");
  EXPECT_NE(j["device_match"].get<std::string>().find("compute capability 8.0"), std::string::npos);
  ASSERT_EQ(j["kernels"].size(), 3u);
  const double dram[3] = {5323503232.0, 5420639360.0, 807658682624.0};
  const double time[3] = {5145083088.72 / 764999991.90, 5134280071.41 / 764999992.88,
                          25610472227.46 / 764999999.31};
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json& k = j["kernels"][i];
    EXPECT_NEAR(k["time_s"].get<double>(), time[i], time[i] * 1e-9) << i;
    ASSERT_EQ(k["levels"][0]["level"], "hbm") << i;
    EXPECT_DOUBLE_EQ(k["levels"][0]["bytes"].get<double>(), dram[i]) << i;
  }
  EXPECT_EQ(j["kernels"][2]["class"], "gemm");
  // gemm_v1: 34,359,738,368,000 FFMA thread instructions = 2 FLOP each, plus 2,149,161,369,600
  // HFMA counted as paired half2 (4 FLOP each; the stated fp16 convention).
  EXPECT_DOUBLE_EQ(j["kernels"][2]["flops"].get<double>(),
                   2 * 34359738368000.0 + 4 * 2149161369600.0);
  // The tensor-pipe instruction count cannot be turned into FLOP on CC 8.0: it is said.
  ASSERT_EQ(j["missing_metrics"].size(), 1u);
  EXPECT_EQ(j["missing_metrics"][0], "sm__ops_path_tensor_src_*.sum");
}

// Issue "answers at a glance": the A100 sample ran at a 765 MHz SM clock (the file's
// smsp__cycles_elapsed.avg.per_second, 764,999,991.90 to 764,999,999.31 Hz), 54% of the A100's
// 1410 MHz boost clock (NVIDIA A100 whitepaper): the profile says so. The H100 decode fixture
// ran at 1.95 GHz, 98% of the H100 SXM's 1.98 GHz: no warning, the clock stated.
TEST(ProfileCli, NcuLowClockIsWarned) {
  const std::string path = Sample("ncu_metrics_sgemm_a100.csv");
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  const Output o = RunCli({"profile", "ncu", path, "--hw", "a100-sxm-80gb"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("warning: the kernels ran at a 765 MHz SM clock, 54% of the "
                       "a100-sxm-80gb's 1.41 GHz boost clock"),
            std::string::npos)
      << o.out.substr(0, 600);
  const Output j = RunCli({"profile", "ncu", path, "--hw", "a100-sxm-80gb", "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_NEAR(doc.at("sm_clock_hz").get<double>(), 765e6, 1e3);
  EXPECT_DOUBLE_EQ(doc.at("boost_clock_hz").get<double>(), 1.41e9);
  EXPECT_TRUE(doc.at("low_clock").get<bool>());
  const Output h =
      RunCli({"profile", "ncu", Fixture("ncu_h100_llama3_8b_decode.csv"), "--hw", "h100-sxm"});
  ASSERT_EQ(h.status, 0) << h.err;
  EXPECT_EQ(h.out.find("warning: the kernels ran at"), std::string::npos);
  EXPECT_NE(h.out.find("SM clock 1.95 GHz (98% of the h100-sxm's 1.98 GHz boost clock)"),
            std::string::npos)
      << h.out.substr(0, 600);
}

// Issue "answers at a glance": the ncu plot is the hierarchical roofline Nsight Compute users
// know: each kernel at its DRAM, L2 and L1 intensities, joined, labelled "#i" as in the table,
// titled with the file's name (not its path), with a legend of its own.
TEST(ProfileCli, NcuPlotIsHierarchical) {
  const std::string svg = ::testing::TempDir() + "/ncu_hier.svg";
  const Output o = RunCli({"profile", "ncu", Fixture("ncu_h100_llama3_8b_decode.csv"), "--hw",
                           "h100-sxm", "--plot", svg});
  ASSERT_EQ(o.status, 0) << o.err;
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("ncu_h100_llama3_8b_decode.csv on h100-sxm (Nsight Compute)"),
            std::string::npos);
  EXPECT_EQ(text.find("tests/fixtures"), std::string::npos);
  EXPECT_NE(text.find("Arithmetic intensity at each memory level"), std::string::npos);
  for (const char* level : {"hbm", "l2", "smem"}) {
    EXPECT_NE(text.find(std::string("kernel at ") + level + " intensity"), std::string::npos)
        << level;
  }
  EXPECT_NE(text.find("points: achieved FLOP/s"), std::string::npos);
  EXPECT_EQ(text.find("at the time bound"), std::string::npos);
  EXPECT_NE(text.find("#45 nvjet"), std::string::npos);
  std::remove(svg.c_str());
  // The points: one group per kernel, at distinct levels, one achieved FLOP/s per group, labels
  // unique across groups.
  Result<NcuReport> r = LoadNcuCsv(Fixture("ncu_h100_llama3_8b_decode.csv"));
  ASSERT_TRUE(r.ok());
  const Device d = testing::Dev("h100-sxm");
  std::vector<std::string> engines;
  const std::vector<RooflinePoint> pts = NcuRooflinePoints(SummarizeNcu(*r, &d), d, &engines);
  std::map<int, std::vector<const RooflinePoint*>> groups;
  for (const RooflinePoint& p : pts) groups[p.group].push_back(&p);
  std::set<std::string> labels;
  int multi = 0;
  for (const auto& [g, members] : groups) {
    ASSERT_GE(g, 0);
    std::set<int> levels;
    for (const RooflinePoint* p : members) {
      levels.insert(p->level);
      EXPECT_EQ(p->flops_per_s, members.front()->flops_per_s);
      EXPECT_EQ(p->label, members.front()->label);
    }
    EXPECT_EQ(levels.size(), members.size());
    multi += members.size() > 1;
    EXPECT_TRUE(labels.insert(members.front()->label).second) << members.front()->label;
    EXPECT_EQ(members.front()->label.rfind("#" + std::to_string(g + 1) + " ", 0), 0u);
  }
  EXPECT_GT(multi, 10);
}

TEST(ProfileCli, NcuTableSaysWhatIsMissingAndHowToCollectIt) {
  const std::string path = Sample("ncu_metrics_sgemm_a100.csv");
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  const Output o = RunCli({"profile", "ncu", path, "--hw", "a100-sxm-80gb"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("device: a100-sxm-80gb"), std::string::npos);
  EXPECT_NE(o.out.find("from --hw"), std::string::npos);
  EXPECT_NE(o.out.find("ncu --metrics 'regex:sm__ops_path_tensor_src_.*\\.sum$'"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("note (#3): inst_executed_pipe_tensor"), std::string::npos) << o.out;
}

// The RTX 5090 details page (CC 12.0, the database's one device of that compute capability) is
// placed on the rtx-5090's roofline; the same page from a compute capability the database does
// not hold (12.1, the DGX Spark's) still reports the per-kernel figures, and the roofline part
// says why it is absent.
TEST(ProfileCli, NcuWithoutAKnownDeviceStillReportsTheKernels) {
  const std::string path = Sample("ncu_details_rtx5090.csv");
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  const Output known = RunCli({"profile", "ncu", path});
  ASSERT_EQ(known.status, 0) << known.err;
  EXPECT_NE(known.out.find("device: rtx-5090 (NVIDIA GeForce RTX 5090 32 GB): matched by compute "
                           "capability 12.0"),
            std::string::npos)
      << known.out;
  EXPECT_NE(known.out.find("on the roofline of rtx-5090"), std::string::npos);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at = text.find("\"12.0\""); at != std::string::npos; at = text.find("\"12.0\"", at)) {
    text.replace(at, 6, "\"12.1\"");
  }
  // A compute capability two database parts share (8.6: the RTX A6000 and the A10G) is told
  // apart by the SM count ncu-command collects (84 on an RTX A6000).
  {
    std::string ga102 = text;
    for (size_t at = ga102.find("\"12.1\""); at != std::string::npos;
         at = ga102.find("\"12.1\"", at)) {
      ga102.replace(at, 6, "\"8.6\"");
    }
    // One more metric row: the first data row with its metric name, unit and value replaced.
    const size_t row = ga102.find('\n') + 1;
    std::string extra = ga102.substr(row, ga102.find('\n', row) - row + 1);
    const size_t name = extra.find("\"dram__bytes_read.sum\",\"Mbyte\",\"2.33\"");
    ASSERT_NE(name, std::string::npos) << extra;
    extra.replace(name, std::string("\"dram__bytes_read.sum\",\"Mbyte\",\"2.33\"").size(),
                  "\"device__attribute_multiprocessor_count\",\"\",\"84\"");
    ga102.insert(row, extra);
    const std::filesystem::path a6000 = TempPath("a6000.csv");
    std::ofstream(a6000) << ga102;
    const Output picked = RunCli({"profile", "ncu", a6000.string()});
    ASSERT_EQ(picked.status, 0) << picked.err;
    EXPECT_NE(picked.out.find("matched by compute capability 8.6 to rtx-a6000, told apart by its "
                              "84 SMs"),
              std::string::npos)
        << picked.out;
    std::filesystem::remove(a6000);
  }
  const std::filesystem::path spark = TempPath("spark.csv");
  std::ofstream(spark) << text;
  const Output o = RunCli({"profile", "ncu", spark.string()});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("device: none (cannot tell the device"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("on the roofline of"), std::string::npos);
  // Asking for what needs a device is an error.
  ExpectOneLineError(
      RunCli({"profile", "ncu", spark.string(), "--plot", TempPath("x.svg").string()}),
      "compute capability 12.1");
  std::filesystem::remove(spark);
}

TEST(ProfileCli, NcuRawPageWithUnitsRowAveragesRepeatedLaunches) {
  const Output o = RunCli({"profile", "ncu", Fixture("ncu_raw_page.csv"), "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["format"], "ncu wide (raw page)");
  EXPECT_EQ(j["device"], "a100-sxm-80gb");  // device__attribute_display_name in the file
  ASSERT_EQ(j["kernels"].size(), 2u);       // ampere_sgemm twice (same grid, block) + add
  EXPECT_EQ(j["kernels"][0]["launches"], 2);
  // 221.41 and 220.97 usecond averaged.
  EXPECT_NEAR(j["kernels"][0]["time_s"].get<double>(), 221.19e-6, 1e-12);
  // dram__bytes_read 12.58 Mbyte + dram__bytes_write 4,194.30 Kbyte.
  EXPECT_NEAR(j["kernels"][0]["levels"][0]["bytes"].get<double>(), 12.58e6 + 4194.30e3, 1e-3);
}

// A GPU the database does not know, profiled with the .peak_sustained metrics that
// `roofline ncu-command` collects: the file's own peaks make the roofline. The fixture's DRAM
// peak is 1,280 byte/cycle x 1,593 cycle/usecond = 2.039 TB/s (the A100 80 GB datasheet figure).
TEST(ProfileCli, NcuUnknownDeviceUsesTheFilesOwnPeaks) {
  std::ifstream in(Fixture("ncu_raw_page.csv"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"NVIDIA A100-SXM4-80GB", "Mystery GPU"},
        {"\"8.0\"", "\"9.9\""}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
    }
  }
  const std::filesystem::path path = TempPath("mystery.csv");
  std::ofstream(path) << text;
  const Output o = RunCli({"profile", "ncu", path.string(), "--format", "json"});
  std::filesystem::remove(path);
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["device"], "ncu-peaks");
  EXPECT_NE(j["device_match"].get<std::string>().find(".peak_sustained"), std::string::npos);
  const nlohmann::json& add = j["kernels"][1];
  EXPECT_NEAR(add["levels"][0]["peak_bytes_per_s"].get<double>(), 1280 * 1593e6, 1);
  // 8.39 MB read + 4,194.30 KB written in 8.22 us: 1.53 TB/s, 75% of the DRAM peak.
  EXPECT_EQ(add["verdict"], "memory-bound (dram)");
  EXPECT_NEAR(add["percent_of_roof"].get<double>(), 100 * 12.58430e6 / 8.22e-6 / 2.039040e12, 0.01);
}

// A kernel claiming 1 PFLOP of fp32 in one microsecond on an H100: the achieved figure exceeds
// the ceiling, and the warning names the inputs that make it.
TEST(ProfileCli, NcuImplausibleFiguresAreWarnedAbout) {
  const std::filesystem::path path = TempPath("implausible.csv");
  {
    std::ofstream f(path);
    f << "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Metric "
         "Name\",\"Metric Unit\",\"Metric Value\"\n";
    const std::string row = "\"0\",\"fast_kernel\",\"(128, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",";
    f << row << "\"gpu__time_duration.sum\",\"nsecond\",\"1,000\"\n";
    f << row << "\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"inst\",\"5e14\"\n";
    f << row << "\"dram__bytes.sum\",\"byte\",\"1000\"\n";
  }
  const Output o = RunCli({"profile", "ncu", path.string(), "--hw", "h100-sxm"});
  std::filesystem::remove(path);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("warning: #1 fast_kernel: implausible"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("exceeds the vector.fp32 peak"), std::string::npos) << o.out;
}

TEST(ProfileCli, NcuBadFilesAreOneLineErrors) {
  for (const char* name : {"ncu_empty.csv", "ncu_truncated.csv", "ncu_not_ncu_nsys_kern_sum.csv",
                           "ncu_no_kernels.csv", "does_not_exist.csv"}) {
    SCOPED_TRACE(name);
    ExpectOneLineError(RunCli({"profile", "ncu", Fixture(name), "--hw", "h100-sxm"}), name);
  }
  ExpectOneLineError(RunCli({"profile", "ncu", Fixture("ncu_raw_page.csv"), "--hw", "no-such-gpu"}),
                     "no-such-gpu");
}

TEST(ProfileCli, NsysKernSumGroupsByClass) {
  const Output o = RunCli({"profile", "nsys", Fixture("nsys_kern_sum.csv"), "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  double class_total = 0;
  for (const nlohmann::json& c : j["classes"]) class_total += c["time_s"].get<double>();
  EXPECT_NEAR(class_total, j["gpu_time_s"].get<double>(), 1e-12);
  EXPECT_GT(j["kernels"].size(), 0u);
  ExpectOneLineError(RunCli({"profile", "nsys", Fixture("nsys_truncated.csv")}),
                     "nsys_truncated.csv");
  ExpectOneLineError(RunCli({"profile", "nsys", Fixture("torch_kineto_shapes.json")}),
                     "torch_kineto_shapes.json");
}

// The nsys trace joined with a Llama-3.2-1B decode prediction: the first q/k projections of the
// predicted step are the first GEMMs of the trace (mapping by class and order, docs/profiles.md),
// and the plot holds both series.
TEST(ProfileCli, NsysTraceJoinsThePredictionAndPlots) {
  const std::filesystem::path svg = TempPath("join.svg");
  const Output o =
      RunCli({"profile", "nsys", Fixture("nsys_gpu_trace.csv"), "--model", "llama-3.2-1b", "--hw",
              "h100-sxm", "--plot", svg.string(), "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const nlohmann::json& kernels = j["prediction"]["kernels"];
  ASSERT_FALSE(kernels.empty());
  bool saw_q = false;
  for (const nlohmann::json& k : kernels) {
    if (k["name"] != "q_proj") continue;
    saw_q = true;
    EXPECT_EQ(k["matched"], 1);
    EXPECT_EQ(k["measured_kernel"], "nvjet_tst_128x256_64x4_1x2_h_bz_coopB_TNT");
    EXPECT_GT(k["predicted_s"].get<double>(), 0);
    EXPECT_NEAR(k["efficiency"].get<double>(),
                k["predicted_s"].get<double>() / k["measured_s"].get<double>(), 1e-12);
  }
  EXPECT_TRUE(saw_q);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(svg);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("measured"), std::string::npos);
  EXPECT_NE(text.find("decode"), std::string::npos);
}

TEST(ProfileCli, PlotIntoAMissingFolderFailsWithoutAFile) {
  const std::filesystem::path svg = TempPath("no_such_dir") / "x.svg";
  ExpectOneLineError(RunCli({"profile", "nsys", Fixture("nsys_gpu_trace.csv"), "--model",
                             "llama-3.2-1b", "--hw", "h100-sxm", "--plot", svg.string()}),
                     "x.svg");
  EXPECT_FALSE(std::filesystem::exists(svg));
}

// FLOPs from the recorded shapes: addmm([128], [32,64], [64,128]) = 2*32*64*128.
TEST(ProfileCli, TorchShapesGiveFlopsPerOp) {
  for (const char* name : {"torch_kineto_shapes.json", "torch_kineto_shapes.json.gz"}) {
    SCOPED_TRACE(name);
    const Output o =
        RunCli({"profile", "torch", Fixture(name), "--hw", "h100-sxm", "--format", "json"});
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json j = nlohmann::json::parse(o.out);
    bool saw = false;
    for (const nlohmann::json& op : j["ops"]) {
      if (op["op"] != "aten::addmm") continue;
      saw = true;
      EXPECT_DOUBLE_EQ(op["flops"].get<double>(), 2.0 * 32 * 64 * 128);
      EXPECT_GT(op["achieved_flops_per_s"].get<double>(), 0);
    }
    EXPECT_TRUE(saw);
  }
}

TEST(ProfileCli, TorchBadFilesAreOneLineErrors) {
  for (const char* name : {"torch_truncated.json", "torch_not_a_trace.json", "ncu_raw_page.csv"}) {
    SCOPED_TRACE(name);
    ExpectOneLineError(RunCli({"profile", "torch", Fixture(name), "--hw", "h100-sxm"}), name);
  }
}

// The real AlexNet trace (A100, recorded without shapes): time by op class, the device matched
// from deviceProperties.
TEST(ProfileCli, TorchAlexnetSampleGivesTimeByClass) {
  const std::string path = Sample("torch_trace_alexnet_a100.json.gz");
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  const Output o = RunCli({"profile", "torch", path, "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_NE(j["device"].get<std::string>().find("a100"), std::string::npos);
  double total = 0;
  int64_t launches = 0;
  for (const nlohmann::json& c : j["classes"]) {
    total += c["time_s"].get<double>();
    launches += c["launches"].get<int64_t>();
  }
  EXPECT_EQ(launches, 98);             // 98 GPU events (79 kernels + memcpy/memset)
  EXPECT_NEAR(total, 66203e-6, 1e-6);  // their durations summed
  // Its 16 "Memcpy HtoD (Pageable -> Device)" events take 55503 us of the 66203: the copy class
  // says they went from host to device (none back).
  bool split = false;
  for (const nlohmann::json& c : j["classes"]) {
    if (c["class"] != "copy") continue;
    ASSERT_TRUE(c.contains("host_to_device")) << c.dump();
    EXPECT_EQ(c["host_to_device"]["launches"], 16);
    EXPECT_NEAR(c["host_to_device"]["time_s"].get<double>(), 55503e-6, 1e-6);
    EXPECT_EQ(c["device_to_host"]["launches"], 0);
    split = true;
  }
  EXPECT_TRUE(split);
  const Output text = RunCli({"profile", "torch", path});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("  host to device"), std::string::npos) << text.out;
  // The memcpy is named as CUDA names it, not cut to "Device)".
  EXPECT_EQ(text.out.find(" Device) "), std::string::npos) << text.out;
}

}  // namespace profile_cli_test
}  // namespace roofline
