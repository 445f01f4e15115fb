// Text, JSON and explanation renderers. They only read result objects.
#ifndef ROOFLINE_REPORT_H_
#define ROOFLINE_REPORT_H_

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "roofline/cost.h"
#include "roofline/cuda_measure.h"
#include "roofline/device.h"
#include "roofline/device_db.h"
#include "roofline/measure.h"
#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/network.h"
#include "roofline/op_analysis.h"
#include "roofline/output_format.h"
#include "roofline/plan.h"
#include "roofline/profile.h"
#include "roofline/published.h"
#include "roofline/serving_runs.h"
#include "roofline/sweep.h"
#include "roofline/validate.h"
#include "roofline/why.h"

namespace roofline {

struct Engine;
struct EngineCalibration;

/// One line describing an op request: "matmul batch=1 m=2048 n=4096 k=4096 A=bf16 B=bf16(weight)".
std::string DescribeOp(const OpRequest& request);

/// The `roofline op` table: FLOPs, bytes, intensity and ridge per level, time terms, verdict.
std::string RenderOpTable(const OpAnalysis& analysis, const CostModel& model);
/// One JSON document with flops, bytes, intensity, time_s, bound, attainable_flops_per_s,
/// per-kernel figures and (when given) the flip point; with `explain` (and a flip point), the
/// derivation as an array of lines, "explanation".
std::string RenderOpJson(const OpAnalysis& analysis, const CostModel& model,
                         const FlipAnalysis* flip, bool explain = false);
/// The derivation a student can check by hand, ending with the flip point.
std::string RenderOpExplain(const OpAnalysis& analysis, const FlipAnalysis& flip,
                            const CostModel& model);

/// `roofline hw list`: id, name, headline peaks, memory and bandwidth.
std::string RenderHwList(const DeviceDatabase& db);
/// `hw list --format json`: {"devices": [{id, name, peaks in FLOP/s (null when absent), memory}]}.
std::string RenderHwListJson(const DeviceDatabase& db);
/// `roofline hw show`: every ceiling with provenance, memory levels, links, ridge points.
std::string RenderHwShow(const Device& device);
/// `roofline hw show --format json`: the device in schema form plus a "ridge_points" table.
std::string RenderHwShowJson(const Device& device);

/// `roofline engines list`: one line per engine entry (id, versions, label, runtime, host work).
std::string RenderEngineList(const std::vector<Engine>& engines);
/// `engines list --format json`: {"engines": [EngineJson...]}.
std::string RenderEngineListJson(const std::vector<Engine>& engines);
/// `roofline engines show`: one entry with every figure, its provenance and source.
std::string RenderEngineShow(const Engine& engine);
/// `engines show --format json`: the entry as EngineJson.
std::string RenderEngineShowJson(const Engine& engine);

/// `roofline calibrate`: the fit per phase, its errors and each run; `written`: the engine file
/// written (named at the end).
std::string RenderCalibration(const EngineCalibration& calibration, const std::string& written);
/// `calibrate --format json`: the same with the engine entry written.
std::string RenderCalibrationJson(const EngineCalibration& calibration);

/// `model --explain KERNEL`: the derivation of every figure of the kernels named KERNEL in each
/// phase (FLOPs, bytes per level, time terms, the bound, and the expected time with the
/// ceilings used, their provenance, the efficiency and why, and the launch costs). NotFound,
/// with a "did you mean", when no kernel has that name.
/// `sweep --explain KERNEL`: the kernel's derivation on both sides of every crossover of its
/// class (integer axes: at value - 1 and value), else at the first and last grid points; each
/// point analysed afresh with `model` (the sweep's phases and workload).
Result<std::string> RenderSweepKernelExplain(const TransformerConfig& config, const Workload& base,
                                             const CostModel& model, PhaseSelection phases,
                                             const SweepResult& sweep, const std::string& kernel);
Result<std::string> RenderModelKernelExplain(const ModelAnalysis& a, const CostModel& model,
                                             const std::string& kernel);

/// `roofline models list`: the LLM presets with architecture, shape and parameter counts, then
/// the network presets (data/graphs/) with nodes, parameters and matrix FLOPs per pass.
std::string RenderModelsList(const ModelRegistry& registry,
                             const std::vector<GraphPresetInfo>& networks);
/// `models list --format json`: {"models": [{id, architecture, shapes, parameter counts}],
/// "networks": [{id, name, dims, nodes, parameters, matrix_flops, note}], "warnings": [presets
/// that failed to parse]}.
std::string RenderModelsListJson(const ModelRegistry& registry,
                                 const std::vector<GraphPresetInfo>& networks);
/// `roofline model`: per phase the kernel table, totals, latency, then the memory footprint.
/// `top` > 0 shows only the `top` kernels of each phase with the most time (execution order).
std::string RenderModelTable(const ModelAnalysis& analysis, const CostModel& model, int top = 0);
/// The lines the model table starts with: model, device, parameters, workload, units and the
/// expected-time setup (what `model --explain KERNEL` prints above the derivation).
std::string RenderModelHeader(const ModelAnalysis& analysis, const CostModel& model);
/// `roofline model --format json`: one document (see README for the fields).
std::string RenderModelJson(const ModelAnalysis& analysis, const CostModel& model);
/// `roofline model --format csv`: one row per kernel and phase.
std::string RenderModelCsv(const ModelAnalysis& analysis, const CostModel& model);

/// A crossover or never-flips entry of a sweep in words. Every printer of a sweep (table, JSON,
/// chart) takes its text from here.
struct SweepLine {
  std::string what;      ///< the signal: "decode matmuls", "prefill step", "capacity", "network"
  std::string variable;  ///< the swept variable
  std::string value;     ///< crossovers: the value where it changes ("64", "fp8")
  std::string from;      ///< crossovers: the value's name before; never-flips: its only value
  std::string to;        ///< crossovers: after ("compute:tensor.bf16", "comm > compute", "fits")
  std::string at;        ///< where the other axis was held ("" for one-axis sweeps)
  std::string sentence;  ///< one plain sentence
};
/// The signal's name ("decode norms/elementwise").
std::string SignalName(const SignalId& signal);
/// A signal value's name: the verdict's, or "comm > compute" / "fits" and their opposites.
std::string ValueName(const SignalId& signal, const SignalValue& value, const ResourceNames& names);
SweepLine Describe(const Crossover& crossover, const SweepResult& sweep);
SweepLine Describe(const NeverFlips& never, const SweepResult& sweep);

/// `roofline sweep`: one row per point, then the crossovers and what never flips.
std::string RenderSweepTable(const SweepResult& sweep, const std::string& title);
/// The sweep's why: its crossovers, what never flips, its notes (the end of RenderSweepTable).
std::string RenderSweepWhy(const SweepResult& sweep);
/// `roofline sweep --format json`: axes, points[], crossovers[], never_flips[].
std::string RenderSweepJson(const SweepResult& sweep, const std::string& model,
                            const std::string& device);
/// `roofline sweep --format csv`: one row per point and phase.
std::string RenderSweepCsv(const SweepResult& sweep);
/// The same text written to `out` as it is made, in blocks (no copy of the whole).
void WriteSweepCsv(const SweepResult& sweep, std::ostream& out);
/// `roofline sweep --format json`: the document of RenderSweepJson with its points as columns
/// ("schema": 2, "columns": what each is, "rows", "data": one array per column; SweepTable's
/// every column), or with `JsonLayout::kRows` RenderSweepJson's own document.
/// `with_data` false leaves the columns' values out (the Python package takes them as arrays).
void WriteSweepJson(const SweepResult& sweep, const std::string& model, const std::string& device,
                    JsonLayout layout, std::ostream& out, bool with_data = true);
/// `roofline sweep --format npy`: SweepTable's every column as one NumPy structured array.
void WriteSweepNpy(const SweepResult& sweep, std::ostream& out);
/// `sweep --vary hw=A,B,...`: without another variable, one row per device (time, verdict,
/// tokens/s, expected time and largest share per phase; footprint); with one, each device's
/// sweep table, then every crossover compared across the devices.
std::string RenderDeviceSweepTable(const DeviceSweep& sweep, const std::string& title);
/// {"model", "devices": [{"device", "sweep": RenderSweepJson's document}]}.
std::string RenderDeviceSweepJson(const DeviceSweep& sweep, const std::string& model,
                                  JsonLayout layout = JsonLayout::kColumns);
/// RenderSweepCsv's rows, a `device` column first.
std::string RenderDeviceSweepCsv(const DeviceSweep& sweep);

/// The group of a trust band's key at `level`, in words: "decode, runtime eager, one chip,
/// NVIDIA" (the criteria the level keeps).
std::string DescribeTrustGroup(const TrustKey& key, TrustLevel level);
/// A trust band beside expected time `expected_s`, one sentence: "on the published runs costed
/// as this step is (decode, runtime eager, modules not counted, unquantized weights, one chip,
/// NVIDIA, dense) the expected time ran from 18% below to 7% above the measured time (median 14%
/// below; 5 runs of 1 stack): expect 5.68 ms to 7.42 ms (7.07 ms at the median error)"; for a
/// group with too few runs, "not validated for <group> ..." and the nearest group's figures; with
/// figures the user overrode, the errors without a range. Without an expected time
/// (`expected_s` <= 0) the errors only.
std::string DescribeBand(const TrustBand& band, double expected_s);
/// The runs behind a band, a line each (what --explain lists).
std::string RenderBandRuns(const TrustBand& band);

/// `roofline plan`: layout, memory, the three operating points per dtype variant, assumptions.
std::string RenderPlanTable(const Plan& plan);
/// `roofline plan --format json`.
std::string RenderPlanJson(const Plan& plan);

/// `roofline validate`: the title and device, one row per kernel (predicted bound, measured
/// time, efficiency), the fitted efficiency per class and how the kernels ran.
std::string RenderValidationTable(const ValidationReport& report);
/// The same as JSON: device, title, kernels[], calibration.
std::string RenderValidationJson(const ValidationReport& report);

/// `roofline validate published`: one row per published run (its workload, the measurement,
/// the bound, the expected time and its error) and the error summary, all, development and
/// holdout rows.
std::string RenderPublishedTable(const PublishedValidation& v);
/// The same as JSON, each row with its source and quote.
std::string RenderPublishedJson(const PublishedValidation& v);

/// `roofline validate serving`: one row per serving run (its load, the measured throughput and
/// latencies, the plan's bound and expected ones at that load, the errors) and the summaries by
/// metric and by stack.
std::string RenderServingTable(const ServingValidation& v);
/// The same as JSON, each row with its source and quote.
std::string RenderServingJson(const ServingValidation& v);

/// `roofline measure --device cpu`: the host, its measured ceilings beside the theoretical ones,
/// bandwidth per level and the BLAS GEMM rates.
std::string RenderCpuMeasurement(const CpuMeasurement& measurement);
/// `roofline measure --device cuda[:N]`: the GPU, tensor and CUDA-core ceilings beside the
/// theoretical peaks, and bandwidth per level.
std::string RenderCudaMeasurement(const CudaMeasurement& measurement);

/// `roofline profile ncu`: the file and device, per-kernel figures per launch, their place on
/// the device's roofline (with a device), warnings, notes and the metrics to collect.
/// `device_note` says how the device was matched, or why there is none.
/// `top` > 0 lists only the `top` kernels with the most time (in the file's order, numbered
/// as in it).
std::string RenderNcuProfileTable(const NcuSummary& summary, const std::string& file,
                                  const std::string& layout, const Device* device,
                                  const std::string& device_note, int top = 0);

/// The `== why ==` section of `roofline model` and the main job: each step's intensity against
/// the device's ridge, its largest kernel per class with where its verdict flips, and whether
/// the KV cache caps the batch first.
std::string RenderWhy(const Why& why);

/// `roofline profile nsys`: the file, time per op class and the `top` kernels by time (all
/// when `top` is 0).
std::string RenderNsysProfileTable(const NsysReport& report, const NsysSummary& summary,
                                   const std::string& file, int top);

/// `roofline profile torch`: the file and device, time per op class and the `top` op groups by
/// GPU time; with recorded shapes their FLOPs, minimum bytes and place on the roofline.
/// `device_note` says how the device was matched.
std::string RenderTorchProfileTable(const TorchTrace& trace, const TorchSummary& summary,
                                    const std::string& file, const Device* device,
                                    const std::string& device_note, int top);

/// `roofline profile ... --model M`: measured time per op class against the predicted step,
/// and (launch order known) per predicted kernel. `title` names the prediction.
std::string RenderProfileJoinTable(const ProfileJoin& join, const std::string& title);
/// One "warning:" line when the profile does not look like a run of the prediction `title`
/// (JoinMismatch::any), else empty.
std::string RenderJoinMismatch(const JoinMismatch& mismatch, const std::string& title);

}  // namespace roofline

#endif  // ROOFLINE_REPORT_H_
