// CeilWhole and FloorWhole give the bits of std::ceil and std::floor (the cost rules' figures,
// and so every golden output, rest on them).
#include "src/cost/round_whole.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace roofline {
namespace round_whole_test {

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(RoundWhole, GivesTheBitsOfCeilAndFloor) {
  auto check = [](double x) {
    EXPECT_TRUE(SameBits(CeilWhole(x), std::ceil(x))) << x;
    EXPECT_TRUE(SameBits(FloorWhole(x), std::floor(x))) << x;
  };
  for (double x :
       {0.0, -0.0, 0.5, 1.0, 1.5, 2.5, 0.49999999999999994, 4503599627370495.5, 4503599627370496.0,
        1e300, -1.5, 5e-324, std::numeric_limits<double>::quiet_NaN(),
        std::numeric_limits<double>::infinity()}) {
    check(x);
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 300000; ++i) {
    const double x = unit(rng) * std::pow(2.0, static_cast<int>(rng() % 70) - 10);
    uint64_t bits = rng();
    double any = 0;
    std::memcpy(&any, &bits, sizeof any);
    for (double v : {x, std::floor(x), std::floor(x) + 0.5, any}) {
      if (!SameBits(CeilWhole(v), std::ceil(v)) || !SameBits(FloorWhole(v), std::floor(v))) {
        FAIL() << v;
      }
    }
  }
}

}  // namespace round_whole_test
}  // namespace roofline
