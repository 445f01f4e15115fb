// A network scenario (graph file, ONNX model or network preset) loaded and analysed on its
// device: what `roofline model` and the Python package compute for one.
#ifndef ROOFLINE_NETWORK_RUN_H_
#define ROOFLINE_NETWORK_RUN_H_

#include <optional>
#include <string>

#include "roofline/device_db.h"
#include "roofline/network_analysis.h"
#include "roofline/scenario.h"
#include "roofline/why.h"

namespace roofline {

/// Everything one network scenario gives. The cost model points into `device`: the run is
/// built in place and not moved (NetworkRun::Make returns it owned).
struct NetworkRun {
  NetworkGraph graph;
  DimBindings bound;  ///< the bindings analysed (under --cfg, the batch of a pass: 2 x images)
  DimBindings pass;   ///< the --dim bindings the network was loaded with (--cfg: batch doubled)
  NetRetype retype;   ///< --dtype and --tf32
  Device device;
  CostOptions cost;
  std::optional<CostModel> model;  ///< on `device`, with `cost`
  NetworkAnalysis analysis;
  std::optional<DiffusionRun> diffusion;  ///< --steps
  std::string title;                      ///< "name on device (batch 4, seq 128)"
};

/// Checks the scenario (Validate), loads its network with the --dim bindings (under --cfg the
/// batch of images doubled for each pass), re-types it, resolves the device from `db` and costs
/// every node; with --steps, the run of whole images. Errors name the flag, file or node.
Result<std::unique_ptr<NetworkRun>> RunNetworkScenario(const Scenario& s,
                                                       const DeviceDatabase& db);

/// The why of the run: flips of the bound along its batch (an ONNX model loaded again at each
/// value searched).
Why ExplainNetworkRun(const NetworkRun& run, const std::string& model);

/// A sweep of one symbolic dimension of a network scenario (`roofline sweep GRAPH --vary
/// DIM=...`): bounds only.
struct NetSweepRun {
  NetSweepResult sweep;
  std::string title;  ///< "name on device: sweep height (width follows) (--dtype bf16)"
  Device device;
  CostOptions cost;  ///< what the sweep was costed with (no efficiency data)
};
/// Checks the scenario, loads the network (an ONNX model at each value), and sweeps the
/// dimension `spec` names ("height=256:4096:x2"). Errors name --vary, --dim, the file or node.
Result<NetSweepRun> SweepNetworkScenario(const Scenario& s, const std::string& spec,
                                         const DeviceDatabase& db);

/// Whether `graph` is a diffusion denoiser's pass, which `--steps` runs per image: it takes a
/// noisy sample (its first input) and a timestep (an input of rank 0 or 1: one value per image
/// or one for all), and its first output has the sample's shape but for the channels (a DiT gives
/// the noise and its variance).
bool IsDenoiser(const NetworkGraph& graph);

/// `--dim` bindings of a scenario as the network loaders take them.
DimBindings DimsOf(const Scenario& s);
/// --dtype and --tf32 of a scenario as a re-typing of a network.
NetRetype RetypeOf(const Scenario& s, const Device* device);

}  // namespace roofline

#endif  // ROOFLINE_NETWORK_RUN_H_
