// Kernel terms: the effects that turn one kernel's time bound into its expected time. Each is a
// small plug-in in src/cost/kernel_terms/, beside the part of data/efficiency.json it reads (its
// parser) and, for most, the setup that resolves that data for a device (docs/architecture.md
// says what still lives in CostModel::SetUpExpected):
//   matmul_tiles     tile and wave quantization of matrix products (the compute efficiency)
//   flash_attention  fused attention's efficiency and its fixed time per wave of thread blocks
//   weight_kernel    a weight-only quantized matmul run as a measured kernel (--weight-kernel)
//   module_launches  a framework's kernels per module and its copies of grouped K/V (--modules)
//   fp16_accumulate  tensor-core matmuls at the FP16-accumulate ceiling (--accumulate fp16)
//   launch           the gap between kernels and the host's time to launch them (--runtime)
// CostModel::ExpectInto (expected.cc) runs them in phases around the roofline terms it keeps
// itself (compute over the engines, bytes over the levels, the collective's link). Terms that do
// not apply to a model (no --modules, no SM count) are not installed, so a sweep pays only for
// the terms in use.
#ifndef ROOFLINE_SRC_COST_KERNEL_TERM_H_
#define ROOFLINE_SRC_COST_KERNEL_TERM_H_

#include <array>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/cost.h"
#include "roofline/graph.h"

namespace roofline {

/// Where a term's explanation lines stand in a kernel's derivation (after the roofline terms),
/// in this order.
enum class TermSection { kKSteps, kWaves, kKernel, kLaunches, kCopies, kLaunch, kCount };

/// What the terms of one kernel write for --explain: lines in place of the driver's own for the
/// compute term and device memory (level 0), and lines after the roofline terms by section.
struct TermLines {
  std::string why;                   ///< why the compute efficiency is what it is
  std::vector<std::string> compute;  ///< replaces the per-engine lines when set
  std::string memory0;               ///< replaces the level-0 line when set
  std::array<std::vector<std::string>, static_cast<size_t>(TermSection::kCount)> details;
  void Detail(TermSection s, std::string line) {
    details[static_cast<size_t>(s)].push_back(std::move(line));
  }
};

/// One kernel's expected time while its terms build it.
struct KernelTermContext {
  KernelTermContext(const CostModel& m, const Graph& g, const Kernel& k, KernelClass c,
                    const KernelCost& cost_)
      : model(m), graph(g), kernel(k), cls(c), cost(cost_) {}
  const CostModel& model;
  const Graph& graph;
  const Kernel& kernel;
  KernelClass cls;
  const KernelCost& cost;
  /// `--efficiency CLASS=F` for the kernel's class (0: the model's own). An override replaces
  /// the model for its class: terms that model the compute step aside.
  double forced = 0;
  TermLines* lines = nullptr;  ///< null in the fast path: no explanation is written
  bool compute_set = false;    ///< a term set e.compute_s and e.efficiency itself
  bool memory0_set = false;    ///< a term set e.memory_s[0] itself
  /// The ceilings tensor-core matmul terms run at in place of CostModel::used_compute() (null:
  /// those; entries of value 0 fall back to them).
  const std::vector<UsedCeiling>* matmul_ceilings = nullptr;
  /// A decode attention whose K/V heads a framework copies to every query head (null: none).
  const AttentionSpec* repeated_kv = nullptr;
};

/// One effect on a kernel's expected time. Built once per cost model with what it resolved for
/// the device, immutable after, shared by the model's copies; it must not keep the model.
class KernelTerm {
 public:
  /// When the driver runs a term.
  enum class Phase {
    kEfficiency,  ///< the compute term's efficiency: the first term that sets one wins
    kTerms,       ///< before the roofline terms: may set compute or device memory, or add bytes
    kAdded,       ///< after them: a fixed time added to the largest (ExpectedCost::wave_s)
    kLaunch,      ///< launching the kernel (ExpectedCost::launches, overhead_s, host_s)
  };
  virtual ~KernelTerm() = default;
  virtual std::string_view name() const = 0;
  virtual Phase phase() const = 0;
  /// Applies the term to `e`; writes its lines when `k.lines` is set. In phase kEfficiency,
  /// returns whether it set the efficiency (and `k.lines->why`); otherwise the result is ignored.
  virtual bool Apply(KernelTermContext& k, ExpectedCost& e) const = 0;
};

using KernelTerms = std::vector<std::shared_ptr<const KernelTerm>>;

// The terms, each null when it does not apply to `model` (its option not given, its data or the
// device's SM count missing). Called at the end of the model's setup.
std::shared_ptr<const KernelTerm> MakeFlashAttentionTerm(const CostModel& model);
std::shared_ptr<const KernelTerm> MakeMatmulTilesTerm(const CostModel& model);
std::shared_ptr<const KernelTerm> MakeModuleLaunchesTerm(const CostModel& model);
/// The --weight-kernel term, or with `experts` the --moe-kernel term (null when not in use).
std::shared_ptr<const KernelTerm> MakeWeightKernelTerm(const CostModel& model, bool experts);
std::shared_ptr<const KernelTerm> MakeFp16AccumulateTerm(const CostModel& model);
std::shared_ptr<const KernelTerm> MakeAttentionWavesTerm(const CostModel& model);
std::shared_ptr<const KernelTerm> MakeLaunchTerm(const CostModel& model);

// Their parsers: each reads its section of data/efficiency.json into `d` (errors are
// JsonFieldError naming the field). ParseEfficiencyData calls them in the file's order.
void ParseMatmulTiles(const nlohmann::json& root, EfficiencyData& d);
void ParseFlashAttention(const nlohmann::json& root, EfficiencyData& d);
void ParseAttentionWaves(const nlohmann::json& root, EfficiencyData& d);
void ParseLaunch(const nlohmann::json& root, EfficiencyData& d);
void ParseWeightKernels(const nlohmann::json& root, EfficiencyData& d);
void ParseModuleLaunches(const nlohmann::json& root, EfficiencyData& d);

// Helpers the terms share (expected.cc).
std::string Percent(double fraction);  ///< "12.3%"
/// The first matmul or convolution of a kernel as an output of m x n in `batch` products.
bool MatmulShape(const Graph& graph, const Kernel& kernel, double& m, double& n, double& k,
                 double& batch);
/// The kernel's fused attention op, or null.
const AttentionSpec* FusedAttention(const Graph& graph, const Kernel& kernel);
/// The device's boost clock (Hz; info.boost_clock), 0 when it lists none.
double BoostClock(const Device& d);

}  // namespace roofline

#endif  // ROOFLINE_SRC_COST_KERNEL_TERM_H_
