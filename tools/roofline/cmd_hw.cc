// `roofline hw list [--format json]` and `roofline hw show ID [--format json]`.
#include <ostream>

#include "roofline/report.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

/// Options of `hw show`.
struct HwShowOptions {
  std::string id;  ///< database id or device JSON path
  OutputFormat format = OutputFormat::kTable;
};

int RunHw(Context& ctx) {
  CLI::App app{
      "The device database: compute ceilings, memory levels and links, each with its "
      "source.",
      "roofline hw"};
  app.require_subcommand(1, 1);
  CLI::App* list = app.add_subcommand("list", "ids, names, headline peaks and bandwidth");
  OutputFormat list_format = OutputFormat::kTable;
  AddFormatOption(*list, list_format, {"table", "json"});
  HwShowOptions show_opts;
  CLI::App* show = app.add_subcommand(
      "show",
      "every ceiling with provenance and the ridge point of each compute ceiling against "
      "each memory level. example: roofline hw show h100-sxm");
  show->add_option("ID", show_opts.id, "device id or path to a device JSON file")->required();
  AddFormatOption(*show, show_opts.format, {"table", "json"});
  if (auto done = ParseArgs(app, ctx)) return *done;

  if (list->parsed()) {
    Result<const DeviceDatabase*> db = ctx.Database();
    if (!db.ok()) return Fail(ctx, db.status());
    *ctx.out << (list_format == OutputFormat::kJson ? RenderHwListJson(**db) : RenderHwList(**db));
    return kExitOk;
  }
  Result<Device> device = ctx.ResolveHw(show_opts.id);
  if (!device.ok()) {
    // The device is this command's argument, not an --hw option.
    const Status& st = device.status();
    return Fail(ctx, st.where() == "--hw" ? st.At("ID") : st);
  }
  *ctx.out << (show_opts.format == OutputFormat::kJson ? RenderHwShowJson(*device)
                                                       : RenderHwShow(*device));
  return kExitOk;
}

}  // namespace roofline::cli
