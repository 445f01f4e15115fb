// Predicted bound against measured time, kernel by kernel, and per-class efficiency fits.
#ifndef ROOFLINE_VALIDATE_H_
#define ROOFLINE_VALIDATE_H_

#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/kernel_class.h"
#include "roofline/kernel_runner.h"
#include "roofline/model_analysis.h"

namespace roofline {

/// One kernel: its predicted bound and its measured time on the host.
struct ValidationRow {
  std::string name;
  std::string group;
  KernelClass kernel_class = KernelClass::kMatmul;
  std::string bound;       ///< predicted binding resource
  double predicted_s = 0;  ///< the roofline time bound (one instance)
  double measured_s = 0;   ///< median measured time (one instance)
  double spread = 0;
  double efficiency = 0;  ///< predicted / measured (1 = at the roofline)
  bool skipped = false;
  std::string note;  ///< why skipped, or the implementation that ran
};

/// Efficiency per class from a least-squares fit on log time, and how well it explains the
/// measurements.
struct CalibrationFit {
  Calibration calibration;
  double median_abs_log_before = 0;  ///< median |log(bound / measured)|
  double median_abs_log_after = 0;   ///< median |log(bound / efficiency / measured)|
};

struct Validation {
  std::vector<ValidationRow> rows;
  CalibrationFit fit;
};

/// Evaluates every op of `graph` as its own kernel against `model`, runs it on the host CPU
/// (RunGraphOnCpu) and fits one efficiency per class: with measured = bound / e, the
/// least-squares estimate of log e over a class is the mean of log(bound / measured).
Result<Validation> ValidateOnCpu(const Graph& graph, const CostModel& model,
                                 const RunOptions& options);

/// The fit alone, from rows already measured (classes with no rows keep efficiency 1).
CalibrationFit FitCalibration(const std::vector<ValidationRow>& rows);

/// How `validate --device cuda` times kernels (in cuda_measure.h).
struct CudaRunOptions;

/// Evaluates every op of `graph` as its own kernel against `model`, times it on the GPU
/// (RunGraphOnCuda) and fits one efficiency per class (FitCalibration). Without a CUDA backend
/// or a GPU: the error RunGraphOnCuda gives.
Result<Validation> ValidateOnCuda(const Graph& graph, const CostModel& model,
                                  const CudaRunOptions& options);

/// The rows of a validation from measured timings of the graph's ops (any backend): one row per
/// eager kernel with its predicted bound beside the measured time of its first op, and the fit.
Validation ValidationFromTimings(const Graph& graph, const CostModel& model,
                                 const std::vector<OpTiming>& timings);

/// Where and how `roofline validate` runs the kernels.
struct ValidateRequest {
  std::string device = "cpu";  ///< "cpu" (fp32 on the host) or "cuda[:N]" (the op's dtype)
  int threads = 0;             ///< host threads (0: every online CPU)
  int repetitions = 5;         ///< timed runs per kernel (the median is reported)

  bool IsCuda() const { return device.rfind("cuda", 0) == 0; }
};

/// Checks the request: a known device that exists here, counts in range. Errors name the flag.
Status Check(const ValidateRequest& request);

/// Runs every op of `graph` where the request says (ValidateOnCpu / ValidateOnCuda).
Result<Validation> RunValidation(const Graph& graph, const CostModel& model,
                                 const ValidateRequest& request);

/// Everything `roofline validate` reports.
struct ValidationReport {
  std::string title;  ///< what ran: the op, or "MODEL (batch B, prompt P, context C)"
  std::string device_id, device_name, device_origin;  ///< the predicting device
  ValidateRequest request;
  std::vector<ValidationRow> rows;
  CalibrationFit fit;
};

/// Validates one graph (an op's): runs it and fits the calibration.
Result<ValidationReport> ValidateGraph(const Graph& graph, const CostModel& model,
                                       const ValidateRequest& request, std::string title);

/// Validates a model's selected phases: each phase's graph is run, its rows' groups are prefixed
/// with the phase ("decode layers 0-15"), and one calibration is fitted over all rows.
Result<ValidationReport> ValidateModel(const TransformerConfig& config, const Workload& workload,
                                       const CostModel& model, PhaseSelection phases,
                                       const ValidateRequest& request, std::string title);

}  // namespace roofline

#endif  // ROOFLINE_VALIDATE_H_
