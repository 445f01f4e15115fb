// Trust bands: the published runs grouped by how the model costs them, each group costed once.
#include "roofline/trust.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "roofline/cost.h"
#include "roofline/engine.h"

namespace roofline {
namespace {

/// Whether a run of key `run` belongs to the group of `key` at `level`.
bool InGroup(const TrustKey& run, const TrustKey& key, TrustLevel level) {
  if (level == TrustLevel::kEngine) {  // the engine, and every criterion of the key's own group
    return run.engine == key.engine && InGroup(run, key, TrustLevel::kOwn);
  }
  const int l = static_cast<int>(level);
  if (l <= static_cast<int>(TrustLevel::kPhase) && run.phase != key.phase) return false;
  if (l <= static_cast<int>(TrustLevel::kAnyModules) && run.runtime != key.runtime) return false;
  if (l <= static_cast<int>(TrustLevel::kAnyLayout) &&
      (run.modules != key.modules || run.quantized != key.quantized)) {
    return false;
  }
  if (l <= static_cast<int>(TrustLevel::kAnyVendor) && run.parallel != key.parallel) return false;
  if (l <= static_cast<int>(TrustLevel::kOwn) && (run.vendor != key.vendor || run.moe != key.moe)) {
    return false;
  }
  return true;
}

constexpr std::array<TrustLevel, 7> kLevels = {
    TrustLevel::kEngine,     TrustLevel::kOwn,   TrustLevel::kAnyVendor, TrustLevel::kAnyLayout,
    TrustLevel::kAnyModules, TrustLevel::kPhase, TrustLevel::kAll};

/// The engine id of an --engine text ("vllm@0.6.3" -> "vllm"; the version after the last '@',
/// as LoadEngine reads it); empty for none.
std::string EngineIdOf(std::string_view choice) {
  return std::string(choice.substr(0, choice.rfind('@')));
}

}  // namespace

bool CalibratedEngine(const CostOptions& options) {
  const Engine* e = EngineOf(options.step_terms);
  return e != nullptr && e->calibrated;
}

TrustKey TrustKeyOf(const ExpectedOptions& options, Phase phase, const Workload& workload,
                    const Device& device, bool moe, double launch_overhead_s,
                    bool calibrated_engine) {
  TrustKey k;
  k.runtime = phase == Phase::kPrefill ? options.prefill_runtime.value_or(options.runtime)
                                       : options.runtime;
  k.modules = !options.modules.empty();
  k.phase = phase;
  k.parallel = workload.tp * workload.Stages() > 1;
  k.vendor = device.vendor;
  k.moe = moe;
  const DType act = workload.dtype.value_or(DType::kBf16);
  k.quantized = workload.weight_dtype.has_value() && BitsOf(*workload.weight_dtype) < BitsOf(act);
  std::vector<std::string> changed;
  if (options.ceilings == CeilingSet::kSpec) changed.emplace_back("--ceilings spec");
  if (std::any_of(options.class_efficiency.begin(), options.class_efficiency.end(),
                  [](double e) { return e > 0; })) {
    changed.emplace_back("--efficiency");
  }
  if (launch_overhead_s > 0) changed.emplace_back("--launch-overhead-us");
  if (device.calibration.has_value()) changed.emplace_back("a calibrated device");
  if (calibrated_engine) changed.emplace_back("a calibrated engine");
  for (const std::string& c : changed) k.overridden += (k.overridden.empty() ? "" : ", ") + c;
  return k;
}

TrustKey TrustKeyOf(const CostOptions& options, Phase phase, const Workload& workload,
                    const Device& device, bool moe) {
  TrustKey k = TrustKeyOf(options.expected, phase, workload, device, moe, options.launch_overhead_s,
                          CalibratedEngine(options));
  const Engine* e = EngineOf(options.step_terms);
  if (e == nullptr || e->calibrated) return k;
  if (e->file.rfind("<embedded>/", 0) == 0) {
    k.engine = e->id;  // the project's own entry: its published runs are the group
  } else {
    // An engine file of the user's own, whatever id it gives itself: its figures were never
    // costed against a published run.
    k.overridden +=
        (k.overridden.empty() ? "" : ", ") + std::string("an engine file (") + e->file + ")";
  }
  return k;
}

Result<std::vector<TrustBand>> TrustBands(const std::vector<TrustKey>& keys,
                                          const std::vector<PublishedRun>& runs,
                                          const DeviceDatabase& db, const ModelRegistry& registry,
                                          std::shared_ptr<const EfficiencyData> efficiency) {
  // Each run's key, for the runs on devices with expected times (the others have no error).
  std::vector<TrustKey> run_keys(runs.size());
  std::vector<bool> usable(runs.size(), false);
  for (size_t i = 0; i < runs.size(); ++i) {
    const Scenario& sc = runs[i].scenario;
    Result<const Device*> device = db.Find(sc.hw);
    if (!device.ok()) return Status::Invalid(runs[i].where + ".hw", device.status().what());
    Result<TransformerConfig> config = ResolveModel(sc.model, registry);
    if (!config.ok()) return Status::Invalid(runs[i].where + ".model", config.status().what());
    usable[i] = CostModel::ExpectsTimesOn(**device);
    run_keys[i] =
        TrustKeyOf(sc.expected, runs[i].phase, sc.workload, **device, config->experts > 0);
    run_keys[i].engine = EngineIdOf(sc.expected.engine);
  }
  // The group of each key, then every run any group needs, costed once.
  std::vector<TrustBand> bands(keys.size());
  std::vector<bool> needed(runs.size(), false);
  for (size_t b = 0; b < keys.size(); ++b) {
    bands[b].key = keys[b];
    for (TrustLevel level : kLevels) {
      if (level == TrustLevel::kEngine && keys[b].engine.empty()) continue;
      int rows = 0;
      for (size_t i = 0; i < runs.size(); ++i) {
        rows += usable[i] && InGroup(run_keys[i], keys[b], level) ? 1 : 0;
      }
      bands[b].level = level;
      if (rows >= kTrustMinRows) break;
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      if (usable[i] && InGroup(run_keys[i], keys[b], bands[b].level)) needed[i] = true;
    }
  }
  std::vector<PublishedRun> costed;
  std::vector<size_t> index_of(runs.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!needed[i]) continue;
    index_of[i] = costed.size();
    costed.push_back(runs[i]);
  }
  Result<PublishedValidation> v = ValidatePublished(costed, db, registry, std::move(efficiency));
  if (!v.ok()) return v.status();
  for (TrustBand& band : bands) {
    std::vector<double> errors;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (index_of[i] == runs.size() || !InGroup(run_keys[i], band.key, band.level)) continue;
      const PublishedCheck& c = v->checks[index_of[i]];
      if (!c.has_expected) continue;
      band.runs.push_back(
          {c.run.id, c.run.stack, c.run.scenario.hw, c.run.measured_s, c.expected_s, c.error});
      errors.push_back(c.error);
    }
    if (errors.empty()) continue;
    std::sort(errors.begin(), errors.end());
    const size_t n = errors.size();
    band.min_error = errors.front();
    band.max_error = errors.back();
    band.median_error = n % 2 == 1 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  }
  return bands;
}

Result<std::vector<TrustBand>> TrustBands(const std::vector<TrustKey>& keys,
                                          const DeviceDatabase& db,
                                          std::shared_ptr<const EfficiencyData> efficiency) {
  Result<std::vector<PublishedRun>> runs = LoadDefaultPublishedRuns();
  if (!runs.ok()) return runs.status();
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return registry.status();
  if (efficiency == nullptr) {
    Result<EfficiencyData> data = LoadDefaultEfficiencyData();
    if (!data.ok()) return data.status();
    efficiency = std::make_shared<const EfficiencyData>(std::move(data).value());
  }
  return TrustBands(keys, *runs, db, *registry, std::move(efficiency));
}

Status AttachBands(ModelAnalysis& analysis, const Device& device, const CostOptions& options,
                   const DeviceDatabase& db) {
  std::vector<TrustKey> keys;
  std::vector<PhaseResult*> phases;
  for (PhaseResult& p : analysis.phases) {
    if (!p.totals.has_expected) continue;
    Workload w = analysis.workload;
    if (!w.dtype.has_value()) w.dtype = analysis.act;
    if (!w.weight_dtype.has_value()) w.weight_dtype = analysis.weight;
    keys.push_back(TrustKeyOf(options, p.phase, w, device, analysis.config.experts > 0));
    phases.push_back(&p);
  }
  if (keys.empty()) return Status::Ok();
  Result<std::vector<TrustBand>> bands = TrustBands(keys, db, options.efficiency);
  if (!bands.ok()) return bands.status();
  for (size_t i = 0; i < phases.size(); ++i) phases[i]->band = std::move((*bands)[i]);
  return Status::Ok();
}

Status AttachBands(SweepResult& sweep, const TransformerConfig& config, const Workload& base,
                   const Device& device, const CostOptions& options, const DeviceDatabase& db) {
  if (!sweep.has_expected) return Status::Ok();
  // The (phase, layout) pairs the points hold.
  std::array<std::array<bool, 2>, 2> present{};
  for (const SweepPoint& p : sweep.points) {
    for (const PhasePoint& ph : p.phases) {
      if (ph.has_expected) present[ph.phase == Phase::kPrefill ? 0 : 1][p.chips > 1 ? 1 : 0] = true;
    }
  }
  std::vector<TrustKey> keys;
  std::vector<std::pair<int, int>> where;
  for (int ph = 0; ph < 2; ++ph) {
    for (int parallel = 0; parallel < 2; ++parallel) {
      if (!present[ph][parallel]) continue;
      Workload layout = base;
      layout.tp = parallel == 1 ? 2 : 1;  // one chip or several: what the key tells apart
      layout.pp = 1;
      if (!layout.dtype.has_value()) layout.dtype = config.torch_dtype;
      keys.push_back(TrustKeyOf(options, ph == 0 ? Phase::kPrefill : Phase::kDecode, layout, device,
                                config.experts > 0));
      where.emplace_back(ph, parallel);
    }
  }
  if (keys.empty()) return Status::Ok();
  Result<std::vector<TrustBand>> bands = TrustBands(keys, db, options.efficiency);
  if (!bands.ok()) return bands.status();
  for (size_t i = 0; i < where.size(); ++i) {
    sweep.bands[where[i].first][where[i].second] = std::move((*bands)[i]);
  }
  return Status::Ok();
}

Status AttachBands(Plan& plan, const TransformerConfig& config, const Device& device,
                   const DeviceDatabase& db) {
  std::vector<TrustKey> keys;
  std::vector<std::optional<TrustBand>*> slots;
  for (PlanVariant& v : plan.variants) {
    if (v.batch1.expected_request_s <= 0) continue;
    Workload w;
    w.tp = v.tp;
    w.pp = v.pp;
    w.dtype = v.act;
    w.weight_dtype = v.weight;
    for (Phase phase : {Phase::kPrefill, Phase::kDecode}) {
      keys.push_back(TrustKeyOf(plan.request.cost, phase, w, device, config.experts > 0));
      slots.push_back(phase == Phase::kPrefill ? &v.prefill_band : &v.decode_band);
    }
  }
  if (keys.empty()) return Status::Ok();
  Result<std::vector<TrustBand>> bands = TrustBands(keys, db, plan.request.cost.efficiency);
  if (!bands.ok()) return bands.status();
  for (size_t i = 0; i < slots.size(); ++i) *slots[i] = std::move((*bands)[i]);
  return Status::Ok();
}

}  // namespace roofline
