// Phrases the report layer's sentences share.
#ifndef ROOFLINE_SRC_REPORT_PHRASES_H_
#define ROOFLINE_SRC_REPORT_PHRASES_H_

#include <string>
#include <vector>

#include "roofline/device.h"
#include "roofline/graph_analysis.h"

namespace roofline {

/// "by class: matmuls 82.7% (29.2 ms, compute:tensor.bf16), ..., launch overhead 0.9% (...)":
/// each kernel class's time (repeats included) over the step's, largest first, with the
/// resource that class spends most time on; launch overhead apart.
std::string ClassSummaryLine(const GraphCosts& costs, const Device& device);

/// The kernels a `--top N` table shows: the N with the largest time x repeat (ties: the earlier),
/// in execution order; every kernel when `top` is 0 or not below their count.
std::vector<size_t> TopKernels(const GraphCosts& costs, int top);
/// "(top 10 of 114 kernels by time; the other 104: 3.1% of the time; --top 0 shows all)", or
/// empty when every kernel is shown.
std::string TopNote(const GraphCosts& costs, const std::vector<size_t>& shown);

/// Names shortened to at most `width` characters where that keeps them unique: a long name
/// becomes "..." and its shortest tail of path segments that no other name ends with (cut at a
/// '/' in paths that have one, else at a '.', dropped). A name no tail of which is unique and
/// short enough is kept whole.
std::vector<std::string> AbbreviatePaths(const std::vector<std::string>& names, size_t width);

/// "compute-bound (tensor.bf16)" for the verdict name "compute:tensor.bf16", likewise
/// "memory-bound (hbm)" and "communication-bound (nvlink)"; other names unchanged.
std::string BoundPhrase(const std::string& verdict_name);

/// A fraction as a whole percentage: 0.237 is "24%".
std::string Pct(double fraction);
/// A fraction as a percentage with one decimal: 0.237 is "23.7%".
std::string Pct1(double fraction);

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_PHRASES_H_
