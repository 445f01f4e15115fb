// std::ceil and std::floor without a libm call (the baseline x86-64 target has no rounding
// instruction, so each std::ceil is a function call): the same doubles.
#ifndef ROOFLINE_SRC_COST_ROUND_WHOLE_H_
#define ROOFLINE_SRC_COST_ROUND_WHOLE_H_

#include <cmath>

namespace roofline {

/// 2^52: from here on every double is a whole number, and below it adding it rounds to one.
inline constexpr double kTwo52 = 4503599627370496.0;

/// std::ceil(x), the same double. For 0 < x < 2^52, (x + 2^52) - 2^52 is x rounded to the
/// nearest whole number (doubles in [2^52, 2^53) are one apart, and both steps are exact but the
/// first's rounding); one more when that fell below x. Zero, negatives, NaN and x >= 2^52 (already
/// whole) take std::ceil.
inline double CeilWhole(double x) {
  if (!(x > 0 && x < kTwo52)) return std::ceil(x);
  double r = (x + kTwo52) - kTwo52;
  if (r < x) r += 1;
  return r;
}

/// std::floor(x), the same double, by the same rounding.
inline double FloorWhole(double x) {
  if (!(x > 0 && x < kTwo52)) return std::floor(x);
  double r = (x + kTwo52) - kTwo52;
  if (r > x) r -= 1;
  return r;
}

}  // namespace roofline

#endif  // ROOFLINE_SRC_COST_ROUND_WHOLE_H_
