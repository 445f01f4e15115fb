// `roofline calibrate`: the fitted host work, its errors on the runs (before and after, leaving
// one run out, leaving one setting out) and each run.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "roofline/calibrate.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/expected_report.h"
#include "src/report/table.h"

namespace roofline {
namespace {

std::string SignedPct1(double x) {
  return std::isfinite(x) ? fmt::format("{:+.1f}%", 100 * x) : "-";
}

std::string ErrorsPhrase(const CalibrationErrors& e) {
  if (e.runs == 0) return "-";
  return fmt::format("median |error| {:.1f}% (signed {:+.1f}%), {} of {} within 15%",
                     100 * e.median_abs, 100 * e.median_signed, e.within_15, e.runs);
}

nlohmann::json ErrorsJson(const CalibrationErrors& e) {
  if (e.runs == 0) return nullptr;
  return {{"runs", e.runs},          {"median_abs_error", e.median_abs},
          {"median_error", e.median_signed}, {"max_abs_error", e.max_abs},
          {"within_15", e.within_15},  {"within_40", e.within_40}};
}

nlohmann::json JsonNum(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

}  // namespace

std::string RenderCalibration(const EngineCalibration& c, const std::string& written) {
  std::string files;
  for (const std::string& f : c.files) files += (files.empty() ? "" : ", ") + f;
  size_t fitted = 0, checked = 0;
  for (const CalibratedRow& r : c.rows) (r.check ? checked : fitted) += 1;
  std::string out = fmt::format(
      "Engine host work fitted to {} measured run{} ({}), {}\n", fitted, fitted == 1 ? "" : "s",
      files,
      c.base.empty() ? std::string("no base engine (the runs' runtime and fusion as given)")
                     : fmt::format("base engine {} (what it runs kept; its host work replaced)",
                                   c.base));
  out += "fit: serial host work per step (and per request where the runs have two or more batch "
         "sizes), minimizing the sum of |expected - measured| / measured; kernels are the "
         "model's, never fitted\n";
  for (const PhaseCalibration& p : c.phases) {
    out += fmt::format("\n{}: {} run{}, {} setting{}\n", NameOf(p.phase), p.runs,
                       p.runs == 1 ? "" : "s", p.settings, p.settings == 1 ? "" : "s");
    out += fmt::format("  host work: {} per step{}\n", Seconds(p.fit.per_step_s),
                       p.fit.per_request
                           ? fmt::format(" + {} per request", Seconds(p.fit.per_request_s))
                           : std::string(" (one batch size: no per-request term)"));
    out += "  on these runs, before: " + ErrorsPhrase(p.before) + "\n";
    out += "  on these runs, after:  " + ErrorsPhrase(p.after) + "\n";
    out += "  leaving one run out:   " +
           (p.loo.runs > 0 ? ErrorsPhrase(p.loo)
                           : std::string(p.runs < 3 ? "- (fewer than 3 runs)" : "- (skipped)")) +
           "\n";
    out += "  leaving one setting out: " +
           (p.loso.runs > 0 ? ErrorsPhrase(p.loso)
                            : std::string(p.settings < 2 ? "- (one setting)" : "- (skipped)")) +
           "\n";
    if (p.check_before.runs > 0) {
      out += "  --check runs, before: " + ErrorsPhrase(p.check_before) + "\n";
      out += "  --check runs, after:  " + ErrorsPhrase(p.check_after) + "\n";
    }
  }
  if (!c.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const std::string& w : c.warnings) out += "  " + w + "\n";
  }
  out += "\n";
  TextTable t({"run", "phase", "batch", "measured", "kernels", "before", "after", "err before",
               "err after", "one out", "setting out"},
              {false, false, true, true, true, true, true, true, true, true, true});
  for (const CalibratedRow& r : c.rows) {
    const double m = r.run.measured_s;
    auto e = [m](double x) { return SignedPct1((x - m) / m); };
    t.AddRow({r.run.id + (r.check ? " (check)" : ""), std::string(NameOf(r.run.phase)),
              std::to_string(r.run.scenario.workload.batch), Seconds(m), Seconds(r.kernels_s),
              Seconds(r.before_s), std::isfinite(r.after_s) ? Seconds(r.after_s) : "-",
              e(r.before_s), e(r.after_s), e(r.loo_s), e(r.loso_s)});
  }
  out += t.Render();
  if (!written.empty()) {
    out += fmt::format("\nwrote {}: use it with --engine {} (sweep, plan, model)\n", written,
                       written);
  }
  return out;
}

std::string RenderCalibrationJson(const EngineCalibration& c) {
  nlohmann::json j;
  j["base_engine"] = c.base;
  j["files"] = c.files;
  j["date"] = c.date;
  nlohmann::json phases = nlohmann::json::array();
  for (const PhaseCalibration& p : c.phases) {
    phases.push_back({{"phase", std::string(NameOf(p.phase))},
                      {"runs", p.runs},
                      {"settings", p.settings},
                      {"per_step_s", p.fit.per_step_s},
                      {"per_request_s", p.fit.per_request ? JsonNum(p.fit.per_request_s) : nlohmann::json()},
                      {"unconstrained_per_step_s", p.fit.raw_per_step_s},
                      {"unconstrained_per_request_s", p.fit.raw_per_request_s},
                      {"before", ErrorsJson(p.before)},
                      {"after", ErrorsJson(p.after)},
                      {"leave_one_out", ErrorsJson(p.loo)},
                      {"leave_one_setting_out", ErrorsJson(p.loso)},
                      {"check_before", ErrorsJson(p.check_before)},
                      {"check_after", ErrorsJson(p.check_after)}});
  }
  j["phases"] = phases;
  j["warnings"] = c.warnings;
  nlohmann::json rows = nlohmann::json::array();
  for (const CalibratedRow& r : c.rows) {
    rows.push_back({{"run", r.run.id},
                    {"file", r.run.file},
                    {"phase", std::string(NameOf(r.run.phase))},
                    {"setting", r.run.setting},
                    {"batch", r.run.scenario.workload.batch},
                    {"check", r.check},
                    {"measured_s", r.run.measured_s},
                    {"kernels_s", r.kernels_s},
                    {"before_s", r.before_s},
                    {"after_s", JsonNum(r.after_s)},
                    {"leave_one_out_s", JsonNum(r.loo_s)},
                    {"leave_one_setting_out_s", JsonNum(r.loso_s)}});
  }
  j["runs"] = rows;
  j["engine"] = EngineJson(c.engine);
  return j.dump(2) + "\n";
}

}  // namespace roofline
