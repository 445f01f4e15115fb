// `roofline op matmul|attention|elementwise|conv2d|norm|softmax|embedding`.
#include <fmt/format.h>

#include <deque>
#include <map>
#include <ostream>

#include "roofline/op_analysis.h"
#include "roofline/op_fields.h"
#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/op_options.h"

namespace roofline::cli {
namespace {

/// The scenario options of each kind's subcommand, read back once the kind is known.
using ExpectedOptions = std::vector<std::pair<CLI::App*, std::unique_ptr<ScenarioOptions>>>;

void AddCommon(CLI::App* app, CommonOptions& o, ExpectedOptions& expected) {
  app->add_option("--hw", o.hw, "device id (`roofline hw list`) or path to a device JSON")
      ->capture_default_str();
  app->add_option("--dtype", o.dtype, "activation dtype: fp64|fp32|tf32|bf16|fp16|fp8|int8")
      ->capture_default_str();
  AddFormatOption(*app, o.format, {"table", "json"});
  app->add_flag("--explain", o.explain,
                "print the derivation of every number and where the verdict flips");
  expected.emplace_back(app, std::make_unique<ScenarioOptions>(*app, OpFields()));
}

}  // namespace

FieldSet OpFields() {
  FieldSet f;
  for (FieldId id : {FieldId::kCeilings, FieldId::kRuntime, FieldId::kEfficiency,
                     FieldId::kWeightKernel, FieldId::kAccumulate, FieldId::kModules}) {
    f.set(static_cast<size_t>(id));
  }
  return f;
}

std::optional<int> ParseOpCommand(Context& ctx, OpCommand* cmd,
                                  const std::function<void(CLI::App*)>& extra) {
  CommonOptions& common = cmd->common;
  CLI::App app{
      "One operator on one device: FLOPs, bytes per memory level, arithmetic intensity, "
      "time bound and what binds it. Sizes (--m, --n, --k, lengths, rows, elements) take k "
      "(x1024) and M (x1024^2), e.g. --m 2k.",
      "roofline op"};
  app.require_subcommand(1, 1);
  ExpectedOptions expected;
  // Each kind's options from its field table (roofline/op_fields.h), kept as typed and read by
  // BuildOpRequest, so every message comes from the library.
  struct KindOptions {
    const OpKindInfo* kind;
    CLI::App* app;
    std::map<std::string, std::string> text;
    std::map<std::string, bool> flag;
  };
  std::deque<KindOptions> kinds;
  for (const OpKindInfo& k : OpKinds()) {
    KindOptions& o = kinds.emplace_back(KindOptions{&k, nullptr, {}, {}});
    o.app = app.add_subcommand(std::string(k.name), std::string(k.help));
    for (const OpField& f : k.fields) {
      const std::string flag = "--" + std::string(f.name);
      if (f.type == OpFieldType::kFlag) {
        o.app->add_flag(flag, o.flag[std::string(f.name)], std::string(f.help));
        continue;
      }
      CLI::Option* opt = o.app->add_option(flag, o.text[std::string(f.name)], std::string(f.help));
      opt->type_name(f.type == OpFieldType::kSize || f.type == OpFieldType::kCount ? "INT"
                     : f.type == OpFieldType::kReal                               ? "FLOAT"
                                                                                  : "TEXT");
      if (f.type == OpFieldType::kChoice) {
        opt->check(CLI::IsMember(std::vector<std::string>(f.choices.begin(), f.choices.end())));
      }
      if (f.required) opt->required();
      if (!f.fallback.empty()) opt->default_str(std::string(f.fallback));
    }
    AddCommon(o.app, common, expected);
    if (extra) extra(o.app);
  }
  if (auto done = ParseArgs(app, ctx)) return *done;
  // The operator's own fields are checked first, then the expected-time choices.
  for (const KindOptions& o : kinds) {
    if (!o.app->parsed()) continue;
    std::map<std::string, std::string, std::less<>> given;
    for (const OpField& f : o.kind->fields) {
      const std::string name(f.name);
      if (o.app->count("--" + name) == 0) continue;
      given[name] = f.type == OpFieldType::kFlag ? (o.flag.at(name) ? "true" : "false")
                                                 : o.text.at(name);
    }
    cmd->request = BuildOpRequest(*o.kind, given, common.dtype);
    if (!cmd->request.ok()) return Fail(ctx, cmd->request.status());
    for (const auto& [sub, options] : expected) {
      if (!sub->parsed()) continue;
      if (Status st = options->Read(common.expected); !st.ok()) return Fail(ctx, st);
    }
    return std::nullopt;
  }
  return Fail(ctx, Status::Invalid("op", "no operator given"));
}

int RunOp(Context& ctx) {
  OpCommand cmd;
  if (auto done = ParseOpCommand(ctx, &cmd, nullptr)) return *done;
  OpViewOptions options;
  options.hw = cmd.common.hw;
  options.explain = cmd.common.explain;
  options.expected = cmd.common.expected;
  ViewRequest request;
  request.format = cmd.common.format;
  Result<Views> views = OpViews(*cmd.request, options, request, [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

}  // namespace roofline::cli
