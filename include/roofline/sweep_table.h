// A sweep as a table: one row per point and phase, every column from one registry of sweep
// columns (id, unit, scope and the figure it takes), typed verdicts as codes with the device's
// names as labels. CSV, JSON columns, npy, the text table and the HTML table are views of it.
#ifndef ROOFLINE_SWEEP_TABLE_H_
#define ROOFLINE_SWEEP_TABLE_H_

#include <string>
#include <vector>

#include "roofline/network_analysis.h"
#include "roofline/sweep.h"
#include "roofline/table.h"

namespace roofline {

/// Which columns of the registry a table takes.
enum class SweepColumns {
  kCsv,  ///< the CSV's (a stable set scripts rely on)
  kAll,  ///< every column: the CSV's, then capacity, FLOPs, bytes, the trust band's range of
         ///< measured times (expected_low_s, expected_high_s, when bands are attached) and the
         ///< verdict per class
};

/// The sweep as a table (rows: points in grid order, phases in order within each point). The
/// axes' columns come first (integers, or dtype labels), then the registry's in its order;
/// expected-time columns only when the sweep has expected times, `chips` only when the device
/// chooses it per point.
Table SweepTable(const SweepResult& sweep, SweepColumns which);

/// A network sweep as a table: one row per value of its dimension (the dimension, the pass's
/// batch, time and expected time, verdicts of the pass and of its matrix and other kernels,
/// FLOPs, bytes, memory); with `--steps`, the images per batch, seconds per image and images/s,
/// bound and expected.
Table NetSweepTable(const NetSweepResult& sweep);

/// The label a code column gives an absent kernel class ("none").
inline constexpr const char* kAbsentLabel = "none";

/// The device's verdict names as labels ("compute:tensor.bf16", "memory:hbm", ..., "overhead",
/// "compute" for work on no listed ceiling), and the code of a verdict among them.
std::vector<std::string> VerdictLabels(const ResourceNames& names);
int64_t VerdictCode(const ResourceNames& names, const Verdict& v);

}  // namespace roofline

#endif  // ROOFLINE_SWEEP_TABLE_H_
