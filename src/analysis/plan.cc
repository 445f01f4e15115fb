#include "roofline/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "roofline/flip.h"
#include "roofline/units.h"

namespace roofline {
namespace {

Result<PhaseResult> RunOne(const TransformerConfig& c, const Workload& w, const CostModel& m,
                           Phase p) {
  return AnalyzePhase(c, w, m, p);
}

Result<PlanPoint> Point(const TransformerConfig& c, Workload w, const CostModel& m,
                        const PlanRequest& r, int64_t chips, int64_t batch,
                        const std::string& label) {
  const double tp = static_cast<double>(chips);  // per-device figures divide by every chip
  w.batch = batch;
  w.prompt = r.prompt;
  // Decode cost is affine in the context, so the mean step equals the step at the mean context.
  w.context = r.prompt + (r.output + 1) / 2;
  Result<PhaseResult> pre = RunOne(c, w, m, Phase::kPrefill);
  if (!pre.ok()) return pre.status();
  Result<PhaseResult> dec = RunOne(c, w, m, Phase::kDecode);
  if (!dec.ok()) return dec.status();
  PlanPoint p;
  p.label = label;
  p.batch = batch;
  p.chips = chips;
  p.ttft_s = pre->totals.time_s;
  p.tpot_s = dec->totals.time_s;
  p.request_s = p.ttft_s + static_cast<double>(r.output) * p.tpot_s;
  const double cycle = p.request_s;  // a batch is prefilled, then decoded to the end
  const double b = static_cast<double>(batch);
  p.input_tokens_per_s_per_gpu = b * static_cast<double>(r.prompt) / cycle / tp;
  p.output_tokens_per_s_per_gpu = b * static_cast<double>(r.output) / cycle / tp;
  if (r.price_per_hour > 0) {
    const double dollars_per_s = r.price_per_hour / 3600 * tp;
    p.cost_per_m_input = dollars_per_s * p.ttft_s / (b * static_cast<double>(r.prompt)) * 1e6;
    p.cost_per_m_output = dollars_per_s * static_cast<double>(r.output) * p.tpot_s /
                          (b * static_cast<double>(r.output)) * 1e6;
  }
  if (pre->totals.has_expected && dec->totals.has_expected) {
    p.expected_ttft_s = pre->totals.expected_s;
    p.expected_tpot_s = dec->totals.expected_s;
    p.expected_request_s = p.expected_ttft_s + static_cast<double>(r.output) * p.expected_tpot_s;
    p.expected_output_tokens_per_s_per_gpu =
        b * static_cast<double>(r.output) / p.expected_request_s / tp;
  }
  p.prefill_bound = pre->totals.verdict;
  p.decode_bound = dec->totals.verdict;
  return p;
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
  const int64_t context = r.prompt + r.output;
  // Pipeline stages per tp degree: as given, or on a device with a model split the fewest that
  // hold one sequence (ResolveStages).
  auto stages_for = [&](int64_t tp) -> int64_t {
    Workload wt = w;
    wt.tp = tp;
    wt.prompt = r.prompt;
    wt.batch = 1;
    wt.context = context;
    Result<Workload> staged = ResolveStages(c, wt, d);
    return staged.ok() ? staged->Stages() : 0;
  };
  auto fits = [&](int64_t tp, int64_t batch) {
    Workload wt = w;
    wt.tp = tp;
    wt.prompt = r.prompt;
    wt.pp = stages_for(tp);
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
    for (int64_t tp = 1; tp <= r.gpus; tp *= 2) {
      Workload wt = w;
      wt.tp = tp;
      if (!BuildLlmGraph(c, wt, Phase::kDecode).ok()) continue;  // tp must divide heads
      PlanLayout l;
      l.tp = tp;
      l.pp = std::max<int64_t>(1, stages_for(tp));
      if (fits(tp, 1)) {
        if (l.tp * l.pp > r.gpus) {
          l.too_many_chips = true;
          layouts.push_back(l);
          continue;
        }
        PlanRequest at = r;
        at.tp = tp;
        Result<PlanVariant> tried = PlanFor(c, w, d, at, v.name);
        if (!tried.ok()) {
          if (!first_error.has_value()) first_error = tried.status();
          continue;
        }
        const PlanPoint& big = tried->largest;
        const double used = static_cast<double>(big.chips * tried->replicas);
        l.fits = true;
        l.pp = tried->pp;
        l.replicas = tried->replicas;
        l.idle_gpus = tried->idle_gpus;
        l.weights_bytes = tried->weights_bytes;
        l.max_batch = tried->max_batch;
        l.fleet_output_tokens_per_s = big.output_tokens_per_s_per_gpu * used;
        l.expected_fleet_output_tokens_per_s = big.expected_output_tokens_per_s_per_gpu * used;
        if (r.price_per_hour > 0) {
          const double dollars_per_s = r.price_per_hour / 3600 * gpus;
          l.fleet_cost_per_m_output = dollars_per_s / l.fleet_output_tokens_per_s * 1e6;
          if (l.expected_fleet_output_tokens_per_s > 0) {
            l.expected_fleet_cost_per_m_output =
                dollars_per_s / l.expected_fleet_output_tokens_per_s * 1e6;
          }
        }
        planned_at.push_back(layouts.size());
        planned.push_back(std::move(tried).value());
      }
      layouts.push_back(l);
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
      return Status::Invalid("--gpus", fmt::format("the model does not fit {} x {} at any "
                                                   "power-of-two tensor-parallel degree",
                                                   r.gpus, d.id));
    }
    // Expected times rank the degrees only where every one of them has them.
    bool by_expected = true;
    for (size_t i : planned_at)
      by_expected = by_expected && layouts[i].expected_fleet_output_tokens_per_s > 0;
    auto score = [&](size_t i) {
      return by_expected ? layouts[i].expected_fleet_output_tokens_per_s
                         : layouts[i].fleet_output_tokens_per_s;
    };
    size_t best = 0;
    for (size_t k = 1; k < planned.size(); ++k) {
      if (score(planned_at[k]) > score(planned_at[best])) best = k;  // a tie keeps the smaller
    }
    PlanVariant chosen = std::move(planned[best]);
    chosen.layouts = std::move(layouts);
    chosen.ranked_by_expected = by_expected;
    return chosen;
  }
  v.tp = r.tp;
  if (!fits(v.tp, 1)) {
    return Status::Invalid("--tp", fmt::format("{} does not fit on {} devices at tp {} (one "
                                               "sequence of {} tokens)",
                                               c.architecture, v.tp, v.tp, context));
  }
  v.pp = stages_for(v.tp);
  const int64_t chips = v.tp * v.pp;
  if (v.pp > 1 && chips > r.gpus) {
    return Status::Invalid("--gpus", fmt::format("one replica needs {} chips (tp {} x {} pipeline "
                                                 "stages) to hold the model; --gpus is {}",
                                                 chips, v.tp, v.pp, r.gpus));
  }
  if (v.tp > r.gpus) {
    return Status::Invalid("--tp",
                           fmt::format("tp {} exceeds the {} devices (--gpus)", v.tp, r.gpus));
  }
  if (v.tp > 1 && d.links.empty()) {
    return Status::Invalid("--gpus", "the model needs tensor parallelism " + std::to_string(v.tp) +
                                         " but device '" + d.id + "' lists no interconnect");
  }
  v.replicas = r.gpus / chips;
  v.idle_gpus = r.gpus - v.replicas * chips;
  Workload wt = w;
  wt.tp = v.tp;
  wt.pp = v.pp;
  wt.prompt = r.prompt;
  Result<MemoryFootprint> one = Footprint(c, wt, d, 1, context);
  if (!one.ok()) return one.status();
  v.weights_bytes = one->weights_bytes;
  v.kv_bytes_per_sequence = one->kv_cache_bytes;
  // The largest batch on the replica's chips (as chosen for one sequence): a larger batch on
  // more chips would run no faster, as the stages do not overlap (see the assumptions).
  v.max_batch = LargestBatch(c, wt, d, context);
  Workload wl = wt;  // at the largest batch
  const CostModel m(d, r.cost);
  Result<PlanPoint> p1 = Point(c, wt, m, r, chips, 1, "batch 1 (memory-bound lower end)");
  if (!p1.ok()) return p1.status();
  v.batch1 = *p1;
  Result<PlanPoint> pm = Point(c, wl, m, r, chips, v.max_batch,
                               fmt::format("largest batch that fits ({})", v.max_batch));
  if (!pm.ok()) return pm.status();
  v.largest = *pm;
  // The FLOP limit: the largest batch's FLOPs per request at the tensor peak on every device.
  wl.batch = v.max_batch;
  wl.context = r.prompt + (r.output + 1) / 2;
  Result<PhaseResult> pre = RunOne(c, wl, m, Phase::kPrefill);
  Result<PhaseResult> dec = RunOne(c, wl, m, Phase::kDecode);
  if (!pre.ok()) return pre.status();
  if (!dec.ok()) return dec.status();
  const double b = static_cast<double>(v.max_batch);
  v.flops_per_request =
      (pre->totals.flops + static_cast<double>(r.output) * dec->totals.flops) / b;  // per device
  const DType compute =
      BitsOf(w.weight_dtype.value_or(act)) > BitsOf(act) ? w.weight_dtype.value_or(act) : act;
  const int ceiling = m.ResolveEngine({true, compute});
  const double peak = ceiling >= 0 ? d.compute[ceiling].peak.value : 0;
  PlanPoint& fl = v.flop_limit;
  fl.label = fmt::format("FLOP limit (every FLOP at {})",
                         ceiling >= 0 ? d.compute[ceiling].engine : std::string("peak"));
  fl.batch = v.max_batch;
  if (peak > 0 && v.flops_per_request > 0) {
    // FLOPs are per device (each of the tp devices holds its shard), so a replica finishes one
    // request's FLOPs in this time when every device runs at peak.
    // As the other rows: a replica's stages run one after another (no overlapped requests).
    const double request_s = v.flops_per_request / peak;
    const double tp = static_cast<double>(chips);
    fl.chips = chips;
    fl.request_s = request_s;
    fl.output_tokens_per_s_per_gpu = static_cast<double>(r.output) / request_s / tp;
    fl.input_tokens_per_s_per_gpu = static_cast<double>(r.prompt) / request_s / tp;
    if (r.price_per_hour > 0) {
      // Split the cost as the largest batch splits its time between prefill and decode.
      const double pre_share = v.largest.ttft_s / v.largest.request_s;
      const double dollars = r.price_per_hour / 3600 * request_s * tp;
      fl.cost_per_m_input = dollars * pre_share / static_cast<double>(r.prompt) * 1e6;
      fl.cost_per_m_output = dollars * (1 - pre_share) / static_cast<double>(r.output) * 1e6;
    }
    fl.prefill_bound = fl.decode_bound = std::nullopt;  // assumed compute-bound
  }
  return v;
}

}  // namespace

Result<Plan> MakePlan(const TransformerConfig& c, const Workload& base, const Device& d,
                      const PlanRequest& r) {
  if (r.gpus < 1 || r.gpus > 1000000) {
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
  Plan plan;
  plan.request = r;
  plan.device = d.id;
  plan.gpu = d.kind == "gpu";
  plan.names = ResourceNames::Of(d);
  plan.params = CountParameters(c);
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
    if (!v8.ok()) return as_is.status();
    plan.assumptions.push_back("as configured it does not fit: " + as_is.status().ToString() +
                               "; only the FP8 plan is shown");
  }
  auto& a = plan.assumptions;
  a.push_back(
      fmt::format("each request: {} prompt tokens prefilled together with the batch, then "
                  "{} tokens decoded; a batch runs prefill then decode to the end "
                  "(no continuous batching)",
                  r.prompt, r.output));
  a.push_back(
      fmt::format("time per output token = one decode step at the mean context {} (decode "
                  "cost is affine in the context, so this equals the mean over the "
                  "generation)",
                  r.prompt + std::max<int64_t>(1, r.output / 2)));
  a.push_back(
      fmt::format("memory: weights + KV cache for {} tokens per sequence + decode "
                  "workspace per device; tensor parallelism: of the powers of two up to --gpus "
                  "that divide the heads and fit one sequence, the one whose fleet serves the "
                  "most output tokens/s with every replica at its largest batch (expected where "
                  "every degree has expected times; idle devices serve nothing), unless --tp is "
                  "given",
                  r.prompt + r.output));
  a.push_back(
      "throughput at the roofline bound: no efficiency factor, no scheduling or host "
      "overhead");
  if (std::any_of(plan.variants.begin(), plan.variants.end(),
                  [](const PlanVariant& v) { return v.batch1.expected_request_s > 0; })) {
    a.push_back(
        fmt::format("expected columns: {}, launch costs per kernel (docs/expected-time.md); no "
                    "scheduling, batching or sampling overhead",
                    DescribeExpectedOptions(r.cost.expected)));
  }
  a.push_back(
      "FLOP limit: the largest batch's FLOPs per request (prefill + decode) at the tensor "
      "peak, memory ignored");
  if (std::any_of(plan.variants.begin(), plan.variants.end(),
                  [](const PlanVariant& v) { return v.pp > 1; })) {
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
