// Parsing a subcommand's arguments with CLI11, with errors in the tool's one-line format.
#ifndef ROOFLINE_TOOLS_ROOFLINE_CLI_UTIL_H_
#define ROOFLINE_TOOLS_ROOFLINE_CLI_UTIL_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "roofline/output_format.h"
#include "roofline/views.h"
#include "tools/roofline/commands.h"

namespace roofline::cli {

/// Parses ctx.args into `app`. Returns an exit status when the command is finished (help was
/// printed: 0; an error was printed: 2), or nothing when the command should go on.
std::optional<int> ParseArgs(CLI::App& app, Context& ctx);

/// Adds `--format` restricted to `allowed` ("table", "json", "csv"); `format`'s value is the
/// default.
void AddFormatOption(CLI::App& app, OutputFormat& format, const std::vector<std::string>& allowed);

/// A transform for integer options that are sizes (tokens, rows, features): "32k" is 32768 and
/// "2M" 2097152, as in the scenario's fields (ParseSize).
CLI::Validator SizeSuffix();

/// Writes `text` to `path` through a temporary file renamed into place, so an error never
/// leaves a partial file.
Status WriteFileAtomically(const std::string& path, const std::string& text);
/// Writes several (path, text) files: each to a temporary first, renamed into place only when
/// all were written, so an error leaves none of them.
Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files);

/// Writes a result's views: the request's --plot and --report files and the result's own files,
/// all or none, then its format on stdout. Returns the exit status (1 when the result's check
/// failed).
int Emit(Context& ctx, const Views& views, const ViewRequest& request);

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_CLI_UTIL_H_
