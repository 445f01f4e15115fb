// `roofline calibrate`: a user's own measured runs fit an engine's host work per step and per
// request (never a kernel figure), by least absolute relative error, into an engine file marked
// calibrated. The fit's own errors are reported: on the runs, leaving one run out, and leaving
// one setting out. docs/calibrate.md.
#ifndef ROOFLINE_CALIBRATE_H_
#define ROOFLINE_CALIBRATE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/engine.h"
#include "roofline/model_registry.h"
#include "roofline/scenario.h"
#include "roofline/status.h"
#include "roofline/workload.h"

namespace roofline {

/// One measured step: a scenario of one phase and the time it took.
struct CalibrationRun {
  std::string id;       ///< the row ("line 3 tpot", "runs[2] (a) ttft"), for the table
  std::string file;     ///< the file it was read from
  std::string where;    ///< "<file>: <row>", for errors
  Scenario scenario;    ///< what ran (its phase in scenario.phases)
  Phase phase = Phase::kDecode;
  double measured_s = 0;  ///< decode: time per output token; prefill: time to first token
  /// Runs of one setting (model, device, layout and dtypes) are left out together.
  std::string setting;
};

/// The runs of one file: a published-runs file (data/validation's schema), rows of scenario
/// fields with ttft_s / tpot_s (or _ms) as JSON or CSV, or the result file of `vllm bench
/// serve` (JSON), `sglang.bench_serving` (JSON lines) or genai-perf / AIPerf (JSON). Fields a
/// file does not state come from `defaults` (the command line); a benchmark's concurrency is its
/// decode batch, its mean lengths the prompt and the output (decode at prompt + output / 2), its
/// time to first token a prefill of one request. Errors name the file and the row or field.
Result<std::vector<CalibrationRun>> ReadCalibrationRuns(std::string_view text,
                                                        const std::string& path,
                                                        const Scenario& defaults);

/// A fitted host work: seconds per step and per request in the step, serial.
struct HostFit {
  double per_step_s = 0;
  double per_request_s = 0;
  bool per_request = false;  ///< the runs had two or more batch sizes (else only per step)
  /// The unconstrained fit, before a negative term was set to zero and the other refitted.
  double raw_per_step_s = 0;
  double raw_per_request_s = 0;
};

/// Fits y_i = measured_i - kernels_i as per_step + per_request * requests_i, minimizing
/// sum |residual_i| / measured_i (the relative error, robust to a stray run). Exposed for tests.
HostFit FitHostWork(const std::vector<double>& measured, const std::vector<double>& kernels,
                    const std::vector<double>& requests);

/// Errors of expected times against measurements, (expected - measured) / measured.
struct CalibrationErrors {
  int runs = 0;
  double median_abs = 0;
  double median_signed = 0;
  double max_abs = 0;
  int within_15 = 0;
  int within_40 = 0;
};
CalibrationErrors ErrorsOf(const std::vector<double>& errors);

/// One run with its expected times.
struct CalibratedRow {
  CalibrationRun run;
  double kernels_s = 0;  ///< the expected step with no engine host work
  double before_s = 0;   ///< with the base engine's own host work (its file's figures)
  double after_s = 0;    ///< with the fitted host work
  double loo_s = 0;      ///< fitted on every other run of its phase (NaN: too few)
  double loso_s = 0;     ///< fitted on the other settings' runs of its phase (NaN: one setting)
  bool check = false;    ///< a --check run: not fitted on, only predicted
};

/// The fit of one phase.
struct PhaseCalibration {
  Phase phase = Phase::kDecode;
  int runs = 0;
  int settings = 0;
  HostFit fit;
  CalibrationErrors before, after, loo, loso, check_before, check_after;
};

struct EngineCalibration {
  std::string base;  ///< the base engine's spec ("vllm@0.6.3"), or empty
  std::vector<std::string> files;
  std::string date;
  std::vector<CalibratedRow> rows;
  std::vector<PhaseCalibration> phases;
  std::vector<std::string> warnings;
  Engine engine;  ///< the calibrated entry, as written
};

/// Fits the host work of each phase the runs measure, with `base` (an engine spec; empty: the
/// runs' own engine, one for all of them, or none) for what the engine runs and in place of its
/// host work; predicts the `check` runs (not fitted on) before and after.
Result<EngineCalibration> Calibrate(const std::vector<CalibrationRun>& runs,
                              const std::vector<CalibrationRun>& check, const std::string& base,
                              const std::vector<std::string>& files, const std::string& date,
                              const DeviceDatabase& db, const ModelRegistry& registry,
                              std::shared_ptr<const EfficiencyData> efficiency);

}  // namespace roofline

#endif  // ROOFLINE_CALIBRATE_H_
