// Continuous batching at steady state: what one replica's steps look like when it holds a number
// of requests in flight, and the latencies a request sees (docs/sweeps-and-plans.md, "Serving
// model"). The step times come from the cost model (mixed steps, Workload::chunk); this file
// holds only the arithmetic between them, so that it can be read and tested on its own.
#ifndef ROOFLINE_SERVING_H_
#define ROOFLINE_SERVING_H_

#include <cstdint>
#include <string>

#include "roofline/status.h"

namespace roofline {

/// Request lengths in tokens: one value for every request, or a distribution of them.
struct Lengths {
  enum class Kind { kFixed, kLognormal, kUniform };
  Kind kind = Kind::kFixed;
  double mean = 1;     ///< E[X]
  double mean_sq = 1;  ///< E[X^2]
  /// Lognormal: the mean and standard deviation of ln X (mu, sigma); uniform: the lowest and
  /// highest length; fixed: the length twice.
  double a = 1, b = 1;

  /// The length at a percentile (KnownPercentile): whole, from 1 to 2^24.
  int64_t AtPercentile(int percentile) const;
  /// The nearest whole mean, at least 1.
  int64_t Mean() const;
  /// The squared coefficient of variation, Var[X] / E[X]^2 (0 for one value).
  double Cv2() const;
  bool fixed() const { return kind == Kind::kFixed; }
  /// As ParseLengths reads it: "2048", "lognormal:2048,0.6", "uniform:1024,3072".
  std::string ToString() const;
};

/// "2048" or "2k" (every request alike), "lognormal:MEAN,SIGMA" (lognormal with that mean in
/// tokens and that standard deviation of the log, 0 < SIGMA <= 1.5, its 99th percentile at
/// most 2^24), "uniform:LOW,HIGH" (whole
/// lengths from LOW to HIGH, each equally likely); sizes take k (x1024) and M (x1024^2), from 1
/// to 2^24 tokens. Errors name `flag`.
Result<Lengths> ParseLengths(const std::string& text, const std::string& flag);

/// A replica's load: `batch` requests in flight, each `prompt` tokens in and `output` tokens out,
/// and the engine's token budget per step (decode rows and prefill tokens together: vLLM's
/// max_num_batched_tokens, TensorRT-LLM's max_num_tokens).
struct ServingLoad {
  int64_t batch = 1;
  int64_t prompt = 1;
  int64_t output = 1;
  int64_t budget = 8192;
  /// Of each prompt, the tokens found in the prefix cache (vLLM's automatic prefix caching,
  /// SGLang's radix cache): not prefilled, but attended to; 0 <= cached < prompt.
  int64_t cached = 0;
  /// How the lengths spread (none: every request has `prompt` and `output` tokens; their means
  /// are `prompt` and `output` either way). The steps carry the mean prompt; the queue for
  /// prefill room, a TTFT at a percentile (its own prompt at that percentile) and an E2E at a
  /// percentile (its output at that percentile) see the spread.
  const Lengths* prompts = nullptr;
  const Lengths* outputs = nullptr;

  int64_t fresh() const { return prompt - cached; }  ///< prompt tokens a request prefills
};

/// How arriving prompts ride on the decode steps. A request holds its decode row for `output`
/// steps, so `batch / output` requests leave and, at steady state, arrive per step (Poisson).
/// Beside the decode rows a step has `room` = budget - batch tokens for prefill, which the
/// engine fills with the waiting prompts' fresh tokens (chunks of several prompts packed, as
/// vLLM's and SGLang's schedulers do); a prompt whose fresh tokens exceed the room is prefilled
/// over ceil(fresh / room) steps. A prompt's cached tokens are not prefilled: its chunks attend
/// to them (offsets below count them).
struct ServingShape {
  double arrivals_per_step = 0;  ///< a = batch / output
  int64_t room = 0;              ///< prefill tokens a step holds
  bool chunked = false;          ///< prompt > room
  /// The step with one prompt beside the decode rows (chunked: one room-sized chunk of it, after
  /// `one_offset` cached tokens on average).
  int64_t one_tokens = 0, one_offset = 0;
  /// The step with the room filled: `full_seqs` equal chunks of `full_tokens` (their sum
  /// reaches the room, passing it by fewer tokens than chunks), each after `full_offset` cached
  /// tokens of its prompt on average (chunked: the one step again).
  int64_t full_seqs = 1, full_tokens = 0, full_offset = 0;
  int64_t chunk_steps = 1;  ///< steps a prompt's prefill spans when it has the room to itself
  /// The share of the prefill room the arrivals use: a x fresh tokens / room. Below 1 the
  /// replica holds the load; at 1 or above the queue grows without end.
  double utilization = 0;
};

/// The shape of `load`; Invalid (field "batch") when the budget leaves no room beside the decode
/// rows. A shape with utilization >= 1 is returned: the caller says why it cannot hold.
Result<ServingShape> ShapeOf(const ServingLoad& load);

/// The largest batch in [1, most] whose arrivals, requests as `load` gives them (its batch is
/// not read), use at most `max_utilization` of the prefill room (utilization grows with the
/// batch: found by bisection); 0 when not even batch 1 does.
int64_t LargestBatchHeld(int64_t most, ServingLoad load, double max_utilization);

/// Step times (seconds) the serving figures are made of, from the cost model: decode rows only,
/// with one prompt (or chunk) beside them, with the room filled (ServingShape).
struct StepTimes {
  double decode = 0;
  double one = 0;
  double full = 0;
};

/// Percentiles the targets and reports use: 50, 90, 95 or 99 (a normal quantile table).
bool KnownPercentile(int percentile);

/// What a request sees at steady state, at one percentile.
struct ServingFigures {
  double step_s = 0;       ///< mean step
  double step_sd_s = 0;    ///< standard deviation of a step (how many prompt tokens it carries)
  double mixed_share = 0;  ///< share of steps that carry prefill
  double ttft_s = 0;       ///< time to first token at the percentile
  /// A request's mean time per output token at the percentile: its steps carry the prompts of
  /// the other batch - 1 requests' successors (closed loop, as a benchmark at fixed
  /// concurrency runs), so at batch 1 it is the decode step; at most the longest step.
  double tpot_s = 0;
  double e2e_s = 0;          ///< ttft + (output - 1) x tpot, both at the percentile (an upper
                             ///< estimate of the sum's percentile)
  double ttft_mean_s = 0;    ///< mean time to first token (the queue's mean wait)
  double tpot_mean_s = 0;    ///< mean time per output token
  double residual_s = 0;     ///< of ttft: the rest of the step running when the request arrives
  double queue_s = 0;        ///< of ttft: waiting for prefill room (M/D/1, exponential tail)
  double own_prefill_s = 0;  ///< of ttft: the step(s) that prefill the request's prompt
  double output_tokens_per_s = 0;  ///< of the replica: batch / step
  double input_tokens_per_s = 0;   ///< arrivals x prompt / step (cached tokens too)
  /// The prefill's share of the step time (mean step minus the decode-only step): what input
  /// tokens are charged.
  double prefill_share = 0;
};

/// The figures of `shape` under `times` at `percentile` (KnownPercentile). Requires utilization
/// below 1.
ServingFigures Serve(const ServingLoad& load, const ServingShape& shape, const StepTimes& times,
                     int percentile);

}  // namespace roofline

#endif  // ROOFLINE_SERVING_H_
