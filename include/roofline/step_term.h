// Terms that belong to a whole step, not to one kernel: how the host's launching and the GPU's
// running combine (today), and next a serving engine's host work per step, request and layer, or
// a pipeline's bubbles. A cost model holds a list of them (CostOptions::step_terms) and a step's
// expected time is its kernels' times with every term applied in order.
#ifndef ROOFLINE_STEP_TERM_H_
#define ROOFLINE_STEP_TERM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/workload.h"

namespace roofline {

/// A step as its terms see it, and what they make of it.
struct StepTime {
  double gpu_s = 0;    ///< the kernels' expected times summed: the GPU's busy time
  double host_s = 0;   ///< the host's time to launch them
  int64_t kernels = 0;  ///< kernel launches in the step (repeats and module launches counted)
  double time_s = 0;    ///< the step's expected time (the terms set it)
  /// The host sets the pace: it needs longer to launch the kernels than the GPU to run them.
  bool host_bound = false;
  // What an engine's host work grows with (EngineHost): the requests the step serves (its
  // batch) and the model's layers. Zero where the caller does not say.
  int64_t requests = 0;
  int64_t layers = 0;
  std::optional<Phase> phase;  ///< the step's phase, where the caller knows it
  double engine_host_s = 0;     ///< the engine's host work in the step (serial and overlapped)
  double engine_exposed_s = 0;  ///< what that work added to the step's time
  bool engine_bound = false;    ///< the engine's overlapped host work sets the step's pace
};

/// One term of a step's expected time. Small and stateless: `Apply` changes the step's time,
/// `Explain` says what it did, with its figures and their sources.
class StepTerm {
 public:
  virtual ~StepTerm() = default;
  /// A short name ("host overlap").
  virtual std::string_view name() const = 0;
  virtual void Apply(StepTime& step) const = 0;
  /// One line: what the term did to `step` (after Apply).
  virtual std::string Explain(const StepTime& step) const = 0;
};

/// The host launches kernels while the GPU runs earlier ones: the step takes the longer of the
/// two (asynchronous launches; the host's time is hidden while the GPU is busy).
class HostOverlap final : public StepTerm {
 public:
  std::string_view name() const override { return "host overlap"; }
  void Apply(StepTime& step) const override;
  std::string Explain(const StepTime& step) const override;
};

/// The terms every cost model applies unless told otherwise: host overlap.
std::vector<std::shared_ptr<const StepTerm>> DefaultStepTerms();

/// `step` with `terms` applied in order (time_s starts at the GPU's busy time).
StepTime ApplyStepTerms(StepTime step, const std::vector<std::shared_ptr<const StepTerm>>& terms);

}  // namespace roofline

#endif  // ROOFLINE_STEP_TERM_H_
