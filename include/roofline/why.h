// Why a step is bound where it is: its intensity against the device's ridge, and per kernel class
// the kernel that takes most of the class's time, with the value of a workload variable at which
// its verdict flips. The `== why ==` section of `roofline model` and of the main job.
#ifndef ROOFLINE_WHY_H_
#define ROOFLINE_WHY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/flip.h"
#include "roofline/graph_analysis.h"
#include "roofline/kernel_class.h"
#include "roofline/model_analysis.h"
#include "roofline/network_analysis.h"

namespace roofline {

/// The largest kernel of one class in a step, and where its verdict flips.
struct ClassWhy {
  KernelClass cls = KernelClass::kMatmul;
  double share = 0;     ///< the class's share of the step's time at the bound (overhead apart)
  int kernel = -1;      ///< index into the step's kernels: the class's largest (time x repeat)
  std::string name;     ///< that kernel's name
  std::string level_name;
  int occurrence = 0;   ///< kernels of that name before it (the flip search follows this one)
  int level = 0;         ///< the memory level with its largest memory term (Device::memory)
  double intensity = 0;  ///< its FLOP per byte at `level` (0: no bytes cross it)
  double ridge = 0;      ///< its dominant engine's peak / `level`'s bandwidth (0: none)
  std::string verdict;   ///< its bound ("memory:hbm")
  FlipPoint flip;        ///< its verdict along the phase's axis (searched when the axis is set)
};

/// One step (a phase of an LLM, or a network's one pass).
struct StepWhy {
  std::string label;     ///< "prefill", "decode", or empty for a network
  int64_t tokens = 0;    ///< LLMs: tokens per step (batch x prompt, or batch)
  int level = 0;         ///< the memory level with the step's largest memory time
  std::string level_name;
  double intensity = 0;  ///< the step's FLOP per byte at `level`
  std::string engine;    ///< the ceiling most of the step's FLOPs run on ("tensor.bf16")
  double ridge = 0;      ///< that ceiling's peak / `level`'s bandwidth (0: none)
  std::string verdict;   ///< the step's verdict (the resource with the largest summed time)
  /// Classes with at least 1% of the step's time, and matmuls and attention whenever present;
  /// by share, largest first.
  std::vector<ClassWhy> classes;
  /// The variable the flips are searched along ("batch", "prompt", a graph dimension), from
  /// `from` up to `top`; empty: no search (the step has no such variable).
  std::string axis;
  int64_t from = 1;
  int64_t top = 0;
  FlipPoint step;  ///< the step's own verdict along the axis
};

/// Everything the why section says.
struct Why {
  std::string device;         ///< device id
  double weight_bytes = 0;    ///< LLMs: bytes per weight of the decoder matmuls (0: a network)
  std::vector<StepWhy> steps;
  // LLMs with a decode step: the KV cache's limit on the batch at `context`.
  int64_t context = 0;
  int64_t max_batch = -1;  ///< -1: not an LLM (no capacity line)
};

/// The verdicts at `value` of a step's axis: of the step (the first) and of every kernel of the
/// step there, in execution order (`names` parallel); empty when the workload is refused there.
struct StepVerdicts {
  std::vector<std::string> names;
  std::vector<std::string> verdicts;  ///< [0]: the step; [i + 1]: names[i]
};
using VerdictsAt = std::function<StepVerdicts(int64_t value)>;

/// The step's intensity, ridge, verdict and largest kernel per class (no flips).
StepWhy ExplainStep(const GraphCosts& costs, const CostModel& model, std::string label);

/// Searches the flips of `step` (each of its classes' kernels and the step itself) along `axis`
/// from `from` to `top`, exactly (FindFlipUp). `verdicts_at` is asked once per value; a value
/// the workload is refused at has the verdict "error", a kernel absent there "none".
void SearchFlips(StepWhy& step, const std::string& axis, int64_t from, int64_t top,
                 const VerdictsAt& verdicts_at);

/// The why of an LLM analysis: per phase, the step and its largest kernels, flips along batch
/// (decode, from batch 1 to 65536 or the batch when larger) and prompt (prefill, from 1 to
/// 131072 or the prompt when longer), each the first change found (FindFlipUp), with the verdict of the bound (`model`'s expected times are not consulted), and the
/// KV cache's limit on the batch.
Why ExplainModel(const ModelAnalysis& analysis, const CostModel& model);

/// The why of a network's one pass, with flips along its dimension `batch` when it has one
/// (from 1 to kWhyTopNetworkBatch): `graph_at` gives the graph at a value of it, bound further with
/// `bindings` and the value.
Why ExplainNetwork(const NetworkAnalysis& analysis, const CostModel& model,
                   const NetworkAtValue& graph_at, const DimBindings& bindings);

/// The largest batch and prompt the LLM flip searches go to.
inline constexpr int64_t kWhyTopBatch = int64_t{1} << 16;
inline constexpr int64_t kWhyTopPrompt = int64_t{1} << 17;
/// The largest batch a network's flip searches go to (an ONNX model is loaded again per value).
inline constexpr int64_t kWhyTopNetworkBatch = 4096;

}  // namespace roofline

#endif  // ROOFLINE_WHY_H_
