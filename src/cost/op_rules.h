// Per-op-kind FLOP and byte rules (internal to the cost engine).
#ifndef ROOFLINE_SRC_COST_OP_RULES_H_
#define ROOFLINE_SRC_COST_OP_RULES_H_

#include <algorithm>
#include <array>

#include "roofline/cost.h"
#include "roofline/graph.h"

namespace roofline {

inline constexpr int kMaxOperands = 20;

/// Key/value positions the queries of one sequence of a fused attention read: all of them, or
/// under a sliding window the last query's window and the q_len - 1 positions before it.
inline double AttentionKeysRead(const AttentionSpec& a) {
  const auto kv = static_cast<double>(a.kv_len);
  return a.window > 0
             ? std::min(kv, static_cast<double>(a.window) + static_cast<double>(a.q_len) - 1)
             : kv;
}

/// What the rules need to know about the memory hierarchy.
struct LevelModel {
  int num_levels = 1;
  /// Per-instance capacity (bytes) of the next nearer level, used to size tiles for traffic at
  /// level i; 0 when level i is the nearest listed.
  std::array<double, kMaxLevels> next_capacity{};
  std::array<std::string, kMaxLevels> next_name{};
  std::array<std::string, kMaxLevels> name{};
  /// Level 0 holds only weights (a store they stream from): other operands do not cross it.
  bool weights_only_first = false;
  /// Side of the square tiles that fill next_capacity[l] (TileSide) for element sizes ea + eb
  /// of 0.5 to 16 B in steps of 0.5 (index 2 * (ea + eb)): worked out once per device.
  std::array<std::array<double, 33>, kMaxLevels> tile_side{};

  /// Floor16(sqrt(next_capacity[l] / (ea + eb))): the side of the A and B tiles at level l.
  double TileSide(int l, double ea_plus_eb) const {
    const double halves = ea_plus_eb * 2;
    if (halves >= 1 && halves <= 32 && halves == static_cast<double>(static_cast<int>(halves))) {
      return tile_side[l][static_cast<size_t>(halves)];
    }
    return TileSideOf(next_capacity[l], ea_plus_eb);
  }
  /// The same worked out for any capacity and element sizes.
  static double TileSideOf(double capacity, double ea_plus_eb);
};

/// The work of one op: bytes per operand per level, FLOPs per engine, communication.
struct OpWork {
  int num_operands = 0;
  /// Filled by the rule for operands [0, num_operands) and every level (not zero-initialized:
  /// this array is the hot path's largest object).
  std::array<std::array<double, kMaxLevels>, kMaxOperands> bytes;
  int num_flops = 0;
  std::array<EngineKey, 2> engine{};
  std::array<double, 2> flops{};
  double comm_bytes = 0;
  int comm_steps = 0;
  int comm_calls = 0;
  const std::string* link = nullptr;  ///< requested link name; empty/null: primary link

  void AddFlops(EngineKey key, double f) {
    engine[num_flops] = key;
    flops[num_flops] = f;
    ++num_flops;
  }
};

/// Fills `work` for op `op_index` of `graph`. Operand bytes come from the graph's tensors; the
/// rule decides how often each crosses each level.
void ApplyRule(const Graph& graph, int op_index, const LevelModel& levels, OpWork& work,
               Trace* trace);

/// Multiple of 16 at or below x, at least 16.
double Floor16(double x);

}  // namespace roofline

#endif  // ROOFLINE_SRC_COST_OP_RULES_H_
