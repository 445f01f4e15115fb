// The registry of a plan's columns, and the plan as a table.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "roofline/plan.h"
#include "roofline/sweep_table.h"

namespace roofline {
namespace {

/// What a column takes from an operating point of a variant.
struct PlanColumn {
  const char* id;
  const char* unit;
  ColumnKind kind;
  /// When the column is written: always, only when the plan has expected times, only when it
  /// carries a load (PlanRequest::rate or concurrency).
  enum When { kAlways, kExpected, kLoad } when;
  /// kReal: the value; kInt, kBool, kCode: the integer (a code indexes the column's labels).
  double (*get)(const Plan&, const PlanVariant&, const PlanPoint&);
  /// kText: the text.
  std::string (*text)(const PlanVariant&, const PlanPoint&);
};

/// The operating points, in the order the plan lists them (the last only with a load).
constexpr const char* kPointIds[] = {"batch1", "largest_batch", "flop_limit", "at_load"};

/// The variant's load, which a kLoad column is written only with.
const LoadServed& LoadOf(const PlanVariant& v) { return *v.load; }

/// An expected figure, or NaN where the point has none (the FLOP limit is not costed).
double ExpectedOr(const PlanPoint& pt, double v) {
  return pt.expected_request_s > 0 ? v : std::numeric_limits<double>::quiet_NaN();
}

/// A figure the plan gives, or NaN where it gives none (0: the FLOP limit's TTFT and time per
/// token, the costs without --price-per-hour; the text prints "-").
double OrNone(double v) { return v > 0 ? v : std::numeric_limits<double>::quiet_NaN(); }

/// The low or high end of the range a trust band gives an expected time; NaN without one.
double InBand(const std::optional<TrustBand>& band, const PlanPoint& pt, double expected,
              bool high) {
  if (!band.has_value() || band->empty() || !band->key.overridden.empty() ||
      pt.expected_request_s <= 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return high ? band->High(expected) : band->Low(expected);
}

/// A phase's verdict as a code among VerdictLabels, then "compute (assumed)".
double BoundCode(const Plan& p, const std::optional<Verdict>& v) {
  return v.has_value() ? static_cast<double>(VerdictCode(p.names, *v))
                       : static_cast<double>(VerdictLabels(p.names).size());
}

double N(int64_t v) { return static_cast<double>(v); }

const PlanColumn kPlanColumns[] = {
    {"variant", "", ColumnKind::kText, PlanColumn::kAlways, nullptr,
     [](const PlanVariant& v, const PlanPoint&) { return v.name; }},
    {"dtypes", "", ColumnKind::kText, PlanColumn::kAlways, nullptr,
     [](const PlanVariant& v, const PlanPoint&) { return v.dtypes; }},
    {"tp", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.tp); }, nullptr},
    {"pp", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.pp); }, nullptr},
    {"micro_batches", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.micro_batches); },
     nullptr},
    {"replicas", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.replicas); }, nullptr},
    {"idle_gpus", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.idle_gpus); }, nullptr},
    {"weights_bytes", "B", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return v.weights_bytes; }, nullptr},
    {"kv_bytes_per_sequence", "B", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return v.kv_bytes_per_sequence; },
     nullptr},
    {"max_batch", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.max_batch); }, nullptr},
    {"token_budget", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.budget); }, nullptr},
    {"hold_limit", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(v.hold_limit); }, nullptr},
    {"meets_targets", "", ColumnKind::kBool, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) {
       return v.meets_targets ? 1.0 : 0.0;
     },
     nullptr},
    {"point", "", ColumnKind::kCode, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant& v, const PlanPoint& pt) {
       return &pt == &v.batch1 ? 0.0 : &pt == &v.largest ? 1.0 : &pt == &v.flop_limit ? 2.0 : 3.0;
     },
     nullptr},
    {"label", "", ColumnKind::kText, PlanColumn::kAlways, nullptr,
     [](const PlanVariant&, const PlanPoint& pt) { return pt.label; }},
    {"batch", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) { return N(pt.batch); }, nullptr},
    {"chips", "", ColumnKind::kInt, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) { return N(pt.chips); }, nullptr},
    {"prefill_utilization", "", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return pt.serving.step_s > 0 ? pt.shape.utilization
                                    : std::numeric_limits<double>::quiet_NaN();
     },
     nullptr},
    {"mixed_step_share", "", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return pt.serving.step_s > 0 ? pt.serving.mixed_share
                                    : std::numeric_limits<double>::quiet_NaN();
     },
     nullptr},
    {"ttft_s", "s", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) { return OrNone(pt.ttft_s); },
     nullptr},
    {"time_per_output_token_s", "s", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) { return OrNone(pt.tpot_s); },
     nullptr},
    {"request_s", "s", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) { return pt.request_s; }, nullptr},
    {"output_tokens_per_s_per_gpu", "1/s", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return pt.output_tokens_per_s_per_gpu;
     },
     nullptr},
    {"input_tokens_per_s_per_gpu", "1/s", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return pt.input_tokens_per_s_per_gpu;
     },
     nullptr},
    {"cost_per_million_input_tokens", "$", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return OrNone(pt.cost_per_m_input);
     },
     nullptr},
    {"cost_per_million_output_tokens", "$", ColumnKind::kReal, PlanColumn::kAlways,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return OrNone(pt.cost_per_m_output);
     },
     nullptr},
    {"prefill_bound", "", ColumnKind::kCode, PlanColumn::kAlways,
     [](const Plan& p, const PlanVariant&, const PlanPoint& pt) {
       return BoundCode(p, pt.prefill_bound);
     },
     nullptr},
    {"decode_bound", "", ColumnKind::kCode, PlanColumn::kAlways,
     [](const Plan& p, const PlanVariant&, const PlanPoint& pt) {
       return BoundCode(p, pt.decode_bound);
     },
     nullptr},
    {"expected_ttft_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return ExpectedOr(pt, pt.expected_ttft_s);
     },
     nullptr},
    {"expected_time_per_output_token_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return ExpectedOr(pt, pt.expected_tpot_s);
     },
     nullptr},
    {"expected_request_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return ExpectedOr(pt, pt.expected_request_s);
     },
     nullptr},
    {"expected_output_tokens_per_s_per_gpu", "1/s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant&, const PlanPoint& pt) {
       return ExpectedOr(pt, pt.expected_output_tokens_per_s_per_gpu);
     },
     nullptr},
    // The trust bands' ranges of measured times (roofline/trust.h; NaN where none).
    {"expected_ttft_low_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant& v, const PlanPoint& pt) {
       return InBand(v.prefill_band, pt, pt.expected_ttft_s, false);
     },
     nullptr},
    {"expected_ttft_high_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant& v, const PlanPoint& pt) {
       return InBand(v.prefill_band, pt, pt.expected_ttft_s, true);
     },
     nullptr},
    {"expected_time_per_output_token_low_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant& v, const PlanPoint& pt) {
       return InBand(v.decode_band, pt, pt.expected_tpot_s, false);
     },
     nullptr},
    {"expected_time_per_output_token_high_s", "s", ColumnKind::kReal, PlanColumn::kExpected,
     [](const Plan&, const PlanVariant& v, const PlanPoint& pt) {
       return InBand(v.decode_band, pt, pt.expected_tpot_s, true);
     },
     nullptr},
    // With a load: how the variant's fleet carries it (the same on each of its rows).
    {"fleet_gpus", "", ColumnKind::kInt, PlanColumn::kLoad,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(LoadOf(v).gpus); },
     nullptr},
    {"gpus_needed", "", ColumnKind::kInt, PlanColumn::kLoad,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return N(LoadOf(v).gpus_needed); },
     nullptr},
    {"carries_load", "", ColumnKind::kBool, PlanColumn::kLoad,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) {
       return LoadOf(v).carried ? 1.0 : 0.0;
     },
     nullptr},
    {"replica_capacity_requests_per_s", "1/s", ColumnKind::kReal, PlanColumn::kLoad,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) { return LoadOf(v).capacity_rate; },
     nullptr},
    {"fleet_requests_per_s", "1/s", ColumnKind::kReal, PlanColumn::kLoad,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) {
       return LoadOf(v).fleet_requests_per_s;
     },
     nullptr},
    {"fleet_cost_per_million_output_tokens", "$", ColumnKind::kReal, PlanColumn::kLoad,
     [](const Plan&, const PlanVariant& v, const PlanPoint&) {
       return OrNone(LoadOf(v).cost_per_m_output);
     },
     nullptr},
};

}  // namespace

Table PlanTable(const Plan& plan) {
  bool expected = false;
  for (const PlanVariant& v : plan.variants) expected = expected || v.batch1.expected_request_s > 0;
  const bool load = plan.request.HasLoad();
  // The rows of a variant: its operating points, and with a load the point it runs at.
  auto points = [load](const PlanVariant& v) {
    std::vector<const PlanPoint*> out = {&v.batch1, &v.largest, &v.flop_limit};
    if (load) out.push_back(&v.load->point);
    return out;
  };
  std::vector<std::string> bounds = VerdictLabels(plan.names);
  bounds.emplace_back("compute (assumed)");
  Table t;
  for (const PlanColumn& c : kPlanColumns) {
    if ((c.when == PlanColumn::kExpected && !expected) || (c.when == PlanColumn::kLoad && !load)) {
      continue;
    }
    std::vector<std::string> labels;
    if (c.kind == ColumnKind::kCode) {
      labels = std::string(c.id) == "point"
                   ? std::vector<std::string>(std::begin(kPointIds),
                                              std::end(kPointIds) - (load ? 0 : 1))
                   : bounds;
    }
    Column& col = t.Add({c.id, c.unit, Scope::kPoint, c.kind}, std::move(labels));
    for (const PlanVariant& v : plan.variants) {
      for (const PlanPoint* pt : points(v)) {
        switch (c.kind) {
          case ColumnKind::kText:
            col.texts.push_back(c.text(v, *pt));
            break;
          case ColumnKind::kReal:
            col.reals.push_back(c.get(plan, v, *pt));
            break;
          default:
            col.ints.push_back(static_cast<int64_t>(c.get(plan, v, *pt)));
            break;
        }
      }
    }
  }
  return t;
}

}  // namespace roofline
