// Affine re-sizing of a built graph (see affine_graph.h).
#include "src/graph/affine_graph.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <type_traits>

namespace roofline {
namespace {

/// Calls f(field) for every size field of the spec, in a fixed order per kind.
template <class Spec, class F>
void ForEachSize(Spec& spec, F&& f) {
  std::visit(
      [&](auto& s) {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, MatmulSpec>) {
          for (auto* x : {&s.batch, &s.m, &s.n, &s.k, &s.b_broadcast, &s.group_size, &s.experts,
                          &s.expert_top_k}) {
            f(*x);
          }
        } else if constexpr (std::is_same_v<S, AttentionSpec>) {
          for (auto* x : {&s.batch, &s.heads, &s.kv_heads, &s.head_dim, &s.v_head_dim, &s.q_len,
                          &s.kv_len, &s.window}) {
            f(*x);
          }
        } else if constexpr (std::is_same_v<S, ElementwiseSpec>) {
          f(s.elements);
          f(s.flops_per_element);
        } else if constexpr (std::is_same_v<S, NormSpec>) {
          f(s.rows);
          f(s.cols);
        } else if constexpr (std::is_same_v<S, SoftmaxSpec>) {
          f(s.rows);
          f(s.cols);
        } else if constexpr (std::is_same_v<S, EmbeddingSpec>) {
          f(s.tokens);
          f(s.vocab);
          f(s.dim);
        } else if constexpr (std::is_same_v<S, Conv2dSpec>) {
          for (auto* x : {&s.batch, &s.in_channels, &s.out_channels, &s.height, &s.width, &s.out_h,
                          &s.out_w}) {
            f(*x);
          }
        } else if constexpr (std::is_same_v<S, CollectiveSpec>) {
          f(s.message_bytes);
          f(s.devices);
        }
      },
      spec);
}

constexpr double kExact = 4503599627370496.0;  // 2^52: integers below it are exact doubles

/// The slope of a size from x0 at lo to x1 at hi, when both are exact integers and the change
/// is a whole multiple of hi - lo.
bool Slope(double x0, double x1, int64_t lo, int64_t hi, int64_t& b) {
  if (!(std::fabs(x0) < kExact && std::fabs(x1) < kExact)) return false;
  if (std::floor(x0) != x0 || std::floor(x1) != x1) return false;
  const int64_t dx = static_cast<int64_t>(x1) - static_cast<int64_t>(x0);
  const int64_t dv = hi - lo;
  if (dx % dv != 0) return false;
  b = dx / dv;
  return true;
}

std::vector<double> Sizes(const OpSpec& spec) {
  std::vector<double> out;
  ForEachSize(spec, [&](const auto& x) { out.push_back(static_cast<double>(x)); });
  return out;
}

}  // namespace

bool AffineGraph::Same(const Graph& a, const Graph& b) {
  if (a.ops_.size() != b.ops_.size() || a.tensors_.size() != b.tensors_.size()) return false;
  for (size_t i = 0; i < a.ops_.size(); ++i) {
    const Op& x = a.ops_[i];
    const Op& y = b.ops_[i];
    if (x.name != y.name || x.group != y.group || x.repeat != y.repeat || x.output != y.output ||
        x.operands != y.operands || x.roles != y.roles || !(x.spec == y.spec)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.tensors_.size(); ++i) {
    const Tensor& x = a.tensors_[i];
    const Tensor& y = b.tensors_[i];
    if (x.elements != y.elements || x.bytes_per_element != y.bytes_per_element ||
        x.dtype != y.dtype || x.role != y.role || x.producer != y.producer ||
        x.origin_op != y.origin_op || x.consumers != y.consumers) {
      return false;
    }
  }
  return true;
}

Result<AffineGraph> AffineGraph::Fit(const Graph& lo_graph, int64_t lo, const Graph& hi_graph,
                                     int64_t hi) {
  if (!(lo < hi)) return Status::Invalid("affine graph", fmt::format("lo {} >= hi {}", lo, hi));
  if (lo_graph.ops_.size() != hi_graph.ops_.size() ||
      lo_graph.tensors_.size() != hi_graph.tensors_.size()) {
    return Status::Invalid("affine graph", "the two graphs differ in structure");
  }
  AffineGraph g;
  g.lo_ = lo;
  g.hi_ = hi;
  for (size_t i = 0; i < lo_graph.ops_.size(); ++i) {
    if (lo_graph.ops_[i].kind() != hi_graph.ops_[i].kind()) {
      return Status::Invalid("affine graph", "op " + lo_graph.ops_[i].name + " changes kind");
    }
    const std::vector<double> x0 = Sizes(lo_graph.ops_[i].spec);
    const std::vector<double> x1 = Sizes(hi_graph.ops_[i].spec);
    for (size_t f = 0; f < x0.size(); ++f) {
      if (x0[f] == x1[f]) continue;
      int64_t b = 0;
      if (!Slope(x0[f], x1[f], lo, hi, b)) {
        return Status::Invalid("affine graph",
                               "a size of op " + lo_graph.ops_[i].name + " is not affine");
      }
      FieldForm form{static_cast<int>(i), static_cast<int>(f), static_cast<int64_t>(x0[f]), b};
      const OpSpec& spec = lo_graph.ops_[i].spec;
      int index = 0;
      ForEachSize(spec, [&](const auto& x) {
        if (index++ != static_cast<int>(f)) return;
        static_assert(sizeof(x) == 8, "size fields are 8-byte integers or doubles");
        form.offset = reinterpret_cast<const char*>(&x) - reinterpret_cast<const char*>(&spec);
        form.is_double = std::is_floating_point_v<std::remove_cvref_t<decltype(x)>>;
      });
      g.fields_.push_back(form);
    }
  }
  for (size_t t = 0; t < lo_graph.tensors_.size(); ++t) {
    const double x0 = lo_graph.tensors_[t].elements;
    const double x1 = hi_graph.tensors_[t].elements;
    if (x0 == x1) continue;
    int64_t b = 0;
    if (!Slope(x0, x1, lo, hi, b)) {
      return Status::Invalid("affine graph", "a tensor size is not affine");
    }
    g.tensors_.push_back({static_cast<int>(t), static_cast<int64_t>(x0), b});
  }
  // Everything the forms do not carry (names, dtypes, bindings, other fields) must agree.
  Graph check = lo_graph;
  g.Apply(hi, check);
  if (!Same(check, hi_graph)) {
    return Status::Invalid("affine graph", "the graphs differ beyond their sizes");
  }
  return g;
}

bool AffineGraph::SameForms(const Graph& graph, int x, int y) const {
  struct Form {
    int field;
    int64_t a, b;
    bool operator==(const Form&) const = default;
  };
  auto forms_of = [&](int op) {
    std::vector<Form> out;
    for (const FieldForm& f : fields_) {
      if (f.op == op) out.push_back({f.field, f.a, f.b});
    }
    return out;
  };
  if (forms_of(x) != forms_of(y)) return false;
  auto tensor_form = [&](int t) -> std::optional<std::pair<int64_t, int64_t>> {
    for (const TensorForm& f : tensors_) {
      if (f.tensor == t) return std::make_pair(f.a, f.b);
    }
    return std::nullopt;
  };
  const std::vector<int>& ox = graph.ops_[static_cast<size_t>(x)].operands;
  const std::vector<int>& oy = graph.ops_[static_cast<size_t>(y)].operands;
  if (ox.size() != oy.size()) return false;
  for (size_t j = 0; j < ox.size(); ++j) {
    if (tensor_form(ox[j]) != tensor_form(oy[j])) return false;
  }
  return true;
}

void AffineGraph::Apply(int64_t v, Graph& graph) const {
  const int64_t dv = v - lo_;
  for (const FieldForm& f : fields_) {
    // Written in place at the field's offset in the spec (same kind as at the fit).
    char* field = reinterpret_cast<char*>(&graph.ops_[static_cast<size_t>(f.op)].spec) + f.offset;
    const int64_t value = f.a + f.b * dv;
    if (f.is_double) {
      const double d = static_cast<double>(value);
      std::memcpy(field, &d, sizeof d);
    } else {
      std::memcpy(field, &value, sizeof value);
    }
  }
  for (const TensorForm& t : tensors_) {
    graph.tensors_[static_cast<size_t>(t.tensor)].elements = static_cast<double>(t.a + t.b * dv);
  }
}

}  // namespace roofline
