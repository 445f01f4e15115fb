#include "roofline/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "roofline/scenario.h"

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

constexpr int64_t kMostTokens = int64_t{1} << 24;

/// A decimal number, whole text (no hex, spaces, inf or nan).
std::optional<double> Decimal(const std::string& text) {
  double x = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), x, std::chars_format::general);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(x)) {
    return std::nullopt;
  }
  return x;
}

}  // namespace

int64_t Lengths::AtPercentile(int percentile) const {
  const double q = static_cast<double>(percentile) / 100;
  double x = a;
  switch (kind) {
    case Kind::kFixed:
      x = a;
      break;
    case Kind::kLognormal:
      x = std::round(std::exp(a + b * NormalQuantile(percentile)));
      break;
    case Kind::kUniform:
      // The smallest whole length whose share of requests at or below it reaches q.
      x = a + std::ceil(q * (b - a + 1)) - 1;
      break;
  }
  return static_cast<int64_t>(std::clamp(x, 1.0, static_cast<double>(kMostTokens)));
}

int64_t Lengths::Mean() const {
  return static_cast<int64_t>(std::clamp(std::round(mean), 1.0, static_cast<double>(kMostTokens)));
}

double Lengths::Cv2() const { return std::max(0.0, mean_sq / (mean * mean) - 1); }

std::string Lengths::ToString() const {
  switch (kind) {
    case Kind::kLognormal:
      return fmt::format("lognormal:{},{}", Mean(), b);
    case Kind::kUniform:
      return fmt::format("uniform:{},{}", static_cast<int64_t>(a), static_cast<int64_t>(b));
    case Kind::kFixed:
      break;
  }
  return std::to_string(static_cast<int64_t>(a));
}

Result<Lengths> ParseLengths(const std::string& text, const std::string& flag) {
  const std::string usage =
      "a length in tokens (2048, 2k), lognormal:MEAN,SIGMA (e.g. lognormal:2048,0.6) or "
      "uniform:LOW,HIGH (e.g. uniform:1024,3072)";
  auto length = [&](const std::string& t) -> std::optional<int64_t> {
    Result<int64_t> v = ParseSize(t, flag, kMostTokens);
    if (!v.ok() || *v < 1) return std::nullopt;
    return *v;
  };
  const size_t colon = text.find(':');
  Lengths l;
  if (colon == std::string::npos) {
    const std::optional<int64_t> v = length(text);
    if (!v) {
      return Status::Invalid(flag,
                             fmt::format("'{}' is not {}; lengths are 1 to 2^24", text, usage));
    }
    l.a = l.b = l.mean = static_cast<double>(*v);
    l.mean_sq = l.mean * l.mean;
    return l;
  }
  const std::string kind = text.substr(0, colon);
  const std::string rest = text.substr(colon + 1);
  const size_t comma = rest.find(',');
  if (comma == std::string::npos || rest.find(',', comma + 1) != std::string::npos) {
    return Status::Invalid(flag, fmt::format("'{}' is not {}", text, usage));
  }
  const std::string first = rest.substr(0, comma), second = rest.substr(comma + 1);
  if (kind == "lognormal") {
    const std::optional<int64_t> mean = length(first);
    const std::optional<double> sigma = Decimal(second);
    // Sigma at most 1.5: beyond, the running rows' mean context (long outputs hold their rows)
    // passes the 99th percentile of the lengths, which engines are launched to hold.
    if (!mean || !sigma || !(*sigma > 0 && *sigma <= 1.5)) {
      return Status::Invalid(
          flag, fmt::format("'{}': lognormal takes a mean of 1 to 2^24 tokens and a sigma (of "
                            "the log) above 0 and at most 1.5, e.g. lognormal:2048,0.6",
                            text));
    }
    l.kind = Lengths::Kind::kLognormal;
    l.mean = static_cast<double>(*mean);
    l.b = *sigma;
    l.a = std::log(l.mean) - 0.5 * l.b * l.b;
    l.mean_sq = l.mean * l.mean * std::exp(l.b * l.b);
    if (std::exp(l.a + l.b * NormalQuantile(99)) > static_cast<double>(kMostTokens)) {
      return Status::Invalid(flag,
                             fmt::format("'{}': its 99th percentile is above 2^24 tokens", text));
    }
    return l;
  }
  if (kind == "uniform") {
    const std::optional<int64_t> lo = length(first), hi = length(second);
    if (!lo || !hi || *lo > *hi) {
      return Status::Invalid(flag, fmt::format("'{}': uniform takes a lowest and a highest length "
                                               "of 1 to 2^24 tokens, lowest first, e.g. "
                                               "uniform:1024,3072",
                                               text));
    }
    l.kind = Lengths::Kind::kUniform;
    l.a = static_cast<double>(*lo);
    l.b = static_cast<double>(*hi);
    const double n = l.b - l.a + 1;
    l.mean = 0.5 * (l.a + l.b);
    l.mean_sq = l.mean * l.mean + (n * n - 1) / 12;
    return l;
  }
  return Status::Invalid(
      flag, fmt::format("unknown distribution '{}' in '{}': lognormal or uniform", kind, text));
}

bool KnownPercentile(int percentile) {
  return percentile == 50 || percentile == 90 || percentile == 95 || percentile == 99;
}

Result<ServingShape> ShapeOf(const ServingLoad& l) {
  if (l.batch < 1 || l.prompt < 1 || l.output < 1 || l.budget < 1) {
    return Status::Invalid("batch", "batch, prompt, output and budget must be positive");
  }
  if (l.cached < 0 || l.cached >= l.prompt) {
    return Status::Invalid("cached", "the cached tokens of a prompt must be fewer than its tokens");
  }
  const int64_t room = l.budget - l.batch;
  if (room < 1) {
    return Status::Invalid(
        "batch", fmt::format("{} decode rows fill the token budget of {} (no room for a prompt)",
                             l.batch, l.budget));
  }
  ServingShape s;
  s.arrivals_per_step = static_cast<double>(l.batch) / static_cast<double>(l.output);
  s.room = room;
  const int64_t fresh = l.fresh();
  s.utilization = s.arrivals_per_step * static_cast<double>(fresh) / static_cast<double>(room);
  // Offsets count the prompt's cached tokens, which its chunks attend to.
  if (fresh <= room) {
    s.one_tokens = fresh;
    s.one_offset = l.cached;
    // The room filled: as many equal chunks as prompts it touches, each in the middle of its
    // fresh tokens on average (attention over what precedes a chunk is linear in its length,
    // so the mean offset gives the mean cost).
    s.full_seqs = (room + fresh - 1) / fresh;
    // Chunks whose sum reaches the room (it may pass it by fewer tokens than chunks): the step
    // of a full room is costed, never guessed past what was costed.
    s.full_tokens = (room + s.full_seqs - 1) / s.full_seqs;
    s.full_offset = l.cached + (fresh - s.full_tokens) / 2;
  } else {
    s.chunked = true;
    s.chunk_steps = (fresh + room - 1) / room;
    s.one_tokens = s.full_tokens = room;
    s.one_offset = s.full_offset = l.cached + (fresh - room) / 2;
  }
  return s;
}

int64_t LargestBatchHeld(int64_t most, ServingLoad load, double max_utilization) {
  auto holds = [&](int64_t b) {
    load.batch = b;
    Result<ServingShape> s = ShapeOf(load);
    return s.ok() && s->utilization <= max_utilization;
  };
  int64_t lo = 0, hi = most;  // holds(lo) (0: none yet); the answer is in [lo, hi]
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (holds(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

namespace {

/// The mix of steps: mean step, mean square, share with prefill.
struct Mix {
  double mean = 0, square = 0, mixed = 0;
};

/// A step with `tokens` prompt tokens beside the decode rows: the decode step at 0; from one
/// prompt (or chunk) to the room filled (the full step's chunks reach the room), on the chord
/// between the one-prompt step and the full step: above the step's time, which is convex in its
/// tokens (memory-bound, then compute-bound).
double TimeAt(const ServingShape& s, const StepTimes& t, double tokens) {
  if (tokens <= 0) return t.decode;
  const double one = static_cast<double>(s.one_tokens);
  const double full = static_cast<double>(s.full_seqs * s.full_tokens);
  // Fewer tokens than one prompt (a shorter prompt than the mean): on the chord from the decode
  // step, above the step's time as it is convex in its tokens (memory-bound, then compute).
  if (tokens < one) return t.decode + (t.one - t.decode) * tokens / one;
  if (full <= one) return t.one;
  return t.one + (std::min(tokens, full) - one) * (t.full - t.one) / (full - one);
}

/// E[min(k x prompt, room)] for k ~ Poisson(x), with the Poisson terms in log space (x may be
/// large); `each` is called with (tokens, probability) of every term, the tail last.
template <typename Each>
double PromptTokens(double x, double prompt, double room, Each each) {
  const int64_t whole = static_cast<int64_t>(std::floor(room / prompt));  // prompts that fit
  const int64_t last =
      std::min<int64_t>(whole + 1, static_cast<int64_t>(std::ceil(x + 10 * std::sqrt(x) + 20)));
  double mass = 0, sum = 0;
  for (int64_t k = 0; k < last; ++k) {
    const double kd = static_cast<double>(k);
    const double pk =
        x > 0 ? std::exp(-x + kd * std::log(x) - std::lgamma(kd + 1)) : (k == 0 ? 1.0 : 0.0);
    const double tokens = std::min(kd * prompt, room);
    each(tokens, pk);
    sum += pk * tokens;
    mass += pk;
  }
  const double tail = std::max(0.0, 1 - mass);
  const double tokens = std::min(static_cast<double>(last) * prompt, room);
  each(tokens, tail);
  return sum + tail * tokens;
}

/// The mix of steps when `x` prompts arrive per step. Chunked: a share x prompt / room of the
/// steps carries a room-sized chunk. Whole prompts: each step takes the prompts that arrived
/// during the one before, up to the room; what does not fit waits and rides on a later step,
/// so the steps carry x prompts a step on average: their count is Poisson(x') with x' >= x
/// chosen so that E[min(k prompt, room)] = x prompt (by bisection).
Mix MixAt(const ServingShape& s, const StepTimes& t, double x, double prompt, double* carried) {
  Mix m;
  const double room = static_cast<double>(s.room);
  if (s.chunked) {
    const double share = std::min(1.0, x * prompt / room);
    m.mean = (1 - share) * t.decode + share * t.one;
    m.square = (1 - share) * t.decode * t.decode + share * t.one * t.one;
    m.mixed = share;
    *carried = x;
    return m;
  }
  const double want = x * prompt;
  double lo = x, hi = x;
  auto tokens = [&](double y) { return PromptTokens(y, prompt, room, [](double, double) {}); };
  while (tokens(hi) < want && hi < 1e9) hi = 2 * hi + 1;
  for (int i = 0; i < 100 && hi - lo > 1e-12 * (1 + hi); ++i) {
    const double mid = 0.5 * (lo + hi);
    (tokens(mid) < want ? lo : hi) = mid;
  }
  const double y = x > 0 ? hi : 0;
  PromptTokens(y, prompt, room, [&](double tok, double pk) {
    const double tk = TimeAt(s, t, tok);
    m.mean += pk * tk;
    m.square += pk * tk * tk;
    if (tok > 0) m.mixed += pk;
  });
  *carried = y;
  return m;
}

}  // namespace

ServingFigures Serve(const ServingLoad& l, const ServingShape& s, const StepTimes& t,
                     int percentile) {
  ServingFigures f;
  const double a = s.arrivals_per_step;
  const double p = static_cast<double>(percentile) / 100;
  // What the steps and the request's own prefill carry of a prompt: its fresh tokens.
  const double prompt = static_cast<double>(l.fresh());
  const double room = static_cast<double>(s.room);
  // The replica's steps: every request's successor arrives (batch / output per step).
  double carried = 0;
  const Mix all = MixAt(s, t, a, prompt, &carried);
  f.step_s = all.mean;
  f.step_sd_s = std::sqrt(std::max(0.0, all.square - all.mean * all.mean));
  f.mixed_share = all.mixed;
  // The request's own prefill: its chunks on consecutive steps, or its step, which holds it and
  // the others that arrived with it (1 + x' prompts on average, up to the room).
  // Chunked: full chunks, then the rest of the prompt in a step costed by its tokens between
  // the decode step and a full chunk.
  const double rest = prompt - static_cast<double>(s.chunk_steps - 1) * room;
  const double own = s.chunked ? static_cast<double>(s.chunk_steps - 1) * t.one + t.decode +
                                     (t.one - t.decode) * rest / room
                               : TimeAt(s, t, std::min(room, (1 + carried) * prompt));
  // With a spread of prompts, the request's own prompt at the percentile (its fresh tokens in
  // the same share as the mean's): in its step beside the others that arrived with it, or in
  // chunks of the room when longer than it.
  const bool spread = l.prompts != nullptr && !l.prompts->fixed();
  double own_at = own;
  if (spread) {
    const double x = static_cast<double>(l.prompts->AtPercentile(percentile)) * prompt /
                     static_cast<double>(l.prompt);
    if (x <= room) {
      own_at = TimeAt(s, t, std::min(room, x + carried * prompt));
    } else {
      const double room_step = s.chunked ? t.one : TimeAt(s, t, room);
      const double chunks = std::ceil(x / room);
      own_at = (chunks - 1) * room_step + t.decode +
               (room_step - t.decode) * (x - (chunks - 1) * room) / room;
    }
  }
  // The step running when the request arrives: arrivals land uniformly in time, so on a step
  // picked by its length (mean E[t^2] / E[t]) and uniformly within it.
  const double biased = all.mean > 0 ? all.square / all.mean : 0;
  // Waiting for prefill room: one server taking prompt / room steps a prompt at utilization
  // rho (M/D/1: mean wait rho x service / (2 (1 - rho)) steps), with the exponential tail of
  // its waiting time (P(W > x) ~ rho exp(-rho x / E[W])).
  // With a spread of prompts the service time varies (M/G/1): the mean wait grows by
  // E[S^2] / E[S]^2 = 1 + cv^2 of the prompts (Pollaczek-Khinchine).
  const double rho = s.utilization;
  const double service = prompt / room;
  const double spread_factor = spread ? 1 + l.prompts->Cv2() : 1;
  double mean_wait = 0, wait = 0;
  if (rho > 0 && rho < 1) {
    mean_wait = rho * service * spread_factor / (2 * (1 - rho));
    if (rho > 1 - p) wait = mean_wait / rho * std::log(rho / (1 - p));
  }
  if (rho >= 1) {
    // The queue grows without end: no steady state to wait in.
    mean_wait = wait = std::numeric_limits<double>::infinity();
  }
  f.residual_s = p * biased;
  f.queue_s = wait * all.mean;
  f.own_prefill_s = own_at;
  f.ttft_s = f.residual_s + f.queue_s + own_at;
  f.ttft_mean_s = 0.5 * biased + mean_wait * all.mean + own;
  // The steps a request decodes in carry the prompts of the other batch - 1 requests'
  // successors (its own prompt is in its TTFT): at batch 1, plain decode steps. Its time per
  // output token averages output - 1 of them (normal approximation of their mean), at most the
  // longest step.
  double seen_carried = 0;
  const Mix seen = MixAt(s, t, static_cast<double>(l.batch - 1) / static_cast<double>(l.output),
                         prompt, &seen_carried);
  const double seen_sd = std::sqrt(std::max(0.0, seen.square - seen.mean * seen.mean));
  const double gaps = static_cast<double>(std::max<int64_t>(1, l.output - 1));
  const double longest = std::max({t.decode, t.one, t.full});
  f.tpot_mean_s = seen.mean;
  f.tpot_s = std::min(longest, seen.mean + NormalQuantile(percentile) * seen_sd / std::sqrt(gaps));
  // E2E at a percentile: with a spread of outputs, the output at that percentile.
  const int64_t outputs =
      l.outputs != nullptr && !l.outputs->fixed() ? l.outputs->AtPercentile(percentile) : l.output;
  f.e2e_s = f.ttft_s + static_cast<double>(outputs - 1) * f.tpot_s;
  if (all.mean > 0) {
    f.output_tokens_per_s = static_cast<double>(l.batch) / all.mean;
    f.input_tokens_per_s = a * static_cast<double>(l.prompt) / all.mean;
    f.prefill_share = std::max(0.0, all.mean - t.decode) / all.mean;
  }
  return f;
}

}  // namespace roofline
