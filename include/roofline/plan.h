// Serving plans: how much inference a fleet of devices can do, and what it costs.
#ifndef ROOFLINE_PLAN_H_
#define ROOFLINE_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "roofline/model_analysis.h"
#include "roofline/serving.h"
#include "roofline/table.h"

namespace roofline {

/// A latency target: `metric` (ttft, tpot or e2e) at most `seconds` at `percentile`.
struct LatencyTarget {
  std::string metric;
  double seconds = 0;
  int percentile = 50;  ///< 50, 90, 95 or 99 (KnownPercentile)
  friend bool operator==(const LatencyTarget&, const LatencyTarget&) = default;
};

/// Parses "2s", "500ms", "0.5" (seconds) with an optional "@p90" into a target of `metric`;
/// Invalid names `flag`.
Result<LatencyTarget> ParseLatencyTarget(const std::string& metric, const std::string& text,
                                         const std::string& flag);

/// What the fleet serves.
struct PlanRequest {
  /// Devices in the fleet; 0 with a load (rate or concurrency): the fewest that carry it.
  int64_t gpus = 1;
  int64_t prompt = 2048;  ///< input tokens per request (the mean, with a spread)
  int64_t output = 256;   ///< generated tokens per request (the mean, with a spread)
  /// How the lengths spread over requests (none: every request alike); their means are prompt
  /// and output (MakePlan takes them from here when given).
  std::optional<Lengths> prompt_lengths, output_lengths;
  double price_per_hour = 0;  ///< per device-hour (0: no cost figures)
  int64_t tp = 0;             ///< tensor-parallel degree; 0 = the smallest that fits
  /// Tokens per step, decode rows and prefill together (vLLM's max_num_batched_tokens); 0: vLLM's
  /// default for an OpenAI server on the device (DefaultTokenBudget).
  int64_t budget = 0;
  std::vector<LatencyTarget> targets;  ///< each operating point is checked against them
  /// The load the fleet carries, one of the two or none (then the plan serves the most it can):
  /// requests per second arriving at the fleet (Poisson, open loop; spread evenly over the
  /// replicas), or requests kept in flight over the fleet (closed loop: each finished request
  /// is replaced at once; as even a spread as whole requests allow).
  double rate = 0;
  int64_t concurrency = 0;
  /// The share of each prompt's tokens found in the prefix cache (a shared system prompt, the
  /// history of a conversation): those are attended to but not prefilled; in [0, 1). Each
  /// sequence still holds its whole prompt in the KV cache (no blocks shared between requests).
  double prefix_hit = 0;
  CostOptions cost;  ///< how the operating points are costed (launch overhead)

  bool HasLoad() const { return rate > 0 || concurrency > 0; }
  /// The mean context of a running request's decode steps: prompt + (E[G^2] / E[G] + 1) / 2
  /// for outputs G (a long output holds its row for more steps), whole.
  int64_t MeanDecodeContext() const;
  /// Tokens the KV cache holds per sequence: the prompt and the running rows' mean final length,
  /// E[G^2] / E[G] of outputs G (a long output holds its row longer), which is the output for
  /// one output length.
  int64_t KvContext() const;
  /// A request's longest length at the 99th percentile: prompt and output each at it.
  int64_t LongestAtP99() const;
  /// Prompt tokens each request finds cached: prefix_hit x prompt, whole, fewer than the prompt.
  int64_t CachedTokens() const;
};

/// vLLM's default token budget of an OpenAI-compatible server (EngineArgs.get_batch_defaults in
/// vllm/engine/arg_utils.py): 8192 on a device of at least 70 GiB that is not an A100, else 2048.
int64_t DefaultTokenBudget(const Device& device);

/// A target checked at an operating point: the value at the target's percentile (expected where
/// the point has expected times, else at the bound).
struct TargetCheck {
  LatencyTarget target;
  double value_s = 0;
  bool met = false;
  bool expected = false;  ///< value from the expected step times
};

/// The largest batch per replica that meets one target (0: not even batch 1), by bisection.
struct SloBoundary {
  LatencyTarget target;
  int64_t largest_batch = 0;
};

/// One operating point of a replica: tp x pp devices holding `batch` requests in flight under
/// continuous batching (roofline/serving.h); the FLOP limit is not one (no steps).
struct PlanPoint {
  std::string label;
  int64_t batch = 0;
  int64_t chips = 1;  ///< devices per replica at this point (tp x pipeline stages)
  /// Micro-batches in flight (PlanVariant::micro_batches): `batch` is theirs together, and the
  /// shape and serving figures are one micro-batch's (an engine of batch / micro_batches).
  int64_t micro_batches = 1;
  double ttft_s = 0;     ///< median time to first token (queue, the running step, own prefill)
  double tpot_s = 0;     ///< median time per output token (ServingFigures::tpot_s)
  double request_s = 0;  ///< ttft + (output - 1) x tpot
  /// The steady state at the bound and (when has_expected) at the expected step times, median.
  ServingShape shape;
  ServingFigures serving, expected_serving;
  std::vector<TargetCheck> checks;  ///< one per PlanRequest::targets
  double input_tokens_per_s_per_gpu = 0;
  double output_tokens_per_s_per_gpu = 0;
  /// Price of the prefill's share of the steps per million input tokens, of the decode-only
  /// step per million output tokens.
  double cost_per_m_input = 0;
  double cost_per_m_output = 0;
  /// Expected times (when the cost model has efficiency data; 0 otherwise): TTFT, time per
  /// output token, a request, and output tokens/s per GPU at them.
  double expected_ttft_s = 0;
  double expected_tpot_s = 0;
  double expected_request_s = 0;
  double expected_output_tokens_per_s_per_gpu = 0;
  /// The verdicts of the step with prefill (one prompt or chunk beside the decode rows) and of
  /// the decode-only step; none: not costed (the FLOP limit assumes compute-bound).
  std::optional<Verdict> prefill_bound, decode_bound;
};

/// How a layout carries the request's load (PlanRequest::rate or concurrency). Figures are
/// expected where the layout has expected times, else at the bound (`expected`).
struct LoadServed {
  /// Every replica holds its share within the token budget's hold limit and meets the targets.
  bool carried = false;
  bool overloaded = false;  ///< a replica's share exceeds what the budget prefills (hold limit)
  /// Some batch meets the targets on this layout (else gpus_needed counts replicas at batch 1,
  /// the closest, and no fleet carries the load within them).
  bool targets_reachable = true;
  bool expected = false;
  int64_t gpus = 0;      ///< devices the fleet pays for: --gpus, or gpus_needed when sized
  int64_t replicas = 0;  ///< replicas that serve (sized: the fewest that carry the load)
  /// The fewest devices that carry the load on this layout (0 with too_many): replicas at
  /// most the capacity below, each keeping up within the targets (no batch meets them: the
  /// replicas that put batch 1 on each, the closest).
  int64_t gpus_needed = 0;
  bool too_many = false;  ///< more than a million devices would be needed (with --gpus only)
  /// The most requests a replica holds in flight (PlanVariant::hold_limit) and whether its KV
  /// room sets it (else what its token budget prefills).
  int64_t hold_limit = 0;
  bool kv_binds = false;
  /// The most one replica carries within the hold limit and the targets: requests/s at its
  /// served batch (PlanVariant::largest), and that batch in flight.
  double capacity_rate = 0;
  int64_t capacity_batch = 0;
  /// The most loaded replica's share: requests/s (rate) or requests in flight (concurrency).
  double share = 0;
  /// That replica's operating point: with a rate, the batch at which its request rate first
  /// reaches its share, filling up from batch 1 (Little's law iterated: requests in flight =
  /// rate x time in the decode steps).
  PlanPoint point;
  double fleet_requests_per_s = 0;  ///< what the fleet completes at the load
  double fleet_output_tokens_per_s = 0;
  double cost_per_m_output = 0;  ///< every device of `gpus` paid over that output (0: no price)
};

/// A tensor-parallel degree the plan tried when --tp was not given: what it holds and serves.
struct PlanLayout {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t micro_batches = 1;  ///< PlanVariant::micro_batches
  /// One sequence of prompt + output tokens fits and a replica's tp x pp chips are within --gpus
  /// (else the figures below are 0 and too_many_chips says which of the two failed).
  bool fits = false;
  bool too_many_chips = false;  ///< one sequence fits, but tp x pp exceeds --gpus
  /// One sequence fits, but the degree could not be planned: why (a load that would take more
  /// than a million devices, ...).
  std::string not_planned;
  int64_t replicas = 0;
  int64_t idle_gpus = 0;
  double weights_bytes = 0;  ///< per device
  int64_t max_batch = 0;     ///< per replica: the KV cache's room
  int64_t batch = 0;         ///< per replica: the batch it serves at (PlanVariant::largest)
  bool meets_targets = true;
  double worst_miss = 0;  ///< at batch 1: the largest ratio of a target's value to its limit
  /// The fleet's output tokens/s with every replica at that batch (continuous batching), at the
  /// bound and expected (0: none); and what one million output
  /// tokens cost at that rate, every device of --gpus paid, idle ones too (0: no price).
  double fleet_output_tokens_per_s = 0;
  double expected_fleet_output_tokens_per_s = 0;
  double fleet_cost_per_m_output = 0;
  double expected_fleet_cost_per_m_output = 0;
  std::optional<LoadServed> load;  ///< with a load: how this degree carries it
};

/// A layout at one batch, for the frontier of throughput per device against speed per user.
struct ParetoPoint {
  int64_t tp = 1, pp = 1, batch = 1;
  int64_t micro_batches = 1;         ///< PlanVariant::micro_batches: batch is theirs together
  double tokens_per_s_per_gpu = 0;   ///< output tokens/s per device of the replica
  double tokens_per_s_per_user = 0;  ///< 1 / median time per output token
  double ttft_s = 0, tpot_s = 0;     ///< medians
  bool expected = false;             ///< from the expected step times (else the bound)
  bool meets_targets = true;
  bool frontier = false;  ///< no other point is at least as fast per user and per device
};

/// A check a serving engine would make before it starts the plan's layout.
struct PreflightCheck {
  std::string what;  ///< "heads", "vocabulary", "context", "memory"
  bool ok = true;
  std::string detail;  ///< one line: what holds, or what to change
};

/// A plan under one set of dtypes.
struct PlanVariant {
  std::string name;  ///< "as configured", "fp8 (W8A8, fp8 KV)"
  std::string dtypes;
  DType act = DType::kBf16, weight = DType::kBf16;  ///< activations and decoder weights
  int64_t tp = 1;
  int64_t pp = 1;  ///< pipeline stages (SRAM-only devices: the fewest that hold the model)
  /// Micro-batches a replica keeps in flight: pp on GPUs whose KV room holds a request per
  /// stage (each micro-batch an engine of its own: its batch, its token budget, one step per
  /// cycle of the pipeline, PipelineCycle), else 1 (the stages run one after another). The
  /// plan's batches are the replica's: micro_batches times an engine's.
  int64_t micro_batches = 1;
  /// Without --tp: every power-of-two degree up to --gpus that divides the heads, in order; the
  /// variant is the one whose fleet serves the most output tokens/s at its replicas' largest
  /// batch (expected where every degree that fits has expected times, else at the bound: said
  /// by ranked_by_expected; a tie keeps the smaller degree).
  std::vector<PlanLayout> layouts;
  bool ranked_by_expected = false;
  /// The search: tensor-parallel degrees up to most_tp, and whether it added pipeline stages
  /// (no degree alone held the model; GPUs without --pp).
  int64_t most_tp = 0;
  bool stages_searched = false;
  int64_t replicas = 1;
  int64_t idle_gpus = 0;
  double weights_bytes = 0;          ///< per device
  double kv_bytes_per_sequence = 0;  ///< per device, at prompt + output tokens
  int64_t max_batch = 0;             ///< per replica: what the KV cache holds
  int64_t budget = 0;                ///< tokens per step (PlanRequest::budget resolved)
  /// The largest batch whose arrivals use at most 90% of the token budget's prefill room
  /// (ServingShape::utilization), at most max_batch.
  int64_t hold_limit = 0;
  std::vector<SloBoundary> boundaries;  ///< one per target
  bool meets_targets = true;            ///< batch 1 meets every target
  PlanPoint batch1;                     ///< memory-bound lower end
  /// The largest batch that fits, holds its load and meets the targets (or batch 1, the
  /// closest, when even it misses them).
  PlanPoint largest;
  PlanPoint flop_limit;  ///< every FLOP at the tensor peak (the upper limit)
  /// How far to trust the expected TTFT and time per output token (roofline/trust.h
  /// AttachBands); none: not attached.
  std::optional<TrustBand> prefill_band, decode_band;
  double flops_per_request = 0;
  /// Every layout tried (or the given one) at batches 1, 2, 4, ... up to the batch it holds, and
  /// at the batch it serves: expected figures where every layout has them, else the bounds;
  /// `frontier` marks the Pareto frontier (per user against per device).
  std::vector<ParetoPoint> pareto;
  /// What an engine checks before it starts this layout (the launch lines' pre-flight).
  std::vector<PreflightCheck> preflight;
  /// With a load: how the fleet carries it on this layout (replicas and idle_gpus above are
  /// then the load's).
  std::optional<LoadServed> load;
};

struct Plan {
  PlanRequest request;
  std::string model, device;
  bool gpu = true;      ///< the device is a GPU (the report says "GPU", else "chip")
  ResourceNames names;  ///< the device's, for printing the verdicts
  ParameterCount params;
  /// The engines' memory fraction the plan's capacity assumes (Workload::memory_fraction).
  double memory_fraction = 1;
  std::string vendor;      ///< the device's ("NVIDIA", "AMD", ...): which engines run on it
  bool fp8_cores = false;  ///< the device has fp8 tensor cores (TensorRT-LLM's FP8 needs them)
  std::vector<PlanVariant> variants;
  std::vector<std::string> assumptions;
};

/// Plans the fleet: the tensor-parallel degree (unless given) that serves the most output tokens
/// per device at its largest batch among those that fit (PlanVariant::layouts),
/// replicas, the largest batch, latency and throughput at batch 1, at the largest batch and at
/// the FLOP limit, cost per million tokens; the same under FP8; MoE activation stated.
Result<Plan> MakePlan(const TransformerConfig& config, const Workload& base, const Device& device,
                      const PlanRequest& request);

/// One continuous-batching operating point of one replica at tp = request.tp (pipeline stages
/// as the workload gives them, or the fewest that hold the model): `batch` requests in flight
/// of request.prompt and request.output tokens, with request.budget (0: DefaultTokenBudget);
/// its targets are checked. Whether the batch fits the KV cache is not checked (kv_room says
/// how many do). What `validate serving` puts beside a measured run.
struct PlanPointAtBatch {
  PlanPoint point;
  int64_t kv_room = 0;  ///< the largest batch the replica's memory holds
  int64_t budget = 0;
};
Result<PlanPointAtBatch> PlanPointAt(const TransformerConfig& config, const Workload& workload,
                                     const Device& device, const PlanRequest& request,
                                     int64_t batch);

/// The plan as a table: one row per operating point of each variant (batch 1, the largest batch,
/// the FLOP limit), every column from one registry: the variant's layout (tp, pp, replicas,
/// weights and KV bytes per device, largest batch), the point's latency, throughput per device,
/// cost per million tokens and phase verdicts (codes; "compute (assumed)" at the FLOP limit), and
/// the expected times when the plan has them (NaN where a point has none: the FLOP limit).
/// `plan --format csv` and `npy` write it.
Table PlanTable(const Plan& plan);

}  // namespace roofline

#endif  // ROOFLINE_PLAN_H_
