// Nsight Compute CSV reader and roofline figures. The fixtures in tests/fixtures/profiles/ncu_* are
// written for these tests in ncu's real layouts; every expected number below is read off the
// fixture (or the shared real sample) named in the test and converted by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "roofline/profile.h"
#include "tests/shared_samples.h"
#include "tests/test_util.h"

namespace roofline {
namespace profile_ncu_test {

const std::string kFixtures = std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/profiles/";

NcuReport Load(const std::string& file) {
  Result<NcuReport> r = LoadNcuCsv(kFixtures + file);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : NcuReport();
}

double Metric(const NcuKernel& k, std::string_view name) {
  const double* v = k.Find(name);
  EXPECT_NE(v, nullptr) << name;
  return v != nullptr ? *v : -1;
}

bool Has(const std::vector<std::string>& list, std::string_view text) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& s) { return s.find(text) != std::string::npos; });
}

// ---------------------------------------------------------------------------------------------
// Layouts.

TEST(NcuCsv, WideRawPageWithUnitsRowAndNoise) {
  const NcuReport r = Load("ncu_raw_page.csv");
  EXPECT_EQ(r.layout, "wide (raw page)");
  ASSERT_EQ(r.kernels.size(), 3u);  // three launches, two of the same kernel
  const NcuKernel& k0 = r.kernels[0];
  EXPECT_EQ(k0.id, 0);
  EXPECT_EQ(k0.name, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(k0.block, "(128, 1, 1)");
  EXPECT_EQ(k0.grid, "(16, 32, 1)");
  EXPECT_EQ(k0.cc, "8.0");
  EXPECT_EQ(k0.stream, "7");
  EXPECT_EQ(k0.device, "NVIDIA A100-SXM4-80GB");  // from device__attribute_display_name
  EXPECT_EQ(k0.line, 10);                         // 7 noise lines, the header, the units row
  // Units row: Mbyte, Kbyte, usecond, Gbyte, byte, Ghz, cycle/usecond; values with separators.
  EXPECT_DOUBLE_EQ(Metric(k0, "dram__bytes_read.sum"), 12.58e6);
  EXPECT_DOUBLE_EQ(Metric(k0, "dram__bytes_write.sum"), 4194.30e3);
  EXPECT_DOUBLE_EQ(Metric(k0, "gpu__time_duration.sum"), 221.41e-6);
  EXPECT_DOUBLE_EQ(Metric(k0, "l1tex__t_bytes.sum"), 1.07e9);
  EXPECT_DOUBLE_EQ(Metric(k0, "lts__t_bytes.sum"), 536870912.0);
  EXPECT_DOUBLE_EQ(Metric(k0, "sm__cycles_elapsed.avg.per_second"), 1.41e9);
  EXPECT_DOUBLE_EQ(Metric(k0, "dram__cycles_elapsed.avg.per_second"), 1593e6);
  EXPECT_DOUBLE_EQ(Metric(k0, "sm__throughput.avg.pct_of_peak_sustained_elapsed"), 61.20);
  EXPECT_TRUE(k0.na.empty());

  const NcuKernel& k1 = r.kernels[1];
  EXPECT_EQ(k1.name,
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char *, 3>>(int, T2, T3)");
  EXPECT_EQ(k1.na, (std::vector<std::string>{"sm__ops_path_tensor_src_fp16_dst_fp32.sum",
                                             "sm__ops_path_tensor_src_tf32_dst_fp32.sum"}));
  EXPECT_EQ(k1.Find("sm__ops_path_tensor_src_fp16_dst_fp32.sum"), nullptr);

  const NcuKernel& k2 = r.kernels[2];  // the row ends with a trailing comma
  EXPECT_EQ(k2.id, 2);
  EXPECT_EQ(k2.name, k0.name);
  EXPECT_DOUBLE_EQ(Metric(k2, "gpu__time_duration.sum"), 220.97e-6);
  EXPECT_EQ(k2.line, 12);

  EXPECT_TRUE(Has(r.notes, "skipped 5 ncu message lines")) << ::testing::PrintToString(r.notes);
  EXPECT_TRUE(Has(r.notes, "skipped 2 lines of program output"));
  EXPECT_TRUE(Has(r.notes, "1 Kbyte = 1000 byte"));
}

TEST(NcuCsv, OldColumnsWithKernelTimeAndNvtx) {
  const NcuReport r = Load("ncu_old_columns.csv");
  EXPECT_EQ(r.layout, "long (old columns)");
  ASSERT_EQ(r.kernels.size(), 2u);
  const NcuKernel& k0 = r.kernels[0];
  EXPECT_EQ(k0.name, "void MatrixMulCUDA<32>(float *, float *, float *, int, int)");
  EXPECT_EQ(k0.block, "");  // no Block Size column in this version
  EXPECT_EQ(k0.cc, "7.0");  // from device__attribute_compute_capability_major/minor
  EXPECT_EQ(k0.line, 8);
  EXPECT_DOUBLE_EQ(Metric(k0, "Duration"), 94.59e-6);          // usecond
  EXPECT_DOUBLE_EQ(Metric(k0, "Elapsed Cycles"), 131968.0);    // cycle
  EXPECT_DOUBLE_EQ(Metric(k0, "SM Frequency"), 1.38e9);        // Ghz
  EXPECT_DOUBLE_EQ(Metric(k0, "Memory Throughput"), 58.41e9);  // Gbyte/second
  EXPECT_DOUBLE_EQ(Metric(k0, "Block Size"), 1024.0);
  EXPECT_EQ(k0.na, std::vector<std::string>{"Function Cache Configuration"});
  EXPECT_TRUE(Has(r.notes, "'Function Cache Configuration' is not a number"));
  EXPECT_DOUBLE_EQ(Metric(r.kernels[1], "Duration"), 94208e-9);  // "94,208" nsecond
  EXPECT_TRUE(Has(r.notes, "skipped 3 ncu message lines"));
  EXPECT_TRUE(Has(r.notes, "skipped 4 lines of program output"));

  // Volta: the tensor-pipe instruction count times the x512 factor, stated as an assumption.
  const NcuFigures f = DeriveNcuFigures(k0);
  ASSERT_TRUE(f.duration_s.has_value());
  EXPECT_DOUBLE_EQ(*f.duration_s, 94.59e-6);
  ASSERT_TRUE(f.tensor_flops.has_value());
  EXPECT_DOUBLE_EQ(*f.tensor_flops, 10240.0 * 512);
  EXPECT_EQ(f.tensor_dtype, "fp16");
  EXPECT_TRUE(Has(f.notes, "ASSUMPTION")) << ::testing::PrintToString(f.notes);
  EXPECT_DOUBLE_EQ(*f.dram_bytes, 819.20e3 + 409.60e3);
  EXPECT_DOUBLE_EQ(*f.l2_bytes, 26.21e6);
  EXPECT_DOUBLE_EQ(*f.l1_bytes, 104.86e6);
  EXPECT_FALSE(f.fp32_flops.has_value());
  EXPECT_TRUE(Has(f.missing, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  EXPECT_EQ(f.missing.size(), 9u);  // the nine d/f/h add/mul/fma counts
}

TEST(NcuCsv, DetailsWithRulesLabelsNoiseAndQuotedNames) {
  const NcuReport r = Load("ncu_details_noise.csv");
  EXPECT_EQ(r.layout, "long (details / --metrics)");
  ASSERT_EQ(r.kernels.size(), 3u);
  const NcuKernel& k0 = r.kernels[0];
  EXPECT_EQ(k0.line, 4);
  EXPECT_EQ(k0.cc, "9.0");
  EXPECT_NE(k0.name.find("Flash_kernel_traits<128, 64, 64, 4, cutlass::half_t>>, true"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(Metric(k0, "gpu__time_duration.sum"), 1.25e-3);            // msecond
  EXPECT_DOUBLE_EQ(Metric(k0, "l1tex__t_bytes.sum"), 0.01e12);                // Tbyte
  EXPECT_DOUBLE_EQ(Metric(k0, "sm__cycles_elapsed.avg.per_second"), 1.83e9);  // cycle/nsecond
  EXPECT_DOUBLE_EQ(Metric(k0, "smsp__warp_issue_frob.sum"), 42.0);  // unknown unit: as printed
  EXPECT_TRUE(Has(r.notes, "unknown unit 'frobnicator'"));
  EXPECT_EQ(k0.na, std::vector<std::string>{"sm__ops_path_tensor_src_bf16_dst_fp32.sum"});

  const NcuKernel& k1 = r.kernels[1];
  EXPECT_EQ(k1.name, "void kernel_tag<\"relu, fused\">(float *, (anonymous namespace)::Params)");
  EXPECT_EQ(k1.block, "(256, 1, 1)");
  EXPECT_DOUBLE_EQ(Metric(k1, "Hit Rate"), 12.5);
  EXPECT_DOUBLE_EQ(Metric(k1, "Memory Workload Analysis Tables / L2 Cache: Hit Rate"), 80.25);
  EXPECT_EQ(r.kernels[2].id, 2);
  EXPECT_EQ(r.kernels[2].name, k0.name);
  EXPECT_DOUBLE_EQ(Metric(r.kernels[2], "dram__bytes.sum"), 1.06e9);

  EXPECT_TRUE(Has(r.notes, "skipped 5 ncu message lines"));
  EXPECT_TRUE(Has(r.notes, "skipped 2 lines of program output"));
  EXPECT_TRUE(Has(r.notes, "ncu said: ==WARNING== Backing up device memory"));
}

TEST(NcuCsv, EveryUnitToBaseUnits) {
  struct U {
    const char* unit;
    double scale;
  };
  const U units[] = {{"byte", 1},
                     {"Kbyte", 1e3},
                     {"Mbyte", 1e6},
                     {"Gbyte", 1e9},
                     {"Tbyte", 1e12},
                     {"byte/second", 1},
                     {"Kbyte/second", 1e3},
                     {"Mbyte/s", 1e6},
                     {"Gbyte/s", 1e9},
                     {"Tbyte/s", 1e12},
                     {"inst", 1},
                     {"cycle", 1},
                     {"cycle/second", 1},
                     {"cycle/nsecond", 1e9},
                     {"cycle/usecond", 1e6},
                     {"nsecond", 1e-9},
                     {"usecond", 1e-6},
                     {"msecond", 1e-3},
                     {"second", 1},
                     {"ns", 1e-9},
                     {"us", 1e-6},
                     {"ms", 1e-3},
                     {"s", 1},
                     {"%", 1},
                     {"hz", 1},
                     {"Khz", 1e3},
                     {"Mhz", 1e6},
                     {"Ghz", 1e9},
                     {"", 1},
                     {"warp", 1},
                     {"thread", 1},
                     {"block", 1},
                     {"register/thread", 1},
                     {"sector", 1},
                     {"request", 1},
                     {"inst/cycle", 1}};
  std::string header = "\"ID\",\"Kernel Name\"", unit_row = "\"\",\"\"", row = "\"0\",\"k\"";
  for (size_t i = 0; i < std::size(units); ++i) {
    header += ",\"m" + std::to_string(i) + "__x.sum\"";
    unit_row += ",\"" + std::string(units[i].unit) + "\"";
    row += ",\"1.5\"";
  }
  Result<NcuReport> r = ParseNcuCsv(header + "\n" + unit_row + "\n" + row + "\n", "units.csv");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->kernels.size(), 1u);
  for (size_t i = 0; i < std::size(units); ++i) {
    EXPECT_DOUBLE_EQ(Metric(r->kernels[0], "m" + std::to_string(i) + "__x.sum"),
                     1.5 * units[i].scale)
        << units[i].unit;
  }
  EXPECT_FALSE(Has(r->notes, "unknown unit")) << ::testing::PrintToString(r->notes);
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(NcuCsvErrors, EmptyFile) {
  Result<NcuReport> r = LoadNcuCsv(kFixtures + "ncu_empty.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_EQ(r.status().where(), kFixtures + "ncu_empty.csv:1");
  EXPECT_NE(r.status().what().find("empty file"), std::string::npos);
}

TEST(NcuCsvErrors, TruncatedInsideAQuotedNameNamesTheLine) {
  Result<NcuReport> r = LoadNcuCsv(kFixtures + "ncu_truncated.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where(), kFixtures + "ncu_truncated.csv:4");
  EXPECT_NE(r.status().what().find("unterminated"), std::string::npos);
}

TEST(NcuCsvErrors, RowWithFewerFieldsThanTheHeader) {
  const std::string text =
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"k\",\"gpu__time_duration.sum\",\"nsecond\",\"10\"\n"
      "\"0\",\"1\",\"k\",\n";
  Result<NcuReport> r = ParseNcuCsv(text, "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where(), "t.csv:3");
  EXPECT_NE(r.status().what().find("truncated row: 4 fields, the header (line 1) has 6"),
            std::string::npos)
      << r.status().what();
  // A wide row cut short is an error too.
  Result<NcuReport> w =
      ParseNcuCsv("\"ID\",\"Kernel Name\",\"a__b.sum\",\"c__d.sum\"\n\"0\",\"k\",\"1\"\n", "w.csv");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().where(), "w.csv:2");
}

TEST(NcuCsvErrors, ExtraFieldsAndBadIdsAreErrors) {
  const std::string head =
      "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  Result<NcuReport> extra = ParseNcuCsv(head + "\"0\",\"k\",\"m\",\"\",\"1\",\"surprise\"\n", "e");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().what().find("more than the 5"), std::string::npos);
  Result<NcuReport> id = ParseNcuCsv(head + "\"zero\",\"k\",\"m\",\"\",\"1\"\n", "i");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().where(), "i:2");
  EXPECT_NE(id.status().what().find("ID 'zero'"), std::string::npos);
}

TEST(NcuCsvErrors, AnNsysCsvIsNotNcu) {
  Result<NcuReport> r = LoadNcuCsv(kFixtures + "ncu_not_ncu_nsys_kern_sum.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_NE(r.status().what().find("not an Nsight Compute CSV: expected a header with"),
            std::string::npos);
}

TEST(NcuCsvErrors, OnlyProfilerMessagesSaysWhatNcuSaid) {
  Result<NcuReport> r = LoadNcuCsv(kFixtures + "ncu_no_kernels.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().what().find("ncu said: ==WARNING== No kernels were profiled."),
            std::string::npos)
      << r.status().what();
}

TEST(NcuCsvErrors, UnreadableFile) {
  Result<NcuReport> r = LoadNcuCsv(kFixtures + "does_not_exist.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
}

TEST(NcuCsvErrors, WidePageWithoutUnitsRowIsReadAsPrinted) {
  Result<NcuReport> r =
      ParseNcuCsv("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"7\"\n", "u");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(Metric(r->kernels[0], "gpu__time_duration.sum"), 7.0);
  EXPECT_TRUE(Has(r->notes, "no units row"));
}

// ---------------------------------------------------------------------------------------------
// Figures.

TEST(NcuFigures, WideRawPageKernel) {
  const NcuReport r = Load("ncu_raw_page.csv");
  ASSERT_EQ(r.kernels.size(), 3u);
  const NcuFigures f = DeriveNcuFigures(r.kernels[0]);
  EXPECT_TRUE(f.missing.empty()) << ::testing::PrintToString(f.missing);
  EXPECT_DOUBLE_EQ(*f.duration_s, 221.41e-6);
  EXPECT_DOUBLE_EQ(*f.fp32_flops, 1048576.0 + 2 * 268435456.0);  // fadd + 2 ffma
  EXPECT_DOUBLE_EQ(*f.fp64_flops, 0);
  EXPECT_DOUBLE_EQ(*f.fp16_flops, 0);
  EXPECT_DOUBLE_EQ(*f.tensor_flops, 0);
  EXPECT_EQ(f.tensor_dtype, "");
  EXPECT_DOUBLE_EQ(*f.dram_bytes, 12.58e6 + 4194.30e3);  // read + write
  EXPECT_TRUE(Has(f.notes, "dram__bytes_read.sum + dram__bytes_write.sum"));
  EXPECT_DOUBLE_EQ(*f.l2_bytes, 536870912.0);
  EXPECT_DOUBLE_EQ(*f.l1_bytes, 1.07e9);
  // Peaks: 6,912 FFMA/cycle x 2 x 1.41 GHz; 1,280 byte/cycle x 1,593 MHz.
  EXPECT_DOUBLE_EQ(*f.peak_fp32_flops_per_s, 6912.0 * 2 * 1.41e9);
  EXPECT_DOUBLE_EQ(*f.peak_dram_bytes_per_s, 1280.0 * 1593e6);
  EXPECT_FALSE(f.peak_l2_bytes_per_s.has_value());
  EXPECT_DOUBLE_EQ(f.TotalFlops(), 1048576.0 + 2 * 268435456.0);
}

TEST(NcuFigures, RatesTensorOpsAndHalf2) {
  const NcuReport r = Load("ncu_details_noise.csv");
  ASSERT_EQ(r.kernels.size(), 3u);
  const NcuFigures f = DeriveNcuFigures(r.kernels[0]);
  EXPECT_DOUBLE_EQ(*f.duration_s, 1.25e-3);
  // (fadd 12.5 + fmul 0 + 2 x ffma 512.5) inst/cycle x 2,287,500 smsp__cycles_elapsed.avg.
  EXPECT_DOUBLE_EQ(*f.fp32_flops, (12.5 + 2 * 512.5) * 2287500.0);
  EXPECT_TRUE(Has(f.notes, ".sum.per_cycle_elapsed x smsp__cycles_elapsed.avg"));
  EXPECT_DOUBLE_EQ(*f.fp16_flops, 2 * 1000.0 + 2 * 2000.0 + 4 * 3000.0);
  EXPECT_TRUE(Has(f.notes, "paired half2"));
  EXPECT_DOUBLE_EQ(*f.tensor_flops, 549755813888.0);  // 2 x 8192 x 8192 x 4096
  EXPECT_EQ(f.tensor_dtype, "fp16");
  EXPECT_DOUBLE_EQ(*f.peak_tensor_flops_per_s, 540672.0 * 1.83e9);
  EXPECT_FALSE(f.fp64_flops.has_value());
  EXPECT_EQ(f.missing,
            (std::vector<std::string>{"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
                                      "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
                                      "sm__sass_thread_inst_executed_op_dfma_pred_on.sum"}));
  EXPECT_DOUBLE_EQ(f.TotalFlops(), (12.5 + 2 * 512.5) * 2287500.0 + 18000.0 + 549755813888.0);

  // Kernel 1 has only the details page's Duration and DRAM read + write.
  const NcuFigures g = DeriveNcuFigures(r.kernels[1]);
  EXPECT_DOUBLE_EQ(*g.duration_s, 3.17e-6);
  EXPECT_TRUE(Has(g.notes, "details page's \"Duration\""));
  EXPECT_DOUBLE_EQ(*g.dram_bytes, 64000.0 + 1024.0);
  EXPECT_TRUE(Has(g.missing, "lts__t_bytes.sum"));
  EXPECT_TRUE(Has(g.missing, "sm__ops_path_tensor_src_*.sum"));
  EXPECT_DOUBLE_EQ(g.TotalFlops(), 0);
}

TEST(NcuFigures, SparsityVariantsAddUpAndSeveralTypesAreNoted) {
  NcuKernel k;
  k.cc = "9.0";
  k.metrics = {{"sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on.sum", 100},
               {"sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", 300},
               {"sm__ops_path_tensor_src_fp8_dst_fp32.sum", 50},
               {"sm__inst_executed_pipe_tensor.sum", 7}};  // ignored: the ops counters win
  const NcuFigures f = DeriveNcuFigures(k);
  EXPECT_DOUBLE_EQ(*f.tensor_flops, 450);
  EXPECT_EQ(f.tensor_dtype, "bf16");
  EXPECT_TRUE(Has(f.notes, "tensor work of several types"));
}

TEST(NcuFigures, TensorInstructionsWithoutAKnownFactorAreUnusable) {
  NcuKernel k;
  k.cc = "8.0";
  k.metrics = {{"smsp__inst_executed_pipe_tensor.sum", 1000}};
  const NcuFigures f = DeriveNcuFigures(k);
  EXPECT_FALSE(f.tensor_flops.has_value());
  EXPECT_TRUE(Has(f.notes, "unusable on CC 8.0"));
  EXPECT_TRUE(Has(f.missing, "sm__ops_path_tensor_src_*.sum"));
}

TEST(NcuFigures, DurationFromTheAvgAndMissingNamesEachOnce) {
  NcuKernel k;
  k.metrics = {{"gpu__time_duration.avg", 2e-6}, {"dram__bytes_read.sum", 10}};
  const NcuFigures f = DeriveNcuFigures(k);
  EXPECT_DOUBLE_EQ(*f.duration_s, 2e-6);
  EXPECT_FALSE(f.dram_bytes.has_value());  // read without write is not the traffic
  EXPECT_TRUE(Has(f.missing, "dram__bytes_write.sum"));
  std::vector<std::string> sorted = f.missing;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(NcuMetrics, DeriveUnderstandsEveryListedMetric) {
  for (const char* cc : {"7.0", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"}) {
    const std::vector<std::string> list = NcuRooflineMetrics(cc);
    std::vector<std::string> sorted = list;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << cc;
    NcuKernel k;
    k.cc = cc;
    for (const std::string& m : list) k.metrics.emplace_back(m, 1.0);
    const NcuFigures f = DeriveNcuFigures(k);
    EXPECT_TRUE(f.missing.empty()) << cc << ": " << ::testing::PrintToString(f.missing);
    EXPECT_TRUE(f.duration_s && f.fp64_flops && f.fp32_flops && f.fp16_flops && f.tensor_flops &&
                f.dram_bytes && f.l2_bytes && f.l1_bytes)
        << cc;
    EXPECT_TRUE(f.peak_fp64_flops_per_s && f.peak_fp32_flops_per_s && f.peak_fp16_flops_per_s &&
                f.peak_tensor_flops_per_s && f.peak_dram_bytes_per_s && f.peak_l2_bytes_per_s &&
                f.peak_l1_bytes_per_s)
        << cc;
  }
}

TEST(NcuMetrics, PerArchitectureTensorCounters) {
  auto has = [](std::string_view cc, std::string_view metric) {
    const std::vector<std::string> m = NcuRooflineMetrics(cc);
    return std::find(m.begin(), m.end(), metric) != m.end();
  };
  EXPECT_TRUE(has("8.0", "sm__ops_path_tensor_src_fp64.sum"));   // GA100 FP64 tensor cores
  EXPECT_FALSE(has("8.6", "sm__ops_path_tensor_src_fp64.sum"));  // GA10x has none
  EXPECT_TRUE(has("8.9", "sm__ops_path_tensor_src_fp8.sum"));    // AD10x FP8
  EXPECT_TRUE(has("12.0", "sm__ops_path_tensor_src_fp8_dst_fp32.sum"));
  EXPECT_FALSE(has("7.0", "sm__ops_path_tensor_src_fp16_dst_fp32.sum"));
  // Unknown architecture: the portable set (no ops_path names, which differ per architecture).
  const std::vector<std::string> portable = NcuRooflineMetrics("99.9");
  EXPECT_FALSE(Has(portable, "ops_path_tensor"));
  EXPECT_TRUE(Has(portable, "gpu__time_duration.sum"));
  EXPECT_TRUE(Has(portable, "sm__inst_executed_pipe_tensor.sum"));
  // Tensor instructions stay unusable there rather than guessed.
  NcuKernel k;
  k.cc = "99.9";
  for (const std::string& m : portable) k.metrics.emplace_back(m, 1.0);
  EXPECT_EQ(DeriveNcuFigures(k).missing, std::vector<std::string>{"sm__ops_path_tensor_src_*.sum"});
}

// ---------------------------------------------------------------------------------------------
// Conformance: real ncu output from other people's runs (../shared/samples/profiles/SOURCES.md).

const std::string kSamples = std::string(ROOFLINE_SOURCE_DIR) + "/../shared/samples/profiles/";

TEST(NcuConformance, SgemmA100MetricsSample) {
  const std::string path = kSamples + "ncu_metrics_sgemm_a100.csv";
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  Result<NcuReport> r = LoadNcuCsv(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->layout, "long (details / --metrics)");
  // Values as the file prints them (Gardenia-Tian/LearningNote4Dev @ 439294fb,
  // CUDA/gemm/output/sgemm.csv): three launches, 15 metrics each, all in base units already.
  ASSERT_EQ(r->kernels.size(), 3u);
  const NcuKernel& k0 = r->kernels[0];
  const NcuKernel& k1 = r->kernels[1];
  const NcuKernel& k2 = r->kernels[2];
  EXPECT_EQ(k0.name, "void randomInit<float>(T1 *, int, int, unsigned int)");
  EXPECT_EQ(k1.name, "void randomInit<float>(T1 *, int, int, unsigned int)");
  EXPECT_EQ(k2.name.rfind("void gemm_v1<float>(float *, float *, float *", 0), 0u) << k2.name;
  EXPECT_EQ(k0.cc, "8.0");
  EXPECT_EQ(k0.grid, "(640, 1280, 1)");
  for (const NcuKernel* k : {&k0, &k1, &k2}) EXPECT_EQ(k->metrics.size(), 15u);
  EXPECT_DOUBLE_EQ(Metric(k0, "dram__bytes.sum"), 5323503232.0);
  EXPECT_DOUBLE_EQ(Metric(k1, "dram__bytes.sum"), 5420639360.0);
  EXPECT_DOUBLE_EQ(Metric(k2, "dram__bytes.sum"), 807658682624.0);
  EXPECT_DOUBLE_EQ(Metric(k0, "lts__t_bytes.sum"), 693482995584.0);
  EXPECT_DOUBLE_EQ(Metric(k0, "l1tex__t_bytes.sum"), 16840298332000.0);
  EXPECT_DOUBLE_EQ(Metric(k2, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
                   34359738368000.0);

  // The file has no gpu__time_duration: the duration is elapsed cycles / cycles per second.
  EXPECT_EQ(k0.Find("gpu__time_duration.sum"), nullptr);
  const NcuFigures f0 = DeriveNcuFigures(k0);
  EXPECT_DOUBLE_EQ(*f0.duration_s, 5145083088.72 / 764999991.90);
  EXPECT_DOUBLE_EQ(*DeriveNcuFigures(k1).duration_s, 5134280071.41 / 764999992.88);
  const NcuFigures f2 = DeriveNcuFigures(k2);
  EXPECT_DOUBLE_EQ(*f2.duration_s, 25610472227.46 / 764999999.31);
  EXPECT_TRUE(Has(f2.notes, "smsp__cycles_elapsed.avg / smsp__cycles_elapsed.avg.per_second"));
  EXPECT_DOUBLE_EQ(*f0.dram_bytes, 5323503232.0);
  EXPECT_DOUBLE_EQ(*f0.fp32_flops, 2 * 838860800.0);
  EXPECT_DOUBLE_EQ(*f0.tensor_flops, 0);  // smsp__inst_executed_pipe_tensor.sum = 0.00
  EXPECT_DOUBLE_EQ(*f2.fp32_flops, 2 * 34359738368000.0);
  EXPECT_DOUBLE_EQ(*f2.fp16_flops, 4 * 2149161369600.0);
  // 67,161,292,800 tensor-pipe instructions on CC 8.0: no factor, so no tensor FLOP.
  EXPECT_FALSE(f2.tensor_flops.has_value());
  EXPECT_TRUE(Has(f2.notes, "unusable on CC 8.0"));
  EXPECT_TRUE(f0.missing.empty()) << ::testing::PrintToString(f0.missing);
}

TEST(NcuConformance, Rtx5090DetailsSample) {
  const std::string path = kSamples + "ncu_details_rtx5090.csv";
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  Result<NcuReport> r = LoadNcuCsv(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // CodeGandee/llm-perf-opt @ c6a9ecc2, one cuBLAS GEMV launch with Rule columns.
  EXPECT_EQ(r->layout, "long (details / --metrics)");
  ASSERT_EQ(r->kernels.size(), 1u);
  const NcuKernel& k = r->kernels[0];
  EXPECT_EQ(k.cc, "12.0");
  EXPECT_EQ(k.block, "(32, 4, 1)");
  EXPECT_EQ(k.name.rfind("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16", 0), 0u);
  EXPECT_EQ(k.na, (std::vector<std::string>{"flop_count_hp.sum", "flop_count_sp.sum",
                                            "sm__ops_path_tensor_src_bf16_dst_bf16.sum"}));
  EXPECT_EQ(k.metrics.size(), 8u);  // 11 metric rows, 3 of them n/a; 4 rule rows
  EXPECT_DOUBLE_EQ(Metric(k, "dram__bytes_read.sum"), 2.33e6);     // "2.33" Mbyte
  EXPECT_DOUBLE_EQ(Metric(k, "gpu__time_duration.sum"), 6.75e-6);  // "6.75" us
  EXPECT_DOUBLE_EQ(Metric(k, "Duration"), 6.75e-6);
  EXPECT_DOUBLE_EQ(Metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed"), 19.66);
  const NcuFigures f = DeriveNcuFigures(k);
  EXPECT_DOUBLE_EQ(*f.duration_s, 6.75e-6);
  EXPECT_DOUBLE_EQ(*f.dram_bytes, 2.33e6);
  EXPECT_DOUBLE_EQ(*f.tensor_flops, 0);  // sm__ops_path_tensor_src_bf16_dst_fp32.sum = 0
}

}  // namespace profile_ncu_test
}  // namespace roofline

namespace roofline {
namespace profile_ncu_test {

// Found by fuzzing (scripts/fuzz.sh ncu_long, a long run): a tensor-path metric with no dtype
// between "src_" and its sparsity suffix ("sm__ops_path_tensor_src_sparsity_on.sum") threw
// std::out_of_range from the dtype substring and ended the process. Such a path is skipped; the
// well-formed path beside it still counts.
TEST(NcuFigures, ATensorPathWithoutADtypeIsSkipped) {
  Result<NcuReport> r =
      LoadNcuCsv(std::string(ROOFLINE_SOURCE_DIR) +
                 "/tests/fixtures/profiles/ncu_fuzz_tensor_path_without_dtype.csv");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->kernels.size(), 1u);
  const NcuFigures f = DeriveNcuFigures(r->kernels[0]);
  ASSERT_TRUE(f.tensor_flops.has_value());
  EXPECT_EQ(*f.tensor_flops, 549755813888.0);
  EXPECT_EQ(f.tensor_dtype, "fp16");
}

}  // namespace profile_ncu_test
}  // namespace roofline

namespace roofline {
namespace profile_ncu_test {

// The command `roofline ncu-command` prints, built by the profile library.
TEST(NcuCommand, CollectsTheArchitecturesMetricsIntoTheLogFile) {
  NcuCommandRequest r;
  r.hw = "h100-sxm";
  r.app = "./bench --n 4";
  r.output = "my run.csv";
  r.kernel_regex = "gemm|attn";
  r.launch_count = 20;
  Result<NcuCommandLine> line = MakeNcuCommand(testing::Dev("h100-sxm"), r);
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(line->compute_capability, "9.0");
  EXPECT_EQ(line->metrics, NcuRooflineMetrics("9.0").size());
  EXPECT_EQ(line->command.rfind("ncu --target-processes all --metrics ", 0), 0u);
  EXPECT_NE(line->command.find(" --kernel-name 'regex:gemm|attn' --launch-count 20 --log-file "
                               "'my run.csv' ./bench --n 4"),
            std::string::npos)
      << line->command;
}

TEST(NcuCommand, RefusesWhatNsightComputeCannotProfile) {
  NcuCommandRequest r;
  r.hw = "mi300x";
  Result<NcuCommandLine> amd = MakeNcuCommand(testing::Dev("mi300x"), r);
  ASSERT_FALSE(amd.ok());
  EXPECT_EQ(amd.status().where(), "--hw");
  EXPECT_NE(amd.status().what().find("not an NVIDIA GPU"), std::string::npos);
  r.hw = "h100-sxm";
  r.app = "  ";
  EXPECT_EQ(MakeNcuCommand(testing::Dev("h100-sxm"), r).status().where(), "--app");
  r.app = "python run.py";
  r.launch_count = -1;
  EXPECT_EQ(MakeNcuCommand(testing::Dev("h100-sxm"), r).status().where(), "--launch-count");
}

TEST(NcuCommand, ShellQuoteLeavesSafeWordsAndQuotesTheRest) {
  EXPECT_EQ(ShellQuote("run.csv"), "run.csv");
  EXPECT_EQ(ShellQuote("my run.csv"), "'my run.csv'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

}  // namespace profile_ncu_test
}  // namespace roofline
