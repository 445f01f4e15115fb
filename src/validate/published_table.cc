// The registry of the published-run checks' columns, and the checks as a table.
#include <limits>
#include <string>
#include <vector>

#include "roofline/published.h"

namespace roofline {
namespace {

/// What a column takes from a check.
struct PublishedColumn {
  const char* id;
  const char* unit;
  ColumnKind kind;
  /// kReal: the value; kInt, kBool, kCode: the integer (a code indexes the column's labels).
  double (*get)(const PublishedCheck&);
  /// kText: the text.
  std::string (*text)(const PublishedCheck&);
  std::vector<std::string> labels;  ///< kCode
};

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

double N(int64_t v) { return static_cast<double>(v); }

std::string DTypeText(const std::optional<DType>& d) {
  return d.has_value() ? std::string(NameOf(*d)) : "";
}

const Workload& W(const PublishedCheck& c) { return c.run.scenario.workload; }

const PublishedColumn kColumns[] = {
    {"run", "", ColumnKind::kText, nullptr, [](const PublishedCheck& c) { return c.run.id; }, {}},
    {"stack", "", ColumnKind::kText, nullptr, [](const PublishedCheck& c) { return c.run.stack; },
     {}},
    {"model", "", ColumnKind::kText, nullptr,
     [](const PublishedCheck& c) { return c.run.scenario.model; }, {}},
    {"hw", "", ColumnKind::kText, nullptr,
     [](const PublishedCheck& c) { return c.run.scenario.hw; }, {}},
    {"tp", "", ColumnKind::kInt, [](const PublishedCheck& c) { return N(W(c).tp); }, nullptr, {}},
    {"pp", "", ColumnKind::kInt, [](const PublishedCheck& c) { return N(W(c).Stages()); },
     nullptr, {}},
    {"phase", "", ColumnKind::kCode,
     [](const PublishedCheck& c) { return c.run.phase == Phase::kPrefill ? 0.0 : 1.0; }, nullptr,
     {"prefill", "decode"}},
    {"batch", "", ColumnKind::kInt, [](const PublishedCheck& c) { return N(W(c).batch); },
     nullptr, {}},
    {"prompt", "", ColumnKind::kInt, [](const PublishedCheck& c) { return N(W(c).prompt); },
     nullptr, {}},
    {"context", "", ColumnKind::kInt,
     [](const PublishedCheck& c) { return N(W(c).DecodeContext()); }, nullptr, {}},
    {"dtype", "", ColumnKind::kText, nullptr,
     [](const PublishedCheck& c) { return DTypeText(W(c).dtype); }, {}},
    {"weight_dtype", "", ColumnKind::kText, nullptr,
     [](const PublishedCheck& c) { return DTypeText(W(c).weight_dtype); }, {}},
    {"kv_dtype", "", ColumnKind::kText, nullptr,
     [](const PublishedCheck& c) { return DTypeText(W(c).kv_dtype); }, {}},
    {"runtime", "", ColumnKind::kText, nullptr,
     [](const PublishedCheck& c) {
       return c.has_expected ? std::string(NameOf(c.run.scenario.expected.runtime)) : "";
     },
     {}},
    {"metric", "", ColumnKind::kText, nullptr, [](const PublishedCheck& c) { return c.run.metric; },
     {}},
    {"published_value", "", ColumnKind::kReal, [](const PublishedCheck& c) { return c.run.value; },
     nullptr, {}},
    {"measured_s", "s", ColumnKind::kReal, [](const PublishedCheck& c) { return c.run.measured_s; },
     nullptr, {}},
    {"bound_s", "s", ColumnKind::kReal, [](const PublishedCheck& c) { return c.bound_s; }, nullptr,
     {}},
    {"expected_s", "s", ColumnKind::kReal,
     [](const PublishedCheck& c) { return c.has_expected ? c.expected_s : kNone; }, nullptr, {}},
    {"error", "", ColumnKind::kReal,
     [](const PublishedCheck& c) { return c.has_expected ? c.error : kNone; }, nullptr, {}},
    {"set", "", ColumnKind::kCode,
     [](const PublishedCheck& c) {
       return !c.has_expected ? 3.0 : c.blind ? 2.0 : c.run.holdout ? 1.0 : 0.0;
     },
     nullptr, {"dev", "holdout", "blind", "bound"}},
    {"bound_below", "", ColumnKind::kBool,
     [](const PublishedCheck& c) { return c.bound_below ? 1.0 : 0.0; }, nullptr, {}},
};

}  // namespace

Table PublishedTable(const PublishedValidation& v) {
  Table t;
  for (const PublishedColumn& c : kColumns) {
    Column& col = t.Add({c.id, c.unit, Scope::kStep, c.kind}, c.labels);
    for (const PublishedCheck& check : v.checks) {
      switch (c.kind) {
        case ColumnKind::kText:
          col.texts.push_back(c.text(check));
          break;
        case ColumnKind::kReal:
          col.reals.push_back(c.get(check));
          break;
        default:
          col.ints.push_back(static_cast<int64_t>(c.get(check)));
          break;
      }
    }
  }
  return t;
}

}  // namespace roofline
