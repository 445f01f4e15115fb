// The serving plan's Pareto chart: output tokens/s per device against tokens/s per user.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/plot.h"
#include "src/report/svg_writer.h"

namespace roofline {
namespace {

/// Log-axis decades (1, 2, 5 per decade) between lo and hi.
std::vector<double> ParetoTicks(double lo, double hi) {
  std::vector<double> out;
  for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (d * m >= lo * 0.9999 && d * m <= hi * 1.0001) out.push_back(d * m);
    }
  }
  return out;
}

std::string ParetoAxis(double x) {
  return x >= 100 ? fmt::format("{:.0f}", x) : fmt::format("{:.3g}", x);
}

}  // namespace

Chart PlanParetoChart(const Plan& plan, const std::string& title) {
  const double W = 960, H = 620, L = 90, R = 700, T = 70, B = 550;
  SvgWriter svg(W, H);
  svg.Text(L, 30, title, 16, "start", "#111", 0, "bold");
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  bool expected = false;
  bool staged = false;  // some point has pipeline stages: its label names them
  for (const PlanVariant& v : plan.variants) {
    for (const ParetoPoint& p : v.pareto) {
      staged = staged || p.pp > 1;
      if (p.tokens_per_s_per_user <= 0 || p.tokens_per_s_per_gpu <= 0) continue;
      xlo = std::min(xlo, p.tokens_per_s_per_user);
      xhi = std::max(xhi, p.tokens_per_s_per_user);
      ylo = std::min(ylo, p.tokens_per_s_per_gpu);
      yhi = std::max(yhi, p.tokens_per_s_per_gpu);
      expected = expected || p.expected;
    }
  }
  svg.Text(
      L, 50,
      fmt::format("{} on {}, {} prompt + {} output tokens; {} figures; frontier points "
                  "labelled {}",
                  plan.model,
                  plan.request.gpus > 0 ? fmt::format("{} x {}", plan.request.gpus, plan.device)
                                        : plan.device + " (sized fleet)",
                  plan.request.prompt, plan.request.output, expected ? "expected" : "bound",
                  staged ? "tp pp x batch per replica" : "tp x batch per replica"),
      11, "start", "#555");
  std::vector<LabelBox> labels;
  if (xhi <= 0) {
    svg.Text(L, T + 40, "no operating point", 14);
    return {svg.Finish(), labels};
  }
  // Half a decade of margin each way, on log axes.
  xlo /= 1.4, xhi *= 1.4, ylo /= 1.4, yhi *= 1.4;
  auto X = [&](double v) { return L + std::log(v / xlo) / std::log(xhi / xlo) * (R - L); };
  auto Y = [&](double v) { return B - std::log(v / ylo) / std::log(yhi / ylo) * (B - T); };
  for (double t : ParetoTicks(xlo, xhi)) {
    svg.Line(X(t), T, X(t), B, "#eeeeee", 1);
    svg.Text(X(t), B + 16, ParetoAxis(t), 11, "middle");
  }
  for (double t : ParetoTicks(ylo, yhi)) {
    svg.Line(L, Y(t), R, Y(t), "#eeeeee", 1);
    svg.Text(L - 8, Y(t) + 4, ParetoAxis(t), 11, "end");
  }
  svg.Rect(L, T, R - L, B - T, "none", "#999");
  svg.Text((L + R) / 2, B + 40, "output tokens/s per user (1 / median time per output token)", 12,
           "middle");
  svg.Text(L - 60, (T + B) / 2, std::string("output tokens/s per ") + (plan.gpu ? "GPU" : "chip"),
           12, "middle", "#222", -90);
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  LabelPlacer placer(L + 2, T + 2, R - 2, B - 2);
  double legend_y = T + 10;
  for (size_t vi = 0; vi < plan.variants.size(); ++vi) {
    const PlanVariant& v = plan.variants[vi];
    const std::string colour = colours[vi % 4];
    std::vector<ParetoPoint> front;
    for (const ParetoPoint& p : v.pareto) {
      if (p.tokens_per_s_per_user <= 0 || p.tokens_per_s_per_gpu <= 0) continue;
      const double x = X(p.tokens_per_s_per_user), y = Y(p.tokens_per_s_per_gpu);
      const std::string tip = fmt::format(
          "{}: tp {}{} batch {}: {} tok/s per user, {} tok/s per device, TTFT {}, TPOT {}{}",
          v.name, p.tp, p.pp > 1 ? fmt::format(" x pp {}", p.pp) : "", p.batch,
          ParetoAxis(p.tokens_per_s_per_user), ParetoAxis(p.tokens_per_s_per_gpu),
          Seconds(p.ttft_s), Seconds(p.tpot_s), p.meets_targets ? "" : " (misses the targets)");
      // Degrees by marker size: larger tp, larger marker; hollow where the targets are missed.
      const double r = 2.5 + std::log2(static_cast<double>(p.tp));
      svg.Circle(x, y, r, p.meets_targets ? colour : "white", colour, tip);
      placer.Reserve(x - r, y - r, 2 * r, 2 * r);
      if (p.frontier) front.push_back(p);
    }
    std::sort(front.begin(), front.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
      return a.tokens_per_s_per_user < b.tokens_per_s_per_user;
    });
    for (size_t i = 0; i + 1 < front.size(); ++i) {
      svg.Line(X(front[i].tokens_per_s_per_user), Y(front[i].tokens_per_s_per_gpu),
               X(front[i + 1].tokens_per_s_per_user), Y(front[i + 1].tokens_per_s_per_gpu), colour,
               1.5, vi == 0 ? "" : "5,3");
    }
    for (const ParetoPoint& p : front) {
      LabelBox box;
      const std::string text = p.pp > 1 ? fmt::format("tp{} pp{} x{}", p.tp, p.pp, p.batch)
                                        : fmt::format("tp{} x{}", p.tp, p.batch);
      if (placer.Place(text, X(p.tokens_per_s_per_user), Y(p.tokens_per_s_per_gpu), 10, 6, &box)) {
        svg.Text(box.x, box.y + box.height - 2, text, 10, "start", colour);
        labels.push_back(box);
      }
    }
    // Legend, right of the plot.
    svg.Line(R + 20, legend_y, R + 44, legend_y, colour, 1.5, vi == 0 ? "" : "5,3");
    svg.Circle(R + 32, legend_y, 3.5, colour, colour);
    // The variant's short name: "as configured", "fp8".
    svg.Text(R + 50, legend_y + 4, v.name.substr(0, v.name.find(" (")), 11);
    legend_y += 20;
  }
  svg.Text(R + 20, legend_y + 10, "marker size: tensor-parallel degree", 11, "start", "#555");
  svg.Text(R + 20, legend_y + 26, "hollow: misses the targets", 11, "start", "#555");
  svg.Text(R + 20, legend_y + 42, "line: the Pareto frontier", 11, "start", "#555");
  return {svg.Finish(), labels};
}

}  // namespace roofline
