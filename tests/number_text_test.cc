// The CSV number writer against fmt's "{:.17g}", whose bytes the golden outputs hold.
#include "src/util/number_text.h"

#include "roofline/units.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace roofline {
namespace number_text_test {

// Counts are whole numbers and print whole: "1695983 launches" (an nsys summary of 1.7 M
// launches), not "1.696e+06 launches"; one of a thing is singular.
TEST(NumberText, CountsPrintWhole) {
  EXPECT_EQ(Count(1695983, "launch", "launches"), "1695983 launches");
  EXPECT_EQ(Count(1, "replica"), "1 replica");
  EXPECT_EQ(Count(2, "kernel"), "2 kernels");
  EXPECT_EQ(Count(2.5, "step"), "2.5 steps");
}

TEST(NumberText, AppendG17WritesTheBytesOfFmt) {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> unit(0, 1);
  int checked = 0;
  auto same = [&](double v) {
    std::string ours;
    AppendG17(ours, v);
    ++checked;
    return ours == fmt::format("{:.17g}", v) ? std::string() : ours;
  };
  for (double v :
       {0.0, -0.0, 1.0, -1.0, 0.1, 1e-5, 1e-4, 9.9999999999999995e-5, 1e15, 1e16, 1e17, 1e21,
        13745338880.0, 0.0080454607652657266, 5e-324, std::numeric_limits<double>::max(),
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(same(v), "") << fmt::format("{:.17g}", v);
  }
  for (int i = 0; i < 200000; ++i) {
    // Sweep-like magnitudes, any bit pattern, and whole numbers (byte counts).
    const double scaled = unit(rng) * std::pow(10.0, static_cast<int>(rng() % 60) - 30);
    uint64_t bits = rng();
    double any = 0;
    std::memcpy(&any, &bits, sizeof any);
    const auto whole = static_cast<double>(rng() % 1000000000000ULL);
    for (double v : {scaled, any, whole}) {
      const std::string diff = same(v);
      ASSERT_EQ(diff, "") << fmt::format("{:.17g}", v);
    }
  }
  EXPECT_GT(checked, 600000);
}

}  // namespace number_text_test
}  // namespace roofline
