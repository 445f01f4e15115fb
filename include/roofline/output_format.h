// The output formats of the tool's reports.
#ifndef ROOFLINE_OUTPUT_FORMAT_H_
#define ROOFLINE_OUTPUT_FORMAT_H_

#include <optional>
#include <string_view>

namespace roofline {

/// What every command's `--format` chooses: a text table, JSON, CSV (where a command has rows to
/// give), or NumPy's .npy (sweeps: one structured array).
enum class OutputFormat { kTable, kJson, kCsv, kNpy };
std::string_view NameOf(OutputFormat format);
/// "table", "json", "csv" or "npy"; nothing for any other word.
std::optional<OutputFormat> OutputFormatNamed(std::string_view name);

/// How a sweep's JSON holds its points: as columns (`"schema": 2`, the default: one array per
/// column) or as today's rows (one object per point, `--json-layout rows`).
enum class JsonLayout { kColumns, kRows };

}  // namespace roofline

#endif  // ROOFLINE_OUTPUT_FORMAT_H_
