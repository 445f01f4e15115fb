// `roofline engines list [--format json]` and `roofline engines show NAME[@VERSION]`.
#include <ostream>

#include "roofline/engine.h"
#include "roofline/report.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

int RunEngines(Context& ctx) {
  CLI::App app{
      "The serving engines --engine knows: what each version runs (launches per phase, fusion, "
      "modules, weight kernels) and its host work per step, each figure with its source.",
      "roofline engines"};
  app.require_subcommand(1, 1);
  CLI::App* list = app.add_subcommand("list", "every engine's version entries, one line each");
  OutputFormat list_format = OutputFormat::kTable;
  AddFormatOption(*list, list_format, {"table", "json"});
  std::string spec;
  OutputFormat show_format = OutputFormat::kTable;
  CLI::App* show = app.add_subcommand(
      "show",
      "one engine entry with every figure and its source. example: roofline engines show "
      "vllm@0.6.3");
  show->add_option("NAME", spec, "engine id, id@version, or path to an engine file")->required();
  AddFormatOption(*show, show_format, {"table", "json"});
  if (auto done = ParseArgs(app, ctx)) return *done;

  if (list->parsed()) {
    Result<std::vector<Engine>> all = ListEngines();
    if (!all.ok()) return Fail(ctx, all.status());
    *ctx.out << (list_format == OutputFormat::kJson ? RenderEngineListJson(*all)
                                                    : RenderEngineList(*all));
    return kExitOk;
  }
  Result<Engine> e = LoadEngine(spec, "NAME");
  if (!e.ok()) return Fail(ctx, e.status());
  *ctx.out << (show_format == OutputFormat::kJson ? RenderEngineShowJson(*e)
                                                  : RenderEngineShow(*e));
  return kExitOk;
}

}  // namespace roofline::cli
