// The names of the output formats `--format` takes.
#include "roofline/output_format.h"

namespace roofline {

std::string_view NameOf(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return "table";
    case OutputFormat::kJson:
      return "json";
    case OutputFormat::kCsv:
      return "csv";
    case OutputFormat::kNpy:
      return "npy";
  }
  return "table";
}

std::optional<OutputFormat> OutputFormatNamed(std::string_view name) {
  for (OutputFormat f :
       {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv, OutputFormat::kNpy}) {
    if (NameOf(f) == name) return f;
  }
  return std::nullopt;
}

}  // namespace roofline
