// `roofline plan MODEL --hw ID [--gpus N] [--rate R | --concurrency C] --prompt P --output G
// [--price-per-hour X]`.
#include <fmt/format.h>

#include <optional>
#include <ostream>
#include <tuple>

#include "roofline/plan.h"
#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

int RunPlan(Context& ctx) {
  CLI::App app{
      "A serving estimate for a fleet under continuous batching: layout, the largest batch "
      "that fits and meets the latency targets, TTFT and time per output token, throughput "
      "from batch 1 to the FLOP limit, cost per million tokens, FP8 and MoE effects.\n"
      "example: roofline plan llama-3-70b --hw h100-sxm --gpus 8 --prompt 2048 "
      "--output 256 --price-per-hour 2.5",
      "roofline plan"};
  Scenario s;
  PlanRequest r;
  app.add_option("MODEL", s.model, "preset id, config.json, or a directory holding one")
      ->required();
  CLI::Option* gpus = app.add_option(
      "--gpus", r.gpus,
      "devices in the fleet (default: 1; with --rate or --concurrency, the fewest that carry it)");
  CLI::Option* rate = app.add_option(
      "--rate", r.rate,
      "a load: requests per second arriving at the fleet (Poisson), spread over the replicas; "
      "the plan says how the fleet carries it, or without --gpus sizes the fleet for it");
  CLI::Option* concurrency =
      app.add_option("--concurrency", r.concurrency,
                     "a load: requests kept in flight over the fleet (a benchmark's clients, "
                     "each sending its next request when one returns); as --rate")
          ->transform(SizeSuffix());
  std::string prompt = "2048", output = "256";
  app.add_option("--prompt", prompt,
                 "prompt tokens per request: one length (2048, 2k) or a spread of them, "
                 "lognormal:MEAN,SIGMA (the mean and the sigma of the log, e.g. "
                 "lognormal:2048,0.6) or uniform:LOW,HIGH (default: 2048)");
  app.add_option("--output", output,
                 "generated tokens per request, one length or a spread, as --prompt (default: "
                 "256)");
  app.add_option("--price-per-hour", r.price_per_hour,
                 "price of one device-hour (default: 0, no costs)");
  app.add_option("--prefix-hit", r.prefix_hit,
                 "the share of each prompt found in the prefix cache (a shared system prompt, a "
                 "conversation's history), in [0, 1): attended to but not prefilled; each "
                 "sequence still holds its whole prompt in the KV cache (default: 0)");
  CLI::Option* budget =
      app.add_option("--max-batched-tokens", r.budget,
                     "tokens per step, decode rows and prefill together (vLLM's "
                     "--max-num-batched-tokens; default: vLLM's for an OpenAI server, 8192 on a "
                     "device of 70 GiB or more other than an A100, else 2048)")
          ->transform(SizeSuffix());
  std::string ttft, tpot, e2e;
  app.add_option("--ttft", ttft,
                 "time-to-first-token target, e.g. 2s, 500ms, 0.5, with @p90 (p50, p90, p95, "
                 "p99; default p50): the plan serves the largest batch that meets it");
  app.add_option("--tpot", tpot, "time-per-output-token target, e.g. 50ms@p90 (as --ttft)");
  app.add_option("--e2e", e2e,
                 "end-to-end request target, e.g. 20s@p99 (TTFT + (output - 1) x time per "
                 "token, as --ttft)");
  // The plan chooses the batch and the layout: --batch, --context and --phase are not its
  // inputs; --tp fixes the layout (default: the smallest that fits).
  const ScenarioOptions options(
      app, Without(ScenarioFieldsOf(kScopeLlm),
                   {FieldId::kBatch, FieldId::kContext, FieldId::kPhase, FieldId::kPrompt}));
  // The plan chooses the layout: --tp has no fixed default here.
  app.get_option("--tp")->description(
      "tensor-parallel degree (default: of the powers of two up to --gpus whose footprint for "
      "one sequence fits a device, the one that serves the most output tokens per device at its "
      "largest batch; each is listed; on GPUs, degrees within one link domain, and where none "
      "holds the model or --gpus spans more than one domain, each also with 2, 4, ... pipeline "
      "stages)");
  app.get_option("--pp")->description(
      "pipeline stages (layers split over chips in sequence as vLLM splits them); on GPUs one "
      "micro-batch in flight per stage, each batching its share of the requests on its own; "
      "default: searched with --tp where no tensor-parallel degree holds the model or --gpus "
      "spans more than one link domain, or on SRAM-only devices the fewest chips that hold it "
      "(their stages run one after another)");
  OutputFormat format = OutputFormat::kTable;
  AddFormatOption(app, format, {"table", "json", "csv", "npy"});
  std::string plot;
  app.add_option("--plot", plot,
                 "write an SVG of output tokens/s per GPU against tokens/s per user: every "
                 "layout tried at batches 1, 2, 4, ... and the Pareto frontier");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  for (const auto& [text, flag, spread] :
       {std::tuple<const std::string*, const char*, std::optional<Lengths>*>{&prompt, "--prompt",
                                                                             &r.prompt_lengths},
        {&output, "--output", &r.output_lengths}}) {
    Result<Lengths> lengths = ParseLengths(*text, flag);
    if (!lengths.ok()) return Fail(ctx, lengths.status());
    *spread = *lengths;
  }
  r.prompt = r.prompt_lengths->Mean();
  r.output = r.output_lengths->Mean();
  s.workload.prompt = r.prompt;
  if (rate->count() > 0 && !(r.rate >= 1e-6 && r.rate <= 1e9)) {
    return Fail(
        ctx, Status::Invalid("--rate", "must be a number of requests per second from 1e-6 to 1e9"));
  }
  if (concurrency->count() > 0 && r.concurrency == 0) {
    return Fail(ctx, Status::Invalid("--concurrency", "must be between 1 and 2^24, got 0"));
  }
  if (gpus->count() > 0 && r.gpus < 1) {
    return Fail(ctx, Status::Invalid("--gpus",
                                     fmt::format("must be between 1 and 1000000, got {}", r.gpus)));
  }
  if (gpus->count() == 0 && r.HasLoad()) r.gpus = 0;  // the plan sizes the fleet
  if (budget->count() > 0 && r.budget == 0) {
    return Fail(ctx, Status::Invalid("--max-batched-tokens", "must be between 2 and 2^24, got 0"));
  }
  for (const auto& [metric, text] : {std::pair<std::string, const std::string*>{"ttft", &ttft},
                                     {"tpot", &tpot},
                                     {"e2e", &e2e}}) {
    if (app.get_option("--" + metric)->count() == 0) continue;
    Result<LatencyTarget> target = ParseLatencyTarget(metric, *text, "--" + metric);
    if (!target.ok()) return Fail(ctx, target.status());
    r.targets.push_back(*target);
  }
  ViewRequest request;
  request.format = format;
  request.plot = plot;
  Result<Views> views = PlanViews(s, r, request, [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

}  // namespace roofline::cli
