#include "tools/roofline/cli_util.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>

#include "roofline/scenario.h"
#include "roofline/suggest.h"

namespace roofline::cli {

std::optional<int> ParseArgs(CLI::App& app, Context& ctx) {
  // An unknown subcommand gets a suggestion instead of CLI11's "a subcommand is required".
  const auto subs = app.get_subcommands({});
  if (!subs.empty() && !ctx.args.empty() && ctx.args[0].rfind("-", 0) != 0) {
    std::vector<std::string> names;
    for (const CLI::App* sub : subs) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), ctx.args[0]) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return Fail(ctx, Status::Invalid(app.get_name(), "unknown subcommand '" + ctx.args[0] + "'" +
                                                           DidYouMean(ctx.args[0], names) +
                                                           " (expected one of: " + list + ")"));
    }
  }
  std::vector<std::string> reversed(ctx.args.rbegin(), ctx.args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    *ctx.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    *ctx.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ExtrasError& e) {
    // Suggest the closest option name for an unknown flag.
    std::string word;
    for (const auto& a : ctx.args) {
      if (a.rfind("--", 0) == 0) {
        const std::string name = a.substr(0, a.find('='));
        bool known = false;
        std::vector<std::string> names;
        std::vector<const CLI::App*> apps = {&app};
        for (const CLI::App* sub : app.get_subcommands()) apps.push_back(sub);
        for (const CLI::App* ap : apps) {
          for (const CLI::Option* o : ap->get_options()) {
            for (const auto& ln : o->get_lnames()) {
              names.push_back("--" + ln);
              known = known || ("--" + ln) == name;
            }
          }
        }
        if (!known) {
          return Fail(
              ctx, Status::Invalid(app.get_name(), "unknown option '" + name + "'" +
                                                       DidYouMean(name, names) + " (see --help)"));
        }
      }
    }
    return Fail(ctx, Status::Invalid(app.get_name(), e.what()));
  } catch (const CLI::ParseError& e) {
    return Fail(ctx, Status::Invalid(app.get_name(), e.what()));
  }
  return std::nullopt;
}

Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files) {
  // Every file to a temporary beside it first; only when all are written are they renamed into
  // place, so a failure leaves none of them.
  std::vector<std::string> temps;
  auto discard = [&temps] {
    for (const std::string& t : temps) std::remove(t.c_str());
  };
  for (const auto& [path, text] : files) {
    const std::string tmp = path + ".tmp-roofline";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      discard();
      return Status::Io(path, "cannot open for writing");
    }
    temps.push_back(tmp);
    out << text;
    out.flush();
    if (!out) {
      discard();
      return Status::Io(path, "write failed");
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      discard();
      return Status::Io(files[i].first, "cannot move the finished file into place");
    }
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-roofline";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::Io(path, "cannot open for writing");
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::Io(path, "write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::Io(path, "cannot move the finished file into place");
  }
  return Status::Ok();
}

void AddFormatOption(CLI::App& app, OutputFormat& format, const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  app.add_option_function<std::string>(
         "--format",
         [&format](const std::string& name) {
           format = OutputFormatNamed(name).value_or(OutputFormat::kTable);
         },
         "output format: " + list)
      ->check(CLI::IsMember(allowed))
      ->default_str(std::string(NameOf(format)));
}

CLI::Validator SizeSuffix() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Result<int64_t> n = ParseSize(text, "");
        if (!n.ok()) return n.status().what();
        text = std::to_string(*n);
        return {};
      },
      "", "");
}

int Emit(Context& ctx, const Views& views, const ViewRequest& request) {
  if (!request.plot.empty() && !views.chart) {
    return Fail(ctx, Status::Invalid("--plot", "this result has no chart"));
  }
  if (!request.report.empty() && !views.report) {
    return Fail(ctx, Status::Invalid("--report", "this result has no report page"));
  }
  std::vector<std::pair<std::string, std::string>> files;
  if (!request.plot.empty()) files.emplace_back(request.plot, views.chart());
  if (!request.report.empty()) files.emplace_back(request.report, RenderHtml(views.report()));
  for (const auto& [path, text] : views.files) files.emplace_back(path, text());
  if (Status w = WriteFilesAtomically(files); !w.ok()) return Fail(ctx, w);
  views.out(*ctx.out);
  if (views.check_failed && !views.check_message.empty()) {
    *ctx.err << "check failed: " << views.check_message << "\n";
  }
  return views.check_failed ? kExitCheckFailed : kExitOk;
}

}  // namespace roofline::cli
