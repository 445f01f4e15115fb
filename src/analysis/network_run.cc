// A network scenario loaded, re-typed, bound and costed.
#include "roofline/network_run.h"

#include <algorithm>
#include <memory>

#include "roofline/setup.h"

namespace roofline {

DimBindings DimsOf(const Scenario& s) {
  DimBindings out;
  for (const auto& [name, value] : s.dims) out[name] = value;
  return out;
}

NetRetype RetypeOf(const Scenario& s, const Device* device) {
  NetRetype r;
  r.tf32 = s.tf32;
  // Not given: what PyTorch does, fp32 convolutions on TF32 where CUDA has TF32 tensor cores (on
  // ROCm TF32 is opt-in); --tf32=false: none.
  const bool tf32_cores =
      device != nullptr && device->vendor == "NVIDIA" &&
      std::any_of(device->compute.begin(), device->compute.end(),
                  [](const ComputeCeiling& c) { return c.engine == "tensor.tf32"; });
  r.conv_tf32 = !s.Given(FieldId::kTf32) && tf32_cores;
  r.dtype = s.workload.dtype;
  return r;
}

bool IsDenoiser(const NetworkGraph& g) {
  if (g.inputs.size() < 2 || g.outputs.empty()) return false;
  const NetTensor* in = g.FindTensor(g.inputs.front());
  const NetTensor* out = g.FindTensor(g.outputs.front());
  if (in == nullptr || out == nullptr || in->shape.size() != out->shape.size()) return false;
  // A timestep among the other inputs: one value per image, or one for all (rank 0 or 1).
  const bool timestep = std::any_of(g.inputs.begin() + 1, g.inputs.end(), [&](const auto& name) {
    const NetTensor* t = g.FindTensor(name);
    return t != nullptr && t->shape.size() <= 1;
  });
  if (!timestep) return false;
  for (size_t i = 0; i < in->shape.size(); ++i) {
    if (i == 1) continue;  // channels: a DiT predicts the noise and its variance (8 of 4)
    if (in->shape[i].ToString() != out->shape[i].ToString()) return false;
  }
  return true;
}

Result<std::unique_ptr<NetworkRun>> RunNetworkScenario(const Scenario& s,
                                                       const DeviceDatabase& db) {
  if (Status st = Validate(s, /*is_network=*/true); !st.ok()) return st;
  auto run = std::make_unique<NetworkRun>();
  NetworkRun& r = *run;
  Result<Device> device = ResolveDevice(s.hw, db);
  if (!device.ok()) return device.status();
  r.device = std::move(device).value();
  r.retype = RetypeOf(s, &r.device);
  DimBindings dims = DimsOf(s);
  if (s.cfg) {
    // The batch of images B (--dim batch, else the graph's default) runs as a pass at 2B.
    DimBindings bound;
    Result<NetworkGraph> first = LoadNetwork(s.model, dims, r.retype, &bound);
    if (!first.ok()) return first.status();
    Result<DimBindings> all = ResolveDims(*first, bound);
    if (!all.ok()) return all.status();
    const auto batch = all->find("batch");
    if (batch == all->end()) {
      return Status::Invalid("--cfg",
                             "the graph has no symbolic dimension 'batch' to run the conditional "
                             "and unconditional inputs together");
    }
    if (batch->second > (int64_t{1} << 39)) {
      return Status::Invalid("--cfg", "twice the batch would exceed 2^40");
    }
    dims["batch"] = 2 * batch->second;
  }
  r.pass = dims;
  Result<NetworkGraph> graph = LoadNetwork(s.model, dims, r.retype, &r.bound);
  if (!graph.ok()) return graph.status();
  r.graph = std::move(graph).value();
  Result<CostOptions> cost = MakeCostOptions(s, r.device);
  if (!cost.ok()) return cost.status();
  r.cost = *cost;
  r.model.emplace(r.device, r.cost);
  Result<NetworkAnalysis> a = AnalyzeNetwork(r.graph, r.bound, *r.model);
  if (!a.ok()) return a.status();
  r.analysis = std::move(a).value();
  if (s.steps > 0 && !IsDenoiser(r.graph)) {
    return Status::Invalid(
        "--steps", "'" + r.graph.name +
                       "' is not a denoiser's pass (one that takes a noisy sample, its timestep "
                       "and its conditioning, and gives back a tensor of the sample's size): a "
                       "classifier, an encoder or a VAE decoder runs once per image; --steps "
                       "applies to diffusion denoisers such as sd15-unet, sdxl-unet, flux-dev and "
                       "dit-xl-2");
  }
  if (s.steps > 0) {
    Result<DiffusionRun> d = DiffuseImages(r.analysis, s.steps, s.cfg);
    if (!d.ok()) return d.status();
    r.diffusion = *d;
  }
  std::string dims_text;
  for (const auto& [name, value] : r.analysis.dims) {
    dims_text += (dims_text.empty() ? " (" : ", ") + name + " " + std::to_string(value);
  }
  if (!dims_text.empty()) dims_text += ")";
  r.title = r.analysis.name + " on " + r.device.id + dims_text;
  return run;
}

Why ExplainNetworkRun(const NetworkRun& r, const std::string& model) {
  // The why's flips are of the bound; an ONNX model is loaded again at each value searched.
  return ExplainNetwork(
      r.analysis, BoundOnly(r.cost, r.device),
      [&](int64_t v) -> Result<NetworkGraph> {
        if (!IsOnnxFile(model)) return r.graph;
        DimBindings at = r.pass;
        at["batch"] = v;
        DimBindings unused;
        return LoadNetwork(model, at, r.retype, &unused);
      },
      r.bound);
}

Result<NetSweepRun> SweepNetworkScenario(const Scenario& s, const std::string& spec,
                                         const DeviceDatabase& db) {
  if (Status st = Validate(s, /*is_network=*/true); !st.ok()) return st;
  if (s.cfg && IsOnnxFile(s.model)) {
    return Status::Invalid("--cfg", "sweeps of an ONNX model load it at each value: with "
                                    "guidance, bind its batch with --dim and sweep a graph file or "
                                    "preset, or run `roofline model` per value");
  }
  Result<std::pair<std::string, std::vector<int64_t>>> axis = ParseDimAxis(spec);
  if (!axis.ok()) return axis.status();
  // An ONNX model's dimensions are bound before shape inference: it is loaded once per value
  // (the first load, at the first value, also checks that the model has the dimension).
  const bool onnx = IsOnnxFile(s.model);
  const DimBindings given = DimsOf(s);
  if (given.count(axis->first) > 0) {
    return Status::Invalid("--dim " + axis->first, "the sweep varies " + axis->first +
                                                       " (--vary): give it there or here, not "
                                                       "both");
  }
  DimBindings load_dims = given;
  if (onnx) load_dims[axis->first] = axis->second.front();
  NetSweepRun run;
  Result<Device> device = ResolveDevice(s.hw, db);
  if (!device.ok()) return device.status();
  run.device = std::move(device).value();
  const NetRetype retype = RetypeOf(s, &run.device);
  DimBindings bound;
  Result<NetworkGraph> graph = LoadNetwork(s.model, load_dims, retype, &bound);
  if (!graph.ok()) return graph.status();
  Result<CostOptions> cost = MakeCostOptions(s, run.device);
  if (!cost.ok()) return cost.status();
  run.cost = *cost;
  if (s.steps > 0 && !IsDenoiser(*graph)) {
    return Status::Invalid("--steps", "'" + graph->name +
                                          "' is not a denoiser's pass: --steps applies to "
                                          "diffusion denoisers such as sd15-unet, sdxl-unet, "
                                          "flux-dev and dit-xl-2");
  }
  const CostModel model(run.device, run.cost);
  // An ONNX model's graph is bound at its first value: its dimensions are checked while loading,
  // and none follows another.
  NetworkGraph onnx_dims;  // names and origin only: the loaded graph is not copied
  onnx_dims.origin = graph->origin;
  onnx_dims.dims = {{axis->first, axis->second.front()}};
  Result<NetSweepAxis> sweep_axis =
      MakeNetSweepAxis(onnx ? onnx_dims : *graph, axis->first, axis->second, given);
  if (!sweep_axis.ok()) return sweep_axis.status();
  if (s.cfg) {
    const bool has_batch = std::any_of(graph->dims.begin(), graph->dims.end(),
                                       [](const auto& d) { return d.first == "batch"; });
    if (!has_batch) {
      return Status::Invalid("--cfg",
                             "the graph has no symbolic dimension 'batch' to run the conditional "
                             "and unconditional inputs together");
    }
    sweep_axis->double_batch = true;
  }
  Result<NetSweepResult> r =
      onnx ? SweepNetwork(
                 [&](int64_t v) -> Result<NetworkGraph> {
                   if (v == axis->second.front()) return *graph;
                   DimBindings at = load_dims;
                   at[axis->first] = v;
                   DimBindings unused;
                   return LoadNetwork(s.model, at, retype, &unused);
                 },
                 bound, model, *sweep_axis)
           : SweepNetwork(*graph, bound, model, *sweep_axis);
  if (!r.ok()) return r.status();
  run.sweep = std::move(r).value();
  run.sweep.steps = s.steps;
  run.sweep.cfg = s.cfg;
  std::string follows;
  for (const std::string& f : run.sweep.follow) follows += (follows.empty() ? "" : ", ") + f;
  std::string retyped = DescribeRetype(retype);
  // Where the convolutions run: PyTorch's default said, --tf32=false too.
  const std::string tf32 = graph->fp32_conv_on_tf32 ? "fp32 convolutions on TF32"
                           : s.Given(FieldId::kTf32) && !s.tf32 ? "--tf32=false"
                                                                : "";
  if (!tf32.empty()) retyped += (retyped.empty() ? "" : ", ") + tf32;
  run.title = run.sweep.name + " on " + run.device.id + ": sweep " + axis->first +
              (follows.empty() ? "" : " (" + follows + " follows)") +
              (retyped.empty() ? "" : " (" + retyped + ")");
  return run;
}

}  // namespace roofline
