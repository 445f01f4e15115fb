#include "roofline/flip.h"

namespace roofline {

FlipPoint FindFlipUp(const std::function<std::string(int64_t)>& verdict, int64_t lo, int64_t hi) {
  FlipPoint p;
  p.from = verdict(lo);
  p.evaluations = 1;
  if (hi <= lo) return p;
  // Doubling probe: lo+1, lo+2, lo+4, ... until the verdict differs or hi is passed.
  int64_t good = lo;  // verdict(good) == from
  int64_t bad = -1;   // verdict(bad) != from
  int64_t step = 1;
  while (true) {
    const int64_t probe = (hi - good <= step) ? hi : good + step;
    ++p.evaluations;
    if (verdict(probe) != p.from) {
      bad = probe;
      break;
    }
    good = probe;
    if (probe == hi) return p;  // never changes in (lo, hi]
    if (step < (int64_t{1} << 62)) step *= 2;
  }
  // Bisection: verdict(good) == from, verdict(bad) != from.
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    ++p.evaluations;
    if (verdict(mid) != p.from) {
      bad = mid;
    } else {
      good = mid;
    }
  }
  p.found = true;
  p.value = bad;
  p.to = verdict(bad);
  ++p.evaluations;
  return p;
}

}  // namespace roofline
