// CSV records as profilers write them: RFC 4180 quoting (commas, doubled quotes and newlines
// inside quoted fields), CRLF or LF, a trailing comma, and non-CSV noise lines around the data.
#ifndef ROOFLINE_SRC_PROFILE_CSV_H_
#define ROOFLINE_SRC_PROFILE_CSV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// One record and the 1-based line it starts on.
struct CsvRecord {
  int64_t line = 0;
  std::vector<std::string> fields;
  bool quoted_first = false;  ///< the first field was quoted (ncu quotes every field)
};

/// Reads records one at a time, never copying the whole text.
class CsvReader {
 public:
  explicit CsvReader(std::string_view text) : text_(text) {}

  /// The next record; false at the end. A quote still open at the end of the text sets
  /// `*error` ("unterminated quoted field") and returns false.
  bool Next(CsvRecord* record, std::string* error);
  /// The raw text of the line the next record would start on (without its line break), for
  /// recognising noise lines before reading them as CSV.
  std::string_view PeekLine() const;
  /// Skips the line PeekLine() shows.
  void SkipLine();
  bool AtEnd() const { return pos_ >= text_.size(); }
  /// Line number of the next record.
  int64_t line() const { return line_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

/// A number as profilers print it: optional sign, thousands separators ("5,323,503,232.00"),
/// exponent. `n/a`, empty, "-" or anything else that is not a finite number: nullopt.
std::optional<double> ParseCsvNumber(std::string_view text);

/// True for lines an ncu / nsys run prints around its CSV: `==PROF==`, `==WARNING==`,
/// `==ERROR==`, `==...==` in general.
bool IsProfilerNoiseLine(std::string_view line);

}  // namespace roofline

#endif  // ROOFLINE_SRC_PROFILE_CSV_H_
