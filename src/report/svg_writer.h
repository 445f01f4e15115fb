// A small SVG builder and a greedy label placer (internal to the report module).
#ifndef ROOFLINE_SRC_REPORT_SVG_WRITER_H_
#define ROOFLINE_SRC_REPORT_SVG_WRITER_H_

#include <string>
#include <vector>

#include "roofline/plot.h"
#include "roofline/units.h"

namespace roofline {

/// Escapes &, <, >, " for SVG/HTML text and attributes.
std::string XmlEscape(const std::string& s);

/// Accumulates SVG elements; Finish() returns the document.
class SvgWriter {
 public:
  SvgWriter(double width, double height);
  void Line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
            const std::string& dash = "");
  void Rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& stroke = "none", double opacity = 1);
  /// `tip`, when given, is the element's tooltip (an SVG <title>, shown on hover).
  void Circle(double cx, double cy, double r, const std::string& fill, const std::string& stroke,
              const std::string& tip = "");
  void Polygon(const std::vector<std::pair<double, double>>& pts, const std::string& fill,
               const std::string& stroke, double opacity = 1, const std::string& tip = "");
  /// An invisible rectangle whose tooltip is `tip` (hover areas of a chart).
  void HoverRect(double x, double y, double w, double h, const std::string& tip);
  /// `anchor`: start, middle or end. `rotate`: degrees about (x, y).
  void Text(double x, double y, const std::string& text, double size,
            const std::string& anchor = "start", const std::string& fill = "#222",
            double rotate = 0, const std::string& weight = "normal");
  void Raw(const std::string& s) { body_ += s; }
  std::string Finish() const;
  double width() const { return width_; }
  double height() const { return height_; }

 private:
  double width_, height_;
  std::string body_;
};

/// A round grid step (1, 2, 2.5 or 5 times a power of ten) giving about five lines over `range`.
double NiceStep(double range);

/// Horizontal grid lines of a time axis from 0 to `ymax` seconds (labels left of `left`) and the
/// plot frame; `y` maps seconds to pixels.
template <typename YMap>
void TimeGrid(SvgWriter& svg, double left, double right, double top, double bottom, double ymax,
              const YMap& y) {
  const double step = NiceStep(ymax);
  for (double t = 0; t <= ymax; t += step) {
    svg.Line(left, y(t), right, y(t), "#e6e6e6", 1);
    svg.Text(left - 8, y(t) + 4, Seconds(t), 11, "end");
  }
  svg.Rect(left, top, right - left, bottom - top, "none", "#999");
}

/// Estimated rendered width of text in a sans-serif font, pixels.
double TextWidth(const std::string& text, double size);

/// Places labels so that none overlaps another label or a reserved box.
class LabelPlacer {
 public:
  LabelPlacer(double x0, double y0, double x1, double y1) : x0_(x0), y0_(y0), x1_(x1), y1_(y1) {}
  /// Reserves an area (markers, legend) labels must avoid.
  void Reserve(double x, double y, double w, double h);
  /// Tries positions around (x, y) at growing distances; returns false when none is free.
  bool Place(const std::string& text, double x, double y, double size, double radius,
             LabelBox* out);
  const std::vector<LabelBox>& placed() const { return placed_; }

 private:
  bool Free(const LabelBox& b) const;
  double x0_, y0_, x1_, y1_;
  std::vector<LabelBox> placed_;
  std::vector<LabelBox> reserved_;
};

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_SVG_WRITER_H_
