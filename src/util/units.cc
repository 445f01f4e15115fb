#include "roofline/units.h"

#include <fmt/format.h>

#include <cmath>

namespace roofline {

std::string Si(double value, std::string_view unit) {
  static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  if (value == 0 || !std::isfinite(value)) return fmt::format("{:g} {}", value, unit);
  double v = value;
  int p = 0;
  while (std::fabs(v) >= 999.5 && p < 6) {
    v /= 1000;
    ++p;
  }
  if (std::fabs(v) < 1 && p == 0) return fmt::format("{:.3g} {}", v, unit);
  const int decimals = std::fabs(v) >= 99.95 ? 0 : (std::fabs(v) >= 9.995 ? 1 : 2);
  return fmt::format("{:.{}f} {}{}", v, decimals, kPrefixes[p], unit);
}

std::string Seconds(double s) {
  if (s == 0) return "0 s";
  const double a = std::fabs(s);
  double v = s;
  const char* unit = "s";
  if (a < 1e-6) {
    v = s * 1e9;
    unit = "ns";
  } else if (a < 1e-3) {
    v = s * 1e6;
    unit = "us";
  } else if (a < 1) {
    v = s * 1e3;
    unit = "ms";
  }
  const double av = std::fabs(v);
  const int decimals = av >= 99.95 ? 0 : (av >= 9.995 ? 1 : 2);
  return fmt::format("{:.{}f} {}", v, decimals, unit);
}

std::string Sci(double value) { return fmt::format("{:.4g}", value); }

std::string Num(double value) {
  if (std::fabs(value) >= 1e6 || (value != 0 && std::fabs(value) < 1e-3)) {
    return fmt::format("{:.4g}", value);
  }
  // Whole numbers, and from 10,000 up the nearest one ("12546", not "1.255e+04"): four
  // significant digits would print an exponent there.
  if (value == std::floor(value) || std::fabs(value) >= 1e4) return fmt::format("{:.0f}", value);
  return fmt::format("{:.4g}", value);
}

std::string Count(double n, std::string_view noun, std::string_view plural) {
  if (n == 1) return "1 " + std::string(noun);
  // A count is a whole number: written whole ("1695983 launches", not "1.696e+06 launches").
  const std::string number =
      n == std::floor(n) && std::fabs(n) < 1e15 ? fmt::format("{:.0f}", n) : Num(n);
  return number + " " + (plural.empty() ? std::string(noun) + "s" : std::string(plural));
}

}  // namespace roofline
