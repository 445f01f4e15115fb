// A sweep's table (SweepTable, every column) read point by point, as the text and HTML tables
// show it: one row per point, each phase's columns side by side.
#ifndef ROOFLINE_SRC_REPORT_SWEEP_PIVOT_H_
#define ROOFLINE_SRC_REPORT_SWEEP_PIVOT_H_

#include <fmt/format.h>

#include <array>
#include <string>
#include <vector>

#include "roofline/sweep_table.h"

namespace roofline {

struct SweepPivot {
  explicit SweepPivot(const SweepResult& r)
      : table(SweepTable(r, SweepColumns::kAll)),
        points(r.points.size()),
        phases(r.points.empty() ? 0 : r.points.front().phases.size()) {
    for (const SweepAxis& a : r.axes) axes.push_back(table.Find(NameOf(a.variable)));
    phase = table.Find("phase");
    time = table.Find("time_s");
    bound = table.Find("bound");
    tokens = table.Find("tokens_per_s");
    tokens_per_chip = table.Find("tokens_per_s_per_chip");
    expected = table.Find("expected_time_s");
    share = table.Find("largest_share");
    footprint = table.Find("footprint_bytes");
    fits = table.Find("fits");
    chips = table.Find("chips");
    overhead = table.Find("overhead_time_s");
    for (int c = 0; c < kNumClasses; ++c) {
      std::string id(NameOf(static_cast<KernelClass>(c)));
      for (char& ch : id) ch = ch == '/' ? '_' : ch;
      class_time[static_cast<size_t>(c)] = table.Find(id + "_time_s");
      class_bound[static_cast<size_t>(c)] = table.Find(id + "_bound");
    }
  }
  SweepPivot(const SweepPivot&) = delete;
  SweepPivot& operator=(const SweepPivot&) = delete;

  /// "matmuls 77%": the largest share of a row's step and its percentage.
  std::string LargestShareCell(size_t row) const {
    const int64_t code = share->ints[row];
    const double t = code < kNumClasses ? class_time[static_cast<size_t>(code)]->reals[row]
                                        : overhead->reals[row];
    const double step = time->reals[row];
    return fmt::format("{} {:.0f}%", share->labels[static_cast<size_t>(code)],
                       step > 0 ? 100 * t / step : 0.0);
  }
  /// Whether kernel class `c` has kernels at some point, in phase `k`.
  bool ClassPresent(size_t k, int c) const {
    const Column* b = class_bound[static_cast<size_t>(c)];
    for (size_t p = 0; p < points; ++p) {
      if (b->labels[static_cast<size_t>(b->ints[p * phases + k])] != kAbsentLabel) return true;
    }
    return false;
  }

  Table table;
  size_t points = 0, phases = 0;  ///< rows: point p, phase k at p * phases + k
  std::vector<const Column*> axes;
  const Column *phase, *time, *bound, *tokens, *tokens_per_chip, *expected, *share, *footprint,
      *fits, *chips, *overhead;  ///< tokens_per_chip, expected, chips: null when the sweep has none
  std::array<const Column*, kNumClasses> class_time{}, class_bound{};
};

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_SWEEP_PIVOT_H_
