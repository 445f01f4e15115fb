// The registry of a sweep's columns, and the sweep as a table.
#include "roofline/sweep_table.h"

#include <algorithm>
#include <limits>

namespace roofline {
namespace {

/// What a column of the registry takes from a point and one of its phases.
struct SweepColumn {
  const char* id;
  const char* unit;
  Scope scope;
  ColumnKind kind;
  bool csv;  ///< in the CSV's set (SweepColumns::kCsv)
  enum class When { kAlways, kExpected, kChips, kBand, kManyChips } when;
  /// kReal: the value; kInt, kBool, kCode: the integer (a code indexes the column's labels).
  double (*get)(const SweepPoint&, const PhasePoint&, const SweepResult&);
};

/// The labels of the largest-share column: the classes, then launch overhead.
std::vector<std::string> ShareLabels() {
  std::vector<std::string> l;
  for (int c = 0; c < kNumClasses; ++c) l.emplace_back(NameOf(static_cast<KernelClass>(c)));
  l.emplace_back("launch overhead");
  return l;
}

/// The registry, in the order the tables list the columns. Per-class columns follow it.
const SweepColumn kColumns[] = {
    {"phase", "", Scope::kStep, ColumnKind::kCode, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) {
       return ph.phase == Phase::kPrefill ? 0.0 : 1.0;
     }},
    {"time_s", "s", Scope::kStep, ColumnKind::kReal, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) { return ph.time_s; }},
    {"bound", "", Scope::kStep, ColumnKind::kCode, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult& r) {
       return static_cast<double>(VerdictCode(r.names, ph.bound));
     }},
    {"tokens_per_s", "1/s", Scope::kStep, ColumnKind::kReal, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) { return ph.tokens_per_s; }},
    {"compute_bound_time_s", "s", Scope::kStep, ColumnKind::kReal, true,
     SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) {
       return ph.compute_bound_s;
     }},
    {"memory_bound_time_s", "s", Scope::kStep, ColumnKind::kReal, true,
     SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) {
       return ph.memory_bound_s;
     }},
    {"comm_bound_time_s", "s", Scope::kStep, ColumnKind::kReal, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) { return ph.comm_bound_s; }},
    {"footprint_bytes", "B", Scope::kPoint, ColumnKind::kReal, true, SweepColumn::When::kAlways,
     [](const SweepPoint& p, const PhasePoint&, const SweepResult&) {
       return p.footprint_bytes;
     }},
    {"fits", "", Scope::kPoint, ColumnKind::kBool, true, SweepColumn::When::kAlways,
     [](const SweepPoint& p, const PhasePoint&, const SweepResult&) {
       return p.fits ? 1.0 : 0.0;
     }},
    {"expected_time_s", "s", Scope::kStep, ColumnKind::kReal, true, SweepColumn::When::kExpected,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) {
       return ph.expected_time_s;
     }},
    {"chips", "", Scope::kPoint, ColumnKind::kInt, true, SweepColumn::When::kChips,
     [](const SweepPoint& p, const PhasePoint&, const SweepResult&) {
       return static_cast<double>(p.chips);
     }},
    {"largest_share", "", Scope::kStep, ColumnKind::kCode, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) {
       return static_cast<double>(ph.LargestShare());
     }},
};

/// Columns of every point beyond the CSV's (SweepColumns::kAll), before the per-class ones.
const SweepColumn kMoreColumns[] = {
    {"capacity_bytes", "B", Scope::kPoint, ColumnKind::kReal, false, SweepColumn::When::kAlways,
     [](const SweepPoint& p, const PhasePoint&, const SweepResult&) { return p.capacity_bytes; }},
    {"expected_tokens_per_s", "1/s", Scope::kStep, ColumnKind::kReal, false,
     SweepColumn::When::kExpected,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) {
       return ph.expected_tokens_per_s;
     }},
    // Under tensor parallelism or pipeline stages: the throughput each chip delivers, what a
    // fleet of them is priced by.
    {"tokens_per_s_per_chip", "1/s", Scope::kStep, ColumnKind::kReal, true,
     SweepColumn::When::kManyChips,
     [](const SweepPoint& p, const PhasePoint& ph, const SweepResult&) {
       return ph.tokens_per_s / static_cast<double>(std::max<int64_t>(p.chips, 1));
     }},
    {"flops", "FLOP", Scope::kStep, ColumnKind::kReal, false, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) { return ph.flops; }},
    {"bytes", "B", Scope::kStep, ColumnKind::kReal, false, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) { return ph.bytes; }},
    {"overhead_time_s", "s", Scope::kStep, ColumnKind::kReal, true, SweepColumn::When::kAlways,
     [](const SweepPoint&, const PhasePoint& ph, const SweepResult&) { return ph.overhead_s; }},
    // The trust band's range of measured times (roofline/trust.h; NaN where none is attached).
    {"expected_low_s", "s", Scope::kStep, ColumnKind::kReal, false, SweepColumn::When::kBand,
     [](const SweepPoint& p, const PhasePoint& ph, const SweepResult& r) {
       const TrustBand* b = r.BandOf(p, ph.phase);
       return b != nullptr && !b->empty() && b->key.overridden.empty()
                  ? b->Low(ph.expected_time_s)
                  : std::numeric_limits<double>::quiet_NaN();
     }},
    {"expected_high_s", "s", Scope::kStep, ColumnKind::kReal, false, SweepColumn::When::kBand,
     [](const SweepPoint& p, const PhasePoint& ph, const SweepResult& r) {
       const TrustBand* b = r.BandOf(p, ph.phase);
       return b != nullptr && !b->empty() && b->key.overridden.empty()
                  ? b->High(ph.expected_time_s)
                  : std::numeric_limits<double>::quiet_NaN();
     }},
};

/// "norms/elementwise" -> "norms_elementwise".
std::string ClassId(int c) {
  std::string name(NameOf(static_cast<KernelClass>(c)));
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

bool Wanted(const SweepColumn& c, const SweepResult& r, bool expected) {
  switch (c.when) {
    case SweepColumn::When::kExpected:
      return expected;
    case SweepColumn::When::kChips:
      return r.chips_tracked;
    case SweepColumn::When::kManyChips:
      return std::any_of(r.points.begin(), r.points.end(),
                         [](const SweepPoint& p) { return p.chips > 1; });
    case SweepColumn::When::kBand:
      return expected && std::any_of(r.bands.begin(), r.bands.end(), [](const auto& by_layout) {
               return by_layout[0].has_value() || by_layout[1].has_value();
             });
    default:
      return true;
  }
}

}  // namespace

std::vector<std::string> VerdictLabels(const ResourceNames& names) {
  std::vector<std::string> l;
  for (size_t i = 0; i < names.compute.size(); ++i) {
    l.push_back(names.Name(Verdict{BoundKind::kCompute, static_cast<int>(i)}));
  }
  l.push_back(names.Name(Verdict{BoundKind::kCompute, -1}));
  for (size_t i = 0; i < names.memory.size(); ++i) {
    l.push_back(names.Name(Verdict{BoundKind::kMemory, static_cast<int>(i)}));
  }
  for (size_t i = 0; i < names.links.size(); ++i) {
    l.push_back(names.Name(Verdict{BoundKind::kComm, static_cast<int>(i)}));
  }
  l.push_back(names.Name(Verdict{BoundKind::kOverhead, -1}));
  return l;
}

int64_t VerdictCode(const ResourceNames& names, const Verdict& v) {
  const int64_t nc = static_cast<int64_t>(names.compute.size());
  const int64_t nm = static_cast<int64_t>(names.memory.size());
  const int64_t nl = static_cast<int64_t>(names.links.size());
  auto within = [](int64_t i, int64_t n) { return i >= 0 && i < n; };
  switch (v.kind) {
    case BoundKind::kCompute:
      return within(v.index, nc) ? v.index : nc;
    case BoundKind::kMemory:
      return within(v.index, nm) ? nc + 1 + v.index : nc;  // none listed: "compute" (no ceiling)
    case BoundKind::kComm:
      return within(v.index, nl) ? nc + 1 + nm + v.index : nc;
    case BoundKind::kOverhead:
      return nc + 1 + nm + nl;
  }
  return nc + 1 + nm + nl;
}

Table SweepTable(const SweepResult& r, SweepColumns which) {
  Table t;
  const bool expected = !r.points.empty() && !r.points.front().phases.empty() &&
                        r.points.front().phases.front().has_expected;
  size_t rows = 0;
  for (const SweepPoint& p : r.points) rows += p.phases.size();
  for (size_t a = 0; a < r.axes.size(); ++a) {
    const SweepAxis& axis = r.axes[a];
    const std::string id(NameOf(axis.variable));
    if (IsInteger(axis.variable)) {
      Column& c = t.Add({id, "", Scope::kPoint, ColumnKind::kInt});
      c.ints.reserve(rows);
      for (const SweepPoint& p : r.points) c.ints.insert(c.ints.end(), p.phases.size(), axis.values[p.index[a]]);
    } else {
      std::vector<std::string> labels;
      for (DType d : axis.dtypes) labels.emplace_back(NameOf(d));
      Column& c = t.Add({id, "", Scope::kPoint, ColumnKind::kCode}, std::move(labels));
      c.ints.reserve(rows);
      for (const SweepPoint& p : r.points) {
        c.ints.insert(c.ints.end(), p.phases.size(), static_cast<int64_t>(p.index[a]));
      }
    }
  }
  auto add = [&](const SweepColumn& col) {
    std::vector<std::string> labels;
    if (col.kind == ColumnKind::kCode) {
      const std::string id = col.id;
      labels = id == "phase" ? std::vector<std::string>{"prefill", "decode"}
               : id == "bound" ? VerdictLabels(r.names)
                               : ShareLabels();
    }
    Column& c = t.Add({col.id, col.unit, col.scope, col.kind}, std::move(labels));
    if (col.kind == ColumnKind::kReal) {
      c.reals.reserve(rows);
      for (const SweepPoint& p : r.points) {
        for (const PhasePoint& ph : p.phases) c.reals.push_back(col.get(p, ph, r));
      }
    } else {
      c.ints.reserve(rows);
      for (const SweepPoint& p : r.points) {
        for (const PhasePoint& ph : p.phases) {
          c.ints.push_back(static_cast<int64_t>(col.get(p, ph, r)));
        }
      }
    }
  };
  for (const SweepColumn& col : kColumns) {
    if (Wanted(col, r, expected)) add(col);
  }
  // The time of each kernel class, then the launch overhead (the CSV's last columns); with
  // every column, the other figures and each class's verdict ("none" where it is absent).
  for (int cls = 0; cls < kNumClasses; ++cls) {
    Column& c = t.Add({ClassId(cls) + "_time_s", "s", Scope::kStep, ColumnKind::kReal});
    c.reals.reserve(rows);
    for (const SweepPoint& p : r.points) {
      for (const PhasePoint& ph : p.phases) c.reals.push_back(ph.class_time_s[static_cast<size_t>(cls)]);
    }
  }
  for (const SweepColumn& col : kMoreColumns) {
    if ((col.csv || which == SweepColumns::kAll) && Wanted(col, r, expected)) add(col);
  }
  if (which == SweepColumns::kAll) {
    std::vector<std::string> labels = VerdictLabels(r.names);
    const int64_t absent = static_cast<int64_t>(labels.size());
    labels.emplace_back(kAbsentLabel);
    for (int cls = 0; cls < kNumClasses; ++cls) {
      Column& c = t.Add({ClassId(cls) + "_bound", "", Scope::kStep, ColumnKind::kCode}, labels);
      c.ints.reserve(rows);
      for (const SweepPoint& p : r.points) {
        for (const PhasePoint& ph : p.phases) {
          const std::optional<Verdict>& v = ph.class_bound[static_cast<size_t>(cls)];
          c.ints.push_back(v.has_value() ? VerdictCode(r.names, *v) : absent);
        }
      }
    }
  }
  return t;
}

Table NetSweepTable(const NetSweepResult& r) {
  Table t;
  const size_t rows = r.points.size();
  const bool expected = !r.points.empty() && r.points.front().has_expected;
  std::vector<std::string> labels = VerdictLabels(r.names);
  const int64_t absent = static_cast<int64_t>(labels.size());
  std::vector<std::string> with_none = labels;
  with_none.emplace_back(kAbsentLabel);
  auto ints = [&](const std::string& id, ColumnKind kind, auto get,
                  std::vector<std::string> l = {}) {
    Column& c = t.Add({id, "", Scope::kPoint, kind}, std::move(l));
    c.ints.reserve(rows);
    for (const NetSweepPoint& p : r.points) c.ints.push_back(get(p));
  };
  auto reals = [&](const std::string& id, const char* unit, auto get) {
    Column& c = t.Add({id, unit, Scope::kPoint, ColumnKind::kReal});
    c.reals.reserve(rows);
    for (const NetSweepPoint& p : r.points) c.reals.push_back(get(p));
  };
  auto code = [&](const std::optional<Verdict>& v) {
    return v.has_value() ? VerdictCode(r.names, *v) : absent;
  };
  // The dimension's own name, unless a column of the table has it ("time_s"): then "dim_<name>".
  static constexpr const char* kIds[] = {
      "pass_batch", "time_s", "expected_time_s", "bound", "matrix_bound", "other_bound",
      "flops", "matrix_flops", "bytes", "compute_bound_time_s", "memory_bound_time_s",
      "attention_time_s", "conv_matmul_time_s", "weight_bytes", "activation_bytes",
      "memory_bytes", "capacity_bytes", "fits", "images", "seconds_per_image", "images_per_s",
      "expected_seconds_per_image", "expected_images_per_s"};
  const bool taken = std::any_of(std::begin(kIds), std::end(kIds),
                                 [&](const char* id) { return r.variable == id; });
  ints(taken ? "dim_" + r.variable : r.variable, ColumnKind::kInt,
       [](const NetSweepPoint& p) { return p.value; });
  ints("pass_batch", ColumnKind::kInt, [](const NetSweepPoint& p) { return p.pass_batch; });
  reals("time_s", "s", [](const NetSweepPoint& p) { return p.time_s; });
  if (expected) {
    reals("expected_time_s", "s", [](const NetSweepPoint& p) { return p.expected_time_s; });
  }
  ints("bound", ColumnKind::kCode, [&](const NetSweepPoint& p) { return VerdictCode(r.names, p.bound); },
       labels);
  ints("matrix_bound", ColumnKind::kCode,
       [&](const NetSweepPoint& p) { return code(p.matrix_bound); }, with_none);
  ints("other_bound", ColumnKind::kCode,
       [&](const NetSweepPoint& p) { return code(p.other_bound); }, with_none);
  reals("flops", "FLOP", [](const NetSweepPoint& p) { return p.flops; });
  reals("matrix_flops", "FLOP", [](const NetSweepPoint& p) { return p.matrix_flops; });
  reals("bytes", "B", [](const NetSweepPoint& p) { return p.bytes; });
  reals("compute_bound_time_s", "s", [](const NetSweepPoint& p) { return p.compute_bound_s; });
  reals("memory_bound_time_s", "s", [](const NetSweepPoint& p) { return p.memory_bound_s; });
  reals("attention_time_s", "s", [](const NetSweepPoint& p) { return p.attention_s; });
  reals("conv_matmul_time_s", "s", [](const NetSweepPoint& p) { return p.conv_matmul_s; });
  reals("weight_bytes", "B", [](const NetSweepPoint& p) { return p.weight_bytes; });
  reals("activation_bytes", "B", [](const NetSweepPoint& p) { return p.activation_bytes; });
  reals("memory_bytes", "B", [](const NetSweepPoint& p) { return p.memory_bytes(); });
  reals("capacity_bytes", "B", [](const NetSweepPoint& p) { return p.capacity_bytes; });
  ints("fits", ColumnKind::kBool, [](const NetSweepPoint& p) { return int64_t{p.fits()}; });
  if (r.steps > 0) {
    const double steps = static_cast<double>(r.steps);
    ints("images", ColumnKind::kInt, [&](const NetSweepPoint& p) { return r.Images(p); });
    auto per_image = [&](const NetSweepPoint& p, double pass_s) {
      return steps * pass_s / static_cast<double>(r.Images(p));
    };
    auto per_s = [&](const NetSweepPoint& p, double pass_s) {
      return pass_s > 0 ? static_cast<double>(r.Images(p)) / (steps * pass_s) : 0.0;
    };
    reals("seconds_per_image", "s", [&](const NetSweepPoint& p) { return per_image(p, p.time_s); });
    reals("images_per_s", "1/s", [&](const NetSweepPoint& p) { return per_s(p, p.time_s); });
    if (expected) {
      reals("expected_seconds_per_image", "s",
            [&](const NetSweepPoint& p) { return per_image(p, p.expected_time_s); });
      reals("expected_images_per_s", "1/s",
            [&](const NetSweepPoint& p) { return per_s(p, p.expected_time_s); });
    }
  }
  return t;
}

}  // namespace roofline
