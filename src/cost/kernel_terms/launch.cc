// Launching a kernel: the GPU's gap between two dependent kernels, and the host's time to issue
// each launch, per runtime (data/efficiency.json `launch`; docs/expected-time.md). The host's time
// is hidden while the GPU is busy with earlier kernels: whether it is, is the step's question
// (StepTerm HostOverlap), not the kernel's.
#include <fmt/format.h>

#include "roofline/units.h"
#include "src/cost/efficiency_json.h"
#include "src/cost/kernel_term.h"

namespace roofline {

using nlohmann::json;

void ParseLaunch(const json& root, EfficiencyData& d) {
  const json& launch = Need(root, "launch", "");
  RequireObject(launch, "launch");
  CheckKeys(launch, "launch", {"eager", "cuda-graph", "compiled"});
  for (int r = 0; r < kNumRuntimes; ++r) {
    const std::string name(NameOf(static_cast<Runtime>(r)));
    const std::string field = "launch." + name;
    const json& l = Need(launch, name.c_str(), "launch");
    RequireObject(l, field);
    CheckKeys(l, field, {"host_s", "gap_s"});
    d.launch[r].host_s = ParseFigure(Need(l, "host_s", field), field + ".host_s", 1e-3, true);
    d.launch[r].gap_s = ParseFigure(Need(l, "gap_s", field), field + ".gap_s", 1e-3, true);
  }
}

namespace {

// Every launch of the kernel (ExpectedCost::launches: one, or a framework module's count) pays
// the runtime's gap and --launch-overhead-us on the GPU, and its host time (times the
// framework's Python under eager).
class Launch final : public KernelTerm {
 public:
  std::string_view name() const override { return "launch"; }
  Phase phase() const override { return Phase::kLaunch; }
  bool Apply(KernelTermContext& k, ExpectedCost& e) const override {
    const CostModel& model = k.model;
    const LaunchCost& launch = model.launch_cost();
    const double extra_s = model.options().launch_overhead_s;
    const double launches = static_cast<double>(e.launches);
    e.overhead_s = launches * (launch.gap_s.value + extra_s);
    e.host_s = launches * model.host_per_launch_s();
    if (k.lines != nullptr) {
      const double factor = model.host_factor();
      k.lines->Detail(
          TermSection::kLaunch,
          fmt::format(
              "  launch ({}): {}{} between kernels [{}]{}; host {} per launch [{}]{}{}",
              NameOf(model.options().expected.runtime),
              e.launches > 1 ? fmt::format("{} x ", e.launches) : "", Seconds(launch.gap_s.value),
              launch.gap_s.source, extra_s > 0 ? " + --launch-overhead-us " + Seconds(extra_s) : "",
              Seconds(launch.host_s.value), launch.host_s.source,
              factor != 1.0 ? fmt::format(" x {:.2f} for the Python around it (--modules {}) [{}]",
                                          factor, model.used_modules()->name,
                                          model.used_modules()->host_factor.source)
                            : "",
              e.launches > 1 || factor != 1.0 ? fmt::format(" = host {}", Seconds(e.host_s)) : ""));
    }
    return true;
  }
};

}  // namespace

std::shared_ptr<const KernelTerm> MakeLaunchTerm(const CostModel&) {
  return std::make_shared<const Launch>();
}

}  // namespace roofline
