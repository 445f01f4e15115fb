// Number formatting with decimal SI prefixes (GB = 1e9 B, TFLOP/s = 1e12 FLOP/s).
#ifndef ROOFLINE_UNITS_H_
#define ROOFLINE_UNITS_H_

#include <string>
#include <string_view>

namespace roofline {

/// "989 TFLOP/s", "3.35 TB/s", "67.1 MB": three significant digits, decimal prefixes
/// (k, M, G, T, P, E).
std::string Si(double value, std::string_view unit);
/// A duration: "69.5 us", "1.20 ms", "3.4 s" (ASCII "us" for microseconds).
std::string Seconds(double seconds);
/// Scientific notation with 4 significant digits: "6.872e+10".
std::string Sci(double value);
/// A plain number with up to 4 significant digits: "295.2", "1024", "0.5".
std::string Num(double value);
/// A count and its noun, singular for one: "1 replica", "4 replicas" (`plural`: the noun + "s"
/// unless given). The count is written as Num writes it.
std::string Count(double n, std::string_view noun, std::string_view plural = {});

}  // namespace roofline

#endif  // ROOFLINE_UNITS_H_
