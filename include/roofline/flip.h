// Finding the value of an integer variable at which a verdict (the binding resource) changes.
#ifndef ROOFLINE_FLIP_H_
#define ROOFLINE_FLIP_H_

#include <cstdint>
#include <functional>
#include <string>

namespace roofline {

/// Where a verdict changes along an integer variable.
struct FlipPoint {
  bool found = false;
  int64_t value = 0;  ///< first value (searching upwards) whose verdict differs from `from`
  std::string from;   ///< verdict at the start of the search
  std::string to;     ///< verdict at `value`
  int evaluations = 0;
};

/// Searches (lo, hi] for the smallest v with verdict(v) != verdict(lo), by doubling the step from
/// lo and then bisecting the bracket: O(log(hi - lo)) evaluations. The value returned is exact:
/// verdict(value - 1) == verdict(lo) != verdict(value). If the verdict changes more than once,
/// the first change found by the doubling probe is bracketed. Requires 1 <= lo <= hi.
FlipPoint FindFlipUp(const std::function<std::string(int64_t)>& verdict, int64_t lo, int64_t hi);

}  // namespace roofline

#endif  // ROOFLINE_FLIP_H_
