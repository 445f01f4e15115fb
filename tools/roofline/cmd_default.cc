// `roofline` with no arguments: the main job on embedded defaults.
#include <fmt/format.h>

#include <ostream>

#include "roofline/op_analysis.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "tools/roofline/commands.h"

namespace roofline::cli {

/// The defaults of the main job.
struct DefaultJob {
  std::string device = "h100-sxm";
  /// Llama-2-7B q_proj (hidden 4096), fp16: prefill of 2048 tokens, then one decode token.
  int64_t hidden = 4096;
  int64_t prefill_tokens = 2048;
};

int RunDefault(Context& ctx) {
  const DefaultJob job;
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  std::ostream& out = *ctx.out;
  out << "roofline: the device database\n\n" << RenderHwList(**db) << "\n";

  Result<Device> device = ctx.ResolveHw(job.device);
  if (!device.ok()) return Fail(ctx, device.status());
  const CostModel model(*device);
  out << fmt::format(
      "Example: Llama-2-7B q_proj ([tokens, {0}] x [{0}, {0}] fp16) on {1}, prefill of {2} tokens "
      "vs one decode token\n\n",
      job.hidden, device->name, job.prefill_tokens);
  for (int64_t m : {job.prefill_tokens, int64_t{1}}) {
    MatmulSpec s;
    s.m = m;
    s.n = job.hidden;
    s.k = job.hidden;
    s.a_dtype = s.b_dtype = s.out_dtype = DType::kFp16;
    const OpRequest request{s};
    Result<OpAnalysis> a = AnalyzeOp(request, model, true);
    if (!a.ok()) return Fail(ctx, a.status());
    Result<FlipAnalysis> f = AnalyzeFlip(request, model);
    if (!f.ok()) return Fail(ctx, f.status());
    out << (m == 1 ? "== decode (m = 1) ==\n" : "== prefill (m = 2048) ==\n");
    out << RenderOpTable(*a, model) << "\n" << RenderOpExplain(*a, *f, model) << "\n";
  }
  out << "Next: `roofline op --help`, `roofline hw show ID`, `roofline help`.\n";
  return kExitOk;
}

}  // namespace roofline::cli
