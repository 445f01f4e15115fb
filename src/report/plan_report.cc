// Reports of `roofline plan`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/band_json.h"
#include "src/report/table.h"

namespace roofline {
namespace {

/// A phase's verdict, or what the FLOP limit assumes.
std::string BoundText(const Plan& p, const std::optional<Verdict>& v) {
  return v.has_value() ? p.names.Name(*v) : "compute (assumed)";
}

std::string Dollars(double x) { return x > 0 ? fmt::format("${:.3g}", x) : "-"; }

std::string Rate(double x) { return x > 0 ? Num(std::round(x * 10) / 10) : "-"; }

}  // namespace

namespace {

std::string DegreeText(int64_t tp, int64_t pp) {
  return pp > 1 ? fmt::format("tp {} x {} pipeline stages", tp, pp) : fmt::format("tp {}", tp);
}

/// The smallest batch a replica serves: 1, or one request a micro-batch.
std::string FirstBatch(int64_t micro_batches) {
  return micro_batches > 1 ? fmt::format("batch {} (one per micro-batch)", micro_batches)
                           : std::string("batch 1");
}

/// Whether layout `l` is the one the variant chose.
bool Chosen(const PlanLayout& l, const PlanVariant& v) { return l.tp == v.tp && l.pp == v.pp; }

/// Requests per second: "1 request/s", "2.5 requests/s", "12345 requests/s".
std::string PerSecond(double rate) { return Count(rate, "request/s", "requests/s"); }

/// The load the request gives, in words: "10 requests/s (Poisson)", "64 requests in flight".
std::string LoadText(const PlanRequest& r) {
  return r.rate > 0 ? PerSecond(r.rate) + " (Poisson)"
                    : Count(static_cast<double>(r.concurrency), "request") + " in flight";
}

/// What holds a replica's batch: "its KV room (a batch of 715)", "what its token budget
/// prefills (a batch of 207)".
std::string HoldText(const LoadServed& l) {
  return fmt::format("{} (a batch of {})",
                     l.kv_binds ? "its KV room" : "what its token budget prefills", l.hold_limit);
}

/// The devices that would carry the load on a layout, in words.
std::string NeededText(const LoadServed& l, const std::string& noun) {
  if (!l.targets_reachable) return "no batch meets the targets on it";
  if (l.too_many) return fmt::format("carrying it takes more than a million {}s", noun);
  return "carrying it takes " + Count(static_cast<double>(l.gpus_needed), noun);
}

/// How a layout carries the load, in a few words.
std::string CarriesText(const LoadServed& l, const std::string& noun, bool sized) {
  const std::string basis = l.expected ? "expected" : "bound";
  const std::string at =
      fmt::format(", at batch {} a replica ({} request {})", l.point.batch, basis,
                  Seconds(l.expected ? l.point.expected_request_s : l.point.request_s));
  if (l.overloaded) {
    return fmt::format("a replica does not keep up within {}; {}", HoldText(l),
                       NeededText(l, noun));
  }
  if (!l.carried) return fmt::format("misses the targets{}; {}", at, NeededText(l, noun));
  return fmt::format("carries it on {}{}{}", Count(static_cast<double>(l.gpus), noun), at,
                     sized || l.too_many ? "" : fmt::format(" ({} would)", l.gpus_needed));
}

/// What the layout search tried: "powers of two up to N that divide the heads", with the
/// pipeline stages it added.
std::string SearchText(const PlanVariant& v, const std::string& most) {
  return fmt::format("powers of two up to {} that divide the heads{}", most,
                     v.stages_searched ? ", each also with 2, 4, ... pipeline stages" : "");
}

/// The degrees a plan tried with a load: how each carries it, and why the chosen one wins.
std::string RenderLoadLayouts(const PlanVariant& v, const PlanRequest& r, const std::string& noun) {
  const bool sized = r.gpus == 0;
  std::string out = fmt::format(
      "layouts tried ({}; {}), each with {}:\n", SearchText(v, std::to_string(v.most_tp)),
      sized ? "the fleet sized for the load" : "the fleet of --gpus", LoadText(r));
  for (const PlanLayout& l : v.layouts) {
    if (!l.fits || !l.load.has_value()) {
      out += l.too_many_chips ? fmt::format("  {}: a replica needs {} {}s, more than --gpus\n",
                                            DegreeText(l.tp, l.pp), l.tp * l.pp, noun)
             : !l.not_planned.empty()
                 ? fmt::format("  {}: {}\n", DegreeText(l.tp, l.pp), l.not_planned)
                 : fmt::format("  {}: one sequence of the request does not fit\n",
                               DegreeText(l.tp, l.pp));
      continue;
    }
    out += fmt::format("  {} x {}: weights {} per {}, KV room for {}; {}{}\n",
                       DegreeText(l.tp, l.pp), Count(static_cast<double>(l.replicas), "replica"),
                       Si(l.weights_bytes, "B"), noun, l.max_batch,
                       CarriesText(*l.load, noun, sized), Chosen(l, v) ? "  <- chosen" : "");
  }
  // Why the chosen degree: the fewest devices (sized), then the fastest request.
  const PlanLayout* chosen = nullptr;
  std::vector<const PlanLayout*> others;
  for (const PlanLayout& l : v.layouts) {
    if (!l.fits || !l.load.has_value()) continue;
    if (Chosen(l, v)) {
      chosen = &l;
    } else if (l.load->carried) {
      others.push_back(&l);
    }
  }
  if (chosen == nullptr) return out;
  const LoadServed& c = *chosen->load;
  if (!c.carried) {
    const std::string why =
        !c.targets_reachable
            ? fmt::format("the smallest miss of a target at batch {}", chosen->micro_batches)
        : c.overloaded ? "the most requests completed"
                       : "the smallest miss of a target";
    return out + fmt::format("no layout carries the load{}: {} comes closest ({})\n",
                             r.targets.empty() ? "" : " within the targets",
                             DegreeText(chosen->tp, chosen->pp), why);
  }
  auto request = [](const LoadServed& l) {
    return Seconds(l.expected ? l.point.expected_request_s : l.point.request_s);
  };
  std::vector<std::string> ties;
  for (const PlanLayout* o : others) {
    if (!sized || o->load->gpus == c.gpus) {
      ties.push_back(fmt::format("{}: {}", DegreeText(o->tp, o->pp), request(*o->load)));
    }
  }
  const std::string fewest = sized ? fmt::format(" on the fewest {}s ({})", noun, c.gpus) : "";
  if (ties.empty()) {
    return out + fmt::format("{} wins: {}\n", DegreeText(chosen->tp, chosen->pp),
                             sized ? "it carries the load" + fewest
                                   : std::string("no other layout carries the load"));
  }
  return out + fmt::format(
                   "{} wins: of the layouts that carry the load{}, its requests are the "
                   "fastest ({}; {})\n",
                   DegreeText(chosen->tp, chosen->pp), fewest, request(c), fmt::join(ties, ", "));
}

/// The degrees a plan tried (none when --tp was given): what each holds and serves, and why the
/// chosen one beats its neighbours.
std::string RenderLayouts(const PlanVariant& v, const PlanRequest& r, const std::string& noun) {
  if (v.layouts.size() < 2) return "";  // one degree tried (one device): nothing to choose
  if (r.HasLoad()) {
    return RenderLoadLayouts(v, r, noun);
  }
  const bool expected = v.ranked_by_expected;
  auto rate = [expected](const PlanLayout& l) {
    return expected ? l.expected_fleet_output_tokens_per_s : l.fleet_output_tokens_per_s;
  };
  auto cost = [expected](const PlanLayout& l) {
    return expected ? l.expected_fleet_cost_per_m_output : l.fleet_cost_per_m_output;
  };
  // Four significant figures, whole numbers above 1000 (never an exponent: 13410, not 1.341e+04).
  auto figure = [](double x) {
    return x >= 1000 ? fmt::format("{:.0f}", x) : fmt::format("{:.4g}", x);
  };
  const bool priced = r.price_per_hour > 0;
  std::string out = fmt::format(
      "layouts tried ({}; the fleet's output tokens/s with every replica at the largest batch it "
      "serves, {}{}):\n",
      SearchText(v, v.most_tp == r.gpus ? std::string("--gpus")
                                        : fmt::format("{} (the device's link group)", v.most_tp)),
      expected ? "expected" : "at the bound",
      priced ? fmt::format("; $/M out: the {} {}s' price over that output", r.gpus, noun) : "");
  for (const PlanLayout& l : v.layouts) {
    if (!l.fits) {
      out += l.too_many_chips ? fmt::format("  {}: a replica needs {} {}s, more than --gpus\n",
                                            DegreeText(l.tp, l.pp), l.tp * l.pp, noun)
             : !l.not_planned.empty()
                 ? fmt::format("  {}: {}\n", DegreeText(l.tp, l.pp), l.not_planned)
                 : fmt::format("  {}: one sequence of the request does not fit\n",
                               DegreeText(l.tp, l.pp));
      continue;
    }
    out += fmt::format(
        "  {} x {}{}: weights {} per {}, KV room for {}, serves batch {} per replica{}, fleet {} "
        "out tok/s{}{}\n",
        DegreeText(l.tp, l.pp), Count(static_cast<double>(l.replicas), "replica"),
        l.idle_gpus > 0 ? fmt::format(" ({} idle)", l.idle_gpus) : "", Si(l.weights_bytes, "B"),
        noun, l.max_batch, l.batch, l.meets_targets ? "" : " (misses the targets)", figure(rate(l)),
        priced ? fmt::format(", {}/M out", Dollars(cost(l))) : "",
        Chosen(l, v) ? "  <- chosen" : "");
  }
  const PlanLayout* best = nullptr;
  const PlanLayout* below = nullptr;  // the nearest smaller degree that fits
  const PlanLayout* above = nullptr;  // the nearest larger degree that fits
  const bool staged = std::any_of(v.layouts.begin(), v.layouts.end(), [](const PlanLayout& l) {
    return l.fits && l.micro_batches > 1;
  });
  if (staged) {
    // Layouts of tensor parallelism and pipeline stages: the chosen one against the runner-up.
    const PlanLayout* chosen = nullptr;
    const PlanLayout* second = nullptr;
    for (const PlanLayout& l : v.layouts) {
      if (!l.fits) continue;
      if (Chosen(l, v)) {
        chosen = &l;
      } else if (second == nullptr || (l.meets_targets && !second->meets_targets) ||
                 (l.meets_targets == second->meets_targets && rate(l) > rate(*second))) {
        second = &l;
      }
    }
    if (chosen == nullptr) return out;
    std::string why = fmt::format(
        "{} {} ({} out tok/s, a batch of {} per replica{})", DegreeText(chosen->tp, chosen->pp),
        chosen->meets_targets ? "serves the most" : "comes closest to the targets",
        figure(rate(*chosen)), chosen->batch,
        chosen->micro_batches > 1 ? fmt::format(" in {} micro-batches", chosen->micro_batches)
                                  : "");
    if (second != nullptr) {
      why += fmt::format(
          "; the runner-up, {} x {}, serves {} out tok/s at a batch of {} per "
          "replica{}",
          DegreeText(second->tp, second->pp),
          Count(static_cast<double>(second->replicas), "replica"), figure(rate(*second)),
          second->batch, second->meets_targets ? "" : " (misses the targets)");
    }
    return out + why + "\n";
  }
  for (const PlanLayout& l : v.layouts) {
    if (!l.fits) continue;
    if (Chosen(l, v)) best = &l;
    if (l.tp < v.tp) below = &l;
    if (l.tp > v.tp && above == nullptr) above = &l;
  }
  if (best == nullptr || (below == nullptr && above == nullptr)) return out;
  // Why a neighbour serves less: a smaller degree's weights cap its batch (one device a stage),
  // a larger degree's batch grows but its steps cost more; otherwise only the figures.
  auto side = [&](const PlanLayout& l) {
    if (!l.meets_targets && best->meets_targets) {
      return fmt::format("at tp {} not even {} meets the targets", l.tp,
                         FirstBatch(l.micro_batches));
    }
    if (l.tp < best->tp && l.max_batch < best->max_batch && l.batch == l.max_batch) {
      if (l.pp > 1 || best->pp > 1) {
        return fmt::format("at tp {} a replica's {} {}s hold a batch of {} (fleet {} out tok/s)",
                           l.tp, l.tp * l.pp, noun, l.max_batch, figure(rate(l)));
      }
      return fmt::format(
          "at tp {} the weights take {} of each {} and leave room for a batch of {} per "
          "replica (fleet {} out tok/s)",
          l.tp, Si(l.weights_bytes, "B"), noun, l.max_batch, figure(rate(l)));
    }
    if (l.tp > best->tp && l.batch > best->batch) {
      return fmt::format(
          "at tp {} the batch grows to {} per replica, but with fewer replicas{} the fleet "
          "serves {} out tok/s",
          l.tp, l.batch, l.idle_gpus > best->idle_gpus ? " and more idle devices" : "",
          figure(rate(l)));
    }
    return fmt::format("at tp {}, a batch of {} per replica, the fleet serves {} out tok/s", l.tp,
                       l.batch, figure(rate(l)));
  };
  std::string why = fmt::format("tp {} serves the most ({} out tok/s, a batch of {} per replica)",
                                best->tp, figure(rate(*best)), best->batch);
  if (below != nullptr) why += ": " + side(*below);
  if (above != nullptr) why += (below != nullptr ? "; " : ": ") + side(*above);
  return out + why + "\n";
}

}  // namespace

namespace {

/// What the steps of an operating point carry, and what its median TTFT is made of.
std::string RenderSteadyState(const PlanPoint& pt) {
  const ServingShape& sh = pt.shape;
  const bool expected = pt.expected_request_s > 0;
  const ServingFigures& f = expected ? pt.expected_serving : pt.serving;
  const std::string prefill =
      sh.chunked
          ? fmt::format("each prompt in {} chunks of up to {} tokens", sh.chunk_steps, sh.room)
          : fmt::format("their prompts packed into {} tokens of room a step", sh.room);
  // With micro-batches, the figures are one micro-batch's, its steps one pipeline cycle apart.
  const std::string batch = pt.micro_batches > 1
                                ? fmt::format(
                                      "{} ({} per micro-batch; its steps one pipeline cycle "
                                      "apart)",
                                      pt.batch, pt.batch / pt.micro_batches)
                                : std::to_string(pt.batch);
  return fmt::format(
      "at batch {}: {:.3g} requests arrive per step ({}); {:.0f}% of steps carry prefill; "
      "prefill room {:.0f}% used; {} median TTFT {} = the running step's rest {} + queue {} + "
      "own prefill {}\n",
      batch, sh.arrivals_per_step, prefill, 100 * f.mixed_share, 100 * sh.utilization,
      expected ? "expected" : "bound", Seconds(f.ttft_s), Seconds(f.residual_s), Seconds(f.queue_s),
      Seconds(f.own_prefill_s));
}

/// The targets: each one's boundary, and what the chosen point measures against it.
std::string RenderTargets(const PlanVariant& v, const std::string& noun) {
  std::string out;
  for (size_t i = 0; i < v.boundaries.size(); ++i) {
    const SloBoundary& b = v.boundaries[i];
    const TargetCheck& c = v.largest.checks[i];
    out += fmt::format("target {} <= {} at p{}: {}; at batch {} {} {}\n", b.target.metric,
                       Seconds(b.target.seconds), b.target.percentile,
                       b.largest_batch > 0
                           ? fmt::format("met up to a batch of {} per replica", b.largest_batch)
                           : "missed even at " + FirstBatch(v.micro_batches),
                       v.largest.batch, c.expected ? "expected" : "bound",
                       fmt::format("{} ({})", Seconds(c.value_s), c.met ? "met" : "missed"));
  }
  if (!v.meets_targets) {
    out += fmt::format(
        "no batch meets every target on this layout: the closest is batch {} (one request per "
        "{} of {})\n",
        v.micro_batches, v.micro_batches > 1 ? "micro-batch of a replica" : "replica",
        Count(static_cast<double>(v.tp * v.pp), noun));
  }
  return out;
}

/// How the variant's fleet carries the load: replicas, each one's share and operating point, the
/// fleet's rate and cost, or why it cannot.
std::string RenderLoad(const PlanRequest& r, const PlanVariant& v, const std::string& noun) {
  if (!v.load.has_value()) return "";
  const LoadServed& l = *v.load;
  const bool sized = r.gpus == 0;
  const std::string basis = l.expected ? "expected" : "at the bound";
  const std::string capacity =
      r.rate > 0 ? fmt::format("{} (batch {})", PerSecond(l.capacity_rate), l.capacity_batch)
                 : fmt::format("{} in flight ({})",
                               Count(static_cast<double>(l.capacity_batch), "request"),
                               PerSecond(l.capacity_rate));
  const std::string fleet = fmt::format(
      "{} of tp {}{} ({}{})", Count(static_cast<double>(l.replicas), "replica"), v.tp,
      v.pp > 1 ? fmt::format(" x {} stages", v.pp) : "", Count(static_cast<double>(l.gpus), noun),
      !sized ? ""
      : l.targets_reachable
          ? ", the fewest that carry it"
          : fmt::format(", batch {} on each: no batch meets the targets", v.micro_batches));
  std::string out =
      l.targets_reachable
          ? fmt::format(
                "load {}: {}; at the largest batch within {}{} a replica completes {} "
                "({})\n",
                LoadText(r), fleet, HoldText(l), r.targets.empty() ? "" : " and the targets",
                capacity, basis)
          : fmt::format("load {}: {}; no batch meets the targets, {} completes {} ({})\n",
                        LoadText(r), fleet, FirstBatch(v.micro_batches), PerSecond(l.capacity_rate),
                        basis);
  if (l.overloaded) {
    out += fmt::format(
        "not carried: a replica's share ({}) is more than it keeps up with within {}{}; the "
        "fleet completes {}; {}\n",
        r.rate > 0 ? PerSecond(l.share) : Count(l.share, "request") + " in flight", HoldText(l),
        r.rate > 0 ? "" : " (the other requests wait)", PerSecond(l.fleet_requests_per_s),
        NeededText(l, noun));
    return out;
  }
  const PlanPoint& pt = l.point;
  const bool exp = l.expected;
  out += fmt::format(
      "{}: a replica's share {}: TTFT {}, time per output token {}, request {} (medians, {}); "
      "the fleet completes {}, {} output tokens/s{}\n",
      l.carried ? "carried" : "not carried (misses the targets)",
      r.rate > 0 ? fmt::format("{} runs at batch {} in flight", PerSecond(l.share), pt.batch)
      : pt.micro_batches > 1
          ? fmt::format("is {} in flight, {} in its busiest micro-batch", Count(l.share, "request"),
                        (pt.batch + pt.micro_batches - 1) / pt.micro_batches)
          : "is " + Count(static_cast<double>(pt.batch), "request") + " in flight",
      Seconds(exp ? pt.expected_ttft_s : pt.ttft_s), Seconds(exp ? pt.expected_tpot_s : pt.tpot_s),
      Seconds(exp ? pt.expected_request_s : pt.request_s), basis, PerSecond(l.fleet_requests_per_s),
      Rate(l.fleet_output_tokens_per_s),
      l.cost_per_m_output > 0 ? fmt::format(", {}/M out with every {} of the {} paid",
                                            Dollars(l.cost_per_m_output), noun, l.gpus)
                              : "");
  if (l.targets_reachable && (!l.carried || l.gpus_needed != l.gpus)) {
    out += l.too_many
               ? fmt::format("more than a million {}s would carry the load on this layout\n", noun)
               : fmt::format("{} the load within {}{} on this layout\n",
                             l.gpus_needed == 1 ? "1 " + noun + " carries"
                                                : fmt::format("{} {}s carry", l.gpus_needed, noun),
                             HoldText(l), r.targets.empty() ? "" : " and the targets");
  }
  return out;
}

/// The Pareto frontier of the layouts' sampled points, fastest per user first.
std::string RenderFrontier(const PlanVariant& v, const std::string& noun) {
  std::vector<const ParetoPoint*> front;
  for (const ParetoPoint& p : v.pareto) {
    if (p.frontier) front.push_back(&p);
  }
  if (front.size() < 2) return "";
  std::sort(front.begin(), front.end(), [](const ParetoPoint* a, const ParetoPoint* b) {
    return a->tokens_per_s_per_user > b->tokens_per_s_per_user;
  });
  const bool expected = front.front()->expected;
  const bool staged = std::any_of(front.begin(), front.end(),
                                  [](const ParetoPoint* q) { return q->micro_batches > 1; });
  std::string out = fmt::format(
      "Pareto frontier ({}; each layout at batches 1, 2, 4, ...{} up to what it holds; a faster "
      "user costs throughput per {}):\n",
      expected ? "expected" : "at the bound",
      staged ? " (with pipeline stages, requests per micro-batch)" : "", noun);
  std::vector<std::string> rows;
  for (const ParetoPoint* p : front) {
    rows.push_back(fmt::format("tp {}{} batch {}: {} tok/s per user, {} per {}, TTFT {}{}", p->tp,
                               p->pp > 1 ? fmt::format(" x {} stages", p->pp) : "", p->batch,
                               Rate(p->tokens_per_s_per_user), Rate(p->tokens_per_s_per_gpu), noun,
                               Seconds(p->ttft_s),
                               p->meets_targets ? "" : " (misses the targets)"));
  }
  for (const std::string& r : rows) out += "  " + r + "\n";
  return out;
}

/// The command lines that start one replica of the variant's layout at the batch it serves, for
/// vLLM, SGLang and TensorRT-LLM (engine, flags; fp8 where the variant is).
struct LaunchLines {
  std::string vllm, sglang, tensorrt_llm;
};

LaunchLines LaunchOf(const Plan& p, const PlanVariant& v) {
  const std::string ckpt = "<checkpoint of " + p.model + ">";
  const int64_t len = p.request.LongestAtP99();
  const bool fp8 = v.weight == DType::kFp8;
  // The engines take the checkpoint's dtype by default; a plan at fp32 says so.
  const std::string dtype = v.act == DType::kFp32 ? " --dtype float32" : "";
  const ServingShape& sh = v.largest.shape;
  LaunchLines l;
  l.vllm = fmt::format(
      "vllm serve {} --tensor-parallel-size {} --max-model-len {} --max-num-seqs {} "
      "--max-num-batched-tokens {} --gpu-memory-utilization {}{}{}",
      ckpt, v.tp, len, v.largest.batch, v.budget, p.memory_fraction, dtype,
      fp8 ? " --quantization fp8 --kv-cache-dtype fp8" : "");
  // SGLang mixes prefill chunks into decode batches only with --enable-mixed-chunk, and its
  // chunked-prefill size counts prompt tokens: the room beside the decode rows.
  l.sglang = fmt::format(
      "python -m sglang.launch_server --model-path {} --tp-size {} --context-length {} "
      "--max-running-requests {} --enable-mixed-chunk --chunked-prefill-size {} "
      "--mem-fraction-static {}{}{}",
      ckpt, v.tp, len, v.largest.batch, sh.room, p.memory_fraction, dtype,
      fp8 ? " --quantization fp8 --kv-cache-dtype fp8_e4m3" : "");
  // TensorRT-LLM runs on NVIDIA GPUs, its FP8 on fp8 tensor cores; chunked prefill and an fp8
  // KV cache are set in its LLM API options file.
  std::vector<std::string> options;
  if (sh.chunked) options.emplace_back("enable_chunked_prefill: true");
  if (fp8) options.emplace_back("kv_cache_config.dtype: fp8");
  if (p.vendor == "NVIDIA" && (!fp8 || p.fp8_cores)) {
    l.tensorrt_llm = fmt::format(
        "trtllm-serve {} --tp_size {} --max_batch_size {} --max_num_tokens {} --max_seq_len {}{}",
        fp8 ? "<an FP8 checkpoint of " + p.model + ">" : ckpt, v.tp, v.largest.batch, v.budget, len,
        options.empty() ? std::string()
                        : " --extra_llm_api_options <a file with " +
                              fmt::format("{}", fmt::join(options, ", ")) + ">");
  }
  return l;
}

/// The launch lines and their pre-flight checks (GPUs only: the engines run on GPUs).
std::string RenderLaunch(const Plan& p, const PlanVariant& v) {
  if (!p.gpu || v.pp > 1) return "";
  const LaunchLines l = LaunchOf(p, v);
  std::string out = fmt::format(
      "launch one replica ({} of them; the batch it serves as the engines' request cap):\n",
      v.replicas);
  out += "  " + l.vllm + "\n  " + l.sglang + "\n";
  if (!l.tensorrt_llm.empty()) out += "  " + l.tensorrt_llm + "\n";
  out += "pre-flight:";
  for (const PreflightCheck& c : v.preflight) {
    out += fmt::format(" {} {}: {};", c.what, c.ok ? "ok" : "CHECK", c.detail);
  }
  out.back() = '\n';
  return out;
}

}  // namespace

std::string RenderPlanTable(const Plan& p) {
  const PlanRequest& r = p.request;
  const std::string fleet = r.gpus > 0 ? fmt::format("{} x {}", r.gpus, p.device)
                                       : p.device + " (the fleet sized for the load)";
  // "(lognormal:2048,0.6; 512 of them cached)": the spread and the prefix cache of a length.
  auto notes = [](const std::optional<Lengths>& l, int64_t cached) {
    std::vector<std::string> parts;
    if (l.has_value()) parts.push_back(l->ToString());
    if (cached > 0) parts.push_back(fmt::format("{} of them cached", cached));
    return parts.empty() ? std::string() : fmt::format(" ({})", fmt::join(parts, "; "));
  };
  std::string out = fmt::format(
      "plan: {} on {}, {} prompt{} + {} output{} tokens per request{}{}\n", p.model, fleet,
      r.prompt, notes(r.prompt_lengths, r.CachedTokens()), r.output, notes(r.output_lengths, 0),
      r.HasLoad() ? ", a load of " + LoadText(r) : "",
      r.price_per_hour > 0 ? fmt::format(", ${} per device-hour", r.price_per_hour) : "");
  out += fmt::format("parameters {} total, {} active per token\n", Si(p.params.total, ""),
                     Si(p.params.active, ""));
  const std::string noun = p.gpu ? "GPU" : "chip";
  for (const PlanVariant& v : p.variants) {
    out += fmt::format("\n== {} ({}) ==\n", v.name, v.dtypes);
    out += fmt::format(
        "layout: tp {}{} x {}{}; per device: weights {}, KV cache {} per "
        "sequence ({} tokens); KV room for a batch of {} per replica\n",
        v.tp,
        v.pp > 1 ? fmt::format(" x {} pipeline stages{}", v.pp,
                               v.micro_batches > 1
                                   ? fmt::format(" ({} micro-batches in flight)", v.micro_batches)
                                   : "")
                 : "",
        Count(static_cast<double>(v.replicas), "replica"),
        v.idle_gpus > 0 ? fmt::format(" ({} {}s idle)", v.idle_gpus, noun) : "",
        Si(v.weights_bytes, "B"), Si(v.kv_bytes_per_sequence, "B"), r.KvContext(), v.max_batch);
    // With micro-batches each is an engine of its own: its budget, its share of the KV room.
    const int64_t room = v.max_batch / v.micro_batches * v.micro_batches;
    out += fmt::format(
        "continuous batching: token budget {} per step{}; the budget prefills arrivals as fast "
        "as they come up to a batch of {}{}\n",
        v.budget,
        v.micro_batches > 1 ? fmt::format(" of each of the {} micro-batches (each batches its "
                                          "share of the requests on its own)",
                                          v.micro_batches)
                            : "",
        v.hold_limit, v.hold_limit < room ? " (below the KV room)" : " (the KV room binds first)");
    const bool expected = v.batch1.expected_request_s > 0;
    out += RenderLayouts(v, r, noun);
    std::vector<std::string> header = {
        "operating point",  "TTFT",   "time/token", "request", "out tok/s/" + noun,
        "in tok/s/" + noun, "$/M in", "$/M out",    "prefill", "decode"};
    std::vector<bool> right = {false, true, true, true, true, true, true, true, false, false};
    if (expected) {
      header.insert(header.end(),
                    {"expected TTFT", "expected t/token", "expected out tok/s/" + noun});
      right.insert(right.end(), {true, true, true});
    }
    TextTable t(header, right);
    std::vector<const PlanPoint*> rows = {&v.batch1, &v.largest, &v.flop_limit};
    if (v.load.has_value()) rows.push_back(&v.load->point);
    for (const PlanPoint* pt : rows) {
      std::vector<std::string> row = {pt->label,
                                      pt->ttft_s > 0 ? Seconds(pt->ttft_s) : "-",
                                      pt->tpot_s > 0 ? Seconds(pt->tpot_s) : "-",
                                      Seconds(pt->request_s),
                                      Rate(pt->output_tokens_per_s_per_gpu),
                                      Rate(pt->input_tokens_per_s_per_gpu),
                                      Dollars(pt->cost_per_m_input),
                                      Dollars(pt->cost_per_m_output),
                                      BoundText(p, pt->prefill_bound),
                                      BoundText(p, pt->decode_bound)};
      if (expected) {
        const bool has = pt->expected_request_s > 0;  // the FLOP limit has no expected time
        row.push_back(has ? Seconds(pt->expected_ttft_s) : "-");
        row.push_back(has ? Seconds(pt->expected_tpot_s) : "-");
        row.push_back(has ? Rate(pt->expected_output_tokens_per_s_per_gpu) : "-");
      }
      t.AddRow(row);
    }
    out += t.Render();
    out += RenderSteadyState(v.largest);
    out += RenderTargets(v, noun);
    out += RenderLoad(r, v, noun);
    out += RenderFrontier(v, noun);
    out += RenderLaunch(p, v);
    const double chips = static_cast<double>(v.largest.chips * v.replicas);
    out +=
        fmt::format("fleet: {} output tokens/s at the bound{} at the largest batch ({})\n",
                    Rate(v.largest.output_tokens_per_s_per_gpu * chips),
                    v.largest.expected_request_s > 0
                        ? fmt::format(", {} expected,",
                                      Rate(v.largest.expected_output_tokens_per_s_per_gpu * chips))
                        : "",
                    Count(static_cast<double>(v.replicas), "replica"));
    if (expected && v.prefill_band.has_value()) {
      out += "trust, TTFT at the largest batch: " +
             DescribeBand(*v.prefill_band, v.largest.expected_ttft_s) + "\n";
    }
    if (expected && v.decode_band.has_value()) {
      out += "trust, time per output token at the largest batch: " +
             DescribeBand(*v.decode_band, v.largest.expected_tpot_s) + "\n";
    }
  }
  if (p.variants.size() > 1) {
    const PlanVariant& a = p.variants[0];
    const PlanVariant& b = p.variants[1];
    if (a.load.has_value() && b.load.has_value() && a.load->targets_reachable &&
        b.load->targets_reachable && !a.load->too_many && !b.load->too_many) {
      out += fmt::format(
          "\nFP8 vs as configured, at the load: {}s the chosen layout needs to carry it {} -> {}, "
          "request {} -> {}\n",
          noun, a.load->gpus_needed, b.load->gpus_needed,
          Seconds(a.load->expected ? a.load->point.expected_request_s : a.load->point.request_s),
          Seconds(b.load->expected ? b.load->point.expected_request_s : b.load->point.request_s));
    }
    out += fmt::format(
        "\nFP8 vs as configured: largest batch served {} -> {}, output tokens/s per {} at it "
        "{} -> {} (x{:.2f}), at {} {} -> {} (x{:.2f})\n",
        a.largest.batch, b.largest.batch, noun, Rate(a.largest.output_tokens_per_s_per_gpu),
        Rate(b.largest.output_tokens_per_s_per_gpu),
        b.largest.output_tokens_per_s_per_gpu / a.largest.output_tokens_per_s_per_gpu,
        a.micro_batches == b.micro_batches ? FirstBatch(a.micro_batches)
                                           : std::string("the smallest batch"),
        Rate(a.batch1.output_tokens_per_s_per_gpu), Rate(b.batch1.output_tokens_per_s_per_gpu),
        b.batch1.output_tokens_per_s_per_gpu / a.batch1.output_tokens_per_s_per_gpu);
  }
  out += "\nassumptions:\n";
  for (const auto& a : p.assumptions) out += "  - " + a + "\n";
  return out;
}

std::string RenderPlanJson(const Plan& p) {
  using nlohmann::json;
  json j;
  j["model"] = p.model;
  j["device"] = p.device;
  j["gpus"] = p.request.gpus;
  j["prompt"] = p.request.prompt;
  j["output"] = p.request.output;
  j["price_per_hour"] = p.request.price_per_hour;
  for (const auto& [key, l] : {std::pair<const char*, const std::optional<Lengths>*>{
                                   "prompt_lengths", &p.request.prompt_lengths},
                               {"output_lengths", &p.request.output_lengths}}) {
    if (!l->has_value()) continue;
    j[key] = {{"spec", (*l)->ToString()},
              {"mean", (*l)->mean},
              {"p50", (*l)->AtPercentile(50)},
              {"p90", (*l)->AtPercentile(90)},
              {"p99", (*l)->AtPercentile(99)}};
  }
  if (p.request.prefix_hit > 0) {
    j["prefix_hit"] = p.request.prefix_hit;
    j["cached_tokens"] = p.request.CachedTokens();
  }
  if (p.request.rate > 0) j["load"] = {{"rate_per_s", p.request.rate}};
  if (p.request.concurrency > 0) j["load"] = {{"concurrency", p.request.concurrency}};
  json targets = json::array();
  for (const LatencyTarget& t : p.request.targets) {
    targets.push_back({{"metric", t.metric}, {"seconds", t.seconds}, {"percentile", t.percentile}});
  }
  j["targets"] = targets;
  j["parameters_total"] = p.params.total;
  j["parameters_active"] = p.params.active;
  auto Steady = [](const ServingFigures& f) {
    return json{{"step_s", f.step_s},           {"step_sd_s", f.step_sd_s},
                {"mixed_share", f.mixed_share}, {"ttft_residual_s", f.residual_s},
                {"ttft_queue_s", f.queue_s},    {"ttft_own_prefill_s", f.own_prefill_s}};
  };
  auto point = [&p, &Steady](const PlanPoint& pt) {
    json q;
    q["label"] = pt.label;
    q["batch"] = pt.batch;
    q["chips"] = pt.chips;
    // With micro-batches the shape and steady state below are one micro-batch's.
    q["micro_batches"] = pt.micro_batches;
    q["ttft_s"] = pt.ttft_s;
    q["time_per_output_token_s"] = pt.tpot_s;
    q["request_s"] = pt.request_s;
    q["output_tokens_per_s_per_gpu"] = pt.output_tokens_per_s_per_gpu;
    q["input_tokens_per_s_per_gpu"] = pt.input_tokens_per_s_per_gpu;
    q["cost_per_million_input_tokens"] = pt.cost_per_m_input;
    q["cost_per_million_output_tokens"] = pt.cost_per_m_output;
    q["prefill_bound"] = BoundText(p, pt.prefill_bound);
    q["decode_bound"] = BoundText(p, pt.decode_bound);
    if (pt.expected_request_s > 0) {
      q["expected"] = {{"ttft_s", pt.expected_ttft_s},
                       {"time_per_output_token_s", pt.expected_tpot_s},
                       {"request_s", pt.expected_request_s},
                       {"output_tokens_per_s_per_gpu", pt.expected_output_tokens_per_s_per_gpu},
                       {"steady_state", Steady(pt.expected_serving)}};
    }
    if (pt.serving.step_s > 0) {
      q["steady_state"] = Steady(pt.serving);
      q["prefill"] = {{"arrivals_per_step", pt.shape.arrivals_per_step},
                      {"chunked", pt.shape.chunked},
                      {"room_tokens", pt.shape.room},
                      {"chunk_steps", pt.shape.chunk_steps},
                      {"utilization", pt.shape.utilization}};
    }
    json checks = json::array();
    for (const TargetCheck& c : pt.checks) {
      checks.push_back({{"metric", c.target.metric},
                        {"target_s", c.target.seconds},
                        {"percentile", c.target.percentile},
                        {"value_s", c.value_s},
                        {"met", c.met},
                        {"from", c.expected ? "expected" : "bound"}});
    }
    if (!pt.checks.empty()) q["targets"] = checks;
    return q;
  };
  json variants = json::array();
  for (const PlanVariant& v : p.variants) {
    json jv;
    jv["name"] = v.name;
    jv["dtypes"] = v.dtypes;
    jv["tp"] = v.tp;
    jv["pp"] = v.pp;
    jv["micro_batches"] = v.micro_batches;
    jv["replicas"] = v.replicas;
    jv["idle_gpus"] = v.idle_gpus;
    jv["weights_bytes"] = v.weights_bytes;
    jv["kv_bytes_per_sequence"] = v.kv_bytes_per_sequence;
    jv["max_batch"] = v.max_batch;
    jv["token_budget"] = v.budget;
    jv["hold_limit"] = v.hold_limit;
    jv["meets_targets"] = v.meets_targets;
    if (!v.boundaries.empty()) {
      json bounds = json::array();
      for (const SloBoundary& b : v.boundaries) {
        bounds.push_back({{"metric", b.target.metric},
                          {"target_s", b.target.seconds},
                          {"percentile", b.target.percentile},
                          {"largest_batch", b.largest_batch}});
      }
      jv["target_boundaries"] = bounds;
    }
    if (!v.layouts.empty()) {
      json layouts = json::array();
      for (const PlanLayout& l : v.layouts) {
        json jl = {{"tp", l.tp},
                   {"pp", l.pp},
                   {"micro_batches", l.micro_batches},
                   {"fits", l.fits},
                   {"too_many_chips", l.too_many_chips},
                   {"chosen", Chosen(l, v)}};
        if (!l.not_planned.empty()) jl["not_planned"] = l.not_planned;
        if (l.fits) {
          jl["replicas"] = l.replicas;
          jl["idle_gpus"] = l.idle_gpus;
          jl["weights_bytes"] = l.weights_bytes;
          jl["max_batch"] = l.max_batch;
          jl["batch"] = l.batch;
          jl["meets_targets"] = l.meets_targets;
          jl["fleet_output_tokens_per_s"] = l.fleet_output_tokens_per_s;
          jl["fleet_cost_per_million_output_tokens"] = l.fleet_cost_per_m_output;
          if (l.load.has_value()) {
            const LoadServed& ls = *l.load;
            jl["load"] = {
                {"carried", ls.carried},
                {"overloaded", ls.overloaded},
                {"targets_reachable", ls.targets_reachable},
                {"gpus", ls.gpus},
                {"gpus_needed", ls.gpus_needed},
                {"more_than_a_million_gpus", ls.too_many},
                {"replicas", ls.replicas},
                {"share", ls.share},
                {"batch", ls.point.batch},
                {"fleet_requests_per_s", ls.fleet_requests_per_s},
                {"fleet_cost_per_million_output_tokens", ls.cost_per_m_output},
                {"request_s", ls.expected ? ls.point.expected_request_s : ls.point.request_s},
                {"from", ls.expected ? "expected" : "bound"}};
          }
          if (l.expected_fleet_output_tokens_per_s > 0) {
            jl["expected"] = {
                {"fleet_output_tokens_per_s", l.expected_fleet_output_tokens_per_s},
                {"fleet_cost_per_million_output_tokens", l.expected_fleet_cost_per_m_output}};
          }
        }
        layouts.push_back(jl);
      }
      jv["layouts_ranked_by"] = v.ranked_by_expected ? "expected" : "bound";
      jv["layouts"] = layouts;
    }
    jv["batch1"] = point(v.batch1);
    jv["largest_batch"] = point(v.largest);
    jv["flop_limit"] = point(v.flop_limit);
    if (v.load.has_value()) {
      const LoadServed& ls = *v.load;
      jv["load"] = {{"carried", ls.carried},
                    {"overloaded", ls.overloaded},
                    {"targets_reachable", ls.targets_reachable},
                    {"from", ls.expected ? "expected" : "bound"},
                    {"gpus", ls.gpus},
                    {"replicas", ls.replicas},
                    {"gpus_needed", ls.gpus_needed},
                    {"more_than_a_million_gpus", ls.too_many},
                    {"capacity_requests_per_s", ls.capacity_rate},
                    {"capacity_batch", ls.capacity_batch},
                    {"share", ls.share},
                    {"fleet_requests_per_s", ls.fleet_requests_per_s},
                    {"fleet_output_tokens_per_s", ls.fleet_output_tokens_per_s},
                    {"fleet_cost_per_million_output_tokens", ls.cost_per_m_output},
                    {"at_load", point(ls.point)}};
    }
    json pareto = json::array();
    for (const ParetoPoint& q : v.pareto) {
      if (!q.frontier) continue;
      pareto.push_back({{"tp", q.tp},
                        {"pp", q.pp},
                        {"batch", q.batch},
                        {"tokens_per_s_per_gpu", q.tokens_per_s_per_gpu},
                        {"tokens_per_s_per_user", q.tokens_per_s_per_user},
                        {"ttft_s", q.ttft_s},
                        {"tpot_s", q.tpot_s},
                        {"from", q.expected ? "expected" : "bound"},
                        {"meets_targets", q.meets_targets}});
    }
    jv["pareto"] = pareto;
    if (p.gpu && v.pp == 1) {
      const LaunchLines l = LaunchOf(p, v);
      jv["launch"] = {{"vllm", l.vllm}, {"sglang", l.sglang}};
      if (!l.tensorrt_llm.empty()) jv["launch"]["tensorrt_llm"] = l.tensorrt_llm;
    }
    json preflight = json::array();
    for (const PreflightCheck& c : v.preflight) {
      preflight.push_back({{"check", c.what}, {"ok", c.ok}, {"detail", c.detail}});
    }
    jv["preflight"] = preflight;
    if (v.prefill_band.has_value()) jv["prefill_band"] = BandJson(*v.prefill_band, 0);
    if (v.decode_band.has_value()) jv["decode_band"] = BandJson(*v.decode_band, 0);
    variants.push_back(jv);
  }
  j["variants"] = variants;
  j["assumptions"] = p.assumptions;
  return j.dump(2) + "\n";
}

}  // namespace roofline
