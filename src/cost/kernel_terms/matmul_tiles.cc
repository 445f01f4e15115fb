// Tile and wave quantization of matrix products: the tiles a GEMM library picks pad the output's
// last row and column of tiles, and the tiles run in waves over the SMs (data/efficiency.json
// `matmul_tiles`; docs/expected-time.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "src/cost/efficiency_json.h"
#include "src/cost/kernel_term.h"
#include "src/cost/round_whole.h"

namespace roofline {

using nlohmann::json;

void ParseMatmulTiles(const json& root, EfficiencyData& d) {
  const json& tiles = Need(root, "matmul_tiles", "");
  RequireObject(tiles, "matmul_tiles");
  CheckKeys(tiles, "matmul_tiles", {"tiles", "source"});
  const json& list = Need(tiles, "tiles", "matmul_tiles");
  if (!list.is_array() || list.empty() || list.size() > 64) {
    throw JsonFieldError("matmul_tiles.tiles", "expected a non-empty array of [m, n] tile shapes");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = "matmul_tiles.tiles[" + std::to_string(i) + "]";
    const json& t = list[i];
    if (!t.is_array() || t.size() != 2 || !t[0].is_number_integer() || !t[1].is_number_integer() ||
        t[0].get<int64_t>() < 1 || t[1].get<int64_t>() < 1 || t[0].get<int64_t>() > 4096 ||
        t[1].get<int64_t>() > 4096) {
      throw JsonFieldError(field, "expected [m, n]: two integers between 1 and 4096");
    }
    d.matmul_tiles.push_back({t[0].get<int64_t>(), t[1].get<int64_t>()});
  }
  d.matmul_tiles_source = RequireString(tiles, "source", "matmul_tiles", "the tiles need a source");
}

void CostModel::SetUpMatmulTiles() {
  tile_sides_.clear();
  for (const MatmulTile& t : options_.efficiency->matmul_tiles) {
    auto power_of_two = [](double x) {
      int exp = 0;
      return x > 0 && std::frexp(x, &exp) == 0.5;
    };
    const auto tm = static_cast<double>(t.m), tn = static_cast<double>(t.n);
    tile_sides_.push_back({tm, tn, 1 / tm, 1 / tn, power_of_two(tm), power_of_two(tn)});
    smallest_tile_m_ = tile_sides_.size() == 1 ? tm : std::min(smallest_tile_m_, tm);
  }
}

double CostModel::MatmulEfficiency(double m, double n, double k, double batch,
                                   MatmulTile* picked) const {
  if (!options_.efficiency || tile_sides_.empty()) return 1;
  double best = 0;
  // Fewer rows than the smallest tile (decode's skinny products): GEMV and skinny-M kernels
  // cover them without padding the rows.
  const bool skinny = m < smallest_tile_m_;
  for (size_t i = 0; i < tile_sides_.size(); ++i) {
    const TileSides& t = tile_sides_[i];
    const double tm = skinny ? m : t.m, tn = t.n;
    // x / 2^j and x * 2^-j are the same double: the powers of two are multiplied. A skinny
    // product's one row of tiles is m / m = 1.
    const double rows =
        skinny && m > 0 ? 1.0 : CeilWhole(!skinny && t.exact_m ? m * t.inv_m : m / tm);
    const double cols = CeilWhole(t.exact_n ? n * t.inv_n : n / tn);
    // Tile quantization: the padded part of the last row and column of tiles is computed too.
    double eff = (m * n) / (rows * tm * cols * tn);
    // The wave factor below is at most 1, so a tile no better than the best before it cannot
    // win: its waves are not worked out (the same result, fewer divides).
    if (eff <= best) continue;
    if (sm_count_ > 0) {
      // Wave quantization: tiles run in waves of one per SM; the last wave may be partly idle.
      // Fewer tiles than SMs: k is split so that more of them work (split-K).
      double tiles = rows * cols * batch;
      const double sms = static_cast<double>(sm_count_);
      if (tiles < sms)
        tiles *= std::max(1.0, std::min(FloorWhole(sms / tiles), FloorWhole(k * (1.0 / 256))));
      eff *= tiles / (CeilWhole(tiles / sms) * sms);
    }
    if (eff > best) {
      best = eff;
      if (picked != nullptr) *picked = options_.efficiency->matmul_tiles[i];
    }
  }
  return std::clamp(best, 1e-9, 1.0);
}

namespace {

// The efficiency of a matmul's (or a convolution's, or an unfused attention product's) compute
// term: CostModel::MatmulEfficiency of its output shape.
class MatmulTiles final : public KernelTerm {
 public:
  std::string_view name() const override { return "matmul tiles"; }
  Phase phase() const override { return Phase::kEfficiency; }
  bool Apply(KernelTermContext& k, ExpectedCost& e) const override {
    double m = 0, n = 0, depth = 0, batch = 0;
    if ((k.cls != KernelClass::kMatmul && k.cls != KernelClass::kAttention) ||
        !MatmulShape(k.graph, k.kernel, m, n, depth, batch)) {
      return false;
    }
    MatmulTile tile;
    e.efficiency = k.model.MatmulEfficiency(m, n, depth, batch, &tile);
    if (k.lines != nullptr) {
      const int64_t sms = k.model.sm_count();
      k.lines->why =
          sms > 0 ? fmt::format(
                        "tile {}x{} and wave quantization of a {}x{} output x{} over "
                        "{} SMs",
                        tile.m, tile.n, m, n, batch, sms)
                  : fmt::format("tile {}x{} quantization of a {}x{} output (no SM count listed)",
                                tile.m, tile.n, m, n);
    }
    return true;
  }
};

}  // namespace

std::shared_ptr<const KernelTerm> MakeMatmulTilesTerm(const CostModel& model) {
  if (model.options().efficiency->matmul_tiles.empty()) return nullptr;
  return std::make_shared<const MatmulTiles>();
}

}  // namespace roofline
