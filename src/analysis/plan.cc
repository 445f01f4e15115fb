#include "roofline/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "roofline/flip.h"
#include "roofline/pipeline.h"
#include "roofline/units.h"

namespace roofline {
namespace {

Result<PhaseResult> RunOne(const TransformerConfig& c, const Workload& w, const CostModel& m,
                           Phase p) {
  return AnalyzePhase(c, w, m, p);
}

/// The step times of `shape` from the cost model: bound and, when every step has them,
/// expected (else all 0). With micro-batches in flight (a pipeline), the times of one
/// micro-batch's step on each stage instead (`stage_bound`, `stage_expected`), from which
/// Point makes the pipeline's cycles.
struct ShapeTimes {
  StepTimes bound, expected;
  bool has_expected = false;
  std::optional<Verdict> mixed_verdict, decode_verdict;
  std::vector<StepTimes> stage_bound, stage_expected;
};

/// `batch` is a micro-batch's (an engine's) with `micro` > 1, the steps its steps on each stage.
Result<ShapeTimes> TimesOf(const TransformerConfig& c, Workload w, const CostModel& m,
                           const PlanRequest& r, int64_t batch, const ServingShape& shape,
                           int64_t micro) {
  w.batch = batch;
  w.prompt = r.prompt;
  // Decode cost is affine in the context, so the mean step equals the step at the mean context.
  w.context = r.MeanDecodeContext();
  w.chunk = 0;
  ShapeTimes t;
  Result<PhaseResult> dec = RunOne(c, w, m, Phase::kDecode);
  if (!dec.ok()) return dec.status();
  w.chunk = shape.one_tokens;
  w.chunk_offset = shape.one_offset;
  w.chunk_seqs = 1;
  Result<PhaseResult> one = RunOne(c, w, m, Phase::kDecode);
  if (!one.ok()) return one.status();
  PhaseResult full = *one;
  if (shape.full_seqs != 1 || shape.full_tokens != shape.one_tokens ||
      shape.full_offset != shape.one_offset) {
    w.chunk_seqs = shape.full_seqs;
    w.chunk = shape.full_tokens;
    w.chunk_offset = shape.full_offset;
    Result<PhaseResult> f = RunOne(c, w, m, Phase::kDecode);
    if (!f.ok()) return f.status();
    full = *f;
  }
  t.mixed_verdict = one->totals.verdict;
  t.decode_verdict = dec->totals.verdict;
  if (micro <= 1) {
    t.bound = {dec->totals.time_s, one->totals.time_s, full.totals.time_s};
    t.has_expected =
        dec->totals.has_expected && one->totals.has_expected && full.totals.has_expected;
    if (t.has_expected) {
      t.expected = {dec->totals.expected_s, one->totals.expected_s, full.totals.expected_s};
    }
    return t;
  }
  Result<PipelineCycle> cd = CycleOf(*dec, c.layers, micro, m);
  if (!cd.ok()) return cd.status();
  Result<PipelineCycle> co = CycleOf(*one, c.layers, micro, m);
  if (!co.ok()) return co.status();
  Result<PipelineCycle> cf = CycleOf(full, c.layers, micro, m);
  if (!cf.ok()) return cf.status();
  t.has_expected = cd->has_expected && co->has_expected && cf->has_expected;
  for (size_t s = 0; s < static_cast<size_t>(micro); ++s) {
    t.stage_bound.push_back({cd->stage_bound_s[s], co->stage_bound_s[s], cf->stage_bound_s[s]});
    if (t.has_expected) {
      t.stage_expected.push_back(
          {cd->stage_expected_s[s], co->stage_expected_s[s], cf->stage_expected_s[s]});
    }
  }
  return t;
}

/// The cycles of a pipeline whose stages take `stages` (one micro-batch's steps on each), as
/// one engine (micro-batch) sees them: between two of its steps every stage works once on each
/// micro-batch, its own step of that kind and the others' steps, which carry prefill as often
/// as its own do (their mean, from the engine's mix of steps under `load`); the busiest stage
/// sets the cycle, and it is never shorter than the engine's own step through every stage.
struct Cycles {
  StepTimes t;
  double decode_only = 0;  ///< the cycle when every micro-batch decodes (no prefill anywhere)
};
Cycles CycleTimes(const ServingLoad& load, const ServingShape& shape,
                  const std::vector<StepTimes>& stages) {
  const double n = static_cast<double>(stages.size());
  Cycles out;
  StepTimes through;  // the engine's own step through every stage
  double busiest_decode = 0;
  for (const StepTimes& t : stages) {
    const double mean = Serve(load, shape, t, 50).step_s;
    out.t.decode = std::max(out.t.decode, t.decode + (n - 1) * mean);
    out.t.one = std::max(out.t.one, t.one + (n - 1) * mean);
    out.t.full = std::max(out.t.full, t.full + (n - 1) * mean);
    through.decode += t.decode;
    through.one += t.one;
    through.full += t.full;
    busiest_decode = std::max(busiest_decode, t.decode);
  }
  out.t.decode = std::max(out.t.decode, through.decode);
  out.t.one = std::max(out.t.one, through.one);
  out.t.full = std::max(out.t.full, through.full);
  out.decode_only = std::max(n * busiest_decode, through.decode);
  return out;
}

/// The prefill room's utilization a plan serves at most (ServingShape::utilization): at 0.9 the
/// mean wait for room is 4.5 prompt services (M/D/1), and it grows without end towards 1.
constexpr double kMaxUtilization = 0.9;

/// A replica's load under `r`: `batch` requests in flight, the request's lengths, prefix cache
/// and spreads (pointing into `r`), the token budget.
ServingLoad LoadOf(const PlanRequest& r, int64_t batch, int64_t budget) {
  ServingLoad load{batch, r.prompt, r.output, budget, r.CachedTokens()};
  if (r.prompt_lengths.has_value()) load.prompts = &*r.prompt_lengths;
  if (r.output_lengths.has_value()) load.outputs = &*r.output_lengths;
  return load;
}

/// Micro-batches a replica keeps in flight: one per pipeline stage on GPUs (each stage works on
/// them in turn, as vLLM's virtual engines and TensorRT-LLM's micro-batches do) when its KV room
/// holds a request for each; else 1, the stages one after another (a model split over SRAM
/// chips is costed so, as its bound-only figures always were).
int64_t MicroBatches(const Workload& staged, const Device& d, int64_t kv_room) {
  const int64_t stages = staged.Stages();
  return stages > 1 && d.kind == "gpu" && kv_room >= stages ? stages : 1;
}

/// One operating point: `batch` requests in flight on each of a replica's `micro` engines (its
/// micro-batches; 1: the replica is one engine), the replica of `chips` devices. The point's
/// batch is the replica's, micro x batch; its serving figures are one engine's.
Result<PlanPoint> Point(const TransformerConfig& c, const Workload& w, const CostModel& m,
                        const PlanRequest& r, int64_t budget, int64_t chips, int64_t micro,
                        int64_t batch, const std::string& label) {
  const ServingLoad load = LoadOf(r, batch, budget);
  Result<ServingShape> shape = ShapeOf(load);
  if (!shape.ok()) return shape.status();
  Result<ShapeTimes> times = TimesOf(c, w, m, r, batch, *shape, micro);
  if (!times.ok()) return times.status();
  // The decode-only step (or cycle): what output tokens cost.
  double decode_only = times->bound.decode;
  if (micro > 1) {
    const Cycles bound = CycleTimes(load, *shape, times->stage_bound);
    times->bound = bound.t;
    decode_only = bound.decode_only;
    if (times->has_expected) times->expected = CycleTimes(load, *shape, times->stage_expected).t;
  }
  // Per-device figures divide an engine's by its share of the replica's chips.
  const double tp = static_cast<double>(chips) / static_cast<double>(micro);
  PlanPoint p;
  p.label = label;
  p.batch = batch * micro;
  p.chips = chips;
  p.micro_batches = micro;
  p.shape = *shape;
  p.serving = Serve(load, *shape, times->bound, 50);
  if (micro > 1) {
    // The prefill's share of the mean cycle: what it adds to the decode-only cycle.
    p.serving.prefill_share =
        p.serving.step_s > 0 ? std::max(0.0, p.serving.step_s - decode_only) / p.serving.step_s : 0;
  }
  p.ttft_s = p.serving.ttft_s;
  p.tpot_s = p.serving.tpot_s;
  p.request_s = p.serving.e2e_s;
  p.input_tokens_per_s_per_gpu = p.serving.input_tokens_per_s / tp;
  p.output_tokens_per_s_per_gpu = p.serving.output_tokens_per_s / tp;
  if (r.price_per_hour > 0) {
    // Per step: the decode-only step is the output tokens' (batch of them), the rest the
    // arriving prompts' (arrivals x prompt tokens).
    const double dollars_per_s = r.price_per_hour / 3600 * tp;
    const double step = p.serving.step_s;
    p.cost_per_m_output = dollars_per_s * decode_only / static_cast<double>(batch) * 1e6;
    p.cost_per_m_input = dollars_per_s * step * p.serving.prefill_share /
                         (shape->arrivals_per_step * static_cast<double>(r.prompt)) * 1e6;
  }
  if (times->has_expected) {
    p.expected_serving = Serve(load, *shape, times->expected, 50);
    p.expected_ttft_s = p.expected_serving.ttft_s;
    p.expected_tpot_s = p.expected_serving.tpot_s;
    p.expected_request_s = p.expected_serving.e2e_s;
    p.expected_output_tokens_per_s_per_gpu = p.expected_serving.output_tokens_per_s / tp;
  }
  for (const LatencyTarget& target : r.targets) {
    const ServingFigures f = Serve(
        load, *shape, times->has_expected ? times->expected : times->bound, target.percentile);
    TargetCheck check;
    check.target = target;
    check.expected = times->has_expected;
    check.value_s = target.metric == "ttft"   ? f.ttft_s
                    : target.metric == "tpot" ? f.tpot_s
                                              : f.e2e_s;
    check.met = check.value_s <= target.seconds;
    p.checks.push_back(check);
  }
  p.prefill_bound = times->mixed_verdict;
  p.decode_bound = times->decode_verdict;
  return p;
}

/// Whether a point meets every target it was checked against.
bool MeetsAll(const PlanPoint& p) {
  return std::all_of(p.checks.begin(), p.checks.end(), [](const TargetCheck& c) { return c.met; });
}

/// The largest value in [lo, hi] where `ok` holds, `ok` holding up to some value and not after
/// (lo - 1 when it fails at lo).
template <typename Ok>
Result<int64_t> LargestWhere(int64_t lo, int64_t hi, Ok ok) {
  Result<bool> first = ok(lo);
  if (!first.ok()) return first.status();
  if (!*first) return lo - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    Result<bool> at = ok(mid);
    if (!at.ok()) return at.status();
    if (*at) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

/// Marks the points no other point beats on both speeds (ties: the first kept).
void MarkFrontier(std::vector<ParetoPoint>& points) {
  for (size_t i = 0; i < points.size(); ++i) {
    const ParetoPoint& a = points[i];
    bool beaten = false;
    for (size_t j = 0; j < points.size() && !beaten; ++j) {
      const ParetoPoint& b = points[j];
      if (i == j) continue;
      const bool as_good = b.tokens_per_s_per_gpu >= a.tokens_per_s_per_gpu &&
                           b.tokens_per_s_per_user >= a.tokens_per_s_per_user;
      const bool better = b.tokens_per_s_per_gpu > a.tokens_per_s_per_gpu ||
                          b.tokens_per_s_per_user > a.tokens_per_s_per_user;
      beaten = as_good && (better || j < i);
    }
    points[i].frontier = !beaten;
  }
}

/// The largest power of two within the device's first link's all-to-all group (8 where the
/// data states none; 1 without a link): the largest tensor-parallel degree a sized fleet (no
/// --gpus) tries, and on GPUs whose layouts may take pipeline stages, any fleet.
int64_t SizingTpLimit(const Device& d) {
  if (d.links.empty()) return 1;
  const int64_t group = d.links.front().max_devices > 0 ? d.links.front().max_devices : 8;
  int64_t tp = 1;
  while (tp * 2 <= group) tp *= 2;
  return tp;
}

/// Devices a sized fleet may use at most.
constexpr double kMostGpus = 1e6;

/// Devices one replica of a sized fleet may span at most (tensor parallelism x pipeline stages).
constexpr int64_t kMostSizedReplicaChips = 1024;

/// How one layout carries r's load (PlanRequest::rate or concurrency): a replica is `micro`
/// engines (its micro-batches; 1 without pipeline stages), `point(b)` costs a replica whose
/// engines hold b requests each; `v` holds an engine's hold limit, the replica's served point
/// (`largest`: the largest batch that meets the targets, or the smallest when none does), and
/// `engine_room` is what an engine's share of the KV cache holds. An engine's share of the load
/// is the replica's over its engines.
///
/// A replica's request rate at batch b is b / (output x its mean step). With a rate, the batch
/// in flight is where that rate first reaches the replica's share, as a replica filling up from
/// empty finds it: Little's law iterated from batch 1, b <- ceil(share x output x step(b)).
/// Where the mean step grows with the batch this climbs to the smallest batch that keeps up
/// (each iterate is at most it), without assuming the rate grows with the batch: it does not
/// everywhere (expected times step up at tile boundaries).
template <typename PointAt>
Result<LoadServed> CarryLoad(const PlanRequest& r, const PlanVariant& v, int64_t chips,
                             int64_t micro, int64_t engine_room, PointAt point) {
  LoadServed ls;
  ls.expected = v.largest.expected_request_s > 0;
  const double output = static_cast<double>(r.output);
  auto rate_of = [&](const PlanPoint& p) {
    return (ls.expected ? p.expected_serving.output_tokens_per_s : p.serving.output_tokens_per_s) /
           output;
  };
  ls.targets_reachable = v.meets_targets;
  const double engines = static_cast<double>(micro);
  ls.hold_limit = v.hold_limit * micro;
  ls.kv_binds = v.hold_limit >= engine_room;
  ls.capacity_batch = v.largest.batch;
  ls.capacity_rate = rate_of(v.largest) * engines;
  const bool by_rate = r.rate > 0;
  // A replica's batch at a share of the load, or `overloaded` when it does not keep up within
  // the hold limit.
  struct At {
    int64_t batch = 1;
    bool overloaded = false;
  };
  auto batch_for = [&](double share) -> Result<At> {
    if (!by_rate) {
      const int64_t b = static_cast<int64_t>(std::ceil(share));
      return At{std::min(b, v.hold_limit), b > v.hold_limit};
    }
    int64_t b = 1;
    while (true) {
      Result<const PlanPoint*> p = point(b);
      if (!p.ok()) return p.status();
      const double rate = rate_of(**p);
      if (rate >= share) return At{b, false};
      // b < share x output x step(b): the next iterate is above b.
      const double step = static_cast<double>(b) / (rate * output);
      const double next = std::ceil(share * output * step);
      if (!(next <= static_cast<double>(v.hold_limit))) return At{v.hold_limit, true};
      b = std::max(b + 1, static_cast<int64_t>(next));
    }
  };
  // Whether n replicas carry the load: each one's share kept up with, the targets met there.
  // A replica's share, and its most loaded engine's.
  auto share_of = [&](int64_t n) {
    return by_rate ? r.rate / static_cast<double>(n)
                   : std::ceil(static_cast<double>(r.concurrency) / static_cast<double>(n));
  };
  auto engine_share_of = [&](int64_t n) {
    return by_rate
               ? r.rate / (static_cast<double>(n) * engines)
               : std::ceil(static_cast<double>(r.concurrency) / (static_cast<double>(n) * engines));
  };
  auto carried_by = [&](int64_t n) -> Result<bool> {
    Result<At> at = batch_for(engine_share_of(n));
    if (!at.ok()) return at.status();
    if (at->overloaded) return false;
    Result<const PlanPoint*> p = point(at->batch);
    if (!p.ok()) return p.status();
    return MeetsAll(**p);
  };
  // The fewest replicas that carry it: from the capacity's count, fewer where the rate at the
  // served batch dips below a smaller batch's, more where a batch below the served one misses a
  // target. No batch meets the targets: the replicas that put batch 1 on each (the closest).
  const double chips_d = static_cast<double>(chips);
  const int64_t most = static_cast<int64_t>(kMostGpus) / chips;
  const double first =
      by_rate
          ? std::ceil(r.rate / ls.capacity_rate)
          : std::ceil(static_cast<double>(r.concurrency) / static_cast<double>(ls.capacity_batch));
  int64_t needed = first * chips_d <= kMostGpus ? static_cast<int64_t>(first) : most + 1;
  if (ls.targets_reachable && needed <= most) {
    while (needed > 1) {
      Result<bool> fewer = carried_by(needed - 1);
      if (!fewer.ok()) return fewer.status();
      if (!*fewer) break;
      --needed;
    }
    while (needed <= most) {
      Result<bool> ok = carried_by(needed);
      if (!ok.ok()) return ok.status();
      if (*ok) break;
      ++needed;
    }
  }
  ls.too_many = needed > most;
  if (ls.too_many && r.gpus == 0) {
    return Status::Invalid(
        by_rate ? "--rate" : "--concurrency",
        fmt::format("carrying it takes more than {:.0f} devices at tp {} ({} per replica)",
                    kMostGpus, v.tp,
                    by_rate ? fmt::format("{:.3g} requests/s", ls.capacity_rate)
                            : fmt::format("{} requests", ls.capacity_batch)));
  }
  ls.gpus_needed = ls.too_many ? 0 : needed * chips;
  ls.replicas = r.gpus > 0 ? r.gpus / chips : needed;
  ls.gpus = r.gpus > 0 ? r.gpus : ls.gpus_needed;
  const double replicas = static_cast<double>(ls.replicas);
  ls.share = share_of(ls.replicas);
  Result<At> at = batch_for(engine_share_of(ls.replicas));
  if (!at.ok()) return at.status();
  ls.overloaded = at->overloaded;
  Result<const PlanPoint*> p = point(at->batch);
  if (!p.ok()) return p.status();
  ls.point = **p;
  ls.carried = !ls.overloaded && MeetsAll(ls.point);
  if (!by_rate && micro > 1) {
    // The point is its busiest micro-batch's; the replica holds its share (at most what its
    // micro-batches hold), not micro-batches of the busiest one's size.
    ls.point.batch = std::min(static_cast<int64_t>(ls.share), v.hold_limit * micro);
  }
  const int64_t batch = ls.point.batch;  // the replica's
  if (ls.overloaded) {
    ls.point.label = fmt::format("at the load: more than a replica holds (batch {})", batch);
  } else if (by_rate) {
    ls.point.label = fmt::format("at the load: {} a replica (batch {})",
                                 Count(ls.share, "request/s", "requests/s"), batch);
  } else if (micro > 1) {
    // The replica's share, its busiest micro-batch holding at most one more than the others.
    ls.point.label = fmt::format(
        "at the load: {} in flight a replica ({} in its busiest "
        "micro-batch)",
        Count(static_cast<double>(batch), "request"), at->batch);
  } else {
    ls.point.label = fmt::format("at the load: {} in flight a replica",
                                 Count(static_cast<double>(batch), "request"));
  }
  if (by_rate) {
    ls.fleet_requests_per_s = ls.overloaded ? replicas * engines * rate_of(ls.point) : r.rate;
  } else {
    // concurrency = q x engines + k: k engines hold q + 1 requests, the others q (each at
    // most the hold limit: the rest wait).
    const int64_t all = ls.replicas * micro;
    const int64_t q = r.concurrency / all;
    const int64_t k = r.concurrency % all;
    auto rate_at = [&](int64_t b) -> Result<double> {
      if (b < 1) return 0.0;
      Result<const PlanPoint*> q_point = point(std::min(b, v.hold_limit));
      if (!q_point.ok()) return q_point.status();
      return rate_of(**q_point);
    };
    Result<double> low = rate_at(q);
    Result<double> high = rate_at(q + 1);
    if (!low.ok()) return low.status();
    if (!high.ok()) return high.status();
    ls.fleet_requests_per_s = static_cast<double>(k) * *high + static_cast<double>(all - k) * *low;
  }
  ls.fleet_output_tokens_per_s = ls.fleet_requests_per_s * output;
  if (r.price_per_hour > 0 && ls.fleet_output_tokens_per_s > 0) {
    ls.cost_per_m_output =
        r.price_per_hour / 3600 * static_cast<double>(ls.gpus) / ls.fleet_output_tokens_per_s * 1e6;
  }
  return ls;
}

/// The mean request time a load's point gives, expected or at the bound as the load is.
double LoadRequestSeconds(const LoadServed& l) {
  return l.expected ? l.point.expected_request_s : l.point.request_s;
}

/// The largest ratio of a target's value to its limit at the load's point (0: no targets).
double WorstRatio(const PlanPoint& p) {
  double worst = 0;
  for (const TargetCheck& c : p.checks) worst = std::max(worst, c.value_s / c.target.seconds);
  return worst;
}

/// Whether layout a carries the load better than b. Carried first: a sized fleet with fewer
/// devices, then the faster request. Neither carried: one where some batch meets the targets,
/// one whose replicas keep up, then the smaller worst miss of a target (overloaded: the more
/// requests completed).
bool CarriesBetter(const LoadServed& a, const LoadServed& b, bool sized) {
  if (a.carried != b.carried) return a.carried;
  if (a.carried) {
    if (sized && a.gpus != b.gpus) return a.gpus < b.gpus;
    return LoadRequestSeconds(a) < LoadRequestSeconds(b);
  }
  if (a.targets_reachable != b.targets_reachable) return a.targets_reachable;
  if (a.overloaded != b.overloaded) return !a.overloaded;
  if (a.overloaded) return a.fleet_requests_per_s > b.fleet_requests_per_s;
  return WorstRatio(a.point) < WorstRatio(b.point);
}

Result<PlanVariant> PlanFor(const TransformerConfig& c, const Workload& w, const Device& d,
                            const PlanRequest& r, std::string name) {
  PlanVariant v;
  v.name = std::move(name);
  const DType act = w.dtype.value_or(c.torch_dtype);
  v.act = act;
  v.weight = w.weight_dtype.value_or(act);
  v.dtypes = fmt::format("activations {}, weights {}, kv {}", NameOf(act),
                         NameOf(w.weight_dtype.value_or(act)), NameOf(w.kv_dtype.value_or(act)));
  const int64_t context = r.KvContext();
  // Pipeline stages per tp degree: as `base` gives them, or on a device with a model split the
  // fewest that hold one sequence (ResolveStages).
  auto stages_in = [&](const Workload& base, int64_t tp) -> int64_t {
    Workload wt = base;
    wt.tp = tp;
    wt.prompt = r.prompt;
    wt.batch = 1;
    wt.context = context;
    Result<Workload> staged = ResolveStages(c, wt, d);
    return staged.ok() ? staged->Stages() : 0;
  };
  auto fits_in = [&](const Workload& base, int64_t tp, int64_t batch) {
    Workload wt = base;
    wt.tp = tp;
    wt.prompt = r.prompt;
    wt.pp = stages_in(base, tp);
    if (wt.pp == 0) return false;
    Result<MemoryFootprint> f = Footprint(c, wt, d, batch, context);
    return f.ok() && f->fits();
  };
  if (r.tp == 0) {
    // Every power-of-two degree that divides the heads: the one whose fleet serves the most
    // output tokens per second (more devices per replica leave more room for the KV cache
    // beside the weights, so a larger batch, at the price of more communication; devices left
    // over by a degree serve nothing).
    std::vector<PlanLayout> layouts;
    std::vector<PlanVariant> planned;  // parallel to the layouts that fit
    std::vector<size_t> planned_at;
    std::optional<Status> first_error;  // of a degree that fits one sequence but fails otherwise
    const double gpus = static_cast<double>(r.gpus);
    // Pipeline stages join the search on GPUs where --pp is not given: tensor parallelism
    // within one link domain (the largest power of two it connects), and where no such degree
    // holds the model, each of them with 2, 4, ... stages across domains, as vLLM's guide to
    // multi-node serving sets them (tp: the GPUs of a node, pp: the nodes).
    const bool domains = d.kind == "gpu" && !d.links.empty();
    const bool search_stages = domains && w.pp == 0;
    const int64_t domain = SizingTpLimit(d);
    const int64_t most_tp = r.gpus > 0 ? (domains ? std::min(r.gpus, domain) : r.gpus) : domain;
    // One layout: tp `tp` on `base`'s stages; `listed_if_not_fit`: listed even when one
    // sequence does not fit.
    auto try_layout = [&](const Workload& base, int64_t tp, bool listed_if_not_fit) {
      Workload wt = base;
      wt.tp = tp;
      if (!BuildLlmGraph(c, wt, Phase::kDecode).ok()) return;  // tp must divide heads
      PlanLayout l;
      l.tp = tp;
      l.pp = std::max<int64_t>(1, stages_in(base, tp));
      if (fits_in(base, tp, 1)) {
        if (r.gpus > 0 && l.tp * l.pp > r.gpus) {
          l.too_many_chips = true;
          layouts.push_back(l);
          return;
        }
        PlanRequest at = r;
        at.tp = tp;
        Result<PlanVariant> tried = PlanFor(c, base, d, at, v.name);
        if (!tried.ok()) {
          if (!first_error.has_value()) first_error = tried.status();
          l.not_planned = tried.status().what();
          layouts.push_back(l);
          return;
        }
        const PlanPoint& big = tried->largest;
        const double used = static_cast<double>(big.chips * tried->replicas);
        l.fits = true;
        l.pp = tried->pp;
        l.micro_batches = tried->micro_batches;
        l.replicas = tried->replicas;
        l.idle_gpus = tried->idle_gpus;
        l.weights_bytes = tried->weights_bytes;
        l.max_batch = tried->max_batch;
        l.batch = big.batch;
        l.meets_targets = tried->meets_targets;
        for (const TargetCheck& check : tried->batch1.checks) {
          l.worst_miss = std::max(l.worst_miss, check.value_s / check.target.seconds);
        }
        l.fleet_output_tokens_per_s = big.output_tokens_per_s_per_gpu * used;
        l.expected_fleet_output_tokens_per_s = big.expected_output_tokens_per_s_per_gpu * used;
        l.load = tried->load;
        if (r.price_per_hour > 0 && r.gpus > 0) {
          const double dollars_per_s = r.price_per_hour / 3600 * gpus;
          l.fleet_cost_per_m_output = dollars_per_s / l.fleet_output_tokens_per_s * 1e6;
          if (l.expected_fleet_output_tokens_per_s > 0) {
            l.expected_fleet_cost_per_m_output =
                dollars_per_s / l.expected_fleet_output_tokens_per_s * 1e6;
          }
        }
        planned_at.push_back(layouts.size());
        planned.push_back(std::move(tried).value());
      } else if (!listed_if_not_fit) {
        return;
      }
      layouts.push_back(l);
    };
    for (int64_t tp = 1; tp <= most_tp; tp *= 2) try_layout(w, tp, true);
    const bool one_domain_holds = std::any_of(layouts.begin(), layouts.end(), [](const auto& l) {
      return l.fits || l.too_many_chips || !l.not_planned.empty();
    });
    const int64_t most_chips = r.gpus > 0 ? r.gpus : kMostSizedReplicaChips;
    // Stages where no degree holds the model, and wherever --gpus spans more than one domain
    // (a degree may hold the model yet leave too little room for its KV cache).
    const bool add_stages = search_stages && (!one_domain_holds || r.gpus > domain);
    if (add_stages) {
      for (int64_t tp = 1; tp <= most_tp; tp *= 2) {
        for (int64_t pp = 2; tp * pp <= most_chips && pp <= c.layers; pp *= 2) {
          Workload wp = w;
          wp.pp = pp;
          try_layout(wp, tp, false);
        }
      }
    }
    if (planned.empty()) {
      if (first_error.has_value()) return *first_error;
      for (const PlanLayout& l : layouts) {
        if (l.too_many_chips) {
          return Status::Invalid(
              "--gpus", fmt::format("one replica needs {} chips (tp {} x {} pipeline stages) to "
                                    "hold the model; --gpus is {}",
                                    l.tp * l.pp, l.tp, l.pp, r.gpus));
        }
      }
      const std::string up_to = r.gpus > 0 && most_tp == r.gpus
                                    ? fmt::format("{} (--gpus)", most_tp)
                                    : fmt::format("{} (the device's link group)", most_tp);
      if (search_stages) {
        return Status::Invalid(
            "--gpus", fmt::format("the model does not fit {} at any power-of-two tensor-parallel "
                                  "degree up to {}, nor with 2, 4, ... pipeline stages on up to "
                                  "{} devices a replica",
                                  d.id, up_to, most_chips));
      }
      if (domains && w.pp > 1) {
        return Status::Invalid(
            "--gpus", fmt::format("the model does not fit {} at any power-of-two tensor-parallel "
                                  "degree up to {} with {} pipeline stages",
                                  d.id, up_to, w.pp));
      }
      if (r.gpus == 0) {
        return Status::Invalid("--gpus",
                               fmt::format("the model does not fit {} at any power-of-two "
                                           "tensor-parallel degree up to {} (the device's "
                                           "link group); give --gpus to try larger ones",
                                           d.id, most_tp));
      }
      return Status::Invalid("--gpus", fmt::format("the model does not fit {} x {} at any "
                                                   "power-of-two tensor-parallel degree",
                                                   r.gpus, d.id));
    }
    // Expected times rank the degrees only where every one of them has them; degrees that meet
    // the targets come before those that do not.
    bool by_expected = true;
    for (size_t i : planned_at)
      by_expected = by_expected && layouts[i].expected_fleet_output_tokens_per_s > 0;
    auto score = [&](size_t i) {
      const double rate = by_expected ? layouts[i].expected_fleet_output_tokens_per_s
                                      : layouts[i].fleet_output_tokens_per_s;
      // A degree that misses comes after every one that meets them, the closest first (the
      // smallest worst ratio of value to target at batch 1).
      return layouts[i].meets_targets ? rate : -layouts[i].worst_miss;
    };
    size_t best = 0;
    for (size_t k = 1; k < planned.size(); ++k) {
      // A tie keeps the smaller degree. With a load: the layout that carries it best.
      const bool better = r.HasLoad()
                              ? CarriesBetter(*planned[k].load, *planned[best].load, r.gpus == 0)
                              : score(planned_at[k]) > score(planned_at[best]);
      if (better) best = k;
    }
    // The frontier over every degree (one device: expected times for all of them or none).
    std::vector<ParetoPoint> all;
    for (const PlanVariant& p : planned) all.insert(all.end(), p.pareto.begin(), p.pareto.end());
    MarkFrontier(all);
    PlanVariant chosen = std::move(planned[best]);
    chosen.pareto = std::move(all);
    chosen.layouts = std::move(layouts);
    chosen.most_tp = most_tp;
    chosen.stages_searched = add_stages;
    chosen.ranked_by_expected = by_expected;
    return chosen;
  }
  v.tp = r.tp;
  if (!fits_in(w, v.tp, 1)) {
    return Status::Invalid(
        "--tp",
        fmt::format(
            "{} does not fit on {} devices at tp {}{} (one sequence of {} tokens){}",
            c.architecture, v.tp * std::max<int64_t>(1, w.pp), v.tp,
            w.pp > 1 ? fmt::format(" x {} pipeline stages", w.pp) : "", context,
            w.pp == 0 && d.kind == "gpu" ? "; give --pp N to split its layers over N stages" : ""));
  }
  v.pp = stages_in(w, v.tp);
  const int64_t chips = v.tp * v.pp;
  if (r.gpus > 0 && v.pp > 1 && chips > r.gpus) {
    return Status::Invalid("--gpus", fmt::format("one replica needs {} chips (tp {} x {} pipeline "
                                                 "stages) to hold the model; --gpus is {}",
                                                 chips, v.tp, v.pp, r.gpus));
  }
  if (r.gpus > 0 && v.tp > r.gpus) {
    return Status::Invalid("--tp",
                           fmt::format("tp {} exceeds the {} devices (--gpus)", v.tp, r.gpus));
  }
  if (v.tp > 1 && d.links.empty()) {
    return Status::Invalid("--gpus", "the model needs tensor parallelism " + std::to_string(v.tp) +
                                         " but device '" + d.id + "' lists no interconnect");
  }
  // A sized fleet (no --gpus) has as many replicas as its load needs (below).
  v.replicas = r.gpus > 0 ? r.gpus / chips : 1;
  v.idle_gpus = r.gpus > 0 ? r.gpus - v.replicas * chips : 0;
  Workload wt = w;
  wt.tp = v.tp;
  wt.pp = v.pp;
  wt.prompt = r.prompt;
  Result<MemoryFootprint> one = Footprint(c, wt, d, 1, context);
  if (!one.ok()) return one.status();
  v.weights_bytes = one->weights_bytes;
  v.kv_bytes_per_sequence = one->kv_cache_bytes;
  // The largest batch on the replica's chips (as chosen for one sequence).
  v.max_batch = LargestBatch(c, wt, d, context);
  // With pipeline stages on GPUs, a micro-batch per stage, each an engine of its own (its
  // batch, its token budget, its steps one cycle of the pipeline apart): the searches below
  // run over one engine's batch, and the replica's is micro_batches times it.
  v.micro_batches = MicroBatches(wt, d, v.max_batch);
  const int64_t micro = v.micro_batches;
  const int64_t engine_room = v.max_batch / micro;
  const CostModel m(d, r.cost);
  v.budget = r.budget > 0 ? r.budget : DefaultTokenBudget(d);
  // The largest batch whose arrivals the budget prefills as they come (an engine's, until the
  // end: then the replica's).
  v.hold_limit = LargestBatchHeld(engine_room, LoadOf(r, 1, v.budget), kMaxUtilization);
  if (v.hold_limit < 1) {
    return Status::Invalid(
        "--max-batched-tokens",
        fmt::format(
            "a token budget of {} per step{} cannot prefill prompts of {} as fast as requests "
            "of {} arrive, even one at a time",
            v.budget,
            r.budget > 0 ? "" : " (vLLM's default on this device; set --max-batched-tokens)",
            r.CachedTokens() > 0
                ? fmt::format("{} fresh tokens ({} with {} cached)", r.prompt - r.CachedTokens(),
                              r.prompt, r.CachedTokens())
                : Count(static_cast<double>(r.prompt), "token"),
            Count(static_cast<double>(r.output), "output token")));
  }
  std::map<int64_t, PlanPoint> at;  // points costed so far, by batch
  auto point = [&](int64_t b) -> Result<const PlanPoint*> {
    auto it = at.find(b);
    if (it == at.end()) {
      Result<PlanPoint> pt = Point(c, wt, m, r, v.budget, chips, micro, b, "");
      if (!pt.ok()) return pt.status();
      it = at.emplace(b, std::move(pt).value()).first;
    }
    return &it->second;
  };
  // Each target's boundary: latencies grow with the batch (more rows, more arriving prompts,
  // a fuller queue), so the largest batch that meets it is found by bisection.
  int64_t serve = v.hold_limit;
  for (size_t i = 0; i < r.targets.size(); ++i) {
    Result<int64_t> limit = LargestWhere(1, v.hold_limit, [&](int64_t b) -> Result<bool> {
      Result<const PlanPoint*> pt = point(b);
      if (!pt.ok()) return pt.status();
      return (*pt)->checks[i].met;
    });
    if (!limit.ok()) return limit.status();
    v.boundaries.push_back({r.targets[i], std::max<int64_t>(0, *limit) * micro});
    serve = std::min(serve, *limit);
  }
  // Latencies grow with the batch almost everywhere; where they do not, the smallest boundary
  // may still miss another target: step down until the served batch meets them all.
  auto meets_all = [&](int64_t b) -> Result<bool> {
    Result<const PlanPoint*> pt = point(b);
    if (!pt.ok()) return pt.status();
    return MeetsAll(**pt);
  };
  while (serve >= 1 && !r.targets.empty()) {
    Result<bool> ok = meets_all(serve);
    if (!ok.ok()) return ok.status();
    if (*ok) break;
    --serve;
  }
  if (serve < 1) {
    v.meets_targets = false;
    serve = 1;
  }
  Result<const PlanPoint*> p1 = point(1);
  if (!p1.ok()) return p1.status();
  v.batch1 = **p1;
  v.batch1.label =
      micro > 1 ? fmt::format("batch {} (one per micro-batch; memory-bound lower end)", micro)
                : "batch 1 (memory-bound lower end)";
  Result<const PlanPoint*> pm = point(serve);
  if (!pm.ok()) return pm.status();
  v.largest = **pm;
  if (!v.meets_targets) {
    v.largest.label = micro > 1 ? fmt::format(
                                      "batch {}, one per micro-batch, the closest (no batch "
                                      "meets the targets)",
                                      micro)
                                : "batch 1, the closest (no batch meets the targets)";
  } else if (!r.targets.empty() && serve < v.hold_limit) {
    v.largest.label = fmt::format("largest batch that meets the targets ({})", serve * micro);
  } else if (v.hold_limit < engine_room) {
    v.largest.label =
        fmt::format("largest batch the token budget keeps up with ({})", serve * micro);
  } else {
    v.largest.label = fmt::format("largest batch that fits ({})", serve * micro);
  }
  // The frontier's samples: powers of two up to the hold limit, and the served batch.
  std::vector<int64_t> samples;
  for (int64_t b = 1; b < v.hold_limit; b *= 2) samples.push_back(b);
  samples.push_back(v.hold_limit);
  if (serve != v.hold_limit) samples.push_back(serve);
  for (int64_t b : samples) {
    Result<const PlanPoint*> pt = point(b);
    if (!pt.ok()) return pt.status();
    const PlanPoint& q = **pt;
    ParetoPoint pp;
    pp.tp = v.tp;
    pp.pp = v.pp;
    pp.micro_batches = micro;
    pp.batch = q.batch;
    pp.expected = q.expected_request_s > 0;
    pp.ttft_s = pp.expected ? q.expected_ttft_s : q.ttft_s;
    pp.tpot_s = pp.expected ? q.expected_tpot_s : q.tpot_s;
    pp.tokens_per_s_per_gpu =
        pp.expected ? q.expected_output_tokens_per_s_per_gpu : q.output_tokens_per_s_per_gpu;
    pp.tokens_per_s_per_user = pp.tpot_s > 0 ? 1 / pp.tpot_s : 0;
    pp.meets_targets = MeetsAll(q);
    v.pareto.push_back(pp);
  }
  MarkFrontier(v.pareto);
  if (r.HasLoad()) {
    Result<LoadServed> load = CarryLoad(r, v, chips, micro, engine_room, point);
    if (!load.ok()) return load.status();
    v.load = std::move(load).value();
    v.replicas = v.load->replicas;
  }
  Workload wl = wt;
  // The FLOP limit: the largest batch's FLOPs per request at the tensor peak on every device.
  wl.batch = v.largest.batch;
  wl.context = r.MeanDecodeContext();
  Result<PhaseResult> dec = RunOne(c, wl, m, Phase::kDecode);
  if (!dec.ok()) return dec.status();
  // The batch's prompts: prefilled whole, or with a prefix cache their fresh tokens after the
  // cached ones (a step of the batch's decode rows and one such chunk per request, less the
  // decode step).
  double prefill_flops = 0;
  if (r.CachedTokens() == 0) {
    Result<PhaseResult> pre = RunOne(c, wl, m, Phase::kPrefill);
    if (!pre.ok()) return pre.status();
    prefill_flops = pre->totals.flops;
  } else {
    Workload wc = wl;
    wc.chunk = r.prompt - r.CachedTokens();
    wc.chunk_offset = r.CachedTokens();
    wc.chunk_seqs = wl.batch;
    Result<PhaseResult> chunks = RunOne(c, wc, m, Phase::kDecode);
    if (!chunks.ok()) return chunks.status();
    prefill_flops = chunks->totals.flops - dec->totals.flops;
  }
  const double b = static_cast<double>(v.largest.batch);
  v.flops_per_request =
      (prefill_flops + static_cast<double>(r.output) * dec->totals.flops) / b;  // per device
  const DType compute =
      BitsOf(w.weight_dtype.value_or(act)) > BitsOf(act) ? w.weight_dtype.value_or(act) : act;
  const int ceiling = m.ResolveEngine({true, compute});
  const double peak = ceiling >= 0 ? d.compute[ceiling].peak.value : 0;
  PlanPoint& fl = v.flop_limit;
  fl.label = fmt::format("FLOP limit (every FLOP at {})",
                         ceiling >= 0 ? d.compute[ceiling].engine : std::string("peak"));
  fl.batch = v.largest.batch;
  if (peak > 0 && v.flops_per_request > 0) {
    // FLOPs are per device (each of the tp devices holds its shard), so a replica finishes one
    // request's FLOPs in this time when every device runs at peak; its stages share them when
    // they run micro-batches side by side, else they run one after another.
    const double request_s = v.flops_per_request / peak / static_cast<double>(micro);
    const double tp = static_cast<double>(chips);
    fl.chips = chips;
    fl.micro_batches = micro;
    fl.request_s = request_s;
    fl.output_tokens_per_s_per_gpu = static_cast<double>(r.output) / request_s / tp;
    fl.input_tokens_per_s_per_gpu = static_cast<double>(r.prompt) / request_s / tp;
    if (r.price_per_hour > 0) {
      // Split the cost as the largest batch splits its steps between prefill and decode.
      const double pre_share = v.largest.serving.prefill_share;
      const double dollars = r.price_per_hour / 3600 * request_s * tp;
      fl.cost_per_m_input = dollars * pre_share / static_cast<double>(r.prompt) * 1e6;
      fl.cost_per_m_output = dollars * (1 - pre_share) / static_cast<double>(r.output) * 1e6;
    }
    fl.prefill_bound = fl.decode_bound = std::nullopt;  // assumed compute-bound
  }
  v.hold_limit *= micro;  // the replica's, from here on
  return v;
}

/// What vLLM, SGLang and TensorRT-LLM check before they start the layout: tp divides the heads
/// (true of every layout planned) and the vocabulary, the longest request within the model's
/// positions, and the memory the plan fills against what the engines leave free by default.
std::vector<PreflightCheck> Preflight(const TransformerConfig& c, const Workload& w,
                                      const PlanVariant& v, const PlanRequest& r) {
  std::vector<PreflightCheck> out;
  out.push_back({"heads", c.heads % v.tp == 0 && (c.kv_heads % v.tp == 0 || v.tp % c.kv_heads == 0),
                 fmt::format("tp {} and the {} attention heads, {} key/value heads", v.tp, c.heads,
                             c.kv_heads)});
  const bool vocab = c.vocab % v.tp == 0;
  out.push_back({"vocabulary", vocab,
                 vocab ? fmt::format("tp {} divides the vocabulary of {}", v.tp, c.vocab)
                       : fmt::format("tp {} does not divide the vocabulary of {}: engines pad it",
                                     v.tp, c.vocab)});
  // With a spread of lengths, the 99th percentile of each (longer requests: 1% or fewer).
  const int64_t longest = r.LongestAtP99();
  const bool fits = c.max_positions == 0 || longest <= c.max_positions;
  const std::string tokens = r.prompt_lengths.has_value() || r.output_lengths.has_value()
                                 ? "tokens, the 99th percentiles of prompt and output summed"
                                 : "tokens a request";
  out.push_back(
      {"context", fits,
       c.max_positions == 0
           ? fmt::format("{} {} (the config states no position limit)", longest, tokens)
       : fits ? fmt::format("{} {}, within max_position_embeddings {}", longest, tokens,
                            c.max_positions)
              : fmt::format("{} {} exceed max_position_embeddings {}: the engines "
                            "refuse --max-model-len above it without a rope-scaling override",
                            longest, tokens, c.max_positions)});
  // vLLM's gpu_memory_utilization defaults to 0.9 (vllm/engine/arg_utils.py).
  const bool room = w.memory_fraction <= 0.9 + 1e-12;
  out.push_back(
      {"memory", room,
       room ? fmt::format("the plan fills {:.0f}% of each device, as the engines are told",
                          100 * w.memory_fraction)
            : fmt::format("the plan fills {:.0f}% of each device (--memory-fraction {}); vLLM "
                          "keeps 10% free by default (gpu_memory_utilization 0.9) and needs room "
                          "for CUDA graphs and activations: plan with --memory-fraction 0.9 for a "
                          "batch that starts",
                          100 * w.memory_fraction, w.memory_fraction)});
  return out;
}

}  // namespace

int64_t PlanRequest::MeanDecodeContext() const {
  if (!output_lengths.has_value() || output_lengths->fixed()) return prompt + (output + 1) / 2;
  const Lengths& g = *output_lengths;
  return prompt + static_cast<int64_t>(std::floor((g.mean_sq / g.mean + 1) / 2));
}

int64_t PlanRequest::KvContext() const {
  if (!output_lengths.has_value() || output_lengths->fixed()) return prompt + output;
  const Lengths& g = *output_lengths;
  return prompt + static_cast<int64_t>(std::ceil(g.mean_sq / g.mean));
}

namespace {

/// The request with its means taken from its spreads (a spread of one value is none).
PlanRequest WithMeans(PlanRequest r) {
  for (auto [spread, mean] :
       {std::pair{&r.prompt_lengths, &r.prompt}, std::pair{&r.output_lengths, &r.output}}) {
    if (!spread->has_value()) continue;
    *mean = (*spread)->Mean();
    if ((*spread)->fixed() || (*spread)->Cv2() == 0) spread->reset();
  }
  return r;
}

}  // namespace

int64_t PlanRequest::LongestAtP99() const {
  const int64_t p = prompt_lengths.has_value() ? prompt_lengths->AtPercentile(99) : prompt;
  const int64_t g = output_lengths.has_value() ? output_lengths->AtPercentile(99) : output;
  return p + g;
}

int64_t PlanRequest::CachedTokens() const {
  const double cached = std::floor(prefix_hit * static_cast<double>(prompt));
  return std::clamp<int64_t>(static_cast<int64_t>(cached), 0, std::max<int64_t>(0, prompt - 1));
}

int64_t DefaultTokenBudget(const Device& d) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const bool large = d.device_memory().total_capacity_bytes() >= 70 * gib;
  const bool a100 = d.id.rfind("a100", 0) == 0;
  return large && !a100 ? 8192 : 2048;
}

Result<LatencyTarget> ParseLatencyTarget(const std::string& metric, const std::string& text,
                                         const std::string& flag) {
  LatencyTarget t;
  t.metric = metric;
  std::string value = text;
  const size_t at = text.find('@');
  if (at != std::string::npos) {
    value = text.substr(0, at);
    const std::string p = text.substr(at + 1);
    int n = 0;
    if (p.size() < 2 || (p[0] != 'p' && p[0] != 'P') ||
        p.find_first_not_of("0123456789", 1) != std::string::npos || p.size() > 4 ||
        !KnownPercentile(n = std::stoi(p.substr(1)))) {
      return Status::Invalid(flag, fmt::format("percentile '{}' must be p50, p90, p95 or p99", p));
    }
    t.percentile = n;
  }
  double scale = 1;
  if (value.size() > 2 && value.compare(value.size() - 2, 2, "ms") == 0) {
    scale = 1e-3;
    value.resize(value.size() - 2);
  } else if (value.size() > 1 && value.back() == 's') {
    value.pop_back();
  }
  // Plain decimal numbers only (no hex, no spaces, no "inf").
  double x = 0;
  const auto [end, ec] =
      std::from_chars(value.data(), value.data() + value.size(), x, std::chars_format::general);
  const bool whole = ec == std::errc() && end == value.data() + value.size();
  if (value.empty() || !whole || !(x > 0) || x * scale > 1e6) {
    return Status::Invalid(flag, fmt::format("'{}' is not a positive time (e.g. 2s, 500ms, "
                                             "0.5, with @p90 for a percentile)",
                                             text));
  }
  t.seconds = x * scale;
  return t;
}

Result<PlanPointAtBatch> PlanPointAt(const TransformerConfig& c, const Workload& w, const Device& d,
                                     const PlanRequest& given, int64_t batch) {
  const PlanRequest r = WithMeans(given);
  if (r.tp < 1) return Status::Invalid("--tp", "must be positive");
  if (batch < 1 || batch > (int64_t{1} << 24)) {
    return Status::Invalid("batch", fmt::format("must be between 1 and 2^24, got {}", batch));
  }
  if (r.prompt < 1 || r.output < 1) {
    return Status::Invalid("--prompt", "prompt and output must be positive");
  }
  Workload wt = w;
  wt.tp = r.tp;
  wt.prompt = r.prompt;
  wt.batch = 1;
  wt.context = r.KvContext();
  Result<Workload> staged = ResolveStages(c, wt, d);
  if (!staged.ok()) return staged.status();
  PlanPointAtBatch out;
  out.budget = r.budget > 0 ? r.budget : DefaultTokenBudget(d);
  out.kv_room = LargestBatch(c, *staged, d, r.KvContext());
  const int64_t micro = MicroBatches(*staged, d, out.kv_room);
  if (batch % micro != 0) {
    return Status::Invalid("batch", fmt::format("{} pipeline stages keep {} micro-batches in "
                                                "flight: the batch must be a multiple of {}",
                                                micro, micro, micro));
  }
  // Each micro-batch is an engine of its own, with its own token budget.
  const int64_t engine_batch = batch / micro;
  Result<ServingShape> shape = ShapeOf(LoadOf(r, engine_batch, out.budget));
  if (!shape.ok()) return shape.status();
  if (shape->utilization >= 1) {
    return Status::Invalid(
        "batch", fmt::format("{} requests in flight bring {:.0f} prompt tokens a step, more than "
                             "the {} tokens of room the budget of {} leaves: no steady state",
                             engine_batch, shape->arrivals_per_step * static_cast<double>(r.prompt),
                             shape->room, out.budget));
  }
  const CostModel m(d, r.cost);
  Result<PlanPoint> p = Point(c, *staged, m, r, out.budget, staged->Chips(), micro, engine_batch,
                              fmt::format("batch {}", batch));
  if (!p.ok()) return p.status();
  out.point = std::move(p).value();
  return out;
}

Result<Plan> MakePlan(const TransformerConfig& c, const Workload& base, const Device& d,
                      const PlanRequest& given) {
  // A spread of lengths: its mean is the request's length; one value is no spread.
  const PlanRequest r = WithMeans(given);
  if (r.rate != 0 && r.concurrency != 0) {
    return Status::Invalid("--rate", "give a load as --rate or as --concurrency, not both");
  }
  if (r.rate != 0 && !(r.rate >= 1e-6 && r.rate <= 1e9)) {
    return Status::Invalid("--rate", "must be a number of requests per second from 1e-6 to 1e9");
  }
  if (!(r.prefix_hit >= 0 && r.prefix_hit < 1)) {
    return Status::Invalid("--prefix-hit", "must be a share of the prompt, at least 0 and below 1");
  }
  if (r.concurrency < 0 || r.concurrency > (int64_t{1} << 24)) {
    return Status::Invalid("--concurrency",
                           fmt::format("must be between 1 and 2^24, got {}", r.concurrency));
  }
  // Without --gpus a load sizes the fleet (gpus 0).
  if ((r.gpus < 1 && !(r.gpus == 0 && r.HasLoad())) || r.gpus > 1000000) {
    return Status::Invalid("--gpus", fmt::format("must be between 1 and 1000000, got {}", r.gpus));
  }
  if (r.prompt < 1 || r.prompt > (int64_t{1} << 24)) {
    return Status::Invalid("--prompt", fmt::format("must be between 1 and 2^24, got {}", r.prompt));
  }
  if (r.output < 1 || r.output > (int64_t{1} << 24)) {
    return Status::Invalid("--output", fmt::format("must be between 1 and 2^24, got {}", r.output));
  }
  if (!(r.price_per_hour >= 0) || r.price_per_hour > 1e6) {
    return Status::Invalid("--price-per-hour", "must be between 0 and 1e6");
  }
  if (r.tp < 0) return Status::Invalid("--tp", "must be positive");
  if (r.budget != 0 && (r.budget < 2 || r.budget > (int64_t{1} << 24))) {
    return Status::Invalid("--max-batched-tokens",
                           fmt::format("must be between 2 and 2^24, got {}", r.budget));
  }
  for (const LatencyTarget& t : r.targets) {
    if (!(t.seconds > 0) || t.seconds > 1e6 || !KnownPercentile(t.percentile)) {
      return Status::Invalid("--" + t.metric,
                             "must be a positive time up to 1e6 s at p50, p90, p95 or p99");
    }
  }
  Plan plan;
  plan.request = r;
  plan.device = d.id;
  plan.gpu = d.kind == "gpu";
  plan.names = ResourceNames::Of(d);
  plan.params = CountParameters(c);
  plan.memory_fraction = base.memory_fraction;
  plan.vendor = d.vendor;
  plan.fp8_cores = d.FindCompute("tensor.fp8") != nullptr;
  Result<PlanVariant> as_is = PlanFor(c, base, d, r, "as configured");
  if (as_is.ok()) plan.variants.push_back(*as_is);
  // FP8: W8A8 on FP8 tensor cores where the device has them, else weight-only FP8.
  Workload fp8 = base;
  const bool fp8_cores = d.FindCompute("tensor.fp8") != nullptr;
  if (fp8_cores) fp8.dtype = DType::kFp8;
  fp8.weight_dtype = DType::kFp8;
  fp8.kv_dtype = DType::kFp8;
  fp8.zero_dtype.reset();  // fp8 weights: one scale, no zero point
  Result<PlanVariant> v8 =
      PlanFor(c, fp8, d, r,
              fp8_cores ? "fp8 (W8A8 on fp8 tensor cores, fp8 KV cache)"
                        : "fp8 weights and KV cache (no fp8 tensor cores: computed at bf16)");
  if (v8.ok()) plan.variants.push_back(*v8);
  if (!as_is.ok()) {
    if (!v8.ok()) {
      return Status::Invalid(as_is.status().where(),
                             as_is.status().what() + "; in fp8: " + v8.status().ToString());
    }
    plan.assumptions.push_back("as configured it does not fit: " + as_is.status().ToString() +
                               "; only the FP8 plan is shown");
  }
  for (PlanVariant& v : plan.variants) v.preflight = Preflight(c, base, v, r);
  auto& a = plan.assumptions;
  const int64_t budget = r.budget > 0 ? r.budget : DefaultTokenBudget(d);
  a.push_back(fmt::format(
      "continuous batching at steady state: a replica holds `batch` requests of {} prompt and "
      "{} output tokens; each step decodes one token of every request (at the mean context {}, "
      "decode cost being affine in it) and prefills, beside them, the prompts that arrived "
      "during the step before (Poisson, batch / {} per step), whole when they fit the token "
      "budget of {} per step{}, else in chunks (docs/sweeps-and-plans.md, serving model)",
      r.prompt, r.output, r.MeanDecodeContext(), r.output, budget,
      r.budget > 0 ? " (--max-batched-tokens)"
                   : " (vLLM's default for an OpenAI server on this device)"));
  if (r.prompt_lengths.has_value() || r.output_lengths.has_value()) {
    auto spread = [](const std::optional<Lengths>& l, int64_t mean) {
      return l.has_value() ? fmt::format("{} (mean {}, p50 {}, p99 {})", l->ToString(), mean,
                                         l->AtPercentile(50), l->AtPercentile(99))
                           : fmt::format("{} for every request", mean);
    };
    a.push_back(fmt::format(
        "request lengths vary: prompt {}, output {}; the steps carry the mean prompt; {}; a TTFT "
        "at a percentile takes the prompt at that percentile as "
        "its own prefill, an E2E at a percentile the output at it (sums of percentiles: an upper "
        "estimate); decode runs at the mean context of the running rows, prompt + (E[G^2] / "
        "E[G] + 1) / 2 = {} (long outputs hold their rows longer); the KV cache holds, per "
        "sequence, the running rows' mean final length, prompt + E[G^2] / E[G] = {} tokens; {}"
        "launch lines and the pre-flight take each length at its 99th percentile",
        spread(r.prompt_lengths, r.prompt), spread(r.output_lengths, r.output),
        r.prompt_lengths.has_value()
            ? fmt::format("the wait for prefill room is M/G/1 (Pollaczek-Khinchine: the mean "
                          "wait grows by 1 + cv^2 of the prompts, cv^2 = {:.3g})",
                          r.prompt_lengths->Cv2())
            : std::string("the wait for prefill room is M/D/1 (the prompts alike)"),
        r.MeanDecodeContext(), r.KvContext(),
        r.prompt_lengths.has_value() ? "a prompt at a percentile is costed with the mean prompt's "
                                       "attention offsets (a long one's attention a little low); "
                                     : ""));
  }
  if (r.CachedTokens() > 0) {
    a.push_back(fmt::format(
        "prefix cache (--prefix-hit {}): of {} prompt's {} tokens, {} are cached and not "
        "prefilled, the other {} are prefilled attending to them{}; the KV cache still holds "
        "every sequence's whole prompt (no blocks shared between requests)",
        r.prefix_hit, r.prompt_lengths.has_value() ? "the mean" : "each", r.prompt,
        r.CachedTokens(), r.prompt - r.CachedTokens(),
        r.prompt_lengths.has_value() ? " (the same share of every prompt)" : ""));
  }
  a.push_back(
      std::string("at most 90% of the prefill room is used (beyond, the wait for it grows without "
                  "end); TTFT: the rest of the running step, the wait for prefill room (") +
      (r.prompt_lengths.has_value() ? "M/G/1" : "M/D/1") +
      " with its exponential tail) and the request's own prefill step; time per output token: the "
      "mean of "
      "the steps a request decodes in, which carry the prompts of the other batch - 1 requests' "
      "successors (a closed loop at fixed concurrency; at a percentile: the mean of output - 1 "
      "steps, normal approximation); medians unless a target names a percentile");
  // Whether the layout search may add pipeline stages (PlanFor), and whether it did.
  // (PlanFor's predicates: tensor parallelism within a link domain on GPUs with links.)
  const bool domains = d.kind == "gpu" && !d.links.empty();
  const bool staged_tried = std::any_of(plan.variants.begin(), plan.variants.end(),
                                        [](const PlanVariant& v) { return v.stages_searched; });
  a.push_back(fmt::format(
      "memory: weights + KV cache for {} tokens per sequence + decode "
      "workspace per device; tensor parallelism: of the powers of two up to {} "
      "that divide the heads and fit one sequence{}, {}, unless --tp is given",
      r.KvContext(),
      r.gpus > 0 && (!domains || r.gpus <= SizingTpLimit(d))
          ? std::string("--gpus")
          : fmt::format("{} (the device's link group)", SizingTpLimit(d)),
      staged_tried ? fmt::format(" (where none does or --gpus spans more than one link domain, "
                                 "each also with 2, 4, ... pipeline stages, a replica on at most "
                                 "{} devices)",
                                 r.gpus > 0 ? std::string("--gpus") : std::string("1024"))
                   : std::string(),
      !r.HasLoad() ? std::string("the one whose fleet serves the most output tokens/s with "
                                 "every replica at the largest batch it serves (within the "
                                 "targets; expected where every degree has expected times; "
                                 "idle devices serve nothing)")
      : r.gpus > 0 ? std::string("the one that carries the load (within the "
                                 "targets) with the fastest requests")
                   : std::string("the one that carries the load (within the "
                                 "targets) on the fewest devices, then with the "
                                 "fastest requests")));
  if (r.HasLoad()) {
    const bool micro = std::any_of(plan.variants.begin(), plan.variants.end(),
                                   [](const PlanVariant& v) { return v.micro_batches > 1; });
    a.push_back(fmt::format(
        "load: {}; {}; figures are those of the most loaded replica{}, expected where the plan "
        "has expected times, else at the bound",
        r.rate > 0
            ? fmt::format("{} arriving at random (Poisson), split evenly over the replicas; a "
                          "replica's batch in flight is where its request rate (batch / (output "
                          "tokens x the mean step)) first reaches its share as it fills from "
                          "batch 1 (Little's law iterated: batch <- share x output x step)",
                          Count(r.rate, "request/s", "requests/s"))
            : fmt::format("{} kept in flight (each replaced as it returns), spread over the "
                          "replicas as evenly as whole requests allow",
                          Count(static_cast<double>(r.concurrency), "request")),
        r.gpus > 0
            ? fmt::format("the {} of --gpus serve it", Count(static_cast<double>(r.gpus), "device"))
            : std::string("the fleet has the fewest replicas that carry it, each "
                          "keeping up within the hold limit and the targets"),
        micro ? " (with pipeline stages: of its busiest micro-batch, each replica's share split "
                "over its micro-batches as over replicas)"
              : ""));
  }
  a.push_back(
      "throughput at the roofline bound: no efficiency factor, no scheduling or host "
      "overhead");
  if (!r.targets.empty()) {
    a.push_back(
        "targets are checked on the expected times where the plan has them (the trust bands "
        "printed with them are not applied), else on the bound; "
        "each target's boundary is the largest batch that meets it (latencies grow with the "
        "batch; found by bisection)");
  }
  if (std::any_of(plan.variants.begin(), plan.variants.end(),
                  [](const PlanVariant& v) { return v.batch1.expected_request_s > 0; })) {
    a.push_back(
        fmt::format("expected columns: {}, launch costs per kernel (docs/expected-time.md); no "
                    "scheduling or sampling overhead",
                    DescribeExpectedOptions(r.cost.expected)));
  }
  a.push_back(
      "FLOP limit: the largest batch's FLOPs per request (prefill + decode) at the tensor "
      "peak, memory ignored; not a continuous-batching point (no steps, no latencies)");
  if (std::any_of(plan.variants.begin(), plan.variants.end(),
                  [](const PlanVariant& v) { return v.pp > 1 && v.micro_batches > 1; })) {
    a.push_back(
        "pipeline stages (GPUs): decoder layers split over the stages as vLLM splits them "
        "(get_pp_indices: the remainder on the stages before the last, which also runs the "
        "final norm and the output layer; the first runs the embedding); one micro-batch in "
        "flight per stage, each batching its share of the requests continuously with the token "
        "budget of its own (vLLM's virtual engines); between two steps of a micro-batch every "
        "stage runs each micro-batch's step once, its own and the others' (their mean mix of "
        "decode and prefill), so a cycle is the busiest stage's sum, and never shorter than the "
        "micro-batch's own step through every stage; a stage's expected time is its kernels' "
        "with the step terms (host launching, an engine's host work) applied per stage; "
        "activations cross each stage boundary on the device's first link (across nodes they "
        "take the network instead: not modelled); output tokens cost the cycle when every "
        "micro-batch decodes");
  }
  if (std::any_of(plan.variants.begin(), plan.variants.end(),
                  [](const PlanVariant& v) { return v.pp > 1 && v.micro_batches == 1; })) {
    a.push_back(
        "pipeline stages: a batch's step passes through the stages one after another and no "
        "other micro-batch fills them (no pipelined overlap), so a replica is laid out for one "
        "sequence and more chips would hold a larger batch but not run it faster; per-chip "
        "figures divide by every chip of a replica");
  }
  if (r.price_per_hour > 0) {
    a.push_back(
        fmt::format("cost: {} per device-hour; prefill time is charged to input tokens, "
                    "decode time to output tokens",
                    r.price_per_hour));
  }
  if (c.experts > 0) {
    a.push_back(fmt::format(
        "mixture of experts: {} of {} parameters active per token ({} of {} experts): FLOPs "
        "scale with the active ones; memory holds all of them; at batch 1 decode reads only the "
        "touched experts, at large batches nearly all",
        Si(plan.params.active, ""), Si(plan.params.total, ""), c.experts_per_token, c.experts));
  } else {
    a.push_back("dense model: every parameter is used by every token");
  }
  return plan;
}

}  // namespace roofline
