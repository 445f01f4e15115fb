// How far to trust an expected time: the errors of the published runs the model costs the same
// way (data/validation/published_runs.json, `roofline validate published`), turned into the range
// of measured times an expected time suggests. Method and groups: docs/validation.md.
#ifndef ROOFLINE_TRUST_H_
#define ROOFLINE_TRUST_H_

#include <memory>
#include <string>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/model_analysis.h"
#include "roofline/plan.h"
#include "roofline/published.h"
#include "roofline/sweep.h"
#include "roofline/status.h"
#include "roofline/workload.h"

namespace roofline {

/// The key of a step of `workload` on `device` costed under `options`; `moe`: the model routes
/// tokens to experts; `launch_overhead_s`: the --launch-overhead-us figure (an override);
/// `calibrated_engine`: the engine's host work was fitted to the user's runs (an override).
TrustKey TrustKeyOf(const ExpectedOptions& options, Phase phase, const Workload& workload,
                    const Device& device, bool moe, double launch_overhead_s = 0,
                    bool calibrated_engine = false);
/// The same for a step costed under `options`: their launch-overhead override, their engine
/// (its id is a criterion of the key) and whether it was calibrated.
TrustKey TrustKeyOf(const CostOptions& options, Phase phase, const Workload& workload,
                    const Device& device, bool moe);
/// Whether `options` hold an engine written by `roofline calibrate`.
bool CalibratedEngine(const CostOptions& options);

/// The bands of `keys` from the runs in `runs` (devices from `db`, models from `registry`, the
/// given efficiency data): each group's runs are costed once. Errors name the runs' file.
Result<std::vector<TrustBand>> TrustBands(const std::vector<TrustKey>& keys,
                                          const std::vector<PublishedRun>& runs,
                                          const DeviceDatabase& db, const ModelRegistry& registry,
                                          std::shared_ptr<const EfficiencyData> efficiency);
/// The same from the default published runs and model presets, with `efficiency` (null: the
/// default efficiency data).
Result<std::vector<TrustBand>> TrustBands(const std::vector<TrustKey>& keys,
                                          const DeviceDatabase& db,
                                          std::shared_ptr<const EfficiencyData> efficiency = nullptr);

/// Attaches each phase's band (when the phase has an expected time) from the default runs: a
/// model analysed on `device` under `options`.
Status AttachBands(ModelAnalysis& analysis, const Device& device, const CostOptions& options,
                   const DeviceDatabase& db);
/// A sweep's bands per phase, on one chip and on several (SweepResult::bands), for `config`
/// swept from `base` under `options`.
Status AttachBands(SweepResult& sweep, const TransformerConfig& config, const Workload& base,
                   const Device& device, const CostOptions& options, const DeviceDatabase& db);
/// A plan's bands per variant and phase (PlanVariant::prefill_band, decode_band), under the
/// plan's own expected-time choices, for `config`.
Status AttachBands(Plan& plan, const TransformerConfig& config, const Device& device,
                   const DeviceDatabase& db);

}  // namespace roofline

#endif  // ROOFLINE_TRUST_H_
