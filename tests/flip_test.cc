#include "roofline/flip.h"

#include <gtest/gtest.h>

#include <cmath>

#include "roofline/op_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace flip_test {

TEST(FindFlipUp, FindsTheExactStep) {
  for (int64_t step : {2, 3, 17, 1000, 123456789}) {
    auto verdict = [step](int64_t v) { return v >= step ? std::string("b") : std::string("a"); };
    const FlipPoint p = FindFlipUp(verdict, 1, int64_t{1} << 40);
    ASSERT_TRUE(p.found);
    EXPECT_EQ(p.value, step);
    EXPECT_EQ(p.from, "a");
    EXPECT_EQ(p.to, "b");
    EXPECT_LE(p.evaluations, 2 * 42 + 2);  // logarithmic, not linear
  }
}

TEST(FindFlipUp, ReportsNoFlip) {
  const FlipPoint p = FindFlipUp([](int64_t) { return std::string("same"); }, 5, 1 << 30);
  EXPECT_FALSE(p.found);
  EXPECT_EQ(p.from, "same");
}

TEST(FindFlipUp, ResultIsExactForTheCostModel) {
  // The matmul flip found by AnalyzeFlip: one below it the verdict is still the old one.
  const CostModel model(testing::Dev("h100-sxm"));
  const MatmulSpec s = testing::Mm(1, 8192, 8192);
  Result<FlipAnalysis> f = AnalyzeFlip(OpRequest{s}, model);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->up.found);
  MatmulSpec below = s;
  below.m = f->up.value - 1;
  MatmulSpec at = s;
  at.m = f->up.value;
  EXPECT_EQ(NameOf(testing::Analyze(OpRequest{below}, model).totals.verdict, model.device()),
            "memory:hbm");
  EXPECT_EQ(NameOf(testing::Analyze(OpRequest{at}, model).totals.verdict, model.device()),
            "compute:tensor.bf16");
  // Closed form (bf16, compulsory traffic): 2mnk / (2(mk + kn + mn)) >= ridge.
  const double ridge = 989.4e12 / 3.35e12;
  const double n = 8192;
  const double closed = ridge * n * n / (n * n - 2 * ridge * n);
  EXPECT_EQ(f->up.value, static_cast<int64_t>(std::ceil(closed)));
}

TEST(FindFlipUp, ElementwiseNeverFlips) {
  const CostModel model(testing::Dev("h100-sxm"));
  ElementwiseSpec e;
  e.elements = 1000;
  Result<FlipAnalysis> f = AnalyzeFlip(OpRequest{e}, model);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->up.found);
  EXPECT_FALSE(f->down.found);
  EXPECT_NEAR(f->limit_intensity, 1.0 / 6, 1e-9);
}

}  // namespace flip_test
}  // namespace roofline
