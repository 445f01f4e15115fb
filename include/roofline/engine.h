// Serving engines as data: what an engine runs (how it launches kernels per phase, whether it
// fuses, which framework modules and weight kernels) and the host work it does every step
// outside the kernels (scheduling, input preparation, output processing), each figure with its
// source. `--engine vllm@0.6.3` selects one version's entry of data/engines/vllm.json; the
// runtime choices fill what the user did not set, and the host work is a step term.
#ifndef ROOFLINE_ENGINE_H_
#define ROOFLINE_ENGINE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/efficiency.h"
#include "roofline/status.h"
#include "roofline/step_term.h"

namespace roofline {

/// How an engine's host work meets the GPU's: serial work adds to the step (the GPU waits for
/// it); overlapped work runs while the GPU computes the step (asynchronous scheduling), so the
/// step takes the longer of the two.
enum class HostMode { kSerial, kOverlapped };
std::string_view NameOf(HostMode m);

/// What one part of the host work grows with.
enum class HostPer { kStep, kRequest, kLayer };
inline constexpr int kNumHostPer = 3;
std::string_view NameOf(HostPer p);

/// One figure of an engine's host work, with where it came from.
struct HostFigure {
  double value_s = 0;       ///< seconds per step, per request in the step, or per layer
  std::string provenance;   ///< "published (step-level)", "calibrated (...)", "derived"
  std::string source;       ///< who measured it, on what (engine version, model, GPU, batch)
};

/// One named part of the host work ("scheduler", "output processing").
struct HostPart {
  std::string name;
  HostMode mode = HostMode::kSerial;
  /// The phase whose steps it runs in; absent: every step (a calibrated engine fits decode and
  /// prefill apart).
  std::optional<Phase> phase;
  /// By HostPer: seconds per step, per request and per layer (absent: none).
  std::array<std::optional<HostFigure>, kNumHostPer> per;
};

/// One version range of an engine, as its file describes it.
struct Engine {
  std::string id;          ///< "vllm"
  std::string name;        ///< "vLLM"
  std::string versions;    ///< the range this entry covers, as written ("0.6-0.7")
  std::string label;       ///< what these versions are ("V0 engine, async output processing")
  std::string chosen_as;   ///< how the entry was chosen ("vllm@0.6.3", "vllm (latest entry)")
  std::string file;        ///< the file it came from
  /// Launches per phase (index 0 prefill, 1 decode); absent: the tool's default.
  std::array<std::optional<Runtime>, 2> runtime;
  std::optional<bool> fused;  ///< elementwise epilogues folded into matmuls (--fusion fused)
  /// The linear layers the engine loads as one matmul (q-k-v, gate-up); absent: --fusion's.
  std::optional<LinearMerge> fused_linears;
  std::string modules;        ///< EfficiencyData::module_launches entry; empty: one per op
  /// Weight dtype name ("fp8") -> the EfficiencyData::weight_kernels entries the engine runs
  /// for it, one per kind of GPU (its CUDA kernel, its ROCm kernel): a step takes the first that
  /// runs on the device (vendor and runtime); none: the weights stream as without.
  std::map<std::string, std::vector<std::string>> weight_kernels;
  /// Weight dtype name ("bf16", "fp8") -> the fused MoE calls (weight kernels with `experts`)
  /// the engine runs a mixture of experts' routed products as, chosen as weight_kernels are.
  std::map<std::string, std::vector<std::string>> moe_kernels;
  std::vector<HostPart> host;
  std::string notes;          ///< what the entry leaves out, in words
  std::string source;         ///< where the runtime choices were read (code, docs)
  bool calibrated = false;    ///< written by `roofline calibrate` from the user's own runs

  /// The host work of one step, split by mode; `phase`: the step's (absent: parts of every
  /// phase count).
  double HostSeconds(HostMode mode, int64_t requests, int64_t layers,
                     std::optional<Phase> phase = std::nullopt) const;
};

/// The engine a spec names: "vllm" (its latest entry), "vllm@0.6.3" (the entry whose range
/// holds that version) or a path to an engine file ("engine.json", "dir/x.json[@version]").
/// Errors name the spec's flag (`where`) or the file and field.
Result<Engine> LoadEngine(std::string_view spec, const std::string& where = "--engine");

/// Every entry of an engine file's text; `origin` names it in errors.
Result<std::vector<Engine>> ParseEngineFile(std::string_view text, const std::string& origin);

/// An engine file holding `e` as its one entry, as ParseEngineFile reads it back (what
/// `roofline calibrate` writes).
std::string EngineFileText(const Engine& e);

/// The engines compiled in (data/engines/*.json), each file's entries in order.
Result<std::vector<Engine>> ListEngines();

/// An engine's host work as a step term: the step is max(GPU and launches, overlapped host
/// work) + serial host work.
class EngineHost final : public StepTerm {
 public:
  explicit EngineHost(std::shared_ptr<const Engine> engine) : engine_(std::move(engine)) {}
  std::string_view name() const override { return "engine host work"; }
  void Apply(StepTime& step) const override;
  std::string Explain(const StepTime& step) const override;
  const Engine& engine() const { return *engine_; }

 private:
  std::shared_ptr<const Engine> engine_;
};

/// The engine term among `terms`, or null.
const Engine* EngineOf(const std::vector<std::shared_ptr<const StepTerm>>& terms);

/// One line per figure of an engine's host work: "scheduler: serial, 0.06 ms per step
/// (published (step-level): ...)".
std::vector<std::string> DescribeHostWork(const Engine& e);

}  // namespace roofline

#endif  // ROOFLINE_ENGINE_H_
