// What `roofline model|sweep GRAPH.json|model.onnx` print: tables and JSON of a network
// analysis and of a sweep over one of its symbolic dimensions.
#ifndef ROOFLINE_NETWORK_REPORT_H_
#define ROOFLINE_NETWORK_REPORT_H_

#include <string>

#include "roofline/network_analysis.h"
#include "roofline/report.h"

namespace roofline {

/// `roofline model GRAPH.json`: kernel table, totals, parameters, uncosted nodes.
/// Long node and module names are abbreviated (unique tails of their paths); `top` > 0 shows
/// only the `top` kernels with the most time (execution order).
/// With `diffusion`, a line of seconds per image and images per second follows the totals.
std::string RenderNetworkTable(const NetworkAnalysis& analysis, const CostModel& model, int top = 0,
                               const DiffusionRun* diffusion = nullptr);
/// `roofline model GRAPH.json --format json` (fields in docs/graph-format.md); with
/// `diffusion`, a "diffusion" object.
std::string RenderNetworkJson(const NetworkAnalysis& analysis, const CostModel& model,
                              const DiffusionRun* diffusion = nullptr);

/// A network sweep's crossover or never-flips entry in words.
SweepLine Describe(const Crossover& crossover, const NetSweepResult& sweep);
SweepLine Describe(const NeverFlips& never, const NetSweepResult& sweep);

/// `roofline sweep GRAPH.json --vary DIM=...`: one row per value, crossovers, never-flips.
std::string RenderNetSweepTable(const NetSweepResult& sweep, const std::string& title);
/// The same as JSON (fields in docs/graph-format.md), one object per point.
std::string RenderNetSweepJson(const NetSweepResult& sweep, const std::string& device);
/// `roofline sweep GRAPH --format json`: RenderNetSweepJson's document with its points as the
/// columns of NetSweepTable ("schema": 2, the default), or as it is (JsonLayout::kRows).
void WriteNetSweepJson(const NetSweepResult& sweep, const std::string& device, JsonLayout layout,
                       std::ostream& out);
/// `--format csv` and `--format npy`: NetSweepTable.
void WriteNetSweepCsv(const NetSweepResult& sweep, std::ostream& out);
void WriteNetSweepNpy(const NetSweepResult& sweep, std::ostream& out);
/// The crossovers and never-flips of a network sweep, as the table's why section.
std::string NetSweepWhy(const NetSweepResult& sweep);

}  // namespace roofline

#endif  // ROOFLINE_NETWORK_REPORT_H_
