#include "src/report/phrases.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "roofline/units.h"
#include "roofline/verdict.h"

namespace roofline {

std::string ClassSummaryLine(const GraphCosts& c, const Device& device) {
  const double total = c.totals.time_s;
  if (!(total > 0)) return "";
  std::vector<int> classes;
  for (int k = 0; k < kNumClasses; ++k) {
    if (c.class_present[k]) classes.push_back(k);
  }
  std::stable_sort(classes.begin(), classes.end(),
                   [&](int a, int b) { return c.class_time_s[a] > c.class_time_s[b]; });
  std::string out = "by class:";
  for (size_t i = 0; i < classes.size(); ++i) {
    const int k = classes[i];
    out += fmt::format("{} {} {:.1f}% ({}, {})", i == 0 ? "" : ",",
                       NameOf(static_cast<KernelClass>(k)), 100 * c.class_time_s[k] / total,
                       Seconds(c.class_time_s[k]), NameOf(c.class_times[k].Classify(), device));
  }
  if (c.overhead_s > 0) {
    out += fmt::format(", launch overhead {:.1f}% ({})", 100 * c.overhead_s / total,
                       Seconds(c.overhead_s));
  }
  return out + "\n";
}

std::vector<size_t> TopKernels(const GraphCosts& c, int top) {
  std::vector<size_t> all(c.costs.size());
  std::iota(all.begin(), all.end(), size_t{0});
  if (top <= 0 || static_cast<size_t>(top) >= all.size()) return all;
  auto time = [&](size_t i) { return c.costs[i].time_s * static_cast<double>(c.costs[i].repeat); };
  std::vector<size_t> by_time = all;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](size_t a, size_t b) { return time(a) > time(b); });
  by_time.resize(static_cast<size_t>(top));
  std::sort(by_time.begin(), by_time.end());
  return by_time;
}

std::string TopNote(const GraphCosts& c, const std::vector<size_t>& shown) {
  if (shown.size() >= c.costs.size()) return "";
  double rest = c.totals.time_s;
  for (size_t i : shown) rest -= c.costs[i].time_s * static_cast<double>(c.costs[i].repeat);
  const size_t others = c.costs.size() - shown.size();
  return fmt::format("(top {} of {} kernels by time; the other {}: {:.1f}% of the time; --top 0 "
                     "shows all)\n",
                     shown.size(), c.costs.size(), others,
                     c.totals.time_s > 0 ? 100 * std::max(0.0, rest) / c.totals.time_s : 0.0);
}

namespace {

/// The path segments of a name, each with the separator before it ("/a/b.c": "/a", "/b", ".c").
std::vector<std::string> Segments(const std::string& name) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 1; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/' || name[i] == '.') {
      out.push_back(name.substr(start, i - start));
      start = i;
    }
  }
  return out;
}

std::string Tail(const std::vector<std::string>& segments, size_t k) {
  std::string out;
  for (size_t i = segments.size() - k; i < segments.size(); ++i) out += segments[i];
  return out;
}

}  // namespace

std::vector<std::string> AbbreviatePaths(const std::vector<std::string>& names, size_t width) {
  std::vector<std::vector<std::string>> segments;
  segments.reserve(names.size());
  for (const std::string& n : names) segments.push_back(Segments(n));
  // How many names end with each tail of k segments.
  std::map<std::pair<size_t, std::string>, int> ends;
  for (const auto& s : segments) {
    for (size_t k = 1; k <= s.size(); ++k) ++ends[{k, Tail(s, k)}];
  }
  std::vector<std::string> out;
  out.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    const auto& s = segments[i];
    std::string best = n;
    // Paths with '/' are cut at a '/' (".../resnets.1/conv1/Conv"); dotted module paths at a
    // '.', which is dropped after the "..." ("...mlp.down_proj").
    const bool slashes = n.find('/', 1) != std::string::npos;
    if (n.size() > width) {
      for (size_t k = 1; k < s.size(); ++k) {
        const std::string tail = Tail(s, k);
        if (tail[0] != (slashes ? '/' : '.') || ends[{k, tail}] != 1) continue;
        const std::string shortened = "..." + (slashes ? tail : tail.substr(1));
        if (shortened.size() <= width) best = shortened;
        break;
      }
    }
    out.push_back(best);
  }
  return out;
}

std::string BoundPhrase(const std::string& name) {
  if (name.rfind("compute:", 0) == 0) return "compute-bound (" + name.substr(8) + ")";
  if (name.rfind("memory:", 0) == 0) return "memory-bound (" + name.substr(7) + ")";
  if (name.rfind("comm:", 0) == 0) return "communication-bound (" + name.substr(5) + ")";
  return name;
}

std::string Pct(double fraction) { return fmt::format("{:.0f}%", 100 * fraction); }

std::string Pct1(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

}  // namespace roofline
