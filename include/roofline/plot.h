// Self-contained SVG charts (a browser opens them directly) and HTML reports.
#ifndef ROOFLINE_PLOT_H_
#define ROOFLINE_PLOT_H_

#include <string>
#include <vector>

#include "roofline/device.h"
#include "roofline/model_analysis.h"
#include "roofline/network_analysis.h"
#include "roofline/plan.h"
#include "roofline/profile.h"
#include "roofline/sweep.h"

namespace roofline {

/// One kernel on a roofline chart.
struct RooflinePoint {
  std::string label;
  std::string series;      ///< "prefill", "decode" (and later "measured")
  double intensity = 0;    ///< FLOP/B at device memory
  double flops_per_s = 0;  ///< attainable (or achieved) FLOP/s
  double share = 0;        ///< share of its phase's time, 0..1 (sets the marker size)
  /// The memory level (index into Device::memory) `intensity` is at. A chart with points at
  /// levels other than 0 is hierarchical: each point takes its level's marker and colour.
  int level = 0;
  /// Points of one kernel at several levels share a group (>= 0): joined by a line, labelled
  /// once (at the lowest level given).
  int group = -1;
  std::string tip = {};  ///< tooltip (kernel, FLOPs, bytes, intensity, time, verdict); empty: label
};

/// A text box placed on a chart (for overlap checks).
struct LabelBox {
  std::string text;
  double x = 0, y = 0, width = 0, height = 0;  ///< top-left corner and size, pixels
};

/// An SVG document and the labels placed on it.
struct Chart {
  std::string svg;
  std::vector<LabelBox> labels;
};

/// Roofline chart: log-log axes (FLOP/B against FLOP/s), a ceiling per engine in `engines`,
/// a diagonal per memory level with a bandwidth, ridge points, one marker per kernel sized by its
/// share of phase time and labelled (labels never overlap; kernels under 1% of their phase are
/// drawn but not labelled), phases told apart by colour and shape, a legend.
Chart RooflineChart(const Device& device, const std::vector<std::string>& engines,
                    const std::vector<RooflinePoint>& points, const std::string& title);

/// The kernels of a model analysis as roofline points, and the engines they use.
std::vector<RooflinePoint> RooflinePoints(const ModelAnalysis& analysis, const CostModel& model,
                                          std::vector<std::string>* engines);

/// The kernels of a network's pass as roofline points (series "network"), and the engines
/// they use.
std::vector<RooflinePoint> NetworkRooflinePoints(const NetworkAnalysis& analysis,
                                                 const CostModel& model,
                                                 std::vector<std::string>* engines);

/// The measured points of profiles, each at its intensity against device memory and its
/// achieved FLOP/s, with the engines whose ceilings they compare against (appended to
/// `engines`): Nsight Compute kernels with FLOPs and device-memory bytes; PyTorch op groups
/// placed from their shapes; predicted kernels matched in a join, at the predicted intensity.
/// Nsight Compute kernels are hierarchical: each timed kernel with FLOPs at its DRAM, L2 and L1
/// intensities (the levels the file has bytes for), labelled "#i name" as in the table.
std::vector<RooflinePoint> NcuRooflinePoints(const NcuSummary& summary, const Device& device,
                                             std::vector<std::string>* engines);
std::vector<RooflinePoint> TorchRooflinePoints(const TorchSummary& summary,
                                               std::vector<std::string>* engines);
std::vector<RooflinePoint> JoinRooflinePoints(const ProfileJoin& join);

/// Time of each phase against the first swept variable, split into the time of compute-,
/// memory- and comm-bound kernels, with crossovers and the capacity wall marked. With two axes,
/// one line per value of the second.
Chart SweepChart(const SweepResult& sweep, const std::string& title);
/// `plan --plot`: every variant's sampled operating points (PlanVariant::pareto) on log axes of
/// output tokens/s per user against per device, the Pareto frontier joined and labelled
/// (tp x batch), marker size by tensor-parallel degree, hollow where the targets are missed.
Chart PlanParetoChart(const Plan& plan, const std::string& title);

std::string RenderSweepSvg(const SweepResult& sweep, const std::string& title,
                           const Device& device);

struct NetSweepResult;
/// `roofline sweep GRAPH --vary DIM=... --plot`: time per pass against the dimension, stacked as
/// compute- and memory-bound kernel time, each crossover marked and labelled (labels never
/// overlap).
Chart NetSweepChart(const NetSweepResult& sweep, const std::string& title);
/// A table of an HTML report: cells as printed, and per cell a number to sort by (NaN: sort by
/// the text).
struct HtmlTable {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::vector<double>> keys;  ///< parallel to cells
  void AddRow(std::vector<std::string> row, std::vector<double> row_keys);
};

/// Everything an HTML report shows (docs/html-report.md).
struct HtmlDocument {
  std::string title;
  std::vector<std::string> charts;  ///< SVG documents, inlined (their <title>s are tooltips)
  std::vector<HtmlTable> tables;    ///< sortable: a click on a header sorts by that column
  std::string why;                  ///< the why section, preformatted (empty: none)
  /// How far to trust the expected times: a sentence per trust band (roofline/trust.h).
  std::vector<std::string> trust;
  /// Every ceiling and figure the numbers rest on, with its provenance and source.
  std::vector<std::string> assumptions;
  std::string text;  ///< the command's table output, in a collapsed section
};

/// One self-contained HTML page (no network: inline SVG, CSS and script). The script sorts the
/// tables and marks the body `data-ok="1"` once it ran (`data-error` on a script error); with
/// the fragment `#selftest` it also sorts the first table by its last numeric column and checks
/// the order (`data-sort-ok`).
std::string RenderHtml(const HtmlDocument& doc);

/// The kernels of an LLM analysis as report tables (one per phase) and the assumptions of the
/// cost model (ceilings used, with provenance).
std::vector<HtmlTable> ModelHtmlTables(const ModelAnalysis& analysis, const CostModel& model);
std::vector<std::string> CostModelAssumptions(const CostModel& model);
/// The sweep's points as a report table.
HtmlTable SweepHtmlTable(const SweepResult& sweep);
struct NetworkAnalysis;
/// A network's kernels (every costed node) as a report table.
HtmlTable NetworkHtmlTable(const NetworkAnalysis& analysis, const CostModel& model);

}  // namespace roofline

#endif  // ROOFLINE_PLOT_H_
