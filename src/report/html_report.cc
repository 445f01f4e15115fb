// The HTML report: one self-contained page with the charts (tooltips on hover), sortable tables,
// the why section, the assumptions with their sources, and the text output.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "roofline/model_analysis.h"
#include "roofline/network_analysis.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/expected_report.h"
#include "src/report/svg_writer.h"
#include "src/report/sweep_pivot.h"

namespace roofline {
namespace {

constexpr double kText = std::numeric_limits<double>::quiet_NaN();

// Sorting (a click on a header; again to reverse), the self-test behind #selftest, and the
// marks a headless browser reads back: data-ok once the script ran, data-error on any error.
constexpr const char* kScript = R"JS(
(function () {
  var body = document.body;
  window.addEventListener('error', function (e) { body.setAttribute('data-error', String(e.message)); });
  function key(cell) {
    var v = cell.getAttribute('data-v');
    return v === null ? null : parseFloat(v);
  }
  function sortBy(table, col, asc) {
    var tb = table.tBodies[0];
    var rows = Array.prototype.slice.call(tb.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      var r = (x !== null && y !== null) ? x - y : a.cells[col].textContent.localeCompare(b.cells[col].textContent);
      return asc ? r : -r;
    });
    rows.forEach(function (r) { tb.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h, i) {
      h.setAttribute('aria-sort', i === col ? (asc ? 'ascending' : 'descending') : 'none');
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener('click', function () {
        sortBy(table, col, th.getAttribute('aria-sort') !== 'ascending');
      });
    });
  });
  if (location.hash === '#selftest') {
    var table = document.querySelector('table.sortable');
    var ok = '1';
    if (table && table.tBodies[0].rows.length > 1) {
      var cells = table.tBodies[0].rows[0].cells, col = -1;
      for (var i = cells.length - 1; i >= 0; --i) { if (key(cells[i]) !== null) { col = i; break; } }
      if (col >= 0) {
        sortBy(table, col, false);
        var rows = table.tBodies[0].rows;
        for (var k = 1; k < rows.length; ++k) {
          var a = key(rows[k - 1].cells[col]), b = key(rows[k].cells[col]);
          if (a !== null && b !== null && a < b) ok = '0';
        }
      }
    }
    body.setAttribute('data-sort-ok', ok);
  }
  body.setAttribute('data-ok', '1');
})();
)JS";

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;max-width:1400px;color:#222}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
    "figure{margin:16px 0}svg{max-width:100%;height:auto}"
    "table.sortable{border-collapse:collapse;font-size:12px;margin:8px 0}"
    "table.sortable th,table.sortable td{padding:3px 8px;border-bottom:1px solid #e3e3e3;"
    "white-space:nowrap}"
    "table.sortable th{cursor:pointer;background:#f3f3f3;text-align:left;position:sticky;top:0}"
    "table.sortable th[aria-sort=ascending]::after{content:' \\25b2'}"
    "table.sortable th[aria-sort=descending]::after{content:' \\25bc'}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "caption{text-align:left;font-weight:bold;padding:6px 0}"
    "pre{font-size:12px;background:#f7f7f7;padding:12px;overflow-x:auto}"
    "ul.assumptions{font-size:13px}";

std::string Key(double v) {
  if (std::isnan(v)) return "";
  return fmt::format(" data-v=\"{}\"", v);
}

// Every regime of `wk` with its rows and figures on the model's device.
std::string AllRegimes(const CostModel& model, const CostModel::UsedWeightKernel& wk) {
  std::string regimes;
  for (const auto& r : wk.kernel->regimes) {
    regimes += fmt::format("{}{}: {}", regimes.empty() ? "" : "; ", RowsPhrase(r),
                           WeightKernelRegimePhrase(model, wk, r));
  }
  return regimes;
}

}  // namespace

void HtmlTable::AddRow(std::vector<std::string> row, std::vector<double> row_keys) {
  row_keys.resize(row.size(), kText);
  cells.push_back(std::move(row));
  keys.push_back(std::move(row_keys));
}

std::string RenderHtml(const HtmlDocument& doc) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                    XmlEscape(doc.title) + "</title>\n<style>" + kStyle +
                    "</style></head><body>\n<h1>" + XmlEscape(doc.title) + "</h1>\n";
  for (const std::string& s : doc.charts) {
    // Inline the SVG without its XML declaration.
    const size_t start = s.find("<svg");
    out += "<figure>" + (start == std::string::npos ? s : s.substr(start)) + "</figure>\n";
  }
  if (!doc.charts.empty()) {
    out += "<p>Hover over a marker or a column of a chart for its figures.</p>\n";
  }
  if (!doc.trust.empty()) {
    out += "<h2>How far to trust the expected times</h2>\n<ul class=\"assumptions\">\n";
    for (const std::string& t : doc.trust) out += "<li>" + XmlEscape(t) + "</li>\n";
    out += "</ul>\n";
  }
  for (const HtmlTable& t : doc.tables) {
    out += "<table class=\"sortable\">";
    if (!t.caption.empty()) out += "<caption>" + XmlEscape(t.caption) + "</caption>";
    out += "<thead><tr>";
    for (const std::string& h : t.header) out += "<th>" + XmlEscape(h) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (size_t r = 0; r < t.cells.size(); ++r) {
      out += "<tr>";
      for (size_t c = 0; c < t.cells[r].size(); ++c) {
        const double k = t.keys[r][c];
        out += fmt::format("<td{}{}>{}</td>", std::isnan(k) ? "" : " class=\"n\"", Key(k),
                           XmlEscape(t.cells[r][c]));
      }
      out += "</tr>\n";
    }
    out +=
        "</tbody></table>\n<p style=\"font-size:12px;color:#555\">Click a column's header to "
        "sort by it.</p>\n";
  }
  if (!doc.why.empty()) out += "<h2>Why</h2>\n<pre>" + XmlEscape(doc.why) + "</pre>\n";
  if (!doc.assumptions.empty()) {
    out += "<h2>Assumptions and sources</h2>\n<ul class=\"assumptions\">\n";
    for (const std::string& a : doc.assumptions) out += "<li>" + XmlEscape(a) + "</li>\n";
    out += "</ul>\n";
  }
  if (!doc.text.empty()) {
    out += "<details><summary>The command's text output</summary><pre>" + XmlEscape(doc.text) +
           "</pre></details>\n";
  }
  out +=
      "<p>Generated by roofline. 1 FLOP = one multiply or one add (a multiply-accumulate "
      "counts 2); decimal prefixes (GB = 1e9 B).</p>\n<script>" +
      std::string(kScript) + "</script>\n</body></html>\n";
  return out;
}

std::vector<HtmlTable> ModelHtmlTables(const ModelAnalysis& a, const CostModel& model) {
  const Device& d = model.device();
  std::vector<HtmlTable> tables;
  for (const PhaseResult& p : a.phases) {
    HtmlTable t;
    t.caption = std::string(NameOf(p.phase)) + ": kernels";
    t.header = {"kernel", "layers", "x",     "FLOP", d.memory[0].name + " bytes",
                "FLOP/B", "time",   "bound", "share"};
    const bool expected = p.totals.has_expected;
    if (expected) t.header.insert(t.header.end(), {"expected", "expected bound"});
    for (size_t i = 0; i < p.costs.size(); ++i) {
      const KernelCost& c = p.costs[i];
      const double share =
          p.totals.time_s > 0 ? c.time_s * static_cast<double>(c.repeat) / p.totals.time_s : 0;
      std::vector<std::string> row = {c.name,
                                      p.kernels[i].group,
                                      std::to_string(c.repeat),
                                      Si(c.flops, ""),
                                      Si(c.bytes[0], "B"),
                                      c.bytes[0] > 0 ? Num(c.Intensity(0)) : "-",
                                      Seconds(c.time_s),
                                      model.BoundName(c),
                                      fmt::format("{:.1f}%", 100 * share)};
      std::vector<double> keys = {kText,    kText,      static_cast<double>(c.repeat),
                                  c.flops,  c.bytes[0], c.bytes[0] > 0 ? c.Intensity(0) : 0,
                                  c.time_s, kText,      share};
      if (expected) {
        row.push_back(c.has_expected ? Seconds(c.expected.time_s) : "-");
        keys.push_back(c.has_expected ? c.expected.time_s : 0);
        row.push_back(c.has_expected ? model.BoundName(c, c.expected.bound) : "-");
        keys.push_back(kText);
      }
      t.AddRow(std::move(row), std::move(keys));
    }
    tables.push_back(std::move(t));
  }
  return tables;
}

std::vector<std::string> CostModelAssumptions(const CostModel& model) {
  const Device& d = model.device();
  std::vector<std::string> out;
  out.push_back(fmt::format("device {} ({}), from {}", d.id, d.name, d.origin));
  for (const ComputeCeiling& c : d.compute) {
    out.push_back(fmt::format("bound: {} {} [{}]", c.engine, Si(c.peak.value, c.peak.unit),
                              c.peak.Describe()));
  }
  for (const MemoryLevel& m : d.memory) {
    if (!m.bandwidth) continue;
    out.push_back(fmt::format("bound: {} {} [{}]", m.name, Si(m.bandwidth->value, "B/s"),
                              m.bandwidth->Describe()));
  }
  for (const Link& l : d.links) {
    out.push_back(fmt::format("bound: link {} {} [{}]", l.name, Si(l.bandwidth.value, "B/s"),
                              l.bandwidth.Describe()));
  }
  if (model.has_expected()) {
    for (size_t i = 0; i < d.compute.size() && i < model.used_compute().size(); ++i) {
      const UsedCeiling& u = model.used_compute()[i];
      if (u.value <= 0) continue;
      out.push_back(fmt::format("expected: {} at {} [{}]", d.compute[i].engine,
                                Si(u.value, u.figure.unit), u.figure.Describe()));
      const UsedCeiling& acc16 = model.used_compute_fp16_accumulate()[i];
      if (acc16.value > 0) {
        out.push_back(fmt::format(
            "expected: {} matmuls accumulating in FP16 (--accumulate fp16) "
            "at {} [{}]",
            d.compute[i].engine, Si(acc16.value, acc16.figure.unit), acc16.figure.Describe()));
      }
    }
    for (size_t i = 0; i < d.memory.size() && i < model.used_memory().size(); ++i) {
      const UsedCeiling& u = model.used_memory()[i];
      if (u.value <= 0) continue;
      out.push_back(fmt::format("expected: {} at {} [{}]", d.memory[i].name, Si(u.value, "B/s"),
                                u.figure.Describe()));
    }
  }
  if (const auto* m = model.used_modules(); m != nullptr) {
    out.push_back(fmt::format(
        "expected: the modules of {} (--modules): {} [{}]{}{}", m->name, ModuleLaunchesPhrase(*m),
        m->source,
        m->grouped_kv_copy.value > 0 ? " [the copies' rate: " + m->grouped_kv_copy.source + "]"
                                     : "",
        model.host_factor() != 1.0
            ? fmt::format(
                  "; under eager every launch takes {:.2f}x the runtime's host time, {}, for the "
                  "modules' Python (measured in decode, applied to prefill too) [{}]",
                  model.host_factor(), Seconds(model.host_per_launch_s()), m->host_factor.source)
            : ""));
  }
  if (const auto& wk = model.used_moe_kernel(); wk.kernel != nullptr) {
    const std::string regimes = AllRegimes(model, wk);
    out.push_back(fmt::format(
        "expected: routed experts' {} products run as the {} fused MoE call (--moe-kernel) "
        "where its regimes cover the rows (tokens x experts per token), {} ({}): {} [{}]",
        NameOf(wk.kernel->weight_dtype), wk.kernel->name, wk.kernel->description,
        WeightKernelProvenancePhrase(wk), regimes, wk.kernel->source));
  }
  if (const auto& wk = model.used_weight_kernel(); wk.kernel != nullptr) {
    const std::string regimes = AllRegimes(model, wk);
    out.push_back(fmt::format(
        "expected: {} weights (a scale per {}) run as the {} kernel (--weight-kernel) where "
        "its regimes cover the rows, {} ({}): {} [{}]",
        NameOf(wk.kernel->weight_dtype),
        wk.kernel->channel_scales ? "output column" : "group along K", wk.kernel->name,
        wk.kernel->description, WeightKernelProvenancePhrase(wk), regimes, wk.kernel->source));
  }
  if (model.options().launch_overhead_s > 0) {
    out.push_back(fmt::format("every kernel pays a launch overhead of {} (--launch-overhead-us)",
                              Seconds(model.options().launch_overhead_s)));
  }
  return out;
}

HtmlTable NetworkHtmlTable(const NetworkAnalysis& a, const CostModel& model) {
  HtmlTable t;
  t.caption = "kernels (one per node)";
  t.header = {"kernel", "module", "op",    "FLOP", model.device().memory[0].name + " bytes",
              "FLOP/B", "time",   "bound", "share"};
  for (size_t i = 0; i < a.costs.size(); ++i) {
    const KernelCost& c = a.costs[i];
    const double share = a.totals.time_s > 0 ? c.time_s / a.totals.time_s : 0;
    t.AddRow({c.name, a.info[i].module, a.info[i].op, Si(c.flops, ""), Si(c.bytes[0], "B"),
              Num(c.Intensity(0)), Seconds(c.time_s), model.BoundName(c),
              fmt::format("{:.1f}%", 100 * share)},
             {kText, kText, kText, c.flops, c.bytes[0], c.Intensity(0), c.time_s, kText, share});
  }
  return t;
}

HtmlTable SweepHtmlTable(const SweepResult& r) {
  HtmlTable t;
  t.caption = "sweep points";
  const SweepPivot v(r);
  for (const Column* a : v.axes) t.header.push_back(a->spec.id);
  for (size_t k = 0; k < v.phases; ++k) {
    const std::string ph = v.phase->Text(k);
    t.header.insert(t.header.end(), {ph + " time", ph + " bound", ph + " tokens/s"});
    if (v.expected != nullptr) t.header.push_back(ph + " expected");
    for (int c = 0; c < kNumClasses; ++c) {
      if (v.ClassPresent(k, c)) t.header.push_back(ph + " " + std::string(NameOf(static_cast<KernelClass>(c))));
    }
  }
  t.header.insert(t.header.end(), {"footprint", "fits"});
  for (size_t p = 0; p < v.points; ++p) {
    std::vector<std::string> row;
    std::vector<double> keys;
    const size_t first = p * v.phases;
    for (const Column* a : v.axes) {
      row.push_back(a->Text(first));
      keys.push_back(a->spec.kind == ColumnKind::kInt ? static_cast<double>(a->ints[first]) : kText);
    }
    for (size_t k = 0; k < v.phases; ++k) {
      const size_t i = first + k;
      row.push_back(Seconds(v.time->reals[i]));
      keys.push_back(v.time->reals[i]);
      row.push_back(v.bound->Text(i));
      keys.push_back(kText);
      row.push_back(Num(std::round(v.tokens->reals[i])));
      keys.push_back(v.tokens->reals[i]);
      if (v.expected != nullptr) {
        row.push_back(Seconds(v.expected->reals[i]));
        keys.push_back(v.expected->reals[i]);
      }
      for (int c = 0; c < kNumClasses; ++c) {
        if (!v.ClassPresent(k, c)) continue;
        const double x = v.class_time[static_cast<size_t>(c)]->reals[i];
        row.push_back(Seconds(x));
        keys.push_back(x);
      }
    }
    row.push_back(Si(v.footprint->reals[first], "B"));
    keys.push_back(v.footprint->reals[first]);
    row.push_back(v.fits->ints[first] != 0 ? "yes" : "NO");
    keys.push_back(kText);
    t.AddRow(std::move(row), std::move(keys));
  }
  return t;
}

}  // namespace roofline
