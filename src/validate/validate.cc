#include "roofline/validate.h"

#include <algorithm>
#include <cmath>

namespace roofline {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

CalibrationFit FitCalibration(const std::vector<ValidationRow>& rows) {
  CalibrationFit f;
  std::array<double, kNumClasses> sum{};
  std::array<int, kNumClasses> count{};
  std::vector<double> before;
  for (const ValidationRow& r : rows) {
    if (r.skipped || r.measured_s <= 0 || r.predicted_s <= 0) continue;
    const int c = static_cast<int>(r.kernel_class);
    sum[c] += std::log(r.predicted_s / r.measured_s);
    ++count[c];
    before.push_back(std::fabs(std::log(r.predicted_s / r.measured_s)));
  }
  Calibration& cal = f.calibration;
  auto eff = [&](KernelClass k) {
    const int c = static_cast<int>(k);
    return count[c] > 0 ? std::clamp(std::exp(sum[c] / count[c]), 1e-4, 2.0) : 1.0;
  };
  cal.matmul = eff(KernelClass::kMatmul);
  cal.attention = eff(KernelClass::kAttention);
  cal.vector = eff(KernelClass::kVector);
  cal.kernels = static_cast<int>(before.size());
  std::vector<double> after;
  for (const ValidationRow& r : rows) {
    if (r.skipped || r.measured_s <= 0 || r.predicted_s <= 0) continue;
    const double expected = r.predicted_s / EfficiencyOf(cal, r.kernel_class);
    after.push_back(std::fabs(std::log(expected / r.measured_s)));
  }
  f.median_abs_log_before = Median(before);
  f.median_abs_log_after = Median(after);
  return f;
}

Validation ValidationFromTimings(const Graph& graph, const CostModel& model,
                                 const std::vector<OpTiming>& timings) {
  Validation v;
  const GraphCosts a = AnalyzeGraph(graph, model, FusionMode::kEager);
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const Kernel& k = a.kernels[i];
    const KernelCost& cost = a.costs[i];
    ValidationRow row;
    row.name = k.name;
    row.group = k.group;
    row.kernel_class = a.classes[i];
    row.bound = model.BoundName(cost);
    row.predicted_s = cost.time_s;
    for (const OpTiming& t : timings) {
      if (t.op != k.ops.front()) continue;
      row.measured_s = t.seconds;
      row.spread = t.spread;
      row.skipped = t.skipped;
      row.note = t.skipped ? t.why_skipped : t.implementation;
    }
    if (!row.skipped && row.measured_s > 0) row.efficiency = row.predicted_s / row.measured_s;
    v.rows.push_back(std::move(row));
  }
  v.fit = FitCalibration(v.rows);
  return v;
}

Result<Validation> ValidateOnCpu(const Graph& graph, const CostModel& model,
                                 const RunOptions& options) {
  Result<std::vector<OpTiming>> timings = RunGraphOnCpu(graph, options);
  if (!timings.ok()) return timings.status();
  return ValidationFromTimings(graph, model, *timings);
}

}  // namespace roofline
