// `roofline plan MODEL --hw ID --gpus N --prompt P --output G [--price-per-hour X]`.
#include <ostream>

#include "roofline/plan.h"
#include "roofline/report.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {

int RunPlan(Context& ctx) {
  CLI::App app{
      "A serving estimate for a fleet: layout, largest batch, latency and throughput "
      "from batch 1 to the FLOP limit, cost per million tokens, FP8 and MoE effects.\n"
      "example: roofline plan llama-3-70b --hw h100-sxm --gpus 8 --prompt 2048 "
      "--output 256 --price-per-hour 2.5",
      "roofline plan"};
  ModelOptions o;
  PlanRequest r;
  app.add_option("MODEL", o.model, "preset id, config.json, or a directory holding one")
      ->required();
  app.add_option("--gpus", r.gpus, "devices in the fleet")->capture_default_str();
  app.add_option("--output", r.output, "generated tokens per request")->capture_default_str();
  app.add_option("--price-per-hour", r.price_per_hour, "price of one device-hour (0: no costs)")
      ->capture_default_str();
  AddWorkloadOptions(app, o);  // --prompt and --tp come from here
  AddFormatOption(app, o.format, {"table", "json"});
  if (auto done = ParseArgs(app, ctx)) return *done;
  r.prompt = o.prompt;
  const bool tp_given = app.get_option("--tp")->count() > 0;
  r.tp = tp_given ? o.tp : 0;
  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  r.cost = setup->cost;
  Result<Plan> plan = MakePlan(setup->config, setup->workload, setup->device, r);
  if (!plan.ok()) return Fail(ctx, plan.status());
  plan->model = o.model;
  *ctx.out << (o.format == OutputFormat::kJson ? RenderPlanJson(*plan) : RenderPlanTable(*plan));
  return kExitOk;
}

}  // namespace roofline::cli
