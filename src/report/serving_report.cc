// `roofline validate serving`: published serving runs beside the plan's point at their load.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/table.h"

namespace roofline {
namespace {

std::string SignedPercent(double e) { return std::isnan(e) ? "-" : fmt::format("{:+.0f}%", 100 * e); }

std::string TimeOrDash(double s) { return s > 0 ? Seconds(s) : "-"; }

std::string WholeRate(double x) { return x > 0 ? fmt::format("{:.0f}", x) : "-"; }

std::string ErrorLine(const ErrorSummary& s) {
  if (s.rows == 0) return "no rows";
  return fmt::format(
      "median |error| {:.1f}% on {} rows ({} within 40%), signed {:+.0f}% to {:+.0f}%",
      100 * s.median_abs_error, s.rows, s.within_40, 100 * s.min_error, 100 * s.max_error);
}

nlohmann::json ErrorJson(const ErrorSummary& s) {
  return {{"rows", s.rows},
          {"median_abs_error", s.median_abs_error},
          {"within_40", s.within_40},
          {"min_error", s.min_error},
          {"max_error", s.max_error}};
}

}  // namespace

std::string RenderServingTable(const ServingValidation& v) {
  std::string out = fmt::format(
      "serving runs: {} ({} rows), each beside the plan's continuous-batching point at its "
      "load (one replica; docs/sweeps-and-plans.md, serving model)\n",
      v.origin, v.checks.size());
  TextTable t(
      {"run", "stack", "hw", "tp", "conc", "in/out", "budget", "kv room", "out tok/s", "bound",
       "expected", "err", "TPOT", "bound", "expected", "err", "TTFT", "expected", "err"},
      {false, false, false, true, true, true, true, true, true, true, true, true, true, true, true,
       true, true, true, true});
  for (const ServingCheck& c : v.checks) {
    const ServingRun& r = c.run;
    t.AddRow({r.id, r.stack, r.scenario.hw, std::to_string(r.scenario.workload.tp),
              r.offline ? fmt::format("{}*", c.batch)
                        : fmt::format("{}{}", c.batch, c.capped ? "^" : ""),
              fmt::format("{}/{}", r.scenario.workload.prompt, r.output), std::to_string(c.budget),
              std::to_string(c.kv_room), WholeRate(r.output_tokens_per_s),
              WholeRate(c.bound_output_tokens_per_s), WholeRate(c.expected_output_tokens_per_s),
              SignedPercent(c.throughput_error), TimeOrDash(r.tpot_s), TimeOrDash(c.bound_tpot_s),
              TimeOrDash(c.expected_tpot_s), SignedPercent(c.tpot_error), TimeOrDash(r.ttft_s),
              r.offline ? "-" : TimeOrDash(c.expected_ttft_s), SignedPercent(c.ttft_error)});
  }
  out += t.Render();
  out +=
      "conc: requests in flight (*: an offline run, every request sent at once: the batch the "
      "replica holds, by the KV room and the token budget; ^: the KV room, below the run's "
      "concurrency); means are compared with means, medians with medians; errors are (expected - "
      "measured) / "
      "measured: positive throughput and negative times are optimistic\n";
  out += "output tokens/s: " + ErrorLine(v.throughput) + "\n";
  out += "time per output token: " + ErrorLine(v.tpot) + "\n";
  out += "TTFT: " + ErrorLine(v.ttft) + "\n";
  for (const ServingValidation::Group& g : v.stacks) {
    out += fmt::format("  {}: output tokens/s {}; time per token {}\n", g.stack,
                       ErrorLine(g.throughput), ErrorLine(g.tpot));
  }
  out += fmt::format(
      "bounds: {} of {} rows hold (throughput at least, time per token at most, "
      "the measured)\n",
      v.checks.size() - static_cast<size_t>(v.bounds_broken), v.checks.size());
  return out;
}

std::string RenderServingJson(const ServingValidation& v) {
  using nlohmann::json;
  json rows = json::array();
  auto num = [](double x) { return std::isnan(x) ? json(nullptr) : json(x); };
  for (const ServingCheck& c : v.checks) {
    const ServingRun& r = c.run;
    rows.push_back({{"id", r.id},
                    {"stack", r.stack},
                    {"model", r.scenario.model},
                    {"hw", r.scenario.hw},
                    {"tp", r.scenario.workload.tp},
                    {"concurrency", c.batch},
                    {"offline", r.offline},
                    {"prompt", r.scenario.workload.prompt},
                    {"output", r.output},
                    {"token_budget", c.budget},
                    {"kv_room", c.kv_room},
                    {"measured",
                     {{"output_tokens_per_s", r.output_tokens_per_s},
                      {"ttft_s", r.ttft_s},
                      {"tpot_s", r.tpot_s},
                      {"statistic", r.statistic}}},
                    {"bound",
                     {{"output_tokens_per_s", c.bound_output_tokens_per_s},
                      {"ttft_s", c.bound_ttft_s},
                      {"tpot_s", c.bound_tpot_s}}},
                    {"expected",
                     {{"output_tokens_per_s", c.expected_output_tokens_per_s},
                      {"ttft_s", c.expected_ttft_s},
                      {"tpot_s", c.expected_tpot_s}}},
                    {"errors",
                     {{"output_tokens_per_s", num(c.throughput_error)},
                      {"ttft_s", num(c.ttft_error)},
                      {"tpot_s", num(c.tpot_error)}}},
                    {"bound_holds", c.bound_holds},
                    {"source", r.source},
                    {"quote", r.quote}});
  }
  json stacks = json::array();
  for (const ServingValidation::Group& g : v.stacks) {
    stacks.push_back({{"stack", g.stack},
                      {"output_tokens_per_s", ErrorJson(g.throughput)},
                      {"tpot_s", ErrorJson(g.tpot)},
                      {"ttft_s", ErrorJson(g.ttft)}});
  }
  json j = {{"origin", v.origin},
            {"runs", rows},
            {"summary",
             {{"output_tokens_per_s", ErrorJson(v.throughput)},
              {"tpot_s", ErrorJson(v.tpot)},
              {"ttft_s", ErrorJson(v.ttft)}}},
            {"stacks", stacks},
            {"bounds_broken", v.bounds_broken}};
  return j.dump(2) + "\n";
}

}  // namespace roofline
