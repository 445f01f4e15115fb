// What every report says about expected times: the ceilings and launch costs used, and a
// step's expected total beside its bound.
#ifndef ROOFLINE_SRC_REPORT_EXPECTED_REPORT_H_
#define ROOFLINE_SRC_REPORT_EXPECTED_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "roofline/cost.h"
#include "roofline/graph_analysis.h"

namespace roofline {

struct Engine;

/// "expected times: achievable ceilings (tensor.bf16 794.5 TFLOP/s, published; ...), runtime
/// eager (...)" for the ceilings kernels of `costs` use; empty without efficiency data.
std::string ExpectedSetupLine(const CostModel& model, const std::vector<KernelCost>& costs);
/// The same as JSON: ceilings, runtime, every used ceiling with its value and provenance, the
/// launch costs with their sources.
nlohmann::json ExpectedSetupJson(const CostModel& model, const std::vector<KernelCost>& costs);
/// A --weight-kernel regime's figures on the model's device: "2.00 us + streaming 2.90 TB/s"
/// (the stream rate capped by the bandwidth), "3.24 us + 5x its bytes at 2.90 TB/s", with
/// ", matrix 29.0 TFLOP/s" where it has a matrix rate.
std::string WeightKernelRegimePhrase(const CostModel& model,
                                     const CostModel::UsedWeightKernel& wk,
                                     const EfficiencyData::WeightKernelRegime& r);
/// "measured on this device", "scaled from the devices it was measured on" (rates per
/// SM-cycle), or "its fixed times as measured on other devices".
std::string WeightKernelProvenancePhrase(const CostModel::UsedWeightKernel& wk);
/// "each RMSNorm 8 kernels, rotary embedding 10, attention 10 (+2 with grouped K/V heads)".
std::string ModuleLaunchesPhrase(const EfficiencyData::ModuleLaunches& m);
/// "expected: 10.2 ms (1.27x the bound), memory:hbm; launch overhead 12.3% of it".
std::string ExpectedTotalsLine(const Totals& totals);
/// The engine's part of the setup line: ";\n  engine vLLM 0.4-0.5 (...): host work ...".
std::string EnginePhrase(const Engine& e);
/// An engine as JSON: its entry, runtime per phase and host work with sources.
nlohmann::json EngineJson(const Engine& e);
/// A step's expected figures as JSON (time, roofline, GPU, host, overhead share, per verdict).
nlohmann::json ExpectedTotalsJson(const Totals& totals);

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_EXPECTED_REPORT_H_
