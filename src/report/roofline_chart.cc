// The roofline chart.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "roofline/plot.h"
#include "roofline/units.h"
#include "src/report/svg_writer.h"

namespace roofline {
namespace {

const char* kSeriesColor[] = {"#1f5fbf", "#e8710a", "#2a9d3a", "#9b2fae"};
const char* kLevelColor[] = {"#444444", "#8a6d3b", "#5f8f9f", "#9f5f8f", "#6f9f5f", "#777777"};

int SeriesIndex(const std::string& s) {
  if (s == "prefill") return 0;
  if (s == "decode") return 1;
  if (s == "measured") return 2;
  return 3;
}

std::string TickLabel(double decade_exp, const char* unit) {
  return Si(std::pow(10.0, decade_exp), unit);
}

}  // namespace

std::vector<RooflinePoint> RooflinePoints(const ModelAnalysis& a, const CostModel& model,
                                          std::vector<std::string>* engines) {
  std::vector<RooflinePoint> pts;
  std::vector<std::string> used;
  for (const PhaseResult& p : a.phases) {
    for (size_t i = 0; i < p.costs.size(); ++i) {
      const KernelCost& c = p.costs[i];
      for (int e = 0; e < c.num_engines; ++e) {
        const std::string name = model.CeilingName(c.engines[e]);
        if (name != "none" && c.engines[e].flops > 0 &&
            std::find(used.begin(), used.end(), name) == used.end()) {
          used.push_back(name);
        }
      }
      if (c.flops <= 0 || c.bytes[0] <= 0 || c.time_s <= 0) continue;
      RooflinePoint r;
      r.label = c.name;
      r.series = std::string(NameOf(p.phase));
      r.intensity = c.Intensity(0);
      r.flops_per_s = c.attainable_flops_per_s;
      r.share =
          p.totals.time_s > 0 ? c.time_s * static_cast<double>(c.repeat) / p.totals.time_s : 0;
      r.tip = fmt::format(
          "{} ({}{})\n{} FLOP, {} through {}, {} FLOP/B\ntime {} ({}), {:.1f}% of the phase{}",
          c.name, NameOf(p.phase), c.repeat > 1 ? fmt::format(", x{}", c.repeat) : "",
          Si(c.flops, ""), Si(c.bytes[0], "B"), model.device().memory[0].name,
          Num(c.Intensity(0)), Seconds(c.time_s), model.BoundName(c), 100 * r.share,
          c.has_expected ? fmt::format("\nexpected {} ({})", Seconds(c.expected.time_s),
                                       model.BoundName(c, c.expected.bound))
                         : "");
      pts.push_back(r);
    }
  }
  if (engines != nullptr) *engines = used;
  return pts;
}

std::vector<RooflinePoint> NetworkRooflinePoints(const NetworkAnalysis& a, const CostModel& model,
                                                 std::vector<std::string>* engines) {
  std::vector<RooflinePoint> points;
  for (const KernelCost& c : a.costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      const std::string name = model.CeilingName(c.engines[e]);
      if (name != "none" && c.engines[e].flops > 0 && engines != nullptr &&
          std::find(engines->begin(), engines->end(), name) == engines->end()) {
        engines->push_back(name);
      }
    }
    if (c.flops <= 0 || c.bytes[0] <= 0 || c.time_s <= 0) continue;
    RooflinePoint pt{c.name, "network", c.Intensity(0), c.attainable_flops_per_s,
                     a.totals.time_s > 0 ? c.time_s / a.totals.time_s : 0};
    pt.tip = fmt::format("{}\n{} FLOP, {} through {}, {} FLOP/B\ntime {} ({}), {:.1f}% of the pass",
                         c.name, Si(c.flops, ""), Si(c.bytes[0], "B"),
                         model.device().memory[0].name, Num(c.Intensity(0)), Seconds(c.time_s),
                         model.BoundName(c), 100 * pt.share);
    points.push_back(std::move(pt));
  }
  return points;
}

Chart RooflineChart(const Device& d, const std::vector<std::string>& engines,
                    const std::vector<RooflinePoint>& points, const std::string& title) {
  const double W = 1000, H = 680;
  const double L = 90, T = 60, R = W - 240, B = H - 70;
  SvgWriter svg(W, H);
  // Ranges (decades).
  double pmax = 0;
  for (const auto& e : engines) {
    if (const ComputeCeiling* c = d.FindCompute(e)) pmax = std::max(pmax, c->peak.value);
  }
  const double bw0 = d.device_memory().bandwidth_bytes_per_s();
  double imin = 0.1, imax = pmax > 0 ? 4 * pmax / bw0 : 1000, fmin = 1e300;
  for (const auto& p : points) {
    if (p.intensity <= 0 || p.flops_per_s <= 0) continue;
    imin = std::min(imin, p.intensity);
    imax = std::max(imax, p.intensity * 2);
    fmin = std::min(fmin, p.flops_per_s);
    pmax = std::max(pmax, p.flops_per_s);
  }
  const double x0 = std::floor(std::log10(imin)), x1 = std::ceil(std::log10(imax));
  const double y1 = std::ceil(std::log10(pmax * 1.2));
  double y0 = std::floor(std::log10(std::min(fmin, bw0 * std::pow(10.0, x0))));
  y0 = std::max(y0, y1 - 8);
  if (y1 - y0 < 3) y0 = y1 - 3;
  auto X = [&](double i) { return L + (std::log10(i) - x0) / (x1 - x0) * (R - L); };
  auto Y = [&](double f) { return B - (std::log10(f) - y0) / (y1 - y0) * (B - T); };

  LabelPlacer placer(L + 2, T + 2, R - 2, B - 2);
  // Grid, ticks, axes.
  for (double e = x0; e <= x1; ++e) {
    const double x = L + (e - x0) / (x1 - x0) * (R - L);
    svg.Line(x, T, x, B, "#e6e6e6", 1);
    svg.Text(x, B + 18, TickLabel(e, ""), 12, "middle");
  }
  for (double e = y0; e <= y1; ++e) {
    const double y = B - (e - y0) / (y1 - y0) * (B - T);
    svg.Line(L, y, R, y, "#e6e6e6", 1);
    svg.Text(L - 8, y + 4, TickLabel(e, ""), 12, "end");
  }
  svg.Rect(L, T, R - L, B - T, "none", "#999");
  // Hierarchical: kernels at the intensity of each memory level (Nsight Compute's view).
  const bool hierarchical = std::any_of(points.begin(), points.end(),
                                        [](const RooflinePoint& p) { return p.level > 0; });
  const bool measured_only =
      !points.empty() && std::all_of(points.begin(), points.end(), [](const RooflinePoint& p) {
        return p.series == "measured";
      });
  svg.Text((L + R) / 2, H - 22,
           hierarchical ? "Arithmetic intensity at each memory level (FLOP/byte)"
                        : "Arithmetic intensity at " + d.memory[0].name + " (FLOP/byte)",
           14, "middle");
  svg.Text(24, (T + B) / 2, "Attainable performance (FLOP/s)", 14, "middle", "#222", -90);
  // A long title (a workload with many settings) is set smaller to stay inside the chart: about
  // 0.62 em a character in a bold sans-serif face, down to 9 px; beyond that it is cut, ending
  // in "..." (the page's heading keeps it whole).
  constexpr double kEm = 0.62, kSmallest = 9;
  const double room = W - L - 10;
  std::string shown = title;
  const auto fits = static_cast<size_t>(room / (kEm * kSmallest));
  if (shown.size() > fits) {
    size_t cut = fits - 3;
    while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
    shown = shown.substr(0, cut) + "...";
  }
  const double title_size =
      std::floor(10 *
                 std::clamp(room / (kEm * static_cast<double>(shown.size())), kSmallest, 16.0)) /
      10;
  svg.Text(L, 32, shown, title_size, "start", "#111", 0, "bold");

  // Kernel markers, largest first; every marker is reserved before any label is placed.
  // Points inside the chart's range (at most 8 decades of FLOP/s): the rest are counted.
  std::vector<RooflinePoint> pts;
  int outside = 0;
  for (const auto& p : points) {
    if (!(p.intensity > 0 && p.flops_per_s > 0)) continue;
    const double lx = std::log10(p.intensity), ly = std::log10(p.flops_per_s);
    if (lx < x0 || lx > x1 || ly < y0 || ly > y1) {
      ++outside;
      continue;
    }
    pts.push_back(p);
  }
  std::sort(pts.begin(), pts.end(),
            [](const RooflinePoint& a, const RooflinePoint& b) { return a.share > b.share; });
  auto radius = [](double share) { return 3 + 11 * std::sqrt(std::clamp(share, 0.0, 1.0)); };
  for (const auto& p : pts) {
    const double r = radius(p.share);
    placer.Reserve(X(p.intensity) - r, Y(p.flops_per_s) - r, 2 * r, 2 * r);
  }
  struct PendingText {
    LabelBox box;
    std::string color;
    double px, py, r;  ///< the point it names (r < 0: no leader line)
  };
  std::vector<PendingText> texts;

  // Memory diagonals (each up to the highest ceiling); their labels are placed after the
  // ceilings and ridge points are reserved.
  struct DiagonalLabel {
    std::string text, color;
    double ia, ib, bw;
  };
  std::vector<DiagonalLabel> diagonal_labels;
  const double top = pmax;
  // Each level's roof in its level's colour (a hierarchical chart's markers use the same).
  for (size_t li = 0; li < d.memory.size(); ++li) {
    const MemoryLevel& m = d.memory[li];
    const double bw = m.bandwidth_bytes_per_s();
    if (bw <= 0) continue;
    const double ia = std::max(std::pow(10.0, x0), std::pow(10.0, y0) / bw);
    const double ib = std::min(std::pow(10.0, x1), top / bw);
    if (ib <= ia) continue;
    const std::string color = kLevelColor[li % 6];
    svg.Line(X(ia), Y(ia * bw), X(ib), Y(ib * bw), color, li == 0 ? 2.2 : 1.3,
             li == 0 ? "" : "6,4");
    diagonal_labels.push_back({fmt::format("{} {}", m.name, Si(bw, "B/s")), color, ia, ib, bw});
  }
  // Compute ceilings and ridge points against device memory.
  std::vector<std::pair<std::string, double>> margin_labels;  // text, y
  for (const std::string& e : engines) {
    const ComputeCeiling* c = d.FindCompute(e);
    if (c == nullptr) continue;
    const double p = c->peak.value;
    const double ridge = p / bw0;
    const double xs = std::max(std::pow(10.0, x0), ridge);
    svg.Line(X(xs), Y(p), R, Y(p), "#b22222", 2);
    const double rx = X(ridge), ry = Y(p);
    svg.Polygon({{rx, ry - 6}, {rx + 6, ry}, {rx, ry + 6}, {rx - 6, ry}}, "#b22222", "#b22222");
    placer.Reserve(rx - 6, ry - 6, 12, 12);
    // The ceiling's name in the right margin at its height; labels keep off the line.
    margin_labels.push_back({fmt::format("{} {}", e, Si(p, c->peak.unit)), ry});
    placer.Reserve(X(xs), ry - 3, R - X(xs), 6);
    LabelBox box;
    const std::string rl = fmt::format("ridge {} FLOP/B", Num(std::round(ridge * 10) / 10));
    if (placer.Place(rl, rx, ry, 11, 6, &box)) texts.push_back({box, "#b22222", rx, ry, 6});
  }

  for (const DiagonalLabel& dl : diagonal_labels) {
    for (double f : {0.15, 0.3, 0.45, 0.6, 0.75}) {
      const double im =
          std::pow(10.0, std::log10(dl.ia) + f * (std::log10(dl.ib) - std::log10(dl.ia)));
      LabelBox box;
      if (placer.Place(dl.text, X(im), Y(im * dl.bw), 11, 2, &box)) {
        texts.push_back({box, dl.color, 0, 0, -1});
        break;
      }
    }
  }

  // One kernel's points at several levels, joined (left to right).
  std::vector<int> groups;
  for (const auto& p : pts) {
    if (p.group >= 0 && std::find(groups.begin(), groups.end(), p.group) == groups.end()) {
      groups.push_back(p.group);
    }
  }
  for (int g : groups) {
    std::vector<std::pair<double, double>> line;
    for (const auto& p : pts) {
      if (p.group == g) line.emplace_back(X(p.intensity), Y(p.flops_per_s));
    }
    std::sort(line.begin(), line.end());
    for (size_t k = 1; k < line.size(); ++k) {
      svg.Line(line[k - 1].first, line[k - 1].second, line[k].first, line[k].second, "#888", 1);
    }
  }
  // Markers (largest first, so small ones stay visible on top).
  auto level_marker = [&](int level, double x, double y, double r, const std::string& tip) {
    const char* color = kLevelColor[level % 6];
    if (level == 1) {
      svg.Polygon({{x - r, y - r}, {x + r, y - r}, {x + r, y + r}, {x - r, y + r}}, color, "#222",
                  0.7, tip);
    } else if (level >= 2) {
      svg.Polygon({{x, y - r * 1.2}, {x + r * 1.1, y + r * 0.8}, {x - r * 1.1, y + r * 0.8}},
                  color, "#222", 0.7, tip);
    } else {
      svg.Circle(x, y, r, color, "#222", tip);
    }
  };
  for (const auto& p : pts) {
    const int s = SeriesIndex(p.series);
    const double x = X(p.intensity), y = Y(p.flops_per_s), r = radius(p.share);
    const std::string tip = p.tip.empty() ? p.label : p.tip;
    if (hierarchical && s == 2) {
      level_marker(p.level, x, y, r, tip);
    } else if (s == 1) {
      svg.Polygon({{x - r, y - r}, {x + r, y - r}, {x + r, y + r}, {x - r, y + r}}, kSeriesColor[s],
                  "#333", 0.7, tip);
    } else if (s == 2) {
      svg.Polygon({{x, y - r * 1.2}, {x + r * 1.1, y + r * 0.8}, {x - r * 1.1, y + r * 0.8}},
                  kSeriesColor[s], "#333", 0.7, tip);
    } else {
      svg.Circle(x, y, r, kSeriesColor[s], "#333", tip);
    }
  }
  int unlabelled = 0, no_room = 0;
  // A kernel's group is labelled once, at its lowest level.
  auto labelled_point = [&](const RooflinePoint& p) {
    if (p.group < 0) return true;
    for (const auto& q : pts) {
      if (q.group == p.group && q.level < p.level) return false;
    }
    return true;
  };
  for (const auto& p : pts) {
    if (!labelled_point(p)) continue;
    if (p.share < 0.01) {
      ++unlabelled;
      continue;
    }
    LabelBox box;
    const int s = SeriesIndex(p.series);
    const double x = X(p.intensity), y = Y(p.flops_per_s), r = radius(p.share);
    if (placer.Place(p.label, x, y, 11, r, &box)) {
      texts.push_back({box, hierarchical && s == 2 ? "#222" : kSeriesColor[s], x, y, r});
    } else {
      ++no_room;
    }
  }
  // Leader lines for labels set away from their point, then every text on top.
  for (const PendingText& t : texts) {
    if (t.r < 0) continue;
    const double cx = std::clamp(t.px, t.box.x, t.box.x + t.box.width);
    const double cy = std::clamp(t.py, t.box.y, t.box.y + t.box.height);
    const double dist = std::hypot(cx - t.px, cy - t.py);
    if (dist > t.r + 6) {
      const double ux = (cx - t.px) / dist, uy = (cy - t.py) / dist;
      svg.Line(t.px + ux * t.r, t.py + uy * t.r, cx, cy, "#999", 0.8);
    }
  }
  for (const PendingText& t : texts) {
    svg.Text(t.box.x + 1, t.box.y + t.box.height - 3, t.box.text, 11, "start", t.color);
  }

  // Ceiling names in the margin (nudged apart), then the legend in a gap between them.
  std::sort(margin_labels.begin(), margin_labels.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  double last = -1e9;
  std::vector<double> used_y;
  for (auto& [text, y] : margin_labels) {
    const double yy = std::max(y + 4, last + 15);
    svg.Text(R + 6, yy, text, 11, "start", "#b22222");
    used_y.push_back(yy);
    last = yy;
  }
  const double legend_height = 250;
  double ly = T + 10;
  for (double candidate : [&] {
         std::vector<double> c = {T + 10};
         for (double y : used_y) c.push_back(y + 24);
         return c;
       }()) {
    bool clear = candidate + legend_height <= H - 10;
    for (double y : used_y) clear = clear && !(y > candidate - 16 && y < candidate + legend_height);
    if (clear) {
      ly = candidate;
      break;
    }
    ly = std::max(ly, candidate);
  }
  const double lx = R + 20;
  svg.Text(lx, ly, "Legend", 13, "start", "#111", 0, "bold");
  ly += 22;
  std::vector<std::string> series;
  for (const auto& p : pts) {
    if (std::find(series.begin(), series.end(), p.series) == series.end()) {
      series.push_back(p.series);
    }
  }
  if (hierarchical) {
    // One entry per level the points are at, in its roof's colour.
    series.erase(std::remove(series.begin(), series.end(), "measured"), series.end());
    std::vector<int> levels;
    for (const auto& p : pts) {
      if (p.series != "measured") continue;
      if (std::find(levels.begin(), levels.end(), p.level) == levels.end()) levels.push_back(p.level);
    }
    std::sort(levels.begin(), levels.end());
    for (int level : levels) {
      level_marker(level, lx + 6, ly, 6, "");
      svg.Text(lx + 20, ly + 4, "kernel at " + d.memory[static_cast<size_t>(level)].name +
                                    " intensity", 12);
      ly += 22;
    }
    svg.Line(lx, ly, lx + 14, ly, "#888", 1);
    svg.Text(lx + 20, ly + 4, "one kernel's levels", 12);
    ly += 22;
  }
  for (const auto& s : series) {
    const int si = SeriesIndex(s);
    if (si == 1) {
      svg.Polygon({{lx, ly - 6}, {lx + 12, ly - 6}, {lx + 12, ly + 6}, {lx, ly + 6}},
                  kSeriesColor[si], "#333", 0.7);
    } else if (si == 2) {
      svg.Polygon({{lx + 6, ly - 7}, {lx + 13, ly + 5}, {lx - 1, ly + 5}}, kSeriesColor[si], "#333",
                  0.7);
    } else {
      svg.Circle(lx + 6, ly, 6, kSeriesColor[si], "#333");
    }
    svg.Text(lx + 20, ly + 4, s + " kernels", 12);
    ly += 22;
  }
  svg.Line(lx, ly, lx + 14, ly, "#b22222", 2);
  svg.Text(lx + 20, ly + 4, "compute ceiling", 12);
  ly += 22;
  svg.Line(lx, ly, lx + 14, ly, kLevelColor[0], 2.2);
  svg.Text(lx + 20, ly + 4, "memory roof (I x bandwidth)", 12);
  ly += 22;
  svg.Polygon({{lx + 7, ly - 6}, {lx + 13, ly}, {lx + 7, ly + 6}, {lx + 1, ly}}, "#b22222",
              "#b22222");
  svg.Text(lx + 20, ly + 4, "ridge point (vs " + d.memory[0].name + ")", 12);
  ly += 28;
  const std::string of_what = measured_only ? "GPU time" : "phase time";
  for (const std::string& line :
       {"marker area ~ share of " + of_what, fmt::format("{} kernel(s) under 1% of", unlabelled),
        measured_only ? std::string("the GPU time: unlabelled")
                      : std::string("their phase: unlabelled"),
        no_room > 0 ? fmt::format("{} more without room", no_room) : std::string(""),
        outside > 0 ? fmt::format("{} point(s) off the axes", outside) : std::string(""),
        measured_only ? std::string("points: achieved FLOP/s") : std::string("points: attainable FLOP/s"),
        measured_only ? std::string("(measured)") : std::string("at the time bound"),
        "device: " + d.id}) {
    svg.Text(lx, ly, line, 11, "start", "#444");
    ly += 16;
  }
  return Chart{svg.Finish(), placer.placed()};
}

}  // namespace roofline
