// Lowering: every node of a network graph becomes an op of the operator IR (or no kernel, for
// views, or an uncosted entry, for `unknown`). The analysis layer costs the ops as kernels.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "roofline/network.h"

namespace roofline {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

double Product(const std::vector<int64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  double p = 1;
  for (size_t i = from; i < std::min(to, s.size()); ++i) p *= D(s[i]);
  return p;
}

/// A node lowered: a spec to cost, a view (no kernel) or an uncosted node.
struct Lowered {
  enum class Kind { kCosted, kView, kUncosted } kind = Kind::kCosted;
  OpSpec spec;
  double matrix_flops = 0;
  bool matrix = false;
};

/// A tensor with its concrete shape.
struct Shaped {
  const NetTensor* tensor = nullptr;
  std::vector<int64_t> shape;
  double elements() const { return Product(shape); }
  double bytes() const { return elements() * tensor->ElementBytes(); }
};

class Lowering {
 public:
  Lowering(const NetworkGraph& g, const DimBindings& dims) : g_(g), dims_(dims) {}

  Status ResolveTensors() {
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      const NetTensor& t = g_.tensors[i];
      Result<std::vector<int64_t>> s = ResolveShape(t, dims_);
      if (!s.ok()) return Status::Invalid(g_.origin + ": tensors." + t.name, s.status().what());
      shaped_[t.name] = Shaped{&t, std::move(s).value()};
    }
    return Status::Ok();
  }

  const Shaped& Get(const std::string& name) const { return shaped_.at(name); }

  double OutputBytes(const NetNode& n) const {
    double b = 0;
    for (const std::string& o : n.outputs) b += Get(o).bytes();
    return b;
  }

  Result<Lowered> Lower(const NetNode& n, size_t index) const {
    where_ = fmt::format("{}: nodes[{}]", g_.origin, index);
    node_ = &n;
    if (n.op == "view") return Lowered{Lowered::Kind::kView, {}, 0, false};
    if (n.op == "unknown") return Lowered{Lowered::Kind::kUncosted, {}, 0, false};
    if (n.outputs.empty()) return Fail("a costed node needs at least one output");
    if (n.op == "matmul") return Matmul(n);
    if (n.op == "linear") return Linear(n);
    if (n.op == "conv") return Conv(n);
    if (n.op == "attention") return Attention(n);
    if (n.op == "norm") return Norm(n);
    if (n.op == "softmax") return Softmax(n);
    if (n.op == "embedding") return Embedding(n);
    if (n.op == "elementwise") return Stream(n, n.attrs.Number("flops_per_element", 1));
    if (n.op == "copy") return Stream(n, 0);
    if (n.op == "pool") return Pool(n);
    if (n.op == "reduce") {
      return Stream(n, NeedInputs(n, 1) ? Get(n.inputs[0]).elements() / OutElements(n) : 0);
    }
    if (n.op == "resize") return Resize(n);
    return Fail("op '" + n.op + "' has no lowering");
  }

 private:
  Status Fail(const std::string& what) const {
    return Status::Invalid(where_, fmt::format("node '{}' ({}): {}", node_->name, node_->op, what));
  }
  Status CheckSpec(const OpSpec& spec) const {
    Status s = Validate(spec);
    return s.ok() ? s : Fail(s.ToString());
  }
  bool NeedInputs(const NetNode& n, size_t count) const { return n.inputs.size() >= count; }
  double OutElements(const NetNode& n) const {
    double e = 0;
    for (const std::string& o : n.outputs) e += Get(o).elements();
    return std::max(e, 1.0);
  }
  Result<Lowered> Costed(OpSpec spec, double matrix_flops, bool matrix) const {
    Status s = CheckSpec(spec);
    if (!s.ok()) return s;
    return Lowered{Lowered::Kind::kCosted, std::move(spec), matrix_flops, matrix};
  }

  Result<Lowered> Matmul(const NetNode& n) const {
    if (!NeedInputs(n, 2)) return Fail("expects inputs A and B (and an optional bias)");
    const Shaped& a = Get(n.inputs[0]);
    const Shaped& b = Get(n.inputs[1]);
    const Shaped& c = Get(n.outputs[0]);
    if (a.shape.empty() || b.shape.empty()) return Fail("A and B need at least one dimension");
    if (n.attrs.Has("m") || n.attrs.Has("n") || n.attrs.Has("k")) return ExplicitMatmul(n, a, b, c);
    const bool tb = n.attrs.Number("transpose_b", 0) != 0;
    const bool ta = n.attrs.Number("transpose_a", 0) != 0;
    const size_t ra = a.shape.size(), rb = b.shape.size();
    if (ta && ra < 2) return Fail("transpose_a needs A of rank 2 or more");
    const int64_t m = ra == 1 ? 1 : a.shape[ra - (ta ? 1 : 2)];
    const int64_t k = ra == 1 ? a.shape[0] : a.shape[ra - (ta ? 2 : 1)];
    int64_t kb = 0, nn = 0;
    if (rb == 1) {
      kb = b.shape[0];
      nn = 1;
    } else {
      kb = tb ? b.shape[rb - 1] : b.shape[rb - 2];
      nn = tb ? b.shape[rb - 2] : b.shape[rb - 1];
    }
    if (kb != k) {
      return Fail(fmt::format("A '{}' has k = {} but B '{}' has k = {}{}", a.tensor->name, k,
                              b.tensor->name, kb, tb ? " (transpose_b)" : ""));
    }
    // Leading (batch) dims broadcast numpy-style: [4, 1, m, k] x [3, k, n] -> 4 x 3 products.
    const std::vector<int64_t> lead_a(a.shape.begin(), a.shape.end() - std::min<size_t>(ra, 2));
    const std::vector<int64_t> lead_b(b.shape.begin(), b.shape.end() - std::min<size_t>(rb, 2));
    std::vector<int64_t> lead(std::max(lead_a.size(), lead_b.size()), 1);
    for (const auto* l : {&lead_a, &lead_b}) {
      for (size_t j = 0; j < l->size(); ++j) {
        int64_t& o = lead[lead.size() - l->size() + j];
        const int64_t d = (*l)[j];
        if (d != o && d != 1 && o != 1) {
          return Fail(fmt::format("batch dims of A '{}' and B '{}' do not broadcast",
                                  a.tensor->name, b.tensor->name));
        }
        if (d != 1) o = d;
      }
    }
    const double batch = Product(lead);
    if (std::fabs(c.elements() - batch * D(m) * D(nn)) > 0.5) {
      return Fail(fmt::format("output '{}' has {} elements, expected batch {} x {} x {}",
                              c.tensor->name, c.elements(), batch, m, nn));
    }
    return MatmulOf(n, a, b, c, {batch, D(m), D(nn), D(k)}, Product(lead_a), Product(lead_b));
  }

  /// Sizes given by the frontend (Einsum, Gemm, vector MatMul): `batch` (default 1), `m`, `n`,
  /// `k`. The operands' element counts tell how many distinct A and B matrices there are.
  Result<Lowered> ExplicitMatmul(const NetNode& n, const Shaped& a, const Shaped& b,
                                 const Shaped& c) const {
    const double sizes[4] = {n.attrs.Number("batch", 1), n.attrs.Number("m", -1),
                             n.attrs.Number("n", -1), n.attrs.Number("k", -1)};
    for (double v : sizes) {
      if (!(v >= 1 && v <= 9e15 && std::floor(v) == v)) {
        return Fail("explicit batch, m, n and k must be positive integers (m, n and k all given)");
      }
    }
    const auto [batch, m, nn, k] = sizes;
    if (std::fabs(c.elements() - batch * m * nn) > 0.5) {
      return Fail(fmt::format("output '{}' has {} elements, expected batch {} x {} x {}",
                              c.tensor->name, c.elements(), batch, m, nn));
    }
    // Distinct matrices of an operand: its elements over one matrix's, when that divides the
    // batch; otherwise (an operand with its own summed labels) one per product.
    const double products = batch;  // clang 14 cannot capture a structured binding
    auto distinct = [products](double elements, double per) {
      const double d = elements / per;
      return d >= 1 && std::floor(d) == d && std::fmod(products, d) == 0 ? d : products;
    };
    return MatmulOf(n, a, b, c, {batch, m, nn, k}, distinct(a.elements(), m * k),
                    distinct(b.elements(), k * nn));
  }

  /// The spec of `batch` products [m, k] x [k, n] over `batch_a` distinct A and `batch_b` distinct
  /// B matrices. The operand with fewer distinct matrices is the spec's B (counted once per
  /// distinct matrix); when both are broadcast the other is counted once per product.
  Result<Lowered> MatmulOf(const NetNode& n, const Shaped& a, const Shaped& b, const Shaped& c,
                           const std::array<double, 4>& bmnk, double batch_a,
                           double batch_b) const {
    const auto [batch, m, nn, k] = bmnk;
    MatmulSpec s;
    s.a_dtype = a.tensor->dtype;
    s.b_dtype = b.tensor->dtype;
    s.out_dtype = c.tensor->dtype;
    s.b_is_weight = b.tensor->weight;
    s.bias = n.inputs.size() > 2;
    s.k = static_cast<int64_t>(k);
    s.batch = static_cast<int64_t>(batch);
    s.m = static_cast<int64_t>(m);
    s.n = static_cast<int64_t>(nn);
    double reuse = batch / batch_b;
    if (batch_b == 1 && batch_a == batch) {
      // One B for every product: the products' rows stack into one matrix.
      s.batch = 1;
      s.m = static_cast<int64_t>(batch * m);
      reuse = 1;
    } else if (batch_a < batch_b) {
      // A is the more shared operand: C^T = B^T A^T with the roles swapped.
      s.m = static_cast<int64_t>(nn);
      s.n = static_cast<int64_t>(m);
      s.a_dtype = b.tensor->dtype;
      s.b_dtype = a.tensor->dtype;
      s.b_is_weight = a.tensor->weight;
      reuse = batch / batch_a;
    }
    if (reuse < 1 || std::floor(reuse) != reuse) {
      return Fail(
          fmt::format("{} products do not divide evenly over {} distinct A and {} distinct "
                      "B matrices",
                      batch, batch_a, batch_b));
    }
    s.b_broadcast = static_cast<int64_t>(reuse);
    return Costed(s, 2 * batch * m * nn * k, true);
  }

  Result<Lowered> Linear(const NetNode& n) const {
    if (!NeedInputs(n, 2)) return Fail("expects inputs X and W [n, k] (and an optional bias)");
    const Shaped& x = Get(n.inputs[0]);
    const Shaped& w = Get(n.inputs[1]);
    if (x.shape.empty() || w.shape.size() != 2) return Fail("expects X [..., k] and W [n, k]");
    const int64_t k = x.shape.back();
    if (w.shape[1] != k) {
      return Fail(fmt::format("X '{}' has k = {} but W '{}' is [{}, {}]", x.tensor->name, k,
                              w.tensor->name, w.shape[0], w.shape[1]));
    }
    MatmulSpec s;
    s.m = static_cast<int64_t>(x.elements() / D(std::max<int64_t>(k, 1)));
    s.n = w.shape[0];
    s.k = k;
    s.a_dtype = x.tensor->dtype;
    s.b_dtype = w.tensor->dtype;
    s.out_dtype = Get(n.outputs[0]).tensor->dtype;
    s.b_is_weight = w.tensor->weight;
    s.bias = n.inputs.size() > 2;
    return Costed(s, 2 * D(s.m) * D(s.n) * D(s.k), true);
  }

  Result<Lowered> Conv(const NetNode& n) const {
    if (!NeedInputs(n, 2)) return Fail("expects inputs X and W (and an optional bias)");
    const Shaped& x = Get(n.inputs[0]);
    const Shaped& w = Get(n.inputs[1]);
    const Shaped& y = Get(n.outputs[0]);
    const size_t r = x.shape.size();
    if (r < 3 || r > 5 || w.shape.size() != r || y.shape.size() != r) {
      return Fail(
          "expects X [N, C, spatial...], W [O, C/groups, kernel...] and Y of the same "
          "rank, with 1 to 3 spatial dims");
    }
    const int64_t groups = n.attrs.Int("groups", 1);
    const bool transposed = n.attrs.Number("transposed", 0) != 0;
    const int64_t batch = x.shape[0], c_in = x.shape[1], c_out = y.shape[1];
    if (groups < 1 || c_in % groups != 0 || c_out % groups != 0) {
      return Fail(fmt::format("groups {} must divide the {} input and {} output channels", groups,
                              c_in, c_out));
    }
    const int64_t w0 = transposed ? c_in : c_out;
    const int64_t w1 = transposed ? c_out / groups : c_in / groups;
    if (w.shape[0] != w0 || w.shape[1] != w1) {
      return Fail(fmt::format("W '{}' is [{}, {}, ...], expected [{}, {}, ...]{}", w.tensor->name,
                              w.shape[0], w.shape[1], w0, w1,
                              transposed ? " (transposed: [C_in, C_out/groups, ...])" : ""));
    }
    // Spatial dims folded into (height, width): 1-D has height 1, 3-D folds depth into height.
    auto fold = [r](const std::vector<int64_t>& s) {
      int64_t h = 1;
      for (size_t i = 2; i + 1 < r; ++i) h *= s[i];
      return std::pair<int64_t, int64_t>{h, s[r - 1]};
    };
    const auto [ih, iw] = fold(x.shape);
    const auto [kh, kw] = fold(w.shape);
    const auto [oh, ow] = fold(y.shape);
    Conv2dSpec s;
    s.batch = batch;
    s.kernel_h = kh;
    s.kernel_w = kw;
    s.groups = groups;
    s.dtype = x.tensor->dtype;
    if (g_.fp32_conv_on_tf32 && s.dtype == DType::kFp32) s.dtype = DType::kTf32;
    s.bias = n.inputs.size() > 2;
    if (!transposed) {
      s.in_channels = c_in;
      s.out_channels = c_out;
      s.height = ih;
      s.width = iw;
      s.out_h = oh;
      s.out_w = ow;
    } else {
      // A transposed convolution is the data gradient of a convolution from Y back to X: the
      // same FLOPs and bytes with the roles of X and Y swapped.
      s.in_channels = c_out;
      s.out_channels = c_in;
      s.height = oh;
      s.width = ow;
      s.out_h = ih;
      s.out_w = iw;
    }
    const double mf = 2 * D(s.batch) * D(s.out_channels) * D(s.out_height()) * D(s.out_width()) *
                      D(s.in_channels / s.groups) * D(s.kernel_h) * D(s.kernel_w);
    return Costed(s, mf, true);
  }

  Result<Lowered> Attention(const NetNode& n) const {
    if (!NeedInputs(n, 3)) return Fail("expects inputs Q, K and V");
    const Shaped& q = Get(n.inputs[0]);
    const Shaped& k = Get(n.inputs[1]);
    const Shaped& v = Get(n.inputs[2]);
    const size_t r = q.shape.size();
    if ((r != 3 && r != 4) || k.shape.size() != r || v.shape.size() != r) {
      return Fail(
          "expects Q [B, H, Lq, D], K [B, Hkv, Lk, D], V [B, Hkv, Lk, Dv] (or rank 3 "
          "without the head dim)");
    }
    AttentionSpec s;
    s.batch = q.shape[0];
    s.heads = r == 4 ? q.shape[1] : 1;
    s.kv_heads = r == 4 ? k.shape[1] : 1;
    s.q_len = q.shape[r - 2];
    s.head_dim = q.shape[r - 1];
    s.kv_len = k.shape[r - 2];
    s.v_head_dim = v.shape[r - 1];
    s.causal = n.attrs.Number("causal", 0) != 0;
    s.dtype = q.tensor->dtype;
    s.kv_dtype = k.tensor->dtype;
    if (k.shape[0] != s.batch || v.shape[0] != s.batch || k.shape[r - 1] != s.head_dim ||
        v.shape[r - 2] != s.kv_len) {
      return Fail("Q, K and V disagree in batch, key length or head dim");
    }
    Status st = CheckSpec(s);
    if (!st.ok()) return st;
    const double mf =
        2 * D(s.batch) * D(s.heads) * AttentionPairs(s, true) * D(s.head_dim + s.v_dim());
    return Costed(s, mf, true);
  }

  Result<Lowered> Norm(const NetNode& n) const {
    if (!NeedInputs(n, 1)) return Fail("expects input X");
    const Shaped& x = Get(n.inputs[0]);
    const std::string kind = n.attrs.String("kind", "layer");
    if (kind == "layer" || kind == "rms") {
      double cols = 0;
      if (n.inputs.size() > 1) {
        cols = Get(n.inputs[1]).elements();
      } else {
        const int64_t dims = n.attrs.Int("normalized_dims", 1);
        if (dims < 1 || static_cast<size_t>(dims) > x.shape.size()) {
          return Fail(fmt::format("attrs.normalized_dims {} outside 1..{}", dims, x.shape.size()));
        }
        cols = Product(x.shape, x.shape.size() - static_cast<size_t>(dims));
      }
      NormSpec s;
      s.kind = kind == "rms" ? NormKind::kRms : NormKind::kLayer;
      s.cols = static_cast<int64_t>(cols);
      s.rows = cols > 0 ? static_cast<int64_t>(x.elements() / cols) : 0;
      s.affine = n.inputs.size() > 1;
      s.dtype = x.tensor->dtype;
      if (D(s.rows) * D(s.cols) != x.elements()) {
        return Fail(
            fmt::format("the weight's {} elements do not divide X's {}", cols, x.elements()));
      }
      return Costed(s, 0, false);
    }
    if (kind == "batch") return Stream(n, 2);
    if (kind == "group" || kind == "instance") return Stream(n, 8);  // as LayerNorm
    return Fail("attrs.kind '" + kind + "': expected layer, rms, batch, group or instance");
  }

  Result<Lowered> Softmax(const NetNode& n) const {
    if (!NeedInputs(n, 1)) return Fail("expects input X");
    const Shaped& x = Get(n.inputs[0]);
    if (x.shape.empty()) return Fail("X needs at least one dimension");
    int64_t axis = n.attrs.Int("axis", -1);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return Fail(fmt::format("attrs.axis outside the rank {}", rank));
    SoftmaxSpec s;
    s.cols = x.shape[static_cast<size_t>(axis)];
    s.rows = s.cols > 0 ? x.elements() / D(s.cols) : 0;
    s.dtype = x.tensor->dtype;
    return Costed(s, 0, false);
  }

  Result<Lowered> Embedding(const NetNode& n) const {
    if (!NeedInputs(n, 2)) return Fail("expects inputs table [V, D] and indices");
    const Shaped& table = Get(n.inputs[0]);
    if (table.shape.size() != 2) return Fail("the table (first input) must be [V, D]");
    EmbeddingSpec s;
    s.vocab = table.shape[0];
    s.dim = table.shape[1];
    s.tokens = static_cast<int64_t>(Get(n.inputs[1]).elements());
    s.dtype = table.tensor->dtype;
    return Costed(s, 0, false);
  }

  Result<Lowered> Pool(const NetNode& n) const {
    if (!NeedInputs(n, 1)) return Fail("expects input X");
    const Shaped& x = Get(n.inputs[0]);
    // FLOPs: one per window element per pooled value; a second output (max pooling's indices)
    // is written but not computed.
    const double pooled = std::max(Get(n.outputs[0]).elements(), 1.0);
    double area = 0;
    if (n.attrs.Number("global", 0) != 0) {
      area = x.elements() / pooled;
    } else {
      const std::vector<int64_t> kernel = n.attrs.Ints("kernel");
      if (kernel.empty()) return Fail("attrs.kernel missing (or set \"global\": true)");
      area = 1;
      for (int64_t v : kernel) area *= D(v);
    }
    return Stream(n, area, pooled);
  }

  Result<Lowered> Resize(const NetNode& n) const {
    const std::string mode = n.attrs.String("mode", "nearest");
    double per = 0;
    if (mode == "nearest") {
      per = 0;
    } else if (mode == "linear" || mode == "bilinear") {
      per = 4;
    } else if (mode == "cubic" || mode == "bicubic") {
      per = 16;
    } else {
      return Fail("attrs.mode '" + mode + "': expected nearest, linear or cubic");
    }
    return Stream(n, per);
  }

  /// Every input read once, every output written once, `per_element` FLOPs per element of
  /// `computed` (default: all outputs' elements) on the vector engine (an ElementwiseSpec with
  /// per-input sizes).
  Result<Lowered> Stream(const NetNode& n, double per_element, double computed = 0) const {
    ElementwiseSpec s;
    const Shaped& out0 = Get(n.outputs[0]);
    s.dtype = out0.tensor->bits > 0 ? DType::kInt8 : out0.tensor->dtype;
    const double out_bytes_each = BytesOf(s.dtype);
    double out_elements = 0;
    for (const std::string& o : n.outputs) out_elements += Get(o).bytes() / out_bytes_each;
    if (out_elements < 1) return Lowered{Lowered::Kind::kView, {}, 0, false};  // nothing written
    s.elements = out_elements;
    s.flops_per_element = per_element * (computed > 0 ? computed : OutElements(n)) / out_elements;
    s.function = n.attrs.String("function", n.op);
    constexpr size_t kMaxInputs = 16;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Shaped& in = Get(n.inputs[i]);
      const DType dt = in.tensor->bits > 0 ? DType::kInt8 : in.tensor->dtype;
      if (i < kMaxInputs) {
        s.input_elements.push_back(in.bytes() / BytesOf(dt));
        s.input_dtypes.push_back(dt);
      } else {  // more inputs than an op has operands: their bytes join the last one's
        s.input_elements.back() += in.bytes() / BytesOf(s.input_dtypes.back());
      }
    }
    s.inputs = static_cast<int>(s.input_elements.size());
    return Costed(s, 0, false);
  }

  const NetworkGraph& g_;
  const DimBindings& dims_;
  std::unordered_map<std::string, Shaped> shaped_;
  mutable std::string where_;
  mutable const NetNode* node_ = nullptr;
};

}  // namespace

Result<LoweredNetwork> LowerNetwork(const NetworkGraph& g, const DimBindings& bindings) {
  LoweredNetwork a;
  a.name = g.name.empty() ? g.origin : g.name;
  Result<DimBindings> dims = ResolveDims(g, bindings);
  if (!dims.ok()) return dims.status();
  a.dims = *dims;
  Lowering lower(g, a.dims);
  Status s = lower.ResolveTensors();
  if (!s.ok()) return s;
  for (const NetTensor& t : g.tensors) {
    if (!t.weight) continue;
    const auto& shaped = lower.Get(t.name);
    a.weight_bytes += shaped.bytes();
    if (t.parameter) a.parameters += shaped.elements();
  }
  a.nodes = static_cast<int64_t>(g.nodes.size());
  double all_output_bytes = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NetNode& n = g.nodes[i];
    Result<Lowered> l = lower.Lower(n, i);
    if (!l.ok()) return l.status();
    if (l->kind == Lowered::Kind::kView) {
      ++a.views;
      continue;
    }
    const double out_bytes = lower.OutputBytes(n);
    all_output_bytes += out_bytes;
    if (l->kind == Lowered::Kind::kUncosted) {
      ++a.uncosted.count;
      a.uncosted.output_bytes += out_bytes;
      std::string what = n.attrs.String("op", n.source);
      ++a.uncosted.by_op[what.empty() ? n.name : what];
      continue;
    }
    Result<int> op = a.graph.AddOp(n.name, l->spec, {}, 1, n.module);
    if (!op.ok()) {
      return Status::Invalid(fmt::format("{}: nodes[{}]", g.origin, i), op.status().ToString());
    }
    NetKernelInfo info;
    info.node = n.name;
    info.module = n.module;
    info.op = n.op;
    info.source = n.source;
    info.matrix_flops = l->matrix_flops;
    info.matrix = l->matrix;
    a.info.push_back(std::move(info));
    a.matrix_flops += l->matrix_flops;
  }
  const int64_t non_views = a.nodes - a.views;
  if (non_views > 0) a.uncosted.share_of_nodes = D(a.uncosted.count) / D(non_views);
  if (all_output_bytes > 0) a.uncosted.share_of_bytes = a.uncosted.output_bytes / all_output_bytes;
  for (const std::string& note : g.notes) a.notes.push_back(note);
  return a;
}

}  // namespace roofline
