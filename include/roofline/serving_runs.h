// Published serving runs (data/validation/serving_runs.json): a deployment measured at a stated
// load (requests in flight, prompt and output tokens), against the plan's continuous-batching
// point at that load (PlanPointAt): the serving validation of docs/validation.md.
#ifndef ROOFLINE_SERVING_RUNS_H_
#define ROOFLINE_SERVING_RUNS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/model_registry.h"
#include "roofline/published.h"
#include "roofline/scenario.h"

namespace roofline {

/// One measured serving run of one replica (tp x pp devices).
struct ServingRun {
  std::string id;
  /// What ran, by the scenario's field table (model, hw, tp, prompt, dtypes, runtime, fusion,
  /// engine, ...); its batch and phase are not used.
  Scenario scenario;
  int64_t output = 0;       ///< output tokens per request
  int64_t concurrency = 0;  ///< requests in flight (the benchmark's max concurrency)
  /// Every request sent at once (an offline throughput run): the engine holds as many as fit,
  /// so the batch is the plan's (the KV room and the token budget's hold limit), at most
  /// `num_prompts`; compared by throughput and time per token (TTFT there is the queue).
  bool offline = false;
  int64_t num_prompts = 0;  ///< requests in the run (0: not stated)
  int64_t budget = 0;       ///< the engine's token budget per step; 0: the plan's default
  /// Measured (0: not published): output tokens/s of the replica; TTFT and time per output
  /// token, as `statistic` (mean or median) over the requests.
  double output_tokens_per_s = 0;
  double ttft_s = 0, tpot_s = 0;
  std::string statistic;
  std::string stack, framework, source, quote, notes, gpu_as_published;
  std::string where;  ///< "<file>: runs[i] (<id>)", for errors
};

Result<std::vector<ServingRun>> ParseServingRuns(std::string_view json_text,
                                                 const std::string& origin);
Result<std::vector<ServingRun>> LoadServingRunsFile(const std::string& path);
/// `$ROOFLINE_DATA_DIR/validation/serving_runs.json` when that variable is set, else the
/// embedded copy.
Result<std::vector<ServingRun>> LoadDefaultServingRuns();

/// A run beside the plan's point at its load: bound and expected figures (expected 0 where the
/// device has no expected-time model), and the signed errors (expected - measured) / measured
/// of what was measured (NaN otherwise): for throughput, positive is optimistic; for times,
/// negative is.
struct ServingCheck {
  ServingRun run;
  int64_t kv_room = 0;  ///< the largest batch the replica's memory holds, by the footprint
  int64_t batch = 0;    ///< requests in flight: the concurrency, or for an offline run the plan's
  bool capped = false;  ///< the concurrency is above the KV room: the batch is the room
  int64_t budget = 0;
  double bound_output_tokens_per_s = 0, expected_output_tokens_per_s = 0;
  double bound_ttft_s = 0, expected_ttft_s = 0;
  double bound_tpot_s = 0, expected_tpot_s = 0;
  bool has_expected = false;
  /// The bound's throughput is at least the measured one (as an ideal bound must be) and its
  /// times at most the measured ones.
  bool bound_holds = true;
  double throughput_error = 0, ttft_error = 0, tpot_error = 0;
};

struct ServingValidation {
  std::string origin;
  std::vector<ServingCheck> checks;
  ErrorSummary throughput, ttft, tpot;  ///< over the rows that measured each
  /// Per stack: the throughput and time-per-token errors.
  struct Group {
    std::string stack;
    ErrorSummary throughput, tpot, ttft;
  };
  std::vector<Group> stacks;
  int bounds_broken = 0;  ///< rows whose bound does not hold (must be 0)
};

Result<ServingValidation> ValidateServing(const std::vector<ServingRun>& runs,
                                          const DeviceDatabase& db, const ModelRegistry& registry,
                                          std::shared_ptr<const EfficiencyData> efficiency);
/// The same against the embedded device database, model presets and efficiency data.
Result<ServingValidation> ValidateServing(const std::vector<ServingRun>& runs);

}  // namespace roofline

#endif  // ROOFLINE_SERVING_RUNS_H_
