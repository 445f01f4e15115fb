// Nsight Systems `nsys stats` CSV: cuda_gpu_kern_sum (older: gpukernsum) and cuda_gpu_trace.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "roofline/profile.h"
#include "src/profile/csv.h"

namespace roofline {
namespace {

/// A header cell split into its name (lower case, no unit) and the unit in its parentheses.
struct Column {
  std::string name;
  std::string unit;
};

Column SplitHeader(std::string_view cell) {
  Column c;
  std::string s(cell);
  const size_t open = s.rfind('(');
  const size_t close = s.rfind(')');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    c.unit = s.substr(open + 1, close - open - 1);
    s.erase(open);
  }
  for (char ch : s) {
    if (ch != ' ') c.name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return c;
}

/// Seconds per unit of a time column ("ns" when the header gives none: the default of every
/// nsys version).
std::optional<double> TimeScale(const std::string& unit) {
  if (unit.empty() || unit == "ns" || unit == "nsec") return 1e-9;
  if (unit == "us" || unit == "usec") return 1e-6;
  if (unit == "ms" || unit == "msec") return 1e-3;
  if (unit == "s" || unit == "sec") return 1.0;
  return std::nullopt;
}

/// Column index by any of the names, or -1.
int FindColumn(const std::vector<Column>& cols, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].name == n) return static_cast<int>(i);
    }
  }
  return -1;
}

enum class Kind { kNone, kSummary, kTrace };

Kind KindOf(const std::vector<Column>& cols) {
  const bool name = FindColumn(cols, {"name"}) >= 0;
  if (name && FindColumn(cols, {"totaltime"}) >= 0 && FindColumn(cols, {"instances"}) >= 0) {
    return Kind::kSummary;
  }
  if (name && FindColumn(cols, {"start"}) >= 0 && FindColumn(cols, {"duration"}) >= 0) {
    return Kind::kTrace;
  }
  return Kind::kNone;
}

bool LooksLikeMemoryOp(std::string_view name) {
  return name.rfind("[CUDA mem", 0) == 0 || name.rfind("[CUDA Mem", 0) == 0;
}

}  // namespace

Result<NsysReport> ParseNsysCsv(std::string_view text, const std::string& origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::Parse(origin, "empty file (expected an nsys stats CSV)");
  }
  CsvReader reader(text);
  CsvRecord header;
  std::vector<Column> cols;
  Kind kind = Kind::kNone;
  std::string error;
  // Lines before the header ("Processing ...", report titles, notices) are skipped.
  while (!reader.AtEnd()) {
    const std::string_view line = reader.PeekLine();
    if (line.find("Name") == std::string_view::npos ||
        (line.find("Total Time") == std::string_view::npos &&
         line.find("Start") == std::string_view::npos)) {
      reader.SkipLine();
      continue;
    }
    if (!reader.Next(&header, &error)) break;
    cols.clear();
    for (const std::string& f : header.fields) cols.push_back(SplitHeader(f));
    kind = KindOf(cols);
    if (kind != Kind::kNone) break;
  }
  if (kind == Kind::kNone) {
    return Status::Parse(origin,
                         "not an nsys stats CSV: no header with Name and either Total Time + "
                         "Instances (cuda_gpu_kern_sum / gpukernsum) or Start + Duration "
                         "(cuda_gpu_trace)");
  }
  while (!cols.empty() && cols.back().name.empty()) cols.pop_back();  // trailing comma
  const size_t width = cols.size();
  const int name_col = FindColumn(cols, {"name"});
  NsysReport report;
  std::map<std::string, size_t> by_name;
  std::vector<std::vector<double>> durations;  // trace: per kernel, for the median

  auto time_of = [&](int col, const CsvRecord& r, const char* what) -> Result<double> {
    const std::optional<double> scale = TimeScale(cols[col].unit);
    if (!scale) {
      return Status::Parse(
          fmt::format("{}:{}", origin, header.line),
          fmt::format("unknown time unit '{}' in column {}", cols[col].unit, header.fields[col]));
    }
    const std::optional<double> v = ParseCsvNumber(r.fields[col]);
    if (!v || *v < 0) {
      return Status::Parse(
          fmt::format("{}:{}", origin, r.line),
          fmt::format("{} '{}' is not a non-negative number", what, r.fields[col]));
    }
    return *v * *scale;
  };

  if (kind == Kind::kSummary) {
    report.report = FindColumn(cols, {"med"}) >= 0 ? "cuda_gpu_kern_sum" : "gpukernsum";
    const int total = FindColumn(cols, {"totaltime"});
    const int inst = FindColumn(cols, {"instances"});
    const int avg = FindColumn(cols, {"avg", "average"});
    const int med = FindColumn(cols, {"med", "median"});
    const int mn = FindColumn(cols, {"min", "minimum"});
    const int mx = FindColumn(cols, {"max", "maximum"});
    CsvRecord r;
    while (true) {
      if (reader.AtEnd()) break;
      const std::string_view line = reader.PeekLine();
      if (line.find_first_not_of(" \t") == std::string_view::npos || IsProfilerNoiseLine(line)) {
        reader.SkipLine();
        continue;
      }
      if (!reader.Next(&r, &error)) {
        if (!error.empty()) return Status::Parse(fmt::format("{}:{}", origin, r.line), error);
        break;
      }
      while (r.fields.size() > width && r.fields.back().empty()) r.fields.pop_back();
      if (r.fields.size() != width) {
        return Status::Parse(fmt::format("{}:{}", origin, r.line),
                             fmt::format("{} fields where the header has {} (truncated row?)",
                                         r.fields.size(), width));
      }
      NsysKernel k;
      k.name = r.fields[name_col];
      k.op_class = ClassifyKernel(k.name);
      k.line = r.line;
      const std::optional<double> n = ParseCsvNumber(r.fields[inst]);
      if (!n || *n < 0 || *n > 9e15 || std::floor(*n) != *n) {
        return Status::Parse(fmt::format("{}:{}", origin, r.line),
                             fmt::format("Instances '{}' is not a count", r.fields[inst]));
      }
      k.instances = static_cast<int64_t>(*n);
      Result<double> t = time_of(total, r, "Total Time");
      if (!t.ok()) return t.status();
      k.total_s = *t;
      for (auto [col, dst, what] :
           {std::tuple{avg, &k.avg_s, "Avg"}, std::tuple{med, &k.median_s, "Med"},
            std::tuple{mn, &k.min_s, "Min"}, std::tuple{mx, &k.max_s, "Max"}}) {
        if (col < 0) continue;
        Result<double> v = time_of(col, r, what);
        if (!v.ok()) return v.status();
        *dst = *v;
      }
      if (avg < 0 && k.instances > 0) k.avg_s = k.total_s / static_cast<double>(k.instances);
      if (med < 0) k.median_s = k.avg_s;
      report.kernels.push_back(std::move(k));
    }
  } else {
    report.report = "cuda_gpu_trace";
    const int start = FindColumn(cols, {"start"});
    const int dur = FindColumn(cols, {"duration"});
    const int grid = FindColumn(cols, {"grdx"});
    const int bytes = FindColumn(cols, {"bytes"});
    CsvRecord r;
    while (!reader.AtEnd()) {
      const std::string_view line = reader.PeekLine();
      if (line.find_first_not_of(" \t") == std::string_view::npos || IsProfilerNoiseLine(line)) {
        reader.SkipLine();
        continue;
      }
      if (!reader.Next(&r, &error)) {
        if (!error.empty()) return Status::Parse(fmt::format("{}:{}", origin, r.line), error);
        break;
      }
      while (r.fields.size() > width && r.fields.back().empty()) r.fields.pop_back();
      if (r.fields.size() != width) {
        return Status::Parse(fmt::format("{}:{}", origin, r.line),
                             fmt::format("{} fields where the header has {} (truncated row?)",
                                         r.fields.size(), width));
      }
      NsysLaunch l;
      l.name = r.fields[name_col];
      l.line = r.line;
      Result<double> s = time_of(start, r, "Start");
      if (!s.ok()) return s.status();
      Result<double> d = time_of(dur, r, "Duration");
      if (!d.ok()) return d.status();
      l.start_s = *s;
      l.duration_s = *d;
      l.memory_op = LooksLikeMemoryOp(l.name) || (grid >= 0 && r.fields[grid].empty());
      l.op_class = l.memory_op ? OpClass::kCopy : ClassifyKernel(l.name);
      if (bytes >= 0 && !r.fields[bytes].empty()) {
        // nsys prints memory sizes with decimal prefixes: Bytes (MB) is 1e6 bytes.
        const std::optional<double> b = ParseCsvNumber(r.fields[bytes]);
        const std::string& unit = cols[bytes].unit;
        const double scale = unit == "B" ? 1 : unit == "KB" ? 1e3 : unit == "GB" ? 1e9 : 1e6;
        if (b && *b >= 0) l.bytes = *b * scale;
      }
      auto [it, fresh] = by_name.try_emplace(l.name, report.kernels.size());
      if (fresh) {
        NsysKernel k;
        k.name = l.name;
        k.op_class = l.op_class;
        k.line = l.line;
        k.min_s = l.duration_s;
        report.kernels.push_back(std::move(k));
        durations.emplace_back();
      }
      NsysKernel& k = report.kernels[it->second];
      ++k.instances;
      k.total_s += l.duration_s;
      k.min_s = std::min(k.min_s, l.duration_s);
      k.max_s = std::max(k.max_s, l.duration_s);
      durations[it->second].push_back(l.duration_s);
      report.launches.push_back(std::move(l));
    }
    for (size_t i = 0; i < report.kernels.size(); ++i) {
      NsysKernel& k = report.kernels[i];
      k.avg_s = k.total_s / static_cast<double>(k.instances);
      std::vector<double>& d = durations[i];
      std::sort(d.begin(), d.end());
      const size_t n = d.size();
      k.median_s = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
    }
    std::stable_sort(
        report.launches.begin(), report.launches.end(),
        [](const NsysLaunch& a, const NsysLaunch& b) { return a.start_s < b.start_s; });
  }
  if (report.kernels.empty()) {
    return Status::Parse(origin, "the nsys report has a header but no rows");
  }
  std::stable_sort(report.kernels.begin(), report.kernels.end(),
                   [](const NsysKernel& a, const NsysKernel& b) { return a.total_s > b.total_s; });
  return report;
}

Result<NsysReport> LoadNsysCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Io(path, "cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Io(path, "read error");
  return ParseNsysCsv(text.str(), path);
}

}  // namespace roofline
