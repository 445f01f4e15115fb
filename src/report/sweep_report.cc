// Reports of `roofline sweep`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/table.h"

namespace roofline {
namespace {

using nlohmann::json;

std::string AxisValue(const SweepAxis& a, size_t i) {
  return IsInteger(a.variable) ? std::to_string(a.values[i]) : std::string(NameOf(a.dtypes[i]));
}

}  // namespace

std::string RenderSweepTable(const SweepResult& r, const std::string& title) {
  std::string out = title + "\n\n";
  std::vector<std::string> header;
  std::vector<bool> right;
  for (const SweepAxis& a : r.axes) {
    header.emplace_back(NameOf(a.variable));
    right.push_back(true);
  }
  if (!r.points.empty()) {
    for (const PhasePoint& p : r.points.front().phases) {
      const std::string ph(NameOf(p.phase));
      for (const char* col : {" time", " bound", " tokens/s"}) {
        header.push_back(ph + col);
        right.push_back(std::string(col) != " bound");
      }
    }
  }
  header.emplace_back("footprint");
  right.push_back(true);
  header.emplace_back("fits");
  right.push_back(false);
  TextTable t(header, right);
  for (const SweepPoint& p : r.points) {
    std::vector<std::string> row;
    for (size_t a = 0; a < r.axes.size(); ++a) row.push_back(AxisValue(r.axes[a], p.index[a]));
    for (const PhasePoint& ph : p.phases) {
      row.push_back(Seconds(ph.time_s));
      row.push_back(ph.bound);
      row.push_back(Num(std::round(ph.tokens_per_s)));
    }
    row.push_back(Si(p.footprint_bytes, "B"));
    row.push_back(p.fits ? "yes" : "NO");
    t.AddRow(std::move(row));
  }
  out += t.Render();
  out += "\nCrossovers (exact values, found by bisection between grid points):\n";
  if (r.crossovers.empty()) out += "  none in the swept range\n";
  for (const Crossover& x : r.crossovers) out += "  - " + x.sentence + "\n";
  out += "\nNever flips:\n";
  if (r.never.empty()) out += "  nothing: every verdict changes somewhere in the range\n";
  for (const NeverFlips& n : r.never) out += "  - " + n.sentence + "\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  out += fmt::format("({} workload evaluations)\n", r.evaluations);
  return out;
}

std::string RenderSweepJson(const SweepResult& r, const std::string& model,
                            const std::string& device) {
  json j;
  j["model"] = model;
  j["device"] = device;
  json axes = json::array();
  for (const SweepAxis& a : r.axes) {
    json ax;
    ax["variable"] = std::string(NameOf(a.variable));
    json values = json::array();
    for (size_t i = 0; i < a.size(); ++i) {
      if (IsInteger(a.variable)) {
        values.push_back(a.values[i]);
      } else {
        values.push_back(std::string(NameOf(a.dtypes[i])));
      }
    }
    ax["values"] = values;
    axes.push_back(ax);
  }
  j["axes"] = axes;
  json points = json::array();
  for (const SweepPoint& p : r.points) {
    json jp;
    for (size_t a = 0; a < r.axes.size(); ++a) {
      const SweepAxis& ax = r.axes[a];
      if (IsInteger(ax.variable)) {
        jp[std::string(NameOf(ax.variable))] = ax.values[p.index[a]];
      } else {
        jp[std::string(NameOf(ax.variable))] = std::string(NameOf(ax.dtypes[p.index[a]]));
      }
    }
    json phases = json::array();
    for (const PhasePoint& ph : p.phases) {
      json q;
      q["phase"] = std::string(NameOf(ph.phase));
      q["time_s"] = ph.time_s;
      q["bound"] = ph.bound;
      q["tokens_per_s"] = ph.tokens_per_s;
      q["compute_bound_time_s"] = ph.compute_bound_s;
      q["memory_bound_time_s"] = ph.memory_bound_s;
      q["comm_bound_time_s"] = ph.comm_bound_s;
      json classes = json::object();
      for (int c = 0; c < kNumClasses; ++c) {
        if (!ph.class_bound[c].empty()) {
          classes[std::string(NameOf(static_cast<KernelClass>(c)))] = ph.class_bound[c];
        }
      }
      q["class_bounds"] = classes;
      phases.push_back(q);
    }
    jp["phases"] = phases;
    jp["footprint_bytes"] = p.footprint_bytes;
    jp["capacity_bytes"] = p.capacity_bytes;
    jp["fits"] = p.fits;
    points.push_back(jp);
  }
  j["points"] = points;
  json crossovers = json::array();
  for (const Crossover& x : r.crossovers) {
    json jx;
    jx["what"] = x.what;
    jx["variable"] = x.variable;
    if (!x.value.empty() && x.int_value > 0) {
      jx["value"] = x.int_value;
    } else {
      jx["value"] = x.value;
    }
    jx["from"] = x.from;
    jx["to"] = x.to;
    if (!x.at.empty()) jx["at"] = x.at;
    jx["sentence"] = x.sentence;
    crossovers.push_back(jx);
  }
  j["crossovers"] = crossovers;
  json never = json::array();
  for (const NeverFlips& n : r.never) {
    json jn;
    jn["what"] = n.what;
    jn["variable"] = n.variable;
    jn["bound"] = n.bound;
    if (n.limit_intensity > 0) jn["limit_intensity"] = n.limit_intensity;
    if (n.ridge > 0) jn["ridge"] = n.ridge;
    if (!n.at.empty()) jn["at"] = n.at;
    jn["sentence"] = n.sentence;
    never.push_back(jn);
  }
  j["never_flips"] = never;
  j["evaluations"] = r.evaluations;
  return j.dump(2) + "\n";
}

std::string RenderSweepCsv(const SweepResult& r) {
  std::string out;
  for (const SweepAxis& a : r.axes) out += std::string(NameOf(a.variable)) + ",";
  out +=
      "phase,time_s,bound,tokens_per_s,compute_bound_time_s,memory_bound_time_s,"
      "comm_bound_time_s,footprint_bytes,fits\n";
  for (const SweepPoint& p : r.points) {
    std::string prefix;
    for (size_t a = 0; a < r.axes.size(); ++a) prefix += AxisValue(r.axes[a], p.index[a]) + ",";
    for (const PhasePoint& ph : p.phases) {
      out += fmt::format("{}{},{:.17g},{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{}\n", prefix,
                         NameOf(ph.phase), ph.time_s, ph.bound, ph.tokens_per_s, ph.compute_bound_s,
                         ph.memory_bound_s, ph.comm_bound_s, p.footprint_bytes,
                         p.fits ? "true" : "false");
    }
  }
  return out;
}

}  // namespace roofline
