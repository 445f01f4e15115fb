// Published end-to-end runs (data/validation/published_runs.json) against the bound and the
// expected time: the validation table of docs/validation.md.
#ifndef ROOFLINE_PUBLISHED_H_
#define ROOFLINE_PUBLISHED_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/cost.h"
#include "roofline/device_db.h"
#include "roofline/model_registry.h"
#include "roofline/scenario.h"
#include "roofline/table.h"
#include "roofline/workload.h"

namespace roofline {

/// One published measurement: what ran (model preset, device, workload, runtime) and what was
/// measured, with its source.
struct PublishedRun {
  std::string id;
  /// What ran: model preset, device, workload, runtime and the expected-time choices its
  /// framework implies, read by the scenario's field table (the keys are the fields' names).
  Scenario scenario;
  Phase phase = Phase::kDecode;  ///< the scenario's one phase
  std::string metric;            ///< decode_tokens_per_s_per_user | tpot_s | ttft_s
  double value = 0;              ///< as published, in the metric's unit
  double measured_s = 0;         ///< the phase's step time it implies
  std::string framework, source, quote, notes, gpu_as_published;
  /// The software that runs each step (gpt-fast, vllm, tensorrt-llm, ...): the validation's
  /// errors are summarized per stack, so a user sees how far to trust the expected time there.
  std::string stack;
  bool holdout = false;  ///< kept aside while the expected-time model was built
  std::string where;     ///< "<file>: runs[i] (<id>)", for errors
  /// Collected by someone who computed no prediction and first computed on a frozen model,
  /// whose expected time then was `blind_expected_s`: the row stays blind while the model
  /// still gives that time (PublishedCheck::blind), else it is a plain holdout row.
  bool blind = false;
  double blind_expected_s = 0;
};

/// Parses a file of published runs; errors name `origin`, the run and the field.
Result<std::vector<PublishedRun>> ParsePublishedRuns(std::string_view json_text,
                                                     const std::string& origin);
/// Reads and parses a file of published runs.
Result<std::vector<PublishedRun>> LoadPublishedRunsFile(const std::string& path);
/// `$ROOFLINE_DATA_DIR/validation/published_runs.json` when that variable is set, else the
/// embedded copy.
Result<std::vector<PublishedRun>> LoadDefaultPublishedRuns();

/// A run checked: its bound and expected time beside the measurement.
struct PublishedCheck {
  PublishedRun run;
  double bound_s = 0;     ///< the ideal roofline bound of the phase (spec ceilings)
  double expected_s = 0;  ///< the expected time (achievable ceilings, the run's runtime)
  /// The device has an expected-time model (GPUs); else the row checks only the bound.
  bool has_expected = true;
  double error = 0;          ///< (expected - measured) / measured
  bool bound_below = false;  ///< bound_s <= measured_s, as it must be
  /// A blind run whose expected time is still the one first computed (to 1e-9 relative).
  bool blind = false;
};

/// Median and largest |error| of a set of checks, how many are within 40%, and the signed
/// (expected - measured) / measured range; the figures are 0 when `rows` is 0.
struct ErrorSummary {
  int rows = 0;
  double median_abs_error = 0;
  double max_abs_error = 0;
  int within_40 = 0;
  double min_error = 0, max_error = 0;
};

/// The summary of signed errors (expected - measured) / measured.
ErrorSummary SummarizeErrors(std::vector<double> errors);

/// The errors of the runs of one stack. `errors` counts only rows with expected times;
/// `bound_only` the rest (devices with no expected-time model).
struct StackSummary {
  std::string stack;
  ErrorSummary errors;
  int bound_only = 0;
};

struct PublishedValidation {
  std::string origin;  ///< the file of runs
  std::vector<PublishedCheck> checks;
  /// `blind` is a part of `holdout`.
  ErrorSummary all, development, holdout, blind;
  /// One per stack, the stacks with the most rows with expected times first (then by name).
  std::vector<StackSummary> stacks;
  std::string efficiency_origin;  ///< the efficiency data used
  int bounds_above = 0;           ///< runs whose bound is above the measurement (must be 0)
  int bound_only = 0;             ///< runs on devices without expected times (not in the errors)
};

/// Costs every run on its device with the efficiency data: the phase's bound and expected time.
Result<PublishedValidation> ValidatePublished(const std::vector<PublishedRun>& runs,
                                              const DeviceDatabase& db,
                                              const ModelRegistry& registry,
                                              std::shared_ptr<const EfficiencyData> efficiency);
/// The same against the embedded device database, model presets and efficiency data.
Result<PublishedValidation> ValidatePublished(const std::vector<PublishedRun>& runs);

/// The checks as a table: one row per run, in file order, every column from one registry: the
/// run (id, stack, model, device, tp, pipeline stages, phase, batch, prompt, context, dtypes,
/// runtime), what was published (metric, value) and the step time it implies, the bound, the
/// expected time and its signed error (NaN on devices without expected times), the set it
/// belongs to (dev, holdout, blind; bound: no expected time) and whether the bound is below the
/// measurement. `validate published --format csv` and `npy` write it; grouped by `stack`, its
/// errors are the table's "by stack" summary.
Table PublishedTable(const PublishedValidation& v);

}  // namespace roofline

#endif  // ROOFLINE_PUBLISHED_H_
