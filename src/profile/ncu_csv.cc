// Nsight Compute CSV: the long layout (details page or `--metrics`: one row per metric, old and new
// column sets) and the wide raw page (one row per launch, a units row under the header), with
// profiler messages and program output around them. Formats: docs/profiles.md.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "roofline/profile.h"
#include "src/profile/csv.h"

namespace roofline {
namespace {

// ---------------------------------------------------------------------------------------------
// Units.
//
// Byte prefixes are decimal (1 Kbyte = 1000 byte). Nsight Compute spells its units with SI
// prefixes on a base word ("Kbyte", "Mbyte/second", "Ghz", "nsecond", "usecond") and never with
// the binary "KiB"/"Kibyte" spelling, and its throughput metrics (byte/second) are scaled with the
// same prefixes as frequencies (Ghz = 1e9 hz): one prefix system for every unit. This is an
// inference from the spelling, not a documented statement, so a note says so whenever a prefixed
// byte unit is converted; `roofline ncu-command` asks for `--print-units base`, which prints plain
// bytes and avoids the question. Binary spellings ("KiB") are not guessed: they are unknown units.

/// Base words a unit may end with; a prefix before them scales by 1e3 per step.
constexpr std::array<std::string_view, 19> kCountWords = {
    "byte",        "inst",        "cycle",    "warp",   "thread", "block", "sector",
    "request",     "wavefront",   "register", "sample", "pass",   "hz",    "Hz",
    "instruction", "transaction", "flop",     "event",  "second"};

/// Scale of one side of a unit ("Kbyte", "nsecond", "us", "cycle", "") to its base unit.
std::optional<double> WordScale(std::string_view w) {
  if (w.empty() || w == "%") return 1.0;
  if (w == "s") return 1.0;
  if (w == "ms") return 1e-3;
  if (w == "us") return 1e-6;
  if (w == "ns") return 1e-9;
  for (std::string_view base : kCountWords) {
    if (w.size() < base.size() || w.substr(w.size() - base.size()) != base) continue;
    const std::string_view prefix = w.substr(0, w.size() - base.size());
    if (prefix.empty()) return 1.0;
    if (prefix.size() != 1) return std::nullopt;
    switch (prefix[0]) {
      case 'K':
      case 'k':
        return 1e3;
      case 'M':
        return 1e6;
      case 'G':
        return 1e9;
      case 'T':
        return 1e12;
      case 'P':
        return 1e15;
      default:
        break;
    }
    if (base != "second") return std::nullopt;
    if (prefix[0] == 'm') return 1e-3;
    if (prefix[0] == 'u') return 1e-6;
    if (prefix[0] == 'n') return 1e-9;
    if (prefix[0] == 'p') return 1e-12;
    return std::nullopt;
  }
  return std::nullopt;
}

/// Factor from a printed unit ("Gbyte/second", "cycle/nsecond", "%", "") to base units, or
/// nullopt for a unit this reader does not know.
std::optional<double> UnitScale(std::string_view unit) {
  const size_t slash = unit.find('/');
  if (slash == std::string_view::npos) return WordScale(unit);
  if (unit.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  const std::optional<double> num = WordScale(unit.substr(0, slash));
  const std::optional<double> den = WordScale(unit.substr(slash + 1));
  if (!num || !den || unit.substr(slash + 1).empty()) return std::nullopt;
  return *num / *den;
}

bool IsPrefixedByteUnit(std::string_view unit) {
  const std::string_view num = unit.substr(0, unit.find('/'));
  return num.size() > 4 && num.substr(num.size() - 4) == "byte";
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

bool IsNa(std::string_view v) {
  v = Trim(v);
  return v.empty() || v == "n/a" || v == "N/A";
}

// ---------------------------------------------------------------------------------------------
// Header.

enum class Layout { kLong, kWide };

/// The header row and where its columns are (-1: absent).
struct Header {
  Layout layout = Layout::kLong;
  std::vector<std::string> names;
  int64_t line = 0;
  bool quoted = true;  ///< ncu quotes every field; then unquoted lines are program output
  int id = -1, pid = -1, kernel = -1, block = -1, grid = -1, device = -1, cc = -1, stream = -1;
  int section = -1, label = -1, metric = -1, unit = -1, value = -1;
  std::vector<int> metric_columns;  ///< wide: the columns holding metrics
  size_t required = 0;              ///< fields a data row needs (truncated below)
};

int ColumnOf(const std::vector<std::string>& names, std::string_view name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (Trim(names[i]) == name) return static_cast<int>(i);
  }
  return -1;
}

/// The header if `rec` is an ncu header row: "Kernel Name" and an "ID", then either "Metric
/// Name" + "Metric Value" (long) or metric columns, whose names all contain "__" (wide).
std::optional<Header> RecognizeHeader(const CsvRecord& rec) {
  Header h;
  h.names = rec.fields;
  h.kernel = ColumnOf(h.names, "Kernel Name");
  h.id = ColumnOf(h.names, "ID");
  if (h.kernel < 0 || h.id < 0) return std::nullopt;
  h.line = rec.line;
  h.quoted = rec.quoted_first;
  h.pid = ColumnOf(h.names, "Process ID");
  h.block = ColumnOf(h.names, "Block Size");
  h.grid = ColumnOf(h.names, "Grid Size");
  h.device = ColumnOf(h.names, "Device");
  h.cc = ColumnOf(h.names, "CC");
  h.stream = ColumnOf(h.names, "Stream");
  h.metric = ColumnOf(h.names, "Metric Name");
  h.value = ColumnOf(h.names, "Metric Value");
  int last = std::max(h.id, h.kernel);
  if (h.metric >= 0 && h.value >= 0) {
    h.layout = Layout::kLong;
    h.section = ColumnOf(h.names, "Section Name");
    h.label = ColumnOf(h.names, "Body Item Label");
    h.unit = ColumnOf(h.names, "Metric Unit");
    last = std::max({last, h.metric, h.value, h.unit});
    h.required = static_cast<size_t>(last) + 1;
    return h;
  }
  for (size_t i = 0; i < h.names.size(); ++i) {
    if (h.names[i].find("__") != std::string::npos) h.metric_columns.push_back(static_cast<int>(i));
  }
  if (h.metric_columns.empty()) return std::nullopt;
  h.layout = Layout::kWide;
  h.required = h.names.size();
  return h;
}

// ---------------------------------------------------------------------------------------------
// Rows.

/// Builds the report row by row.
class Builder {
 public:
  Builder(const Header& h, const std::string& origin, NcuReport* report)
      : h_(h), origin_(origin), report_(report) {}

  /// Consumes one data row; an error names its line.
  Status Add(const CsvRecord& rec) {
    if (Status s = CheckWidth(rec); !s.ok()) return s;
    if (h_.layout == Layout::kWide) return AddWide(rec);
    return AddLong(rec);
  }

  /// Notes that summarize the whole file; call once at the end.
  void Finish() {
    for (NcuKernel& k : report_->kernels) {
      const double* major = k.Find("device__attribute_compute_capability_major");
      const double* minor = k.Find("device__attribute_compute_capability_minor");
      if (k.cc.empty() && major != nullptr && minor != nullptr) {
        k.cc = fmt::format("{}.{}", static_cast<int>(*major), static_cast<int>(*minor));
      }
    }
    if (prefixed_bytes_) {
      report_->notes.push_back(
          "byte units with a prefix read as decimal (1 Kbyte = 1000 byte, 1 Mbyte = 1e6 byte): "
          "Nsight Compute's SI spelling; collect with --print-units base to avoid prefixes");
    }
    if (h_.layout == Layout::kWide && !units_row_) {
      report_->notes.push_back("no units row under the header: values taken as printed");
    }
    if (duplicates_ > 0) {
      report_->notes.push_back(fmt::format(
          "{} repeated metric rows of the same launch ignored (first kept)", duplicates_));
    }
  }

 private:
  Status Error(const CsvRecord& rec, const std::string& what) const {
    return Status::Parse(fmt::format("{}:{}", origin_, rec.line), what);
  }

  Status CheckWidth(const CsvRecord& rec) const {
    if (rec.fields.size() < h_.required) {
      return Error(rec, fmt::format("truncated row: {} fields, the header (line {}) has {}",
                                    rec.fields.size(), h_.line, h_.names.size()));
    }
    for (size_t i = h_.names.size(); i < rec.fields.size(); ++i) {
      if (!Trim(rec.fields[i]).empty()) {
        return Error(rec, fmt::format("{} fields, more than the {} of the header (line {})",
                                      rec.fields.size(), h_.names.size(), h_.line));
      }
    }
    return Status::Ok();
  }

  static std::string Field(const CsvRecord& rec, int col) {
    if (col < 0 || static_cast<size_t>(col) >= rec.fields.size()) return {};
    return std::string(Trim(rec.fields[col]));
  }

  /// Starts a kernel from the identity columns of `rec`.
  Result<size_t> NewKernel(const CsvRecord& rec) {
    NcuKernel k;
    const std::string id = Field(rec, h_.id);
    const std::optional<double> v = ParseCsvNumber(id);
    if (!v || *v < 0 || *v > 9e15 || *v != static_cast<double>(static_cast<int64_t>(*v))) {
      return Error(rec, fmt::format("ID '{}' is not a launch number", id));
    }
    k.id = static_cast<int64_t>(*v);
    k.name = Field(rec, h_.kernel);
    k.block = Field(rec, h_.block);
    k.grid = Field(rec, h_.grid);
    k.device = Field(rec, h_.device);
    k.cc = Field(rec, h_.cc);
    k.stream = Field(rec, h_.stream);
    k.line = rec.line;
    report_->kernels.push_back(std::move(k));
    index_.emplace_back();
    return report_->kernels.size() - 1;
  }

  /// Records one metric of kernel `k` converted to base units.
  void Put(size_t k, const std::string& name, std::string_view value, std::string_view unit,
           int64_t line) {
    NcuKernel& kernel = report_->kernels[k];
    if (!index_[k].insert(name).second) {
      ++duplicates_;
      return;
    }
    if (IsNa(value)) {
      kernel.na.push_back(name);
      return;
    }
    const std::optional<double> v = ParseCsvNumber(value);
    if (!v) {
      if (name == "device__attribute_display_name") {
        kernel.device = std::string(Trim(value));
        return;
      }
      kernel.na.push_back(name);
      if (text_noted_.insert(name).second) {
        report_->notes.push_back(
            fmt::format("metric '{}' is not a number ('{}', line {}): listed as n/a", name,
                        Trim(value).substr(0, 60), line));
      }
      return;
    }
    const std::optional<double> scale = UnitScale(Trim(unit));
    if (!scale) {
      if (unit_noted_.insert(std::string(unit)).second) {
        report_->notes.push_back(fmt::format(
            "unknown unit '{}' (metric '{}', line {}): value kept as printed", unit, name, line));
      }
      kernel.metrics.emplace_back(name, *v);
      return;
    }
    if (*scale != 1.0 && IsPrefixedByteUnit(Trim(unit))) prefixed_bytes_ = true;
    kernel.metrics.emplace_back(name, *v * *scale);
  }

  Status AddLong(const CsvRecord& rec) {
    std::string name = Field(rec, h_.metric);
    if (name.empty()) return Status::Ok();  // a rule row (Rule Name / Rule Description)
    const std::string key = Field(rec, h_.pid) + '\x1f' + Field(rec, h_.id);
    auto it = by_key_.find(key);
    size_t k = 0;
    if (it == by_key_.end()) {
      Result<size_t> made = NewKernel(rec);
      if (!made.ok()) return made.status();
      k = *made;
      by_key_.emplace(key, k);
    } else {
      k = it->second;
    }
    // Details-page names ("Duration") can repeat across sections: qualify the later ones.
    const std::string section = Field(rec, h_.section);
    const std::string label = Field(rec, h_.label);
    if (index_[k].count(name) != 0 && !section.empty()) {
      name = section + (label.empty() ? "" : " / " + label) + ": " + name;
    }
    Put(k, name, Field(rec, h_.value), Field(rec, h_.unit), rec.line);
    return Status::Ok();
  }

  Status AddWide(const CsvRecord& rec) {
    if (report_->kernels.empty() && !units_row_ && Field(rec, h_.id).empty() &&
        Field(rec, h_.kernel).empty()) {
      units_row_ = true;
      units_ = rec.fields;
      return Status::Ok();
    }
    Result<size_t> made = NewKernel(rec);
    if (!made.ok()) return made.status();
    for (int col : h_.metric_columns) {
      const std::string unit = col < static_cast<int>(units_.size()) ? units_[col] : "";
      Put(*made, std::string(Trim(h_.names[col])), rec.fields[col], unit, rec.line);
    }
    return Status::Ok();
  }

  const Header& h_;
  const std::string& origin_;
  NcuReport* report_;
  std::unordered_map<std::string, size_t> by_key_;      ///< long: "<pid>\x1f<id>" -> kernel
  std::vector<std::unordered_set<std::string>> index_;  ///< per kernel: metric names seen
  std::unordered_set<std::string> text_noted_, unit_noted_;
  std::vector<std::string> units_;
  bool units_row_ = false;
  bool prefixed_bytes_ = false;
  int64_t duplicates_ = 0;
};

/// Lines that are not CSV: ncu's own messages and the application's output.
struct Noise {
  int64_t messages = 0, program = 0;
  std::string first_problem;  ///< the first ==ERROR== or ==WARNING== line

  void Add(std::string_view line) {
    if (Trim(line).empty()) return;
    if (IsProfilerNoiseLine(line)) {
      ++messages;
      if (first_problem.empty() &&
          (line.starts_with("==ERROR==") || line.starts_with("==WARNING=="))) {
        first_problem = std::string(line.substr(0, 160));
      }
    } else {
      ++program;
    }
  }
};

std::string NoHeaderMessage(const Noise& noise) {
  std::string what =
      "not an Nsight Compute CSV: expected a header with \"ID\", \"Kernel Name\" and \"Metric "
      "Name\"/\"Metric Value\" (long: details page or --metrics) or \"ID\", \"Kernel Name\" and "
      "metric columns such as \"gpu__time_duration.sum\" (wide: --page raw)";
  if (!noise.first_problem.empty()) what += "; ncu said: " + noise.first_problem;
  return what;
}

}  // namespace

const double* NcuKernel::Find(std::string_view metric) const {
  for (const auto& [name, value] : metrics) {
    if (name == metric) return &value;
  }
  return nullptr;
}

Result<NcuReport> ParseNcuCsv(std::string_view text, const std::string& origin) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  if (Trim(text).empty()) {
    return Status::Parse(origin + ":1", "empty file: no Nsight Compute CSV in it");
  }
  CsvReader reader(text);
  Noise noise;
  std::optional<Header> header;
  while (!reader.AtEnd() && !header) {
    const std::string_view line = reader.PeekLine();
    if (!IsProfilerNoiseLine(line) && line.find("Kernel Name") != std::string_view::npos) {
      CsvReader one(line);
      CsvRecord rec;
      std::string error;
      if (one.Next(&rec, &error)) {
        rec.line = reader.line();
        header = RecognizeHeader(rec);
      }
    }
    if (!header) noise.Add(line);
    reader.SkipLine();
  }
  if (!header) return Status::Parse(origin + ":1", NoHeaderMessage(noise));

  NcuReport report;
  if (header->layout == Layout::kWide) {
    report.layout = "wide (raw page)";
  } else {
    report.layout = header->block < 0 ? "long (old columns)" : "long (details / --metrics)";
  }
  Builder builder(*header, origin, &report);
  while (!reader.AtEnd()) {
    const std::string_view line = reader.PeekLine();
    const bool program_output = header->quoted && !line.starts_with('"');
    if (Trim(line).empty() || IsProfilerNoiseLine(line) || program_output) {
      noise.Add(line);
      reader.SkipLine();
      continue;
    }
    CsvRecord rec;
    std::string error;
    if (!reader.Next(&rec, &error)) {
      if (error.empty()) break;
      return Status::Parse(fmt::format("{}:{}", origin, rec.line), error);
    }
    if (rec.fields == header->names) continue;  // the header again (several processes)
    if (Status s = builder.Add(rec); !s.ok()) return s;
  }
  builder.Finish();
  if (noise.messages > 0) {
    report.notes.push_back(
        fmt::format("skipped {} ncu message lines (==PROF==, ==WARNING==...)", noise.messages));
  }
  if (!noise.first_problem.empty()) report.notes.push_back("ncu said: " + noise.first_problem);
  if (noise.program > 0) {
    report.notes.push_back(
        fmt::format("skipped {} lines of program output around the CSV", noise.program));
  }
  if (report.kernels.empty()) report.notes.push_back("the CSV has a header but no kernel rows");
  return report;
}

Result<NcuReport> LoadNcuCsv(const std::string& path) {
  constexpr uintmax_t kMaxBytes = uintmax_t{4} << 30;  // 4 GiB: far above any real ncu CSV
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::Io(path, "cannot read file: " + ec.message());
  if (size > kMaxBytes) {
    return Status::Io(path, fmt::format("file is {} bytes, above the 4 GiB limit", size));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Io(path, "cannot open file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Io(path, "read error");
  return ParseNcuCsv(text.str(), path);
}

}  // namespace roofline
