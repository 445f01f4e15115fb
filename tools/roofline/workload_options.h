// Workload options shared by `model`, `sweep` and `plan`.
#ifndef ROOFLINE_TOOLS_ROOFLINE_WORKLOAD_OPTIONS_H_
#define ROOFLINE_TOOLS_ROOFLINE_WORKLOAD_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/model_analysis.h"
#include "roofline/output_format.h"
#include "roofline/sweep.h"
#include "roofline/workload.h"
#include "tools/roofline/commands.h"

namespace roofline::cli {

/// The flags of expected times: --ceilings, --runtime, --efficiency.
struct ExpectedFlags {
  std::string ceilings = "achievable";  ///< spec | achievable
  std::string runtime = "eager";        ///< eager | cuda-graph | compiled
  std::vector<std::string> efficiency;  ///< CLASS=F overrides
  std::string weight_kernel;            ///< a name in data/efficiency.json's weight_only_kernels
  std::string accumulate = "fp32";      ///< fp32 | fp16: what tensor-core matmuls accumulate in
  std::string modules;                  ///< a name in data/efficiency.json's module_launches
};
/// Adds --ceilings, --runtime, --efficiency, --weight-kernel, --accumulate and --modules.
void AddExpectedOptions(CLI::App& app, ExpectedFlags& f);
/// Loads the efficiency data and applies the flags to `c`; errors name the flag or the file.
/// A flag other than its default is refused on a device with no expected times.
Status ApplyExpectedFlags(const ExpectedFlags& f, const Device& d, CostOptions& c);

/// An integer option left out (its default then follows from other options).
inline constexpr int64_t kNotGiven = INT64_MIN;

/// Options of `roofline model` (and the workload part of `sweep` and `plan`); defaults are the
/// tool's defaults.
struct ModelOptions {
  std::string model;                  ///< preset id, config.json path or directory
  std::string hw = kDefaultDeviceId;  ///< device id or device JSON path
  std::string phase = "both";         ///< prefill | decode | both
  int64_t batch = 1;
  int64_t prompt = 2048;
  int64_t context = kNotGiven;    ///< not given: = prompt
  std::string dtype;              ///< default: the config's torch_dtype
  std::string weight_dtype;       ///< default: --dtype
  bool quantize_lm_head = false;  ///< lm_head in --weight-dtype too
  std::string zero_dtype;         ///< empty: symmetric weights (no zero points)
  std::string kv_dtype;           ///< default: --dtype
  int64_t group_size = 128;
  int64_t tp = 1;
  int64_t pp = 0;  ///< 0: as the device says (Workload::pp)
  std::string attention = "flash";
  std::string fusion = "eager";
  std::string mla = "auto";
  bool all_logits = false;
  bool tf32 = false;  ///< graph files and ONNX models: fp32 products on TF32 tensor cores
  double launch_overhead_us = 0;
  ExpectedFlags expected;
  OutputFormat format = OutputFormat::kTable;
};

/// Adds --hw and every workload flag (not MODEL, --phase or --format).
void AddWorkloadOptions(CLI::App& app, ModelOptions& o);
/// The workload the options describe; errors name the flag.
Result<Workload> MakeWorkload(const ModelOptions& o);

/// How kernels are costed (--launch-overhead-us) and expected (--ceilings, --runtime,
/// --efficiency, with data/efficiency.json); errors name the flag.
Result<CostOptions> MakeCostOptions(const ModelOptions& o, const Device& d);

/// A resolved model, workload, cost options and device.
struct Setup {
  TransformerConfig config;
  Workload workload;
  Device device;
  CostOptions cost;
};
/// The cost model the why section's flip searches use: bounds only (no expected times at every
/// probe), with the same launch overhead as `cost`.
CostModel BoundOnly(const CostOptions& cost, const Device& device);
/// Resolves MODEL, the workload flags and --hw, in that order of error reporting.
Result<Setup> Prepare(Context& ctx, const ModelOptions& o);
/// `--phase` as a selection.
PhaseSelection Phases(const std::string& phase);
/// The workload for a chart title, leaving out the `varied` variables: "batch 16, prompt 2048,
/// tp 1, bf16" (context when set; weight and KV dtypes when they differ from the activations').
std::string DescribeWorkload(const Workload& w, const TransformerConfig& c,
                             const std::vector<SweepVariable>& varied = {});

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_WORKLOAD_OPTIONS_H_
