#include "roofline/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline {
namespace {

/// Standard normal quantiles of the known percentiles.
double NormalQuantile(int percentile) {
  switch (percentile) {
    case 90:
      return 1.2815515655446004;
    case 95:
      return 1.6448536269514722;
    case 99:
      return 2.3263478740408408;
    default:
      return 0;  // 50
  }
}

}  // namespace

bool KnownPercentile(int percentile) {
  return percentile == 50 || percentile == 90 || percentile == 95 || percentile == 99;
}

Result<ServingShape> ShapeOf(const ServingLoad& l) {
  if (l.batch < 1 || l.prompt < 1 || l.output < 1 || l.budget < 1) {
    return Status::Invalid("batch", "batch, prompt, output and budget must be positive");
  }
  const int64_t room = l.budget - l.batch;
  if (room < 1) {
    return Status::Invalid(
        "batch", fmt::format("{} decode rows fill the token budget of {} (no room for a prompt)",
                             l.batch, l.budget));
  }
  ServingShape s;
  s.arrivals_per_step = static_cast<double>(l.batch) / static_cast<double>(l.output);
  if (l.prompt <= room) {
    s.per_step = room / l.prompt;
    s.chunk = l.prompt;
    s.utilization = s.arrivals_per_step / static_cast<double>(s.per_step);
  } else {
    // Chunks of equal size, as few as the room allows; the mean chunk sits in the middle of the
    // prompt (attention over the cached part is linear in its length, so the mean offset gives
    // the mean cost).
    s.chunked = true;
    s.chunk_steps = (l.prompt + room - 1) / room;
    s.chunk = (l.prompt + s.chunk_steps - 1) / s.chunk_steps;
    s.chunk_offset = (l.prompt - s.chunk) / 2;
    s.utilization = s.arrivals_per_step * static_cast<double>(s.chunk_steps);
  }
  return s;
}

namespace {

/// The mix of steps when `x` prompts arrive per step: mean step, mean square, share with
/// prefill.
struct Mix {
  double mean = 0, square = 0, mixed = 0;
};

/// A step with k prompts beside the decode rows (whole prompts; chunked: a chunk when k > 0).
double TimeAt(const ServingShape& s, const StepTimes& t, double k) {
  if (k <= 0) return t.decode;
  if (s.chunked || s.per_step <= 1) return t.one;
  const double k_max = static_cast<double>(s.per_step);
  return t.one + (std::min(k, k_max) - 1) * (t.full - t.one) / (k_max - 1);
}

Mix MixAt(const ServingShape& s, const StepTimes& t, double x) {
  Mix m;
  if (s.chunked) {
    // A share x x chunk_steps of the steps carries a chunk, the rest only decode rows.
    const double share = std::min(1.0, x * static_cast<double>(s.chunk_steps));
    m.mean = (1 - share) * t.decode + share * t.one;
    m.square = (1 - share) * t.decode * t.decode + share * t.one * t.one;
    m.mixed = share;
    return m;
  }
  // Each step takes the prompts that arrived during the one before: k ~ Poisson(x), at most K
  // (the rest wait, counted by the queue). With k >= 1 prompts the step is dominated by their
  // matmuls, affine in their tokens: between one prompt and K the time is interpolated.
  // Poisson terms in log space (x may be large); those past ~10 standard deviations are
  // negligible and go with the tail.
  const int64_t last =
      std::min<int64_t>(s.per_step, static_cast<int64_t>(std::ceil(x + 10 * std::sqrt(x) + 20)));
  double mass = 0;
  for (int64_t k = 0; k < last; ++k) {
    const double kd = static_cast<double>(k);
    const double pk =
        x > 0 ? std::exp(-x + kd * std::log(x) - std::lgamma(kd + 1)) : (k == 0 ? 1.0 : 0.0);
    const double tk = TimeAt(s, t, kd);
    m.mean += pk * tk;
    m.square += pk * tk * tk;
    if (k > 0) m.mixed += pk;
    mass += pk;
  }
  const double tail = std::max(0.0, 1 - mass);
  const double tt = TimeAt(s, t, static_cast<double>(last));
  m.mean += tail * tt;
  m.square += tail * tt * tt;
  m.mixed += tail;
  return m;
}

}  // namespace

ServingFigures Serve(const ServingLoad& l, const ServingShape& s, const StepTimes& t,
                     int percentile) {
  ServingFigures f;
  const double a = s.arrivals_per_step;
  const double p = static_cast<double>(percentile) / 100;
  // The replica's steps: every request's successor arrives (batch / output per step).
  const Mix all = MixAt(s, t, a);
  f.step_s = all.mean;
  f.step_sd_s = std::sqrt(std::max(0.0, all.square - all.mean * all.mean));
  f.mixed_share = all.mixed;
  // The request's own prefill: its chunks one after another, or its step, which holds it and
  // the others that arrived with it (1 + a on average).
  const double own = s.chunked ? static_cast<double>(s.chunk_steps) * t.one : TimeAt(s, t, 1 + a);
  const double service =
      s.chunked ? static_cast<double>(s.chunk_steps) : 1 / static_cast<double>(s.per_step);
  // The step running when the request arrives: arrivals land uniformly in time, so on a step
  // picked by its length (mean E[t^2] / E[t]) and uniformly within it.
  const double residual = p * (all.mean > 0 ? all.square / all.mean : 0);
  // Waiting for prefill room: one server of `service` steps per prompt at utilization rho
  // (M/D/1: mean wait rho x service / (2 (1 - rho)) steps), with the exponential tail of its
  // waiting time (P(W > x) ~ rho exp(-rho x / E[W])).
  const double rho = s.utilization;
  double wait_steps = 0;
  if (rho > 0 && rho < 1) {
    const double mean_wait = rho * service / (2 * (1 - rho));
    if (rho > 1 - p) wait_steps = mean_wait / rho * std::log(rho / (1 - p));
  }
  f.residual_s = residual;
  f.queue_s = wait_steps * all.mean;
  f.own_prefill_s = own;
  f.ttft_s = residual + f.queue_s + own;
  // The steps a request decodes in carry the prompts of the other batch - 1 requests'
  // successors (its own prompt is in its TTFT): at batch 1, plain decode steps. Its time per
  // output token averages output - 1 of them (normal approximation of their mean).
  const Mix seen = MixAt(s, t, static_cast<double>(l.batch - 1) / static_cast<double>(l.output));
  const double seen_sd = std::sqrt(std::max(0.0, seen.square - seen.mean * seen.mean));
  const double gaps = static_cast<double>(std::max<int64_t>(1, l.output - 1));
  f.tpot_s = seen.mean + NormalQuantile(percentile) * seen_sd / std::sqrt(gaps);
  f.e2e_s = f.ttft_s + static_cast<double>(l.output - 1) * f.tpot_s;
  if (all.mean > 0) {
    f.output_tokens_per_s = static_cast<double>(l.batch) / all.mean;
    f.input_tokens_per_s = a * static_cast<double>(l.prompt) / all.mean;
    f.prefill_share = std::max(0.0, all.mean - t.decode) / all.mean;
  }
  return f;
}

}  // namespace roofline
