#include "src/report/phrases.h"

#include <fmt/format.h>

namespace roofline {

std::string BoundPhrase(const std::string& name) {
  if (name.rfind("compute:", 0) == 0) return "compute-bound (" + name.substr(8) + ")";
  if (name.rfind("memory:", 0) == 0) return "memory-bound (" + name.substr(7) + ")";
  if (name.rfind("comm:", 0) == 0) return "communication-bound (" + name.substr(5) + ")";
  return name;
}

std::string Pct(double fraction) { return fmt::format("{:.0f}%", 100 * fraction); }

}  // namespace roofline
