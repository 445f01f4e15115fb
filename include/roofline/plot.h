// Self-contained SVG charts (a browser opens them directly) and HTML reports.
#ifndef ROOFLINE_PLOT_H_
#define ROOFLINE_PLOT_H_

#include <string>
#include <vector>

#include "roofline/device.h"
#include "roofline/model_analysis.h"
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

std::string RenderSweepSvg(const SweepResult& sweep, const std::string& title,
                           const Device& device);

struct NetSweepResult;
/// `roofline sweep GRAPH --vary DIM=... --plot`: time per pass against the dimension, stacked as
/// compute- and memory-bound kernel time, each crossover marked and labelled (labels never
/// overlap).
Chart NetSweepChart(const NetSweepResult& sweep, const std::string& title);
/// One self-contained HTML page: `text` (the table report) and the charts inline.
std::string RenderHtml(const std::string& title, const std::string& text,
                       const std::vector<std::string>& svgs);
std::string RenderSweepHtml(const SweepResult& sweep, const std::string& title,
                            const Device& device, const std::string& text);

}  // namespace roofline

#endif  // ROOFLINE_PLOT_H_
