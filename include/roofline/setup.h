// A Scenario resolved against the data: its LLM config loaded, its device found, its cost
// options made (efficiency data loaded, expected-time choices checked against the device).
#ifndef ROOFLINE_SETUP_H_
#define ROOFLINE_SETUP_H_

#include <memory>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/device_db.h"
#include "roofline/scenario.h"
#include "roofline/transformer.h"

namespace roofline {

/// What an LLM evaluation needs, resolved from a Scenario.
struct Setup {
  TransformerConfig config;
  Workload workload;
  Device device;
  CostOptions cost;
};

struct Engine;

/// Fills the fields of `s` the user did not set with what its engine runs (--engine: fusion,
/// runtime per phase, modules where they can run, the weight kernel of its weight dtype) and
/// returns the engine; null without --engine. Errors name --engine or the engine file.
Result<std::shared_ptr<const Engine>> ApplyEngineFields(Scenario& s);

/// The cost options a scenario asks for on `device`: its launch overhead and expected-time
/// choices with `efficiency` (LoadDefaultEfficiencyData when null), its --weight-kernel and
/// --modules checked there; under --engine, its choices (ApplyEngineFields) and its host work
/// as a step term. Errors name the flag or the file. With `refuse_unused`, a choice
/// the user gave other than its default is refused on a device with no expected times
/// (SRAM-only chips: the choice would be silently ignored); a run read from a file states its
/// runtime whatever the device.
Result<CostOptions> MakeCostOptions(const Scenario& s, const Device& device,
                                    std::shared_ptr<const EfficiencyData> efficiency = nullptr,
                                    bool refuse_unused = true);

/// Resolves an LLM scenario: the model (preset, config.json or folder), its workload checked
/// (Validate), the device from `db` (an id or a device JSON path) and the cost options, in that
/// order of error reporting.
Result<Setup> Resolve(const Scenario& s, const DeviceDatabase& db);

/// The cost model the why section's flip searches use: bounds only (no expected times at every
/// probe), with the same launch overhead as `cost`.
CostModel BoundOnly(const CostOptions& cost, const Device& device);

/// The workload for a title, leaving out the variables a sweep varies: "batch 16, prompt 2048,
/// tp 1, bf16" (context when set; weight and KV dtypes when they differ from the activations').
std::string DescribeWorkload(const Workload& w, const TransformerConfig& c,
                             const std::vector<FieldId>& varied = {});

}  // namespace roofline

#endif  // ROOFLINE_SETUP_H_
