// Published end-to-end runs: parsing, and each run's bound and expected time beside it.
#include "roofline/published.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "roofline/engine.h"
#include "roofline/model_analysis.h"
#include "roofline/setup.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"
#include "src/validate/run_fields.h"

namespace roofline {
namespace {

using nlohmann::json;

/// The keys of a run that describe it, beside the scenario's fields.
constexpr const char* kRunKeys[] = {"id",      "measured", "framework",        "stack",
                                    "source",  "quote",    "gpu_as_published", "notes",
                                    "holdout", "blind",    "blind_expected_s", "engine_version",
                                    "checked"};
/// The scenario fields every run must state (the others take the tool's defaults).
constexpr FieldId kRequiredFields[] = {FieldId::kModel,   FieldId::kHw,          FieldId::kTp,
                                       FieldId::kBatch,   FieldId::kPhase,       FieldId::kPrompt,
                                       FieldId::kDtype,   FieldId::kWeightDtype, FieldId::kKvDtype,
                                       FieldId::kRuntime, FieldId::kFusion};

}  // namespace

void ReadRunField(Scenario& s, const Field& f, const json& r, const std::string& where) {
  const std::string key(f.name);
  std::string text;
  if (f.type == FieldType::kSize || f.type == FieldType::kCount) {
    text = std::to_string(RequirePositiveInteger(r, key, where));
  } else if (f.type == FieldType::kFlag) {
    if (!r.at(key).is_boolean()) throw JsonFieldError(where + "." + key, "expected true or false");
    text = r.at(key).get<bool>() ? "true" : "false";
  } else {
    text = RequireString(r, key, where);
  }
  if (Status st = SetField(s, f.id, text); !st.ok()) {
    const Status in_file = InFile(st, where);
    throw JsonFieldError(in_file.where(), in_file.what());
  }
}

namespace {

PublishedRun ParseRun(const json& r, const std::string& field) {
  RequireObject(r, field);
  std::vector<std::string> keys(std::begin(kRunKeys), std::end(kRunKeys));
  for (const Field& f : ScenarioFields()) {
    if (f.published) keys.emplace_back(f.name);
  }
  CheckKeys(r, field, keys);
  PublishedRun p;
  p.id = RequireString(r, "id", field);
  const std::string where = field + " (" + p.id + ")";
  for (FieldId id : kRequiredFields) {
    if (!r.contains(std::string(FieldOf(id).name))) {
      throw JsonFieldError(where + "." + std::string(FieldOf(id).name), "missing");
    }
  }
  Scenario& s = p.scenario;
  for (const Field& f : ScenarioFields()) {
    if (f.published && r.contains(std::string(f.name))) ReadRunField(s, f, r, where);
  }
  if (s.phases == PhaseSelection::kBoth) {
    throw JsonFieldError(where + ".phase", "expected prefill or decode, got 'both'");
  }
  p.phase = s.phases == PhaseSelection::kPrefill ? Phase::kPrefill : Phase::kDecode;
  if (Status st = Validate(s, /*is_network=*/false); !st.ok()) {
    const Status in_file = InFile(st, where);
    throw JsonFieldError(in_file.where(), in_file.what());
  }
  if (!r.contains("measured")) throw JsonFieldError(where + ".measured", "missing");
  const json& m = r.at("measured");
  RequireObject(m, where + ".measured");
  CheckKeys(m, where + ".measured", {"metric", "value"});
  p.metric = RequireString(m, "metric", where + ".measured");
  p.value = RequirePositive(m, "value", where + ".measured");
  if (p.metric == "decode_tokens_per_s_per_user" || p.metric == "tpot_s") {
    if (p.phase != Phase::kDecode) {
      throw JsonFieldError(where + ".measured.metric", p.metric + " needs phase decode");
    }
    p.measured_s = p.metric == "tpot_s" ? p.value : 1 / p.value;
  } else if (p.metric == "ttft_s") {
    if (p.phase != Phase::kPrefill) {
      throw JsonFieldError(where + ".measured.metric", "ttft_s needs phase prefill");
    }
    p.measured_s = p.value;
  } else {
    throw JsonFieldError(where + ".measured.metric",
                         "unknown metric '" + p.metric +
                             "' (expected decode_tokens_per_s_per_user, tpot_s or ttft_s)");
  }
  if (p.measured_s > 1e3) {
    throw JsonFieldError(where + ".measured.value", "implausible: a step of over 1000 s");
  }
  p.framework = RequireString(r, "framework", where);
  // The stack groups the rows in the summary: a short lowercase name, so that one stack is not
  // split over two spellings ("vLLM", "vllm 0.4").
  p.stack = RequireString(r, "stack", where, "every run names the software that runs its steps");
  if (p.stack.size() > 32 || p.stack[0] < 'a' || p.stack[0] > 'z' ||
      !std::all_of(p.stack.begin(), p.stack.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.';
      })) {
    throw JsonFieldError(where + ".stack",
                         "expected a short lowercase name (a letter, then a-z, 0-9, '-', '.'), "
                         "got '" +
                             p.stack + "'");
  }
  p.source = RequireString(r, "source", where, "every run needs its source");
  p.quote = RequireString(r, "quote", where, "every run quotes its source");
  if (r.contains("notes")) p.notes = RequireString(r, "notes", where);
  if (r.contains("gpu_as_published"))
    p.gpu_as_published = RequireString(r, "gpu_as_published", where);
  if (r.contains("holdout")) {
    if (!r.at("holdout").is_boolean())
      throw JsonFieldError(where + ".holdout", "expected true or false");
    p.holdout = r.at("holdout").get<bool>();
  }
  if (r.contains("blind")) {
    if (!r.at("blind").is_boolean())
      throw JsonFieldError(where + ".blind", "expected true or false");
    p.blind = r.at("blind").get<bool>();
    if (p.blind && !p.holdout) {
      throw JsonFieldError(where + ".blind", "a blind run is a holdout run: set holdout too");
    }
    if (p.blind) {
      p.blind_expected_s = RequirePositive(r, "blind_expected_s", where);
    }
  }
  return p;
}

// The errors of the checks with expected times that `keep` selects.
template <typename Keep>
ErrorSummary Summarize(const std::vector<PublishedCheck>& checks, Keep keep) {
  std::vector<double> errors;
  for (const PublishedCheck& c : checks) {
    if (!c.has_expected || !keep(c)) continue;  // bound-only rows: no expected time to judge
    errors.push_back(c.error);
  }
  return SummarizeErrors(std::move(errors));
}

// One summary per stack, the largest (rows with expected times) first, then by name.
std::vector<StackSummary> SummarizeStacks(const std::vector<PublishedCheck>& checks) {
  std::vector<StackSummary> out;
  for (const PublishedCheck& c : checks) {
    if (std::any_of(out.begin(), out.end(),
                    [&](const StackSummary& s) { return s.stack == c.run.stack; })) {
      continue;
    }
    StackSummary s;
    s.stack = c.run.stack;
    const auto mine = [&](const PublishedCheck& x) { return x.run.stack == s.stack; };
    s.errors = Summarize(checks, mine);
    s.bound_only =
        static_cast<int>(std::count_if(checks.begin(), checks.end(), [&](const PublishedCheck& x) {
          return mine(x) && !x.has_expected;
        }));
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const StackSummary& a, const StackSummary& b) {
    return a.errors.rows != b.errors.rows ? a.errors.rows > b.errors.rows : a.stack < b.stack;
  });
  return out;
}

}  // namespace

ErrorSummary SummarizeErrors(std::vector<double> errors) {
  ErrorSummary s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  const auto [lo, hi] = std::minmax_element(errors.begin(), errors.end());
  s.min_error = *lo;
  s.max_error = *hi;
  for (double& e : errors) e = std::abs(e);
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  s.median_abs_error = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  s.max_abs_error = errors.back();
  s.within_40 = static_cast<int>(
      std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 0.40; }));
  return s;
}

Result<RunSetup> ResolveRun(const Scenario& sc, const std::string& where, const DeviceDatabase& db,
                            const ModelRegistry& registry,
                            std::shared_ptr<const EfficiencyData> efficiency) {
  RunSetup s;
  Result<const Device*> device = db.Find(sc.hw);
  if (!device.ok()) return Status::Invalid(where + ".hw", device.status().what());
  s.device = *device;
  Result<TransformerConfig> config = ResolveModel(sc.model, registry);
  if (!config.ok()) return Status::Invalid(where + ".model", config.status().what());
  s.config = std::move(config).value();
  Result<CostOptions> o = MakeCostOptions(sc, *s.device, efficiency, /*refuse_unused=*/false);
  if (!o.ok()) return InFile(o.status(), where);
  s.cost = std::move(o).value();
  Scenario with_engine = sc;
  if (Result<std::shared_ptr<const Engine>> e = ApplyEngineFields(with_engine); !e.ok()) {
    return InFile(e.status(), where);
  }
  s.workload = with_engine.workload;
  return s;
}

Result<RunsText> DefaultRunsText(const std::string& name) {
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') {
    const std::string path = std::string(dir) + "/validation/" + name;
    Result<std::string> text = ReadTextFile(path);
    if (!text.ok()) return text.status();
    return RunsText{*text, path};
  }
  if (const EmbeddedFile* f = FindEmbeddedFile("validation/" + name)) {
    return RunsText{std::string(f->content), "<embedded>/data/validation/" + name};
  }
  return Status::NotFound("<embedded>/data/validation/" + name, "not compiled into this build");
}

Result<std::vector<PublishedRun>> ParsePublishedRuns(std::string_view json_text,
                                                     const std::string& origin) {
  return ParseRunsFile<PublishedRun>(json_text, origin, "published runs", ParseRun);
}

Result<std::vector<PublishedRun>> LoadPublishedRunsFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParsePublishedRuns(*text, path);
}

Result<std::vector<PublishedRun>> LoadDefaultPublishedRuns() {
  Result<RunsText> t = DefaultRunsText("published_runs.json");
  if (!t.ok()) return t.status();
  return ParsePublishedRuns(t->text, t->origin);
}

Result<PublishedValidation> ValidatePublished(const std::vector<PublishedRun>& runs,
                                              const DeviceDatabase& db,
                                              const ModelRegistry& registry,
                                              std::shared_ptr<const EfficiencyData> efficiency) {
  PublishedValidation v;
  if (!efficiency) return Status::Invalid("validate published", "no efficiency data");
  v.efficiency_origin = efficiency->origin;
  if (!runs.empty()) v.origin = runs.front().where.substr(0, runs.front().where.find(": runs["));
  for (const PublishedRun& run : runs) {
    Result<RunSetup> setup = ResolveRun(run.scenario, run.where, db, registry, efficiency);
    if (!setup.ok()) return setup.status();
    const CostModel model(*setup->device, setup->cost);
    Result<Workload> staged = ResolveStages(setup->config, setup->workload, *setup->device);
    if (!staged.ok()) return Status::Invalid(run.where, staged.status().ToString());
    Result<PhaseResult> phase = AnalyzePhase(setup->config, *staged, model, run.phase);
    if (!phase.ok()) return Status::Invalid(run.where, phase.status().ToString());
    PublishedCheck c;
    c.run = run;
    c.run.scenario.workload = *staged;
    c.bound_s = phase->totals.time_s;
    c.has_expected = phase->totals.has_expected;
    if (c.has_expected) {
      c.expected_s = phase->totals.expected_s;
      c.error = (c.expected_s - run.measured_s) / run.measured_s;
      c.blind =
          run.blind && std::abs(c.expected_s - run.blind_expected_s) <= 1e-9 * run.blind_expected_s;
    } else {
      ++v.bound_only;
    }
    c.bound_below = c.bound_s <= run.measured_s;
    v.bounds_above += c.bound_below ? 0 : 1;
    v.checks.push_back(std::move(c));
  }
  v.all = Summarize(v.checks, [](const PublishedCheck&) { return true; });
  v.development = Summarize(v.checks, [](const PublishedCheck& c) { return !c.run.holdout; });
  v.holdout = Summarize(v.checks, [](const PublishedCheck& c) { return c.run.holdout; });
  v.blind = Summarize(v.checks, [](const PublishedCheck& c) { return c.blind; });
  v.stacks = SummarizeStacks(v.checks);
  return v;
}

Result<PublishedValidation> ValidatePublished(const std::vector<PublishedRun>& runs) {
  Result<DeviceDatabase> db = DeviceDatabase::LoadDefault();
  if (!db.ok()) return db.status();
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return registry.status();
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  if (!data.ok()) return data.status();
  return ValidatePublished(runs, *db, *registry,
                           std::make_shared<const EfficiencyData>(std::move(data).value()));
}

}  // namespace roofline
