// The kernels of a model analysis as a table: one row per kernel and phase, each column described
// once. `model --format csv` and the Python package's DataFrames are views of it.
#ifndef ROOFLINE_KERNEL_TABLE_H_
#define ROOFLINE_KERNEL_TABLE_H_

#include "roofline/model_analysis.h"
#include "roofline/table.h"

namespace roofline {

/// Which columns a kernel table takes.
enum class KernelColumns {
  kCsv,  ///< `model --format csv`'s (a stable set scripts rely on)
  kAll,  ///< the CSV's, then the kernel class, and per step: step_time_s = time_s x repeat (and
         ///< the expected one), so a sum of a phase's rows is the phase's time
};

/// One row per kernel of each phase, in execution order: phase, group, kernel, repeat, FLOPs,
/// bytes per memory level (bytes_<level>), intensity at device memory, communication bytes, the
/// bound (time_s per instance, its verdict, its share of the phase), and the expected time and
/// its verdict when the model has efficiency data.
Table KernelTable(const ModelAnalysis& analysis, const CostModel& model, KernelColumns which);

}  // namespace roofline

#endif  // ROOFLINE_KERNEL_TABLE_H_
