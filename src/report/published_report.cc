// The validation table against published end-to-end runs (`roofline validate published`).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/table.h"

namespace roofline {
namespace {

using nlohmann::json;

std::string Dt(const std::optional<DType>& d) { return d ? std::string(NameOf(*d)) : "-"; }

std::string Summary(const char* what, const ErrorSummary& s) {
  if (s.rows == 0) return fmt::format("{}: no rows\n", what);
  return fmt::format("{}: {} rows, median |error| {:.1f}%, largest {:.1f}%, {} of {} within 40%\n",
                     what, s.rows, 100 * s.median_abs_error, 100 * s.max_abs_error, s.within_40,
                     s.rows);
}

// rows: those with expected times; with none, there are no errors to give (null).
json SummaryJson(const ErrorSummary& s) {
  const auto figure = [&](double x) { return s.rows > 0 ? json(x) : json(nullptr); };
  return {{"rows", s.rows},
          {"median_abs_error", figure(s.median_abs_error)},
          {"max_abs_error", figure(s.max_abs_error)},
          {"within_40_percent", s.within_40},
          {"min_error", figure(s.min_error)},
          {"max_error", figure(s.max_error)}};
}

// The errors stack by stack: how far to trust the expected time of runs on each.
std::string StackTable(const PublishedValidation& v) {
  TextTable t({"stack", "rows", "median |error|", "largest", "within 40%", "errors from", "to",
               "bound only"},
              {false, true, true, true, true, true, true, true});
  for (const StackSummary& s : v.stacks) {
    const ErrorSummary& e = s.errors;
    const bool any = e.rows > 0;
    t.AddRow({s.stack, std::to_string(e.rows),
              any ? fmt::format("{:.1f}%", 100 * e.median_abs_error) : "-",
              any ? fmt::format("{:.1f}%", 100 * e.max_abs_error) : "-",
              any ? fmt::format("{} of {}", e.within_40, e.rows) : "-",
              any ? fmt::format("{:+.1f}%", 100 * e.min_error) : "-",
              any ? fmt::format("{:+.1f}%", 100 * e.max_error) : "-",
              s.bound_only > 0 ? std::to_string(s.bound_only) : "-"});
  }
  return "by stack (the software that runs each step; error = (expected - measured) / "
         "measured):\n" +
         t.Render();
}

}  // namespace

std::string RenderPublishedTable(const PublishedValidation& v) {
  TextTable t(
      {"run", "model", "device", "tp", "phase", "tokens", "dtype w/a", "runtime", "measured",
       "bound", "expected", "error", "set"},
      {false, false, false, true, false, true, false, false, true, true, true, true, false});
  for (const PublishedCheck& c : v.checks) {
    const PublishedRun& r = c.run;
    const Scenario& sc = r.scenario;
    const Workload& w = sc.workload;
    const std::string tokens = r.phase == Phase::kPrefill
                                   ? fmt::format("{}", w.prompt)
                                   : fmt::format("ctx {}", w.DecodeContext());
    const std::string chips =
        w.Stages() > 1 ? fmt::format("{}x{}pp", w.tp, w.Stages()) : std::to_string(w.tp);
    t.AddRow({r.id, sc.model, sc.hw, chips, std::string(NameOf(r.phase)), tokens,
              Dt(w.weight_dtype) + "/" + Dt(w.dtype),
              c.has_expected ? std::string(NameOf(sc.expected.runtime)) : "-", Seconds(r.measured_s),
              Seconds(c.bound_s), c.has_expected ? Seconds(c.expected_s) : "-",
              c.has_expected ? fmt::format("{:+.1f}%", 100 * c.error) : "-",
              !c.has_expected ? "bound"
                              : (c.blind     ? "blind"
                                 : r.holdout ? "holdout"
                                             : "dev")});
  }
  std::string out = "Published end-to-end runs (" + v.origin +
                    ", each with its source): the step each measurement implies (decode: 1 / "
                    "tokens per second per user; prefill: time to first token), the ideal bound "
                    "and the expected time.\n";
  out += t.Render();
  out += Summary("all", v.all);
  out += Summary("development (looked at while the model was built)", v.development);
  out += Summary("holdout (not used to set any figure of the model)", v.holdout);
  if (v.blind.rows > 0) {
    out += Summary(
        "  of which blind (collected without predictions; each still at its first computed time)",
        v.blind);
  }
  if (!v.stacks.empty()) out += StackTable(v);
  if (v.bound_only > 0) {
    // SRAM-only and wafer-scale devices: no expected-time model; how far the bound is.
    double lo = 0, hi = 0;
    for (const PublishedCheck& c : v.checks) {
      if (c.has_expected || c.bound_s <= 0) continue;
      const double x = c.run.measured_s / c.bound_s;
      lo = lo == 0 ? x : std::min(lo, x);
      hi = std::max(hi, x);
    }
    out += fmt::format(
        "bound only (set 'bound': devices with no expected-time model): {} rows, measured "
        "{:.2f}x to {:.1f}x the bound\n",
        v.bound_only, lo, hi);
  }
  out +=
      v.bounds_above == 0
          ? "the bound is below every measurement\n"
          : fmt::format("THE BOUND IS ABOVE {} MEASUREMENT(S): a counting error\n", v.bounds_above);
  out += "expected times: achievable ceilings, each run's runtime; efficiency data " +
         v.efficiency_origin + "\n";
  return out;
}

std::string RenderPublishedJson(const PublishedValidation& v) {
  json j;
  json rows = json::array();
  for (const PublishedCheck& c : v.checks) {
    const PublishedRun& r = c.run;
    json row;
    row["id"] = r.id;
    const Scenario& sc = r.scenario;
    row["model"] = sc.model;
    row["hw"] = sc.hw;
    row["tp"] = sc.workload.tp;
    row["pp"] = sc.workload.Stages();
    row["phase"] = std::string(NameOf(r.phase));
    row["runtime"] = std::string(NameOf(sc.expected.runtime));
    row["metric"] = r.metric;
    row["published_value"] = r.value;
    row["measured_s"] = r.measured_s;
    row["bound_s"] = c.bound_s;
    if (c.has_expected) {
      row["expected_s"] = c.expected_s;
      row["error"] = c.error;
    } else {
      row["expected_s"] = nullptr;
      row["error"] = nullptr;
    }
    row["bound_below_measured"] = c.bound_below;
    row["holdout"] = r.holdout;
    row["blind"] = c.blind;
    row["framework"] = r.framework;
    row["stack"] = r.stack;
    row["accumulate"] = sc.expected.fp16_accumulate ? "fp16" : "fp32";
    if (!sc.expected.weight_kernel.empty()) row["weight_kernel"] = sc.expected.weight_kernel;
    if (!sc.expected.modules.empty()) row["modules"] = sc.expected.modules;
    row["source"] = r.source;
    rows.push_back(row);
  }
  j["runs"] = rows;
  j["summary"] = {{"all", SummaryJson(v.all)},
                  {"development", SummaryJson(v.development)},
                  {"holdout", SummaryJson(v.holdout)},
                  {"blind", SummaryJson(v.blind)}};
  json stacks = json::array();
  for (const StackSummary& s : v.stacks) {
    json e = SummaryJson(s.errors);
    e["stack"] = s.stack;
    e["bound_only_rows"] = s.bound_only;
    stacks.push_back(e);
  }
  j["summary"]["by_stack"] = stacks;
  j["efficiency_data"] = v.efficiency_origin;
  j["runs_file"] = v.origin;
  j["bounds_above_measured"] = v.bounds_above;
  j["bound_only_rows"] = v.bound_only;
  return j.dump(2) + "\n";
}

}  // namespace roofline
