// Published serving runs: parsing, and each run beside the plan's point at its load.
#include "roofline/serving_runs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "roofline/engine.h"
#include "roofline/plan.h"
#include "roofline/serving.h"
#include "roofline/setup.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"
#include "src/validate/run_fields.h"

namespace roofline {
namespace {

using nlohmann::json;

constexpr const char* kServingRunKeys[] = {"id",
                                           "output",
                                           "concurrency",
                                           "offline",
                                           "num_prompts",
                                           "max_batched_tokens",
                                           "measured",
                                           "stack",
                                           "framework",
                                           "source",
                                           "quote",
                                           "notes",
                                           "gpu_as_published",
                                           "engine_version"};
/// The scenario fields every run states; batch, phase and context belong to the load instead.
constexpr FieldId kServingRequiredFields[] = {
    FieldId::kModel,       FieldId::kHw,      FieldId::kTp,      FieldId::kPrompt, FieldId::kDtype,
    FieldId::kWeightDtype, FieldId::kKvDtype, FieldId::kRuntime, FieldId::kFusion};
constexpr FieldId kServingLoadFields[] = {FieldId::kBatch, FieldId::kPhase, FieldId::kContext};

ServingRun ParseServingRun(const json& r, const std::string& field) {
  RequireObject(r, field);
  std::vector<std::string> keys(std::begin(kServingRunKeys), std::end(kServingRunKeys));
  for (const Field& f : ScenarioFields()) {
    const bool load = std::find(std::begin(kServingLoadFields), std::end(kServingLoadFields),
                                f.id) != std::end(kServingLoadFields);
    if (f.published && !load) keys.emplace_back(f.name);
  }
  CheckKeys(r, field, keys);
  ServingRun p;
  p.id = RequireString(r, "id", field);
  const std::string where = field + " (" + p.id + ")";
  for (FieldId id : kServingRequiredFields) {
    if (!r.contains(std::string(FieldOf(id).name))) {
      throw JsonFieldError(where + "." + std::string(FieldOf(id).name), "missing");
    }
  }
  Scenario& s = p.scenario;
  for (const Field& f : ScenarioFields()) {
    if (f.published && r.contains(std::string(f.name))) ReadRunField(s, f, r, where);
  }
  if (Status st = Validate(s, /*is_network=*/false); !st.ok()) {
    const Status in_file = InFile(st, where);
    throw JsonFieldError(in_file.where(), in_file.what());
  }
  p.output = RequirePositiveInteger(r, "output", where);
  if (p.output > (int64_t{1} << 24)) {
    throw JsonFieldError(where + ".output", "must be at most 2^24");
  }
  if (r.contains("offline")) {
    if (!r.at("offline").is_boolean()) {
      throw JsonFieldError(where + ".offline", "expected true or false");
    }
    p.offline = r.at("offline").get<bool>();
  }
  if (p.offline == r.contains("concurrency")) {
    throw JsonFieldError(where + ".concurrency",
                         p.offline ? "an offline run sends every request at once: no concurrency"
                                   : "missing (or offline: true)");
  }
  if (!p.offline) {
    p.concurrency = RequirePositiveInteger(r, "concurrency", where);
    if (p.concurrency > (int64_t{1} << 20)) {
      throw JsonFieldError(where + ".concurrency", "must be at most 2^20");
    }
  }
  if (r.contains("num_prompts")) {
    p.num_prompts = RequirePositiveInteger(r, "num_prompts", where);
    if (p.num_prompts > (int64_t{1} << 30)) {
      throw JsonFieldError(where + ".num_prompts", "must be at most 2^30");
    }
  }
  if (r.contains("max_batched_tokens")) {
    p.budget = RequirePositiveInteger(r, "max_batched_tokens", where);
    if (p.budget < 2 || p.budget > (int64_t{1} << 24)) {
      throw JsonFieldError(where + ".max_batched_tokens", "must be between 2 and 2^24");
    }
  }
  if (!r.contains("measured")) throw JsonFieldError(where + ".measured", "missing");
  const json& m = r.at("measured");
  const std::string mw = where + ".measured";
  RequireObject(m, mw);
  CheckKeys(m, mw, {"output_tokens_per_s", "ttft_s", "tpot_s", "statistic"});
  if (m.contains("output_tokens_per_s"))
    p.output_tokens_per_s = RequirePositive(m, "output_tokens_per_s", mw);
  if (m.contains("ttft_s")) p.ttft_s = RequirePositive(m, "ttft_s", mw);
  if (m.contains("tpot_s")) p.tpot_s = RequirePositive(m, "tpot_s", mw);
  if (p.output_tokens_per_s == 0 && p.ttft_s == 0 && p.tpot_s == 0) {
    throw JsonFieldError(mw, "expected output_tokens_per_s, ttft_s or tpot_s");
  }
  if (p.output_tokens_per_s > 1e9 || p.ttft_s > 1e4 || p.tpot_s > 1e3) {
    throw JsonFieldError(mw, "implausible value");
  }
  p.statistic = m.contains("statistic") ? RequireString(m, "statistic", mw) : "mean";
  if (p.statistic != "mean" && p.statistic != "median") {
    throw JsonFieldError(mw + ".statistic", "expected mean or median, got '" + p.statistic + "'");
  }
  p.stack = RequireString(r, "stack", where, "every run names the engine that served it");
  p.framework = RequireString(r, "framework", where);
  p.source = RequireString(r, "source", where, "every run needs its source");
  p.quote = RequireString(r, "quote", where, "every run quotes its source");
  if (r.contains("notes")) p.notes = RequireString(r, "notes", where);
  if (r.contains("gpu_as_published")) {
    p.gpu_as_published = RequireString(r, "gpu_as_published", where);
  }
  return p;
}

double SignedError(double expected, double measured) {
  return measured > 0 && expected > 0 ? (expected - measured) / measured
                                      : std::numeric_limits<double>::quiet_NaN();
}

ErrorSummary ServingSummaryOf(const std::vector<ServingCheck>& checks, double ServingCheck::*error,
                              const std::string& stack) {
  std::vector<double> errors;
  for (const ServingCheck& c : checks) {
    if (!stack.empty() && c.run.stack != stack) continue;
    if (c.has_expected && !std::isnan(c.*error)) errors.push_back(c.*error);
  }
  return SummarizeErrors(std::move(errors));
}

}  // namespace

Result<std::vector<ServingRun>> ParseServingRuns(std::string_view json_text,
                                                 const std::string& origin) {
  return ParseRunsFile<ServingRun>(json_text, origin, "serving runs", ParseServingRun);
}

Result<std::vector<ServingRun>> LoadServingRunsFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseServingRuns(*text, path);
}

Result<std::vector<ServingRun>> LoadDefaultServingRuns() {
  Result<RunsText> t = DefaultRunsText("serving_runs.json");
  if (!t.ok()) return t.status();
  return ParseServingRuns(t->text, t->origin);
}

Result<ServingValidation> ValidateServing(const std::vector<ServingRun>& runs,
                                          const DeviceDatabase& db, const ModelRegistry& registry,
                                          std::shared_ptr<const EfficiencyData> efficiency) {
  ServingValidation v;
  if (!efficiency) return Status::Invalid("validate serving", "no efficiency data");
  if (!runs.empty()) v.origin = runs.front().where.substr(0, runs.front().where.find(": runs["));
  for (const ServingRun& run : runs) {
    Result<RunSetup> setup = ResolveRun(run.scenario, run.where, db, registry, efficiency);
    if (!setup.ok()) return setup.status();
    PlanRequest r;
    r.tp = setup->workload.tp;
    r.gpus = setup->workload.tp;
    r.prompt = run.scenario.workload.prompt;
    r.output = run.output;
    r.budget = run.budget;
    r.cost = setup->cost;
    Result<PlanPointAtBatch> room =
        PlanPointAt(setup->config, setup->workload, *setup->device, r, 1);
    if (!room.ok()) return InFile(room.status(), run.where);
    // An engine runs at most what its memory holds and what its budget prefills as the requests
    // arrive (utilization below 1); the rest wait. An offline run fills the replica, up to its
    // requests.
    int64_t want = run.offline ? room->kv_room : run.concurrency;
    if (run.offline && run.num_prompts > 0) want = std::min(want, run.num_prompts);
    const int64_t held =
        LargestBatchHeld(std::min(want, room->kv_room), {1, r.prompt, r.output, room->budget},
                         std::nextafter(1.0, 0.0));
    if (held < 1) {
      return Status::Invalid(run.where, "not one request of the run fits the replica");
    }
    const bool capped = !run.offline && run.concurrency > held;
    const int64_t batch = held;
    Result<PlanPointAtBatch> at =
        PlanPointAt(setup->config, setup->workload, *setup->device, r, batch);
    if (!at.ok()) return InFile(at.status(), run.where);
    const PlanPoint& p = at->point;
    ServingCheck c;
    c.run = run;
    c.kv_room = at->kv_room;
    c.batch = batch;
    c.capped = capped;
    c.budget = at->budget;
    const double chips = static_cast<double>(p.chips);
    c.bound_output_tokens_per_s = p.output_tokens_per_s_per_gpu * chips;
    // Mean against mean, median against median.
    const bool mean = run.statistic == "mean";
    c.bound_ttft_s = mean ? p.serving.ttft_mean_s : p.ttft_s;
    c.bound_tpot_s = mean ? p.serving.tpot_mean_s : p.tpot_s;
    c.has_expected = p.expected_request_s > 0;
    if (c.has_expected) {
      c.expected_output_tokens_per_s = p.expected_output_tokens_per_s_per_gpu * chips;
      c.expected_ttft_s = mean ? p.expected_serving.ttft_mean_s : p.expected_ttft_s;
      c.expected_tpot_s = mean ? p.expected_serving.tpot_mean_s : p.expected_tpot_s;
    }
    c.throughput_error = SignedError(c.expected_output_tokens_per_s, run.output_tokens_per_s);
    c.ttft_error = run.offline ? std::numeric_limits<double>::quiet_NaN()
                               : SignedError(c.expected_ttft_s, run.ttft_s);
    c.tpot_error = SignedError(c.expected_tpot_s, run.tpot_s);
    c.bound_holds =
        (run.output_tokens_per_s == 0 || c.bound_output_tokens_per_s >= run.output_tokens_per_s) &&
        (run.tpot_s == 0 || c.bound_tpot_s <= run.tpot_s);
    v.bounds_broken += c.bound_holds ? 0 : 1;
    v.checks.push_back(std::move(c));
  }
  v.throughput = ServingSummaryOf(v.checks, &ServingCheck::throughput_error, "");
  v.ttft = ServingSummaryOf(v.checks, &ServingCheck::ttft_error, "");
  v.tpot = ServingSummaryOf(v.checks, &ServingCheck::tpot_error, "");
  for (const ServingCheck& c : v.checks) {
    if (std::any_of(v.stacks.begin(), v.stacks.end(),
                    [&](const ServingValidation::Group& g) { return g.stack == c.run.stack; })) {
      continue;
    }
    ServingValidation::Group g;
    g.stack = c.run.stack;
    g.throughput = ServingSummaryOf(v.checks, &ServingCheck::throughput_error, g.stack);
    g.tpot = ServingSummaryOf(v.checks, &ServingCheck::tpot_error, g.stack);
    g.ttft = ServingSummaryOf(v.checks, &ServingCheck::ttft_error, g.stack);
    v.stacks.push_back(std::move(g));
  }
  return v;
}

Result<ServingValidation> ValidateServing(const std::vector<ServingRun>& runs) {
  Result<DeviceDatabase> db = DeviceDatabase::LoadDefault();
  if (!db.ok()) return db.status();
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return registry.status();
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  if (!data.ok()) return data.status();
  return ValidateServing(runs, *db, *registry,
                         std::make_shared<const EfficiencyData>(std::move(data).value()));
}

}  // namespace roofline
