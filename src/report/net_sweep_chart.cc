// The chart of `roofline sweep GRAPH --vary DIM=... --plot`: time per pass against the swept
// dimension, split into the time of compute- and memory-bound kernels, with the crossovers.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/network_analysis.h"
#include "roofline/network_report.h"
#include "roofline/plot.h"
#include "roofline/units.h"
#include "src/report/svg_writer.h"

namespace roofline {

Chart NetSweepChart(const NetSweepResult& r, const std::string& title) {
  const double W = 1000, H = 420, L = 90, R = W - 240, T = 60, B = H - 60;
  SvgWriter svg(W, H);
  svg.Text(L, 30, title, 16, "start", "#111", 0, "bold");
  LabelPlacer placer(L + 2, T + 2, R - 2, B - 2);
  const size_t n = r.points.size();
  if (n == 0) {
    svg.Text((L + R) / 2, (T + B) / 2, "no points", 13, "middle");
    return Chart{svg.Finish(), {}};
  }
  const double xa = static_cast<double>(r.points.front().value);
  const double xb = std::max(static_cast<double>(r.points.back().value), xa + 1);
  const bool logx = xa > 0 && xb >= 16 * xa;
  auto X = [&](double v) {
    if (n == 1) return (L + R) / 2;
    if (logx) return L + (std::log(v) - std::log(xa)) / (std::log(xb) - std::log(xa)) * (R - L);
    return L + (v - xa) / (xb - xa) * (R - L);
  };
  double ymax = 0;
  for (const NetSweepPoint& p : r.points) ymax = std::max(ymax, p.time_s);
  ymax = ymax > 0 ? ymax * 1.12 : 1;
  auto Y = [&](double t) { return B - t / ymax * (B - T); };
  TimeGrid(svg, L, R, T, B, ymax, Y);
  svg.Text(L, T - 8, "time per forward pass", 13, "start", "#111", 0, "bold");
  svg.Text(24, (T + B) / 2, "time per pass", 12, "middle", "#222", -90);
  const size_t every = std::max<size_t>(1, n / 10);
  for (size_t i = 0; i < n; i += every) {
    const double x = X(static_cast<double>(r.points[i].value));
    svg.Line(x, B, x, B + 4, "#999", 1);
    svg.Text(x, B + 17, Num(static_cast<double>(r.points[i].value)), 11, "middle");
  }
  svg.Text((L + R) / 2, B + 36, r.variable + (logx ? " (log scale)" : ""), 12, "middle");
  // Stacked bands: compute-bound time below, memory-bound time above.
  struct Band {
    const char* name;
    const char* color;
    double NetSweepPoint::*field;
  };
  const Band bands[] = {{"compute-bound kernels", "#d9534f", &NetSweepPoint::compute_bound_s},
                        {"memory-bound kernels", "#428bca", &NetSweepPoint::memory_bound_s}};
  std::vector<double> base(n, 0);
  for (const Band& band : bands) {
    std::vector<double> next = base;
    for (size_t i = 0; i < n; ++i) next[i] += r.points[i].*(band.field);
    if (n == 1) {
      svg.Rect(X(xa) - 20, Y(next[0]), 40, Y(base[0]) - Y(next[0]), band.color);
    } else {
      std::vector<std::pair<double, double>> poly;
      for (size_t i = 0; i < n; ++i) {
        poly.emplace_back(X(static_cast<double>(r.points[i].value)), Y(next[i]));
      }
      for (size_t i = n; i-- > 0;) {
        poly.emplace_back(X(static_cast<double>(r.points[i].value)), Y(base[i]));
      }
      svg.Polygon(poly, band.color, "none", 0.75);
    }
    base = next;
  }
  for (const NetSweepPoint& p : r.points) {
    svg.Circle(X(static_cast<double>(p.value)), Y(p.time_s), 3, "#111", "#111");
  }
  double ly = T + 10;
  for (const Band& band : bands) {
    svg.Rect(R + 20, ly - 9, 14, 12, band.color);
    svg.Text(R + 40, ly + 2, band.name, 12);
    ly += 20;
  }
  svg.Line(R + 20, ly - 3, R + 34, ly - 3, "#333", 1.2, "5,4");
  svg.Text(R + 40, ly + 2, "crossovers", 12);
  int k = 0;
  for (const Crossover& x : r.crossovers) {
    const double xv = X(static_cast<double>(x.int_value));
    svg.Line(xv, T, xv, B, "#333", 1.2, "5,4");
    const SweepLine l = Describe(x, r);
    const std::string to = l.to.substr(0, l.to.find(':'));
    const std::string label =
        x.signal.kind == SignalKind::kAttentionShare
            ? fmt::format("attention {} conv+matmul from {} {}", x.to.yes ? ">" : "<=", r.variable,
                          l.value)
        : x.signal.kind == SignalKind::kCapacity
            ? fmt::format("memory {} from {} {}", x.to.yes ? "fits" : "exceeds capacity",
                          r.variable, l.value)
            : fmt::format("{}: {}-bound from {} {}", l.what, to, r.variable, l.value);
    LabelBox box;
    if (placer.Place(label, xv, T + 16 + 18.0 * (k % 8), 11, 2, &box)) {
      svg.Text(box.x + 1, box.y + box.height - 3, label, 11, "start", "#111");
    }
    ++k;
  }
  return Chart{svg.Finish(), placer.placed()};
}

}  // namespace roofline
