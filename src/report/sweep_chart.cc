// The sweep chart and the HTML report pages.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/svg_writer.h"

namespace roofline {
namespace {

/// The tooltip of one sweep point and phase: the swept values, time, verdict, expected time, the
/// time per kernel class and whether the footprint fits.
/// The values an axis from `lo` to `hi` is labelled at: powers of two on a log axis (of ten
/// beyond 2^20), 1-2-5 steps on a linear one; about `most` of them, none closer than the
/// labels' width.
std::vector<double> TickValues(double lo, double hi, bool logx, size_t most) {
  std::vector<double> out;
  if (!(hi > lo)) return {lo};
  if (logx) {
    const double base = hi / lo > double(1 << 20) ? 10 : 2;
    double step = base;
    // Every power, or every other one, ... so that at most `most` remain.
    while (std::log(hi / lo) / std::log(step) > static_cast<double>(most)) step *= base;
    for (double v = std::pow(base, std::ceil(std::log(lo) / std::log(base) - 1e-9)); v <= hi * (1 + 1e-9);
         v *= step) {
      out.push_back(v);
    }
    if (out.empty()) out.push_back(lo);
    return out;
  }
  const double raw = (hi - lo) / static_cast<double>(most);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  step = std::max(step, 1.0);  // integer variables
  for (double v = std::ceil(lo / step) * step; v <= hi * (1 + 1e-12); v += step) out.push_back(v);
  return out;
}

/// The indices of `n` grid points at least `gap` pixels apart along x (`x(i)`, increasing), the
/// first and last included: a chart of a long sweep draws its bands, lines and hover columns
/// through them (a 10,000-point sweep would otherwise write megabytes of coordinates and
/// tooltips); on a log axis every point of the sparse start is kept.
template <typename X>
std::vector<size_t> Thinned(size_t n, double gap, X x) {
  std::vector<size_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (out.empty() || i + 1 == n || x(i) - x(out.back()) >= gap) out.push_back(i);
  }
  return out;
}

std::string PointTip(const SweepResult& r, size_t index, size_t phase) {
  const SweepPoint& p = r.points[index];
  std::string where;
  for (size_t a = 0; a < r.axes.size(); ++a) {
    where += (where.empty() ? "" : ", ") + r.axes[a].Label(p.index[a]);
  }
  const PhasePoint& ph = p.phases[phase];
  std::string tip = fmt::format("{}: {} {} ({})", where, NameOf(ph.phase), Seconds(ph.time_s),
                                r.names.Name(ph.bound));
  if (ph.has_expected) tip += fmt::format(", expected {}", Seconds(ph.expected_time_s));
  for (int c = 0; c < kNumClasses; ++c) {
    if (ph.class_time_s[static_cast<size_t>(c)] <= 0) continue;
    tip += fmt::format("\n  {} {}", NameOf(static_cast<KernelClass>(c)),
                       Seconds(ph.class_time_s[static_cast<size_t>(c)]));
  }
  if (ph.overhead_s > 0) tip += fmt::format("\n  launch overhead {}", Seconds(ph.overhead_s));
  tip += fmt::format("\nfootprint {} ({})", Si(p.footprint_bytes, "B"),
                     p.fits ? "fits" : "does not fit");
  return tip;
}

}  // namespace

namespace {

const char* kLineColors[] = {"#1f5fbf", "#e8710a", "#2a9d3a", "#b22222", "#7b3fb5",
                             "#8c564b", "#d6339c", "#555555", "#17a2b8", "#b8a017"};

}  // namespace

Chart SweepChart(const SweepResult& r, const std::string& title) {
  const SweepAxis& ax = r.axes.front();
  const size_t nphase = r.points.empty() ? 0 : r.points.front().phases.size();
  // The phases drawn: a prefill does not depend on the decode context, so a sweep of context
  // alone leaves its constant panels out (said under the title).
  const bool context_only = std::all_of(r.axes.begin(), r.axes.end(), [](const SweepAxis& a) {
    return a.variable == SweepVariable::kContext;
  });
  std::vector<size_t> phases_drawn;
  double prefill_s = 0;
  for (size_t ph = 0; ph < nphase; ++ph) {
    if (context_only && nphase > 1 && r.points.front().phases[ph].phase == Phase::kPrefill) {
      prefill_s = r.points.front().phases[ph].time_s;
      continue;
    }
    phases_drawn.push_back(ph);
  }
  const bool prefill_left_out = phases_drawn.size() < nphase;
  const double top = prefill_left_out ? 76 : 60;  // room for the line that says so
  // One axis: each phase has a panel of time by verdict and one of time by kernel class.
  const size_t per_phase = r.axes.size() == 1 ? 2 : 1;
  const size_t panels = phases_drawn.size() * per_phase;
  const double W = 1000, panel = 300, L = 90, R = W - 240;
  const double H = top + 30 + panel * static_cast<double>(std::max<size_t>(panels, 1)) + 30;
  SvgWriter svg(W, H);
  svg.Text(L, 30, title, 16, "start", "#111", 0, "bold");
  if (prefill_left_out) {
    svg.Text(L, 50,
             fmt::format("prefill not drawn: it does not depend on the decode context ({} at "
                         "every point)",
                         Seconds(prefill_s)),
             11, "start", "#555");
  }
  std::vector<LabelBox> all_labels;
  const size_t n0 = ax.size();
  const size_t n1 = r.axes.size() == 2 ? r.axes[1].size() : 1;
  const bool numeric = IsInteger(ax.variable);
  const bool logx = numeric && ax.values.front() > 0 && ax.values.back() >= 16 * ax.values.front();
  auto xval = [&](size_t i) { return numeric ? static_cast<double>(ax.values[i]) : double(i); };
  const double xa = xval(0), xb = std::max(xval(n0 - 1), xa + (numeric ? 1e-9 : 1));
  auto X = [&](double v) {
    if (!numeric) return L + (v + 0.5) / static_cast<double>(n0) * (R - L);
    if (logx) return L + (std::log(v) - std::log(xa)) / (std::log(xb) - std::log(xa)) * (R - L);
    return L + (v - xa) / (xb - xa) * (R - L);
  };
  for (size_t pi = 0; pi < panels; ++pi) {
    const size_t ph = phases_drawn[pi / per_phase];
    const bool by_class = per_phase == 2 && pi % 2 == 1;
    const double T = top + panel * static_cast<double>(pi), B = T + panel - 60;
    const std::string phase(NameOf(r.points.front().phases[ph].phase));
    LabelPlacer placer(L + 2, T + 2, R - 2, B - 2);
    double ymax = 0;
    for (const SweepPoint& p : r.points) ymax = std::max(ymax, p.phases[ph].time_s);
    ymax = ymax > 0 ? ymax * 1.12 : 1;
    auto Y = [&](double t) { return B - t / ymax * (B - T); };
    // Grid and axes.
    TimeGrid(svg, L, R, T, B, ymax, Y);
    svg.Text(L, T - 8,
             phase + ": time per step (" +
                 (phase == "prefill" ? std::string("whole prompt") : "one token") + ")" +
                 (per_phase == 2 ? (by_class ? ", by kernel class" : ", by verdict") : ""),
             13, "start", "#111", 0, "bold");
    svg.Text(24, (T + B) / 2, "time per step", 12, "middle", "#222", -90);
    // X ticks: at most ~10 labels, at round values of a numeric axis, none overprinting the
    // one before.
    std::vector<std::pair<double, std::string>> ticks;
    if (numeric) {
      for (double v : TickValues(xa, xval(n0 - 1), logx, 10)) ticks.emplace_back(v, Num(v));
    } else {
      const size_t every = std::max<size_t>(1, n0 / 10);
      for (size_t i = 0; i < n0; i += every) ticks.emplace_back(xval(i), NameOf(ax.dtypes[i]));
    }
    double last_right = -1e9;
    for (const auto& [v, label] : ticks) {
      const double x = X(v);
      const double half = 3.5 * static_cast<double>(label.size()) + 4;
      if (x - half < last_right) continue;
      svg.Line(x, B, x, B + 4, "#999", 1);
      svg.Text(x, B + 17, label, 11, "middle");
      last_right = x + half;
    }
    svg.Text((L + R) / 2, B + 36, std::string(NameOf(ax.variable)) + (logx ? " (log scale)" : ""),
             12, "middle");
    if (r.axes.size() == 1) {
      // Stacked bands: compute-, memory-, comm-bound kernel time.
      // The class panel: time per kernel class (the classes present) and launch overhead.
      struct Band {
        std::string name;
        const char* color;
        std::function<double(const PhasePoint&)> time;
      };
      std::vector<Band> bands;
      if (by_class) {
        const char* colors[] = {"#8e44ad", "#e67e22", "#16a085", "#5cb85c"};
        for (int c = 0; c < kNumClasses; ++c) {
          const bool present = std::any_of(r.points.begin(), r.points.end(), [&](const auto& p) {
            return p.phases[ph].class_bound[static_cast<size_t>(c)].has_value();
          });
          if (!present) continue;
          bands.push_back(
              {std::string(NameOf(static_cast<KernelClass>(c))), colors[c % 4],
               [c](const PhasePoint& q) { return q.class_time_s[static_cast<size_t>(c)]; }});
        }
        if (std::any_of(r.points.begin(), r.points.end(),
                        [&](const auto& p) { return p.phases[ph].overhead_s > 0; })) {
          bands.push_back(
              {"launch overhead", "#7f8c8d", [](const PhasePoint& q) { return q.overhead_s; }});
        }
      } else {
        bands = {
            {"compute-bound kernels", "#d9534f",
             [](const PhasePoint& q) { return q.compute_bound_s; }},
            {"memory-bound kernels", "#428bca",
             [](const PhasePoint& q) { return q.memory_bound_s; }},
            {"comm-bound kernels", "#5cb85c", [](const PhasePoint& q) { return q.comm_bound_s; }}};
      }
      std::vector<double> base(n0, 0), top(n0, 0);  // top: every band stacked
      for (const Band& band : bands) {
        for (size_t i = 0; i < n0; ++i) top[i] += band.time(r.points[i].phases[ph]);
      }
      for (const Band& band : bands) {
        std::vector<std::pair<double, double>> poly;
        std::vector<double> next = base;
        for (size_t i = 0; i < n0; ++i) next[i] += band.time(r.points[i].phases[ph]);
        if (!numeric) {
          const double bw = (R - L) / static_cast<double>(n0) * 0.6;
          for (size_t i = 0; i < n0; ++i) {
            svg.Rect(X(xval(i)) - bw / 2, Y(next[i]), bw, Y(base[i]) - Y(next[i]), band.color);
          }
        } else {
          const std::vector<size_t> drawn = Thinned(n0, 0.5, [&](size_t i) { return X(xval(i)); });
          // A verdict flips at an exact value between two grid points: the bands of the verdict
          // panel change places there instead of sloping across it, so no colour starts before
          // the line that marks where it begins. The step's total still runs straight between
          // the two points; up to the flip line it is split as at the left point, after it as at
          // the right one.
          // The first class flip in (a, b]: a class's kernels change bands there (a step
          // verdict's flip is where the stacked sums cross, not a change of bands).
          auto flip_between = [&](size_t a, size_t b) -> std::optional<double> {
            if (by_class) return std::nullopt;
            std::optional<double> first;
            for (const Crossover& x : r.crossovers) {
              if (x.signal.kind != SignalKind::kClass || !x.exact ||
                  x.signal.phase != r.points.front().phases[ph].phase) {
                continue;
              }
              const double v = static_cast<double>(x.int_value);
              if (v > xval(a) && v <= xval(b) && (!first || v < *first)) first = v;
            }
            return first;
          };
          auto edge = [&](const std::vector<double>& y, bool forward) {
            std::vector<std::pair<double, double>> e;
            for (size_t k = 0; k < drawn.size(); ++k) {
              if (k > 0) {
                const size_t a = drawn[k - 1], b = drawn[k];
                if (const std::optional<double> v = flip_between(a, b)) {
                  const double t = (X(*v) - X(xval(a))) / (X(xval(b)) - X(xval(a)));
                  const double total_a = top[a], total_b = top[b];
                  const double total = total_a + t * (total_b - total_a);
                  e.emplace_back(X(*v), Y(total_a > 0 ? y[a] / total_a * total : 0));
                  e.emplace_back(X(*v), Y(total_b > 0 ? y[b] / total_b * total : 0));
                }
              }
              e.emplace_back(X(xval(drawn[k])), Y(y[drawn[k]]));
            }
            if (!forward) std::reverse(e.begin(), e.end());
            return e;
          };
          poly = edge(next, true);
          for (const auto& xy : edge(base, false)) poly.push_back(xy);
          svg.Polygon(poly, band.color, "none", 0.75);
        }
        base = next;
      }
      // Hover areas: one column per grid point (at least 2 px wide: a long sweep's columns each
      // show one point of theirs), its figures as the tooltip.
      const std::vector<size_t> hovered = Thinned(n0, 2, [&](size_t i) { return X(xval(i)); });
      for (size_t k = 0; k < hovered.size(); ++k) {
        const size_t i = hovered[k];
        const double left = k == 0 ? X(xval(0)) : (X(xval(hovered[k - 1])) + X(xval(i))) / 2;
        const double right = k + 1 == hovered.size()
                                 ? X(xval(i))
                                 : (X(xval(i)) + X(xval(hovered[k + 1]))) / 2;
        const double pad = n0 == 1 ? 8 : 0;
        svg.HoverRect(std::min(left, right) - pad, T, std::abs(right - left) + 2 * pad, B - T,
                      PointTip(r, i, ph));
      }
      double ly = T + 10;
      for (const Band& band : bands) {
        svg.Rect(R + 20, ly - 9, 14, 12, band.color);
        svg.Text(R + 40, ly + 2, band.name, 12);
        ly += 20;
      }
      // Capacity wall: shade from the first value that does not fit.
      for (const Crossover& x : r.crossovers) {
        if (x.signal.kind != SignalKind::kCapacity || x.to.yes || !numeric) continue;
        const double xw = X(static_cast<double>(x.int_value));
        svg.Rect(xw, T, R - xw, B - T, "#f2b8b5", "none", 0.35);
        svg.Line(xw, T, xw, B, "#b22222", 2);
        const std::string label = fmt::format("capacity wall: {} >= {}", x.variable, x.int_value);
        LabelBox box;
        if (placer.Place(label, xw, T + 14, 11, 2, &box)) {
          svg.Text(box.x + 1, box.y + box.height - 3, label, 11, "start", "#b22222");
        }
      }
      // Crossovers of this phase: the largest share on the class panel, the rest on the other.
      int k = 0;
      for (const Crossover& x : r.crossovers) {
        const SweepLine l = Describe(x, r);
        if (l.what.rfind(phase, 0) != 0 || !numeric) continue;
        if ((x.signal.kind == SignalKind::kLargestShare) != by_class) continue;
        const double xv = X(static_cast<double>(x.int_value));
        svg.Line(xv, T, xv, B, "#333", 1.2, "5,4");
        const std::string what = l.what.substr(phase.size() + 1);
        const std::string to = l.to.substr(0, l.to.find(':'));
        const std::string label = fmt::format("{}: {} at {}", what, to, l.value);
        LabelBox box;
        if (placer.Place(label, xv, T + 30 + 18.0 * (k % 8), 11, 2, &box)) {
          svg.Text(box.x + 1, box.y + box.height - 3, label, 11, "start", "#111");
        }
        ++k;
      }
    } else {
      // One line of total time per value of the second axis.
      for (size_t j = 0; j < n1; ++j) {
        const char* color = kLineColors[j % 10];
        const std::vector<size_t> drawn = Thinned(n0, 0.5, [&](size_t i) { return X(xval(i)); });
        for (size_t k = 0; k + 1 < drawn.size(); ++k) {
          const size_t i = drawn[k], next = drawn[k + 1];
          svg.Line(X(xval(i)), Y(r.points[i * n1 + j].phases[ph].time_s), X(xval(next)),
                   Y(r.points[next * n1 + j].phases[ph].time_s), color, 2);
        }
        // Markers (hollow where the footprint does not fit), at least 10 px apart.
        for (size_t i : Thinned(n0, 10, [&](size_t i) { return X(xval(i)); })) {
          const SweepPoint& p = r.points[i * n1 + j];
          svg.Circle(X(xval(i)), Y(p.phases[ph].time_s), 3, p.fits ? color : "white", color,
                     PointTip(r, i * n1 + j, ph));
        }
        if (j < 14) {
          svg.Line(R + 20, T + 10 + 18.0 * static_cast<double>(j), R + 34,
                   T + 10 + 18.0 * static_cast<double>(j), color, 2);
          svg.Text(R + 40, T + 14 + 18.0 * static_cast<double>(j), r.axes[1].Label(j), 12);
        }
      }
      svg.Text(R + 20, B - 6, "hollow: does not fit memory", 11, "start", "#444");
    }
    for (const auto& b : placer.placed()) all_labels.push_back(b);
  }
  return Chart{svg.Finish(), all_labels};
}

std::string RenderSweepSvg(const SweepResult& sweep, const std::string& title,
                           const Device& device) {
  (void)device;
  return SweepChart(sweep, title).svg;
}

}  // namespace roofline
