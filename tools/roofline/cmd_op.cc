// `roofline op matmul|attention|elementwise|conv2d|norm|softmax|embedding`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "roofline/cost.h"
#include "roofline/op_analysis.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "roofline/suggest.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/op_options.h"

namespace roofline::cli {
namespace {

struct MatmulOptions {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string weight_dtype;  ///< default: --dtype
  std::string out_dtype;     ///< default: --dtype
  int64_t group_size = -1;   ///< -1: 128 for 4-bit weights, else one scale per column
  std::string scale_dtype = "fp16";
  std::string zero_dtype;  ///< empty: symmetric (no zero points)
  bool activation_b = false;
  bool bias = false;
};

struct AttentionOptions {
  int64_t batch = 1, heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0, q_len = 0, kv_len = 0;
  int64_t window = 0;
  std::string impl = "flash";
  bool causal = false;
  std::string kv_dtype;  ///< default: --dtype
};

struct ElementwiseOptions {
  int64_t elements = 0;
  int inputs = 2;
  double flops_per_element = 1;
};

struct Conv2dOptions {
  int64_t batch = 1, in_channels = 0, out_channels = 0, height = 0, width = 0;
  std::string kernel;  ///< "R" or "RxS"
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = false;
};

struct RowsOptions {
  int64_t rows = 0, cols = 0;
  std::string kind = "rms";
};

struct EmbeddingOptions {
  int64_t tokens = 0, vocab = 0, dim = 0;
};

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

Result<DType> Dt(const std::string& text, const std::string& flag) {
  return ParseDType(text, flag);
}

Result<OpRequest> BuildMatmul(const CommonOptions& c, const MatmulOptions& o) {
  MatmulSpec s;
  s.batch = o.batch;
  s.m = o.m;
  s.n = o.n;
  s.k = o.k;
  auto a = Dt(c.dtype, "--dtype");
  if (!a.ok()) return a.status();
  auto b = Dt(o.weight_dtype.empty() ? c.dtype : o.weight_dtype, "--weight-dtype");
  if (!b.ok()) return b.status();
  auto out =
      Dt(o.out_dtype.empty() ? (BitsOf(*a) < 16 ? "bf16" : c.dtype) : o.out_dtype, "--out-dtype");
  if (!out.ok()) return out.status();
  auto sd = Dt(o.scale_dtype, "--scale-dtype");
  if (!sd.ok()) return sd.status();
  s.a_dtype = *a;
  s.b_dtype = *b;
  s.out_dtype = *out;
  s.scale_dtype = *sd;
  if (!o.zero_dtype.empty()) {
    auto zd = Dt(o.zero_dtype, "--zero-dtype");
    if (!zd.ok()) return zd.status();
    s.zero_dtype = *zd;
  }
  s.b_is_weight = !o.activation_b;
  s.bias = o.bias;
  s.group_size = o.group_size >= 0 ? o.group_size : (BitsOf(*b) == 4 ? 128 : 0);
  if (o.group_size < 0 && s.group_size > 0 && s.k % s.group_size != 0) s.group_size = 0;
  return OpRequest{s};
}

Result<OpRequest> BuildAttention(const CommonOptions& c, const AttentionOptions& o) {
  AttentionSpec s;
  s.batch = o.batch;
  s.heads = o.heads;
  s.kv_heads = o.kv_heads > 0 ? o.kv_heads : o.heads;
  if (o.kv_heads < 0) s.kv_heads = o.kv_heads;
  s.head_dim = o.head_dim;
  s.v_head_dim = o.v_head_dim;
  s.q_len = o.q_len;
  s.kv_len = o.kv_len != 0 ? o.kv_len : o.q_len;
  s.causal = o.causal;
  s.window = o.window;
  auto d = Dt(c.dtype, "--dtype");
  if (!d.ok()) return d.status();
  auto kv = Dt(o.kv_dtype.empty() ? c.dtype : o.kv_dtype, "--kv-dtype");
  if (!kv.ok()) return kv.status();
  // The KV-cache dtypes that are modelled are the workload's (Validate): one rule for all.
  Workload cache;
  cache.kv_dtype = *kv;
  if (Status s = Validate(cache); !s.ok()) return s;
  s.dtype = *d;
  s.kv_dtype = *kv;
  OpRequest r{s};
  r.attention_impl = o.impl == "eager" ? AttentionImpl::kEager : AttentionImpl::kFlash;
  return r;
}

Result<OpRequest> BuildConv(const CommonOptions& c, const Conv2dOptions& o) {
  Conv2dSpec s;
  s.batch = o.batch;
  s.in_channels = o.in_channels;
  s.out_channels = o.out_channels;
  s.height = o.height;
  s.width = o.width;
  s.stride = o.stride;
  s.padding = o.padding;
  s.dilation = o.dilation;
  s.groups = o.groups;
  s.bias = o.bias;
  // --kernel R or RxS.
  const std::string& k = o.kernel;
  const size_t x = k.find('x');
  try {
    size_t used = 0;
    s.kernel_h = std::stoll(k.substr(0, x), &used);
    if (used != (x == std::string::npos ? k.size() : x)) throw std::invalid_argument(k);
    if (x == std::string::npos) {
      s.kernel_w = s.kernel_h;
    } else {
      const std::string w = k.substr(x + 1);
      s.kernel_w = std::stoll(w, &used);
      if (used != w.size()) throw std::invalid_argument(k);
    }
  } catch (const std::exception&) {
    return Status::Invalid("--kernel", "expected R or RxS (e.g. 3 or 3x3), got '" + k + "'");
  }
  auto d = Dt(c.dtype, "--dtype");
  if (!d.ok()) return d.status();
  s.dtype = *d;
  return OpRequest{s};
}

int Emit(Context& ctx, const CommonOptions& common, const OpRequest& request) {
  Status valid = Validate(request.spec);
  if (!valid.ok()) {
    return Fail(ctx, Status::Invalid("--" + valid.where(), valid.what()));
  }
  Result<Device> device = ctx.ResolveHw(common.hw);
  if (!device.ok()) return Fail(ctx, device.status());
  Result<CostOptions> made = MakeCostOptions(common.expected, *device);
  if (!made.ok()) return Fail(ctx, made.status());
  const CostOptions& options = *made;
  if (!options.expected.modules.empty() && request.attention_impl == AttentionImpl::kEager &&
      std::holds_alternative<AttentionSpec>(request.spec)) {
    return Fail(ctx, Status::Invalid("--modules", "'" + options.expected.modules +
                                                      "' counts a fused attention call: use "
                                                      "--impl flash"));
  }
  const CostModel model(*device, options);
  Result<OpAnalysis> analysis = AnalyzeOp(request, model, common.explain);
  if (!analysis.ok()) return Fail(ctx, analysis.status());
  std::optional<FlipAnalysis> flip;
  if (common.explain || common.format == OutputFormat::kJson) {
    Result<FlipAnalysis> f = AnalyzeFlip(request, model);
    if (!f.ok()) return Fail(ctx, f.status());
    flip = std::move(f).value();
  }
  if (common.format == OutputFormat::kJson) {
    std::string text = RenderOpJson(*analysis, model, flip ? &*flip : nullptr);
    if (common.explain) {
      nlohmann::json j = nlohmann::json::parse(text);
      nlohmann::json lines = nlohmann::json::array();
      const std::string ex = RenderOpExplain(*analysis, *flip, model);
      size_t start = 0;
      while (start < ex.size()) {
        const size_t end = ex.find('\n', start);
        lines.push_back(ex.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 1;
      }
      j["explanation"] = lines;
      text = j.dump(2) + "\n";
    }
    *ctx.out << text;
    return kExitOk;
  }
  *ctx.out << RenderOpTable(*analysis, model);
  if (common.explain) *ctx.out << "\n" << RenderOpExplain(*analysis, *flip, model);
  return kExitOk;
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

  MatmulOptions mm;
  CLI::App* matmul =
      app.add_subcommand("matmul",
                         "C[m,n] = A[m,k] . B[k,n]; m is the token/batch dimension, B the weight.\n"
                         "example: roofline op matmul --m 2048 --n 4096 --k 4096 --dtype fp16 --hw "
                         "a100-sxm-80gb");
  matmul->add_option("--m", mm.m, "rows of A and C (tokens x batch)")->required()
      ->transform(SizeSuffix());
  matmul->add_option("--n", mm.n, "columns of B and C (output features)")->required()
      ->transform(SizeSuffix());
  matmul->add_option("--k", mm.k, "reduction dimension (input features)")->required()
      ->transform(SizeSuffix());
  matmul->add_option("--batch", mm.batch, "independent products, each with its own B")
      ->capture_default_str();
  matmul->add_option("--weight-dtype", mm.weight_dtype,
                     "dtype of B (default: --dtype); int8/int4/fp8 with bf16 activations is "
                     "weight-only quantization");
  matmul->add_option("--out-dtype", mm.out_dtype, "dtype of C (default: --dtype; bf16 for 8-bit)");
  matmul->add_option("--group-size", mm.group_size,
                     "quantized weights: one scale per this many k elements (default 128 for "
                     "4-bit, else one scale per column; 0 = per column)");
  matmul->add_option("--scale-dtype", mm.scale_dtype, "dtype of quantization scales")
      ->capture_default_str();
  matmul->add_option(
      "--zero-dtype", mm.zero_dtype,
      "quantized weights: a zero point beside each scale, in this dtype (bf16: "
      "tinygemm's format; fp16: TinyChat's; int4: GPTQ's and AWQ's packed qzeros); default: none");
  matmul->add_flag("--activation-b", mm.activation_b, "B is an activation, not a weight");
  matmul->add_flag("--bias", mm.bias, "add a bias vector");
  AddCommon(matmul, common, expected);

  AttentionOptions at;
  CLI::App* attention = app.add_subcommand(
      "attention",
      "softmax(Q K^T) V for one layer. example: roofline op attention --batch 1 "
      "--heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 8192 --hw h100-sxm");
  attention->add_option("--batch", at.batch, "sequences")->capture_default_str();
  attention->add_option("--heads", at.heads, "query heads")->required();
  attention->add_option("--kv-heads", at.kv_heads, "key/value heads (default: --heads)");
  attention->add_option("--head-dim", at.head_dim, "d of Q and K")->required()
      ->transform(SizeSuffix());
  attention->add_option("--v-head-dim", at.v_head_dim, "d of V (default: --head-dim)")
      ->transform(SizeSuffix());
  attention->add_option("--q-len", at.q_len, "query positions per sequence (1 = decode)")
      ->required()
      ->transform(SizeSuffix());
  attention->add_option("--kv-len", at.kv_len, "key/value positions (default: --q-len)")
      ->transform(SizeSuffix());
  attention->add_option("--impl", at.impl, "flash (fused, on-chip scores) or eager (3 kernels)")
      ->check(CLI::IsMember({"flash", "eager"}))
      ->capture_default_str();
  attention->add_flag("--causal", at.causal, "causal mask (queries at the end of the sequence)");
  attention->add_option("--window", at.window, "sliding window in keys (0 = none)")
      ->capture_default_str()
      ->transform(SizeSuffix());
  attention->add_option("--kv-dtype", at.kv_dtype, "dtype of K and V (default: --dtype)");
  AddCommon(attention, common, expected);

  ElementwiseOptions ew;
  CLI::App* elementwise =
      app.add_subcommand("elementwise",
                         "out = f(in...) per element. example: roofline op elementwise --elements "
                         "16777216 --inputs 2 --hw h100-sxm");
  elementwise->add_option("--elements", ew.elements, "elements of the output")->required()
      ->transform(SizeSuffix());
  elementwise->add_option("--inputs", ew.inputs, "input tensors")->capture_default_str();
  elementwise->add_option("--flops-per-element", ew.flops_per_element, "FLOP per element")
      ->capture_default_str();
  AddCommon(elementwise, common, expected);

  Conv2dOptions cv;
  CLI::App* conv = app.add_subcommand(
      "conv2d",
      "2-D convolution, NCHW, as an implicit GEMM. example: roofline op conv2d --batch "
      "32 --in-channels 64 --out-channels 64 --height 56 --width 56 --kernel 3 "
      "--padding 1 --hw a100-sxm-80gb");
  conv->add_option("--batch", cv.batch, "N")->capture_default_str();
  conv->add_option("--in-channels", cv.in_channels, "C")->required();
  conv->add_option("--out-channels", cv.out_channels, "K")->required();
  conv->add_option("--height", cv.height, "H")->required();
  conv->add_option("--width", cv.width, "W")->required();
  conv->add_option("--kernel", cv.kernel, "R or RxS")->required();
  conv->add_option("--stride", cv.stride, "stride")->capture_default_str();
  conv->add_option("--padding", cv.padding, "zero padding on each side")->capture_default_str();
  conv->add_option("--dilation", cv.dilation, "dilation")->capture_default_str();
  conv->add_option("--groups", cv.groups, "groups (C for depthwise)")->capture_default_str();
  conv->add_flag("--bias", cv.bias, "add a bias per output channel");
  AddCommon(conv, common, expected);

  RowsOptions nm;
  CLI::App* norm = app.add_subcommand(
      "norm", "RMSNorm or LayerNorm over rows. example: roofline op norm --rows 2048 --cols 4096");
  norm->add_option("--rows", nm.rows, "rows (tokens)")->required()
      ->transform(SizeSuffix());
  norm->add_option("--cols", nm.cols, "normalized dimension")->required()
      ->transform(SizeSuffix());
  norm->add_option("--kind", nm.kind, "rms or layer")
      ->check(CLI::IsMember({"rms", "layer"}))
      ->capture_default_str();
  AddCommon(norm, common, expected);

  RowsOptions sm;
  CLI::App* softmax = app.add_subcommand(
      "softmax", "softmax over rows. example: roofline op softmax --rows 65536 --cols 4096");
  softmax->add_option("--rows", sm.rows, "rows")->required()
      ->transform(SizeSuffix());
  softmax->add_option("--cols", sm.cols, "softmax dimension")->required()
      ->transform(SizeSuffix());
  AddCommon(softmax, common, expected);

  EmbeddingOptions em;
  CLI::App* embedding = app.add_subcommand(
      "embedding",
      "token embedding gather. example: roofline op embedding --tokens 2048 --vocab "
      "128256 --dim 4096");
  embedding->add_option("--tokens", em.tokens, "tokens looked up")->required()
      ->transform(SizeSuffix());
  embedding->add_option("--vocab", em.vocab, "table rows")->required()
      ->transform(SizeSuffix());
  embedding->add_option("--dim", em.dim, "row width")->required()
      ->transform(SizeSuffix());
  AddCommon(embedding, common, expected);

  for (CLI::App* sub : app.get_subcommands({})) {
    if (extra) extra(sub);
  }
  if (auto done = ParseArgs(app, ctx)) return *done;
  for (const auto& [sub, options] : expected) {
    if (!sub->parsed()) continue;
    if (Status st = options->Read(common.expected); !st.ok()) return Fail(ctx, st);
  }

  Result<OpRequest>& request = cmd->request;
  request = Status::Invalid("op", "no operator given");
  if (matmul->parsed()) {
    request = BuildMatmul(common, mm);
  } else if (attention->parsed()) {
    request = BuildAttention(common, at);
  } else if (elementwise->parsed()) {
    auto d = Dt(common.dtype, "--dtype");
    if (!d.ok()) return Fail(ctx, d.status());
    ElementwiseSpec s;
    s.elements = static_cast<double>(ew.elements);
    s.inputs = ew.inputs;
    s.flops_per_element = ew.flops_per_element;
    s.dtype = *d;
    request = OpRequest{s};
  } else if (conv->parsed()) {
    request = BuildConv(common, cv);
  } else if (norm->parsed() || softmax->parsed()) {
    auto d = Dt(common.dtype, "--dtype");
    if (!d.ok()) return Fail(ctx, d.status());
    if (norm->parsed()) {
      NormSpec s;
      s.rows = nm.rows;
      s.cols = nm.cols;
      s.kind = nm.kind == "layer" ? NormKind::kLayer : NormKind::kRms;
      s.dtype = *d;
      request = OpRequest{s};
    } else {
      SoftmaxSpec s;
      s.rows = static_cast<double>(sm.rows);
      s.cols = sm.cols;
      s.dtype = *d;
      request = OpRequest{s};
    }
  } else if (embedding->parsed()) {
    auto d = Dt(common.dtype, "--dtype");
    if (!d.ok()) return Fail(ctx, d.status());
    EmbeddingSpec s;
    s.tokens = em.tokens;
    s.vocab = em.vocab;
    s.dim = em.dim;
    s.dtype = *d;
    request = OpRequest{s};
  }
  if (!request.ok()) return Fail(ctx, request.status());
  Status valid = Validate(request->spec);
  if (!valid.ok()) return Fail(ctx, Status::Invalid("--" + valid.where(), valid.what()));
  return std::nullopt;
}

int RunOp(Context& ctx) {
  OpCommand cmd;
  if (auto done = ParseOpCommand(ctx, &cmd, nullptr)) return *done;
  return Emit(ctx, cmd.common, *cmd.request);
}

}  // namespace roofline::cli
