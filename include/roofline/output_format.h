// The output formats of the tool's reports.
#ifndef ROOFLINE_OUTPUT_FORMAT_H_
#define ROOFLINE_OUTPUT_FORMAT_H_

#include <optional>
#include <string_view>

namespace roofline {

/// What every command's `--format` chooses: a text table, JSON, or CSV (where a command has
/// rows to give).
enum class OutputFormat { kTable, kJson, kCsv };
std::string_view NameOf(OutputFormat format);
/// "table", "json" or "csv"; nothing for any other word.
std::optional<OutputFormat> OutputFormatNamed(std::string_view name);

}  // namespace roofline

#endif  // ROOFLINE_OUTPUT_FORMAT_H_
