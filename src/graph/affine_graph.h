// Re-sizing a built graph whose sizes are affine in one integer variable, without building it.
#ifndef ROOFLINE_SRC_GRAPH_AFFINE_GRAPH_H_
#define ROOFLINE_SRC_GRAPH_AFFINE_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "roofline/graph.h"
#include "roofline/status.h"

namespace roofline {

/// The sizes of a graph as exact affine functions of one integer variable v: every numeric spec
/// field and tensor size is a + b * v with integer a and b. A sweep line over batch, prompt or
/// context keeps a step graph's structure, and each size in it is one swept quantity times
/// constants, so re-sizing it for a point is a few multiply-adds instead of a build.
///
/// Fit derives the forms from two builds; it fails (and the caller builds per point) unless
/// every size is an integer below 2^52 and changes by a whole multiple of the variable's step.
/// Whether the forms are right in between is checked by the caller against more builds
/// (Matches), as a sliding window's min(context, window) bends a size inside a range.
class AffineGraph {
 public:
  /// From `lo_graph` built at v = lo and `hi_graph` built at v = hi (lo < hi), the same
  /// structure (same ops, kinds, repeats, bindings and tensors).
  static Result<AffineGraph> Fit(const Graph& lo_graph, int64_t lo, const Graph& hi_graph,
                                 int64_t hi);

  /// Sets the sizes of `graph` (the one fitted at lo, or a copy of it) to their values at v.
  void Apply(int64_t v, Graph& graph) const;

  /// Whether two graphs have the same structure, specs and tensor sizes.
  static bool Same(const Graph& a, const Graph& b);

  /// Whether ops x and y of `graph` (of the fitted structure) change alike along the line: the
  /// same size fields vary with the same forms, and so do their operands' sizes, pair by pair.
  /// Two such ops equal at one point of the line are equal at every point.
  bool SameForms(const Graph& graph, int x, int y) const;

  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  size_t forms() const { return fields_.size() + tensors_.size(); }  ///< sizes that vary

 private:
  struct FieldForm {
    int op;     ///< op index
    int field;  ///< index in the op spec's size fields (ForEachSize order)
    int64_t a, b;
    /// Where the field lies in the op's spec (bytes from the OpSpec object: the same in every
    /// graph of this structure, since the spec's kind is) and whether it holds a double.
    std::ptrdiff_t offset = 0;
    bool is_double = false;
  };
  struct TensorForm {
    int tensor;
    int64_t a, b;
  };
  std::vector<FieldForm> fields_;  ///< ordered by op, then field
  std::vector<TensorForm> tensors_;
  int64_t lo_ = 0, hi_ = 0;
};

}  // namespace roofline

#endif  // ROOFLINE_SRC_GRAPH_AFFINE_GRAPH_H_
