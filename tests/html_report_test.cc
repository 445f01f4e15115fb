// The HTML report: self-contained, sortable tables with numeric keys, tooltips on the charts,
// the why section and the assumptions with their sources. (scripts/check-html.py opens the
// reports in a real browser.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "roofline/model_registry.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace html_report_test {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HtmlReport, TablesCarrySortKeysAndEscapedText) {
  HtmlDocument doc;
  doc.title = "t <1>";
  HtmlTable t;
  t.header = {"name", "time"};
  t.AddRow({"a<b", "2.00 us"}, {std::nan(""), 2e-6});
  t.AddRow({"c", "1.00 us"}, {std::nan(""), 1e-6});
  doc.tables = {t};
  doc.why = "why & how";
  doc.assumptions = {"hbm 3.35 TB/s [spec]"};
  const std::string html = RenderHtml(doc);
  EXPECT_NE(html.find("<title>t &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<td>a&lt;b</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"n\" data-v=\"2e-06\">2.00 us</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<table class=\"sortable\">"), std::string::npos);
  EXPECT_NE(html.find("<pre>why &amp; how</pre>"), std::string::npos);
  EXPECT_NE(html.find("<li>hbm 3.35 TB/s [spec]</li>"), std::string::npos);
  EXPECT_NE(html.find("setAttribute('data-ok', '1')"), std::string::npos);
  // Self-contained: no external script, style, image or link.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

// `model --report`: the roofline with a tooltip per kernel, one sortable table per phase with a
// row per kernel, the why section and the ceilings with their provenance.
TEST(HtmlReport, ModelReportHasChartTipsTablesWhyAndSources) {
  const std::string path = ::testing::TempDir() + "/model_report.html";
  const auto o = testing::RunCli({"model", "llama-3-8b", "--hw", "h100-sxm", "--report", path});
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string html = ReadAll(path);
  std::remove(path.c_str());
  // A tooltip per kernel marker: name, phase, FLOP/B, time and verdict.
  EXPECT_NE(html.find("<title>gate_proj (decode, x32)\n117 M FLOP, 117 MB through hbm, 0.9997 "
                      "FLOP/B\ntime 35.1 us (memory:hbm), 24.6% of the phase"),
            std::string::npos);
  const std::regex table("<table class=\"sortable\">");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(html.begin(), html.end(), table), std::sregex_iterator()),
      2);  // prefill and decode
  EXPECT_NE(html.find("<caption>decode: kernels</caption>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Why</h2>"), std::string::npos);
  EXPECT_NE(html.find("memory:hbm until batch 325, compute:tensor.bf16 from batch 326 on"),
            std::string::npos);
  EXPECT_NE(html.find("<h2>Assumptions and sources</h2>"), std::string::npos);
  EXPECT_NE(html.find("bound: tensor.bf16 989 TFLOP/s"), std::string::npos);
  EXPECT_NE(html.find("expected: hbm at 2.90 TB/s"), std::string::npos);
}

// The assumptions name --accumulate fp16's figures and --modules' counts when they are used.
TEST(HtmlReport, AssumptionsNameTheAccumulationAndTheModules) {
  const std::string path = ::testing::TempDir() + "/model_report_modules.html";
  const auto o =
      testing::RunCli({"model", "llama-3-8b", "--hw", "rtx-4090", "--dtype", "fp16", "--accumulate",
                       "fp16", "--modules", "hf-transformers", "--report", path});
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string html = ReadAll(path);
  std::remove(path.c_str());
  EXPECT_NE(html.find("expected: tensor.fp16 matmuls accumulating in FP16 (--accumulate fp16) at "
                      "261 TFLOP/s"),
            std::string::npos);
  EXPECT_NE(html.find("expected: the modules of hf-transformers (--modules): each RMSNorm 8 "
                      "kernels, rotary embedding 10"),
            std::string::npos);
  EXPECT_NE(html.find("[the copies' rate: Nsight Compute on an H100"), std::string::npos);
}

// The assumptions name a --weight-kernel kernel with each regime's figures on the device.
TEST(HtmlReport, AssumptionsNameTheWeightKernelAndItsRegimes) {
  const std::string path = ::testing::TempDir() + "/model_report_weight_kernel.html";
  const auto o = testing::RunCli({"model", "llama-2-7b", "--hw", "a100-sxm-80gb", "--weight-dtype",
                                  "int8", "--weight-kernel", "inductor-int8", "--runtime",
                                  "compiled", "--report", path});
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string html = ReadAll(path);
  std::remove(path.c_str());
  EXPECT_NE(html.find("expected: int8 weights (a scale per output column) run as the "
                      "inductor-int8 kernel (--weight-kernel) where its regimes cover the rows"),
            std::string::npos);
  // On the A100 its traffic is at the A100's copy rate; the fixed times are the H100's.
  EXPECT_NE(html.find("(its fixed times as measured on other devices): 1 row: 1.99 us + 1x its "
                      "bytes at 1.61 TB/s; 2-16 rows: 3.24 us + 5x its bytes at 1.61 TB/s"),
            std::string::npos)
      << html.substr(html.find("inductor-int8"), 600);
}

// `sweep --report`: a hover area per grid point, the points table, crossovers as the why.
TEST(HtmlReport, SweepReportHasHoverAreasAndThePointsTable) {
  const std::string path = ::testing::TempDir() + "/sweep_report.html";
  const auto o = testing::RunCli(
      {"sweep", "llama-3-8b", "--hw", "h100-sxm", "--vary", "batch=1:16:x2", "--report", path});
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string html = ReadAll(path);
  std::remove(path.c_str());
  EXPECT_NE(html.find("<title>batch=4: decode "), std::string::npos) << html.substr(0, 2000);
  EXPECT_NE(html.find("<caption>sweep points</caption>"), std::string::npos);
  EXPECT_NE(html.find("<th>decode matmuls</th>"), std::string::npos);
  EXPECT_EQ(html.find("<th>decode communication</th>"), std::string::npos);  // none at tp 1
  EXPECT_NE(html.find("Crossovers (exact values"), std::string::npos);
}

}  // namespace html_report_test
}  // namespace roofline
