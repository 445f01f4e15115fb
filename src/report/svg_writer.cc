#include "src/report/svg_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace roofline {

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgWriter::SvgWriter(double width, double height) : width_(width), height_(height) {}

void SvgWriter::Line(double x1, double y1, double x2, double y2, const std::string& stroke,
                     double width, const std::string& dash) {
  body_ += fmt::format(
      R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{}"{}/>)",
      x1, y1, x2, y2, stroke, width,
      dash.empty() ? "" : fmt::format(R"( stroke-dasharray="{}")", dash));
  body_ += "\n";
}

void SvgWriter::Rect(double x, double y, double w, double h, const std::string& fill,
                     const std::string& stroke, double opacity) {
  body_ += fmt::format(
      R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" stroke="{}" opacity="{}"/>)",
      x, y, std::max(0.0, w), std::max(0.0, h), fill, stroke, opacity);
  body_ += "\n";
}

namespace {

/// Closes an element: "/>" or, with a tooltip, "><title>tip</title></NAME>".
std::string Close(const char* name, const std::string& tip) {
  if (tip.empty()) return "/>\n";
  return fmt::format("><title>{}</title></{}>\n", XmlEscape(tip), name);
}

}  // namespace

void SvgWriter::Circle(double cx, double cy, double r, const std::string& fill,
                       const std::string& stroke, const std::string& tip) {
  body_ += fmt::format(
      R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}" stroke="{}" fill-opacity="0.75")",
      cx, cy, r, fill, stroke);
  body_ += Close("circle", tip);
}

void SvgWriter::HoverRect(double x, double y, double w, double h, const std::string& tip) {
  body_ += fmt::format(
      R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#000" fill-opacity="0")",
      x, y, w, h);
  body_ += Close("rect", tip);
}

void SvgWriter::Polygon(const std::vector<std::pair<double, double>>& pts, const std::string& fill,
                        const std::string& stroke, double opacity, const std::string& tip) {
  std::string p;
  for (const auto& [x, y] : pts) p += fmt::format("{:.1f},{:.1f} ", x, y);
  body_ += fmt::format(R"(<polygon points="{}" fill="{}" stroke="{}" fill-opacity="{}")", p, fill,
                       stroke, opacity);
  body_ += Close("polygon", tip);
}

void SvgWriter::Text(double x, double y, const std::string& text, double size,
                     const std::string& anchor, const std::string& fill, double rotate,
                     const std::string& weight) {
  body_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="{}" text-anchor="{}" fill="{}")",
                       x, y, size, anchor, fill);
  if (weight != "normal") body_ += fmt::format(R"( font-weight="{}")", weight);
  if (rotate != 0)
    body_ += fmt::format(R"svg( transform="rotate({} {:.1f} {:.1f})")svg", rotate, x, y);
  body_ += '>';
  body_ += XmlEscape(text);
  body_ += "</text>\n";
}

std::string SvgWriter::Finish() const {
  std::string out = fmt::format(
      R"svg(<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
<rect x="0" y="0" width="{0:.0f}" height="{1:.0f}" fill="white"/>
)svg",
      width_, height_);
  out.append(body_);
  out.append("</svg>\n");
  return out;
}

double TextWidth(const std::string& text, double size) {
  double w = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    w += (c == 'i' || c == 'l' || c == '.' || c == ',' || c == ' ' || c == '(' || c == ')') ? 0.32
         : (c >= 'A' && c <= 'Z') || c == 'm' || c == 'w'                                   ? 0.72
                                                                                            : 0.58;
  }
  return w * size;
}

void LabelPlacer::Reserve(double x, double y, double w, double h) {
  reserved_.push_back({"", x, y, w, h});
}

bool LabelPlacer::Free(const LabelBox& b) const {
  if (b.x < x0_ || b.y < y0_ || b.x + b.width > x1_ || b.y + b.height > y1_) return false;
  auto overlaps = [&](const LabelBox& o) {
    return b.x < o.x + o.width && o.x < b.x + b.width && b.y < o.y + o.height &&
           o.y < b.y + b.height;
  };
  for (const auto& o : placed_) {
    if (overlaps(o)) return false;
  }
  for (const auto& o : reserved_) {
    if (overlaps(o)) return false;
  }
  return true;
}

bool LabelPlacer::Place(const std::string& text, double x, double y, double size, double radius,
                        LabelBox* out) {
  const double w = TextWidth(text, size) + 2;
  const double h = size + 2;
  // Right, left, above, below, then diagonals, at growing distances.
  for (double d : {radius + 3, radius + 10, radius + 20, radius + 32}) {
    const double cands[][2] = {{x + d, y - h / 2}, {x - d - w, y - h / 2}, {x - w / 2, y - d - h},
                               {x - w / 2, y + d}, {x + d, y - d - h},     {x - d - w, y - d - h},
                               {x + d, y + d},     {x - d - w, y + d}};
    for (const auto& c : cands) {
      LabelBox b{text, c[0], c[1], w, h};
      if (Free(b)) {
        placed_.push_back(b);
        *out = b;
        return true;
      }
    }
  }
  return false;
}

double NiceStep(double range) {
  const double raw = range / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

}  // namespace roofline
