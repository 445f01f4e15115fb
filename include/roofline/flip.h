// Finding the value of an integer variable at which a verdict (the binding resource) changes,
// and every change of a verdict along a grid: the one crossover finder of the op, model, LLM
// sweep and network sweep paths.
#ifndef ROOFLINE_FLIP_H_
#define ROOFLINE_FLIP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roofline/status.h"

namespace roofline {

/// Where a verdict of type V changes along an integer variable.
template <typename V>
struct Flip {
  bool found = false;
  int64_t value = 0;  ///< first value (searching upwards) whose verdict differs from `from`
  V from{};           ///< verdict at the start of the search
  V to{};             ///< verdict at `value`
  int evaluations = 0;
};

using FlipPoint = Flip<std::string>;

/// Searches (lo, hi] for the smallest v with verdict(v) != verdict(lo), by doubling the step from
/// lo and then bisecting the bracket: O(log(hi - lo)) evaluations. The value returned is exact:
/// verdict(value - 1) == verdict(lo) != verdict(value). If the verdict changes more than once,
/// the first change found by the doubling probe is bracketed. Requires 1 <= lo <= hi.
template <typename V, typename F>
Flip<V> FindFlip(F&& verdict, int64_t lo, int64_t hi) {
  Flip<V> p;
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
    if (!(verdict(probe) == p.from)) {
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
    if (!(verdict(mid) == p.from)) {
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

/// FindFlip for verdicts given as text.
FlipPoint FindFlipUp(const std::function<std::string(int64_t)>& verdict, int64_t lo, int64_t hi);

/// One change of a verdict along a grid: between grid points k and k + 1.
template <typename V>
struct GridChange {
  size_t k = 0;
  bool exact = false;  ///< `value` was bisected: the first integer with the new verdict
  int64_t value = 0;   ///< integer grids: that value (the grid point k + 1 when not exact)
  V from{}, to{};
};

/// The change of a verdict from `a` at grid point k to `b` at k + 1. With `values` (an
/// ascending integer grid) and `bisect`, it is bisected to the exact integer with `evaluate(v)`,
/// which returns the verdict at any value or an error that stops the search.
template <typename V, typename Evaluate>
Result<GridChange<V>> ResolveGridChange(size_t k, const V& a, const V& b,
                                        const std::vector<int64_t>* values, bool bisect,
                                        Evaluate&& evaluate) {
  GridChange<V> c;
  c.k = k;
  c.from = a;
  c.to = b;
  if (values != nullptr) c.value = (*values)[k + 1];
  if (values != nullptr && bisect) {
    Status failed;
    const Flip<V> f = FindFlip<V>(
        [&](int64_t v) -> V {
          if (!failed.ok()) return a;
          Result<V> r = evaluate(v);
          if (!r.ok()) {
            failed = r.status();
            return a;
          }
          return std::move(r).value();
        },
        (*values)[k], (*values)[k + 1]);
    if (!failed.ok()) return failed;
    if (f.found) {
      c.exact = true;
      c.value = f.value;
      c.from = f.from;
      c.to = f.to;
    }
  }
  return c;
}

/// Every change of a verdict along a grid of n points. `at(k)` is the verdict at grid point k
/// (already evaluated; by reference or by value); `changes(a, b)` says whether a step from a to
/// b counts. Each change is resolved as ResolveGridChange does.
template <typename V, typename At, typename Changes, typename Evaluate>
Result<std::vector<GridChange<V>>> FindGridChanges(size_t n, At&& at, Changes&& changes,
                                                   const std::vector<int64_t>* values, bool bisect,
                                                   Evaluate&& evaluate) {
  std::vector<GridChange<V>> out;
  if (n == 0) return out;
  V next = at(0);  // each point is read once
  for (size_t k = 0; k + 1 < n; ++k) {
    const V a = std::move(next);
    next = at(k + 1);
    if (!changes(a, next)) continue;
    Result<GridChange<V>> c = ResolveGridChange<V>(k, a, next, values, bisect, evaluate);
    if (!c.ok()) return c.status();
    out.push_back(std::move(c).value());
  }
  return out;
}

}  // namespace roofline

#endif  // ROOFLINE_FLIP_H_
