// A command's result as what it can be written as: a text table, JSON, CSV, NumPy's .npy, an
// SVG chart (--plot), an HTML report (--report) and any other file it stores. Every command that
// evaluates (`model`, `sweep`, `profile`, `op`, `plan`, `validate`) is one library call here, its
// parsed options in and Views out; the tool writes the views it is asked for (files first,
// atomically, then the format on stdout).
#ifndef ROOFLINE_VIEWS_H_
#define ROOFLINE_VIEWS_H_

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/op_analysis.h"
#include "roofline/output_format.h"
#include "roofline/plan.h"
#include "roofline/plot.h"
#include "roofline/scenario.h"
#include "roofline/status.h"
#include "roofline/validate.h"

namespace roofline {

/// What the user asked to be written.
struct ViewRequest {
  OutputFormat format = OutputFormat::kTable;
  std::string plot;                          ///< --plot FILE (empty: none)
  std::string report;                        ///< --report FILE (empty: none)
  JsonLayout layout = JsonLayout::kColumns;  ///< sweeps' --json-layout
};

/// The device database, loaded the first time a command needs it (one that needs none, or that
/// fails on its flags first, never loads it).
using DatabaseSource = std::function<Result<const DeviceDatabase*>()>;

/// The views of one result: `out` always; `chart` and `report` where the result offers them (a
/// request for one it does not offer is refused by the call that made the views). Each is
/// computed when first called, from the result it holds, and kept.
struct Views {
  std::function<void(std::ostream&)> out;  ///< the requested --format on stdout
  std::function<std::string()> chart;      ///< the --plot SVG
  std::function<HtmlDocument()> report;    ///< the --report page
  /// Other files the result stores (validate --save-calibration: the device file), written with
  /// the plot and the report: all or none, before stdout.
  std::vector<std::pair<std::string, std::function<std::string()>>> files;
  /// A check the result makes failed (validate published: a time bound above a measured run):
  /// the views are written all the same and the command exits with status 1.
  bool check_failed = false;
  std::string check_message;  ///< why the check failed, one line for stderr
};

/// Kernels a network's table lists when --top is not given and the network has many.
inline constexpr int kNetworkTopDefault = 30;

/// `roofline model`: an LLM (per phase) or a network (graph file, ONNX model, preset).
struct ModelViewOptions {
  int top = 0;  ///< table: the N kernels of each phase with the most time (0: all)
  /// --top was given. Without it a network of more than kNetworkTopDefault * 2 kernels lists the
  /// kNetworkTopDefault with the most time (a table that fits a terminal; --top 0: every one).
  bool top_given = false;
  std::string explain;  ///< LLMs: the kernel whose figures are derived
};
/// Checks the request against the scenario (--top and --explain print as a table, networks take
/// no --explain and print no CSV), runs it and returns its views. A bad --explain name fails
/// here, before any file is written. Errors name the flag.
Result<Views> ModelViews(const Scenario& s, const ModelViewOptions& options,
                         const ViewRequest& request, const DatabaseSource& db);

/// `roofline sweep`: one or two --vary variables of an LLM (or `hw=A,B`: the sweep on each
/// device), or one dimension of a network.
struct SweepViewOptions {
  std::vector<std::string> vary;  ///< NAME=FROM:TO[:xF|+S] or NAME=A,B,C, once or twice
  std::string explain;            ///< LLMs on one device: the kernel derived at its crossovers
};
/// Checks the request (formats, files and --explain each kind of sweep offers), runs the sweep
/// and returns its views. Errors name the flag.
Result<Views> SweepViews(const Scenario& s, const SweepViewOptions& options,
                         const ViewRequest& request, const DatabaseSource& db);

/// `roofline profile ncu|nsys|torch FILE`: profiler output on the roofline, with --model joined
/// to the prediction.
enum class ProfileKind { kNcu, kNsys, kTorch };
struct ProfileViewOptions {
  /// No model, no device (matched from the file), the decode phase.
  ProfileViewOptions() {
    model.model.clear();
    model.hw.clear();
    model.phases = PhaseSelection::kDecode;
  }
  ProfileKind kind = ProfileKind::kNcu;
  std::string file;
  int top = 30;            ///< kernels listed per table (0: all)
  bool top_given = false;  ///< JSON lists every kernel unless --top is given
  /// --model (empty: none) with the workload of its prediction (phase: the one the profile ran);
  /// `hw` is --hw (empty: matched from what the file says).
  Scenario model;
};
/// Checks the request (workload options need --model; a profile ran one phase), reads the file,
/// finds its device (--hw, else matched from the file; ncu: else the file's own peaks), joins
/// --model's prediction and returns the views: the report (the join's mismatch warning first, then
/// the profile's tables and the join; "wrote FILE" after a plot) and the roofline of measured and
/// predicted kernels. Errors name the file, field or flag.
Result<Views> ProfileViews(const ProfileViewOptions& options, const ViewRequest& request,
                           const DatabaseSource& db);

/// `roofline op KIND ...`: one operator (parsed by BuildOpRequest) on one device.
struct OpViewOptions {
  std::string hw = kDefaultDeviceId;  ///< device id or device JSON path
  bool explain = false;               ///< the derivation of every figure and where it flips
  /// The expected-time choices (--ceilings, --runtime, --efficiency, --weight-kernel,
  /// --accumulate, --modules); its other fields are not read.
  Scenario expected;
};
/// Resolves the device, costs the operator (and, for JSON or --explain, where its verdict
/// flips) and returns its views: a table or JSON. Errors name the flag or file.
Result<Views> OpViews(const OpRequest& op, const OpViewOptions& options, const ViewRequest& request,
                      const DatabaseSource& db);

/// `roofline plan`: a serving estimate for a fleet. `fleet` gives the GPUs, output length and
/// price; the prompt, a given --tp and the cost options come from the scenario.
Result<Views> PlanViews(const Scenario& s, PlanRequest fleet, const ViewRequest& request,
                        const DatabaseSource& db);

/// `roofline validate`: the kernels run for real on this machine beside their bounds.
struct ValidateViewOptions {
  ValidateRequest run;            ///< --device, --threads, --repetitions
  bool save_calibration = false;  ///< store the fitted efficiencies in the --hw device file
};
/// A model's kernels (the host computes in fp32 unless --dtype is given or the run is on CUDA).
/// With save_calibration, `s.hw` must be a device JSON file: the views then store the device with
/// its new calibration (method and date stated) in it. Errors name the flag or file.
Result<Views> ValidateModelViews(const Scenario& s, const ValidateViewOptions& options,
                                 const ViewRequest& request, const DatabaseSource& db);
/// One operator's kernel on device `hw` (an id or a device JSON file), as ValidateModelViews.
Result<Views> ValidateOpViews(const OpRequest& op, const std::string& hw,
                              const ValidateViewOptions& options, const ViewRequest& request,
                              const DatabaseSource& db);

/// `roofline validate published [FILE]`: the bound and expected time against published runs
/// (`file` empty: the embedded ones). The check fails (Views::check_failed) when a time bound is
/// above a measured run: a counting error.
Result<Views> PublishedViews(const std::string& file, const ViewRequest& request);
/// `validate serving [FILE]`: the serving runs (default: the embedded ones) beside the plan's
/// point at their load; fails the check (status 1) when a bound does not hold.
Result<Views> ServingViews(const std::string& file, const ViewRequest& request);

/// `roofline calibrate`: the runs of `files` (and `check`, predicted only) fit the host work of
/// `engine` (or the runs' own), with `defaults` for what benchmark files do not state; the
/// engine file `output` is a view file. Errors name the file and row, or the flag.
struct CalibrateViewOptions {
  std::vector<std::string> files;
  std::vector<std::string> check;
  std::string output;  ///< -o FILE: the engine file to write
};
Result<Views> CalibrateViews(const Scenario& defaults, const CalibrateViewOptions& options,
                             const ViewRequest& request, const DatabaseSource& db);

}  // namespace roofline

#endif  // ROOFLINE_VIEWS_H_
