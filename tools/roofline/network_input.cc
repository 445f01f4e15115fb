#include "tools/roofline/network_input.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace roofline::cli {

bool IsOnnxFile(const std::string& model) {
  const std::string ext = std::filesystem::path(model).extension().string();
  return ext == ".onnx" || ext == ".ONNX";
}

bool IsGraphPresetId(const std::string& model) {
  // A file of that name wins, and a folder holding a config.json (an LLM) does.
  std::error_code ec;
  if (std::filesystem::is_regular_file(model, ec) ||
      std::filesystem::is_regular_file(std::filesystem::path(model) / "config.json", ec)) {
    return false;
  }
  const std::vector<std::string> ids = GraphPresetIds();
  return std::binary_search(ids.begin(), ids.end(), model);
}

bool IsNetworkInput(const std::string& model) {
  if (IsOnnxFile(model)) return true;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model, ec)) return IsGraphPresetId(model);
  std::ifstream in(model, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"roofline-graph\"") != std::string::npos;
}

Result<DimBindings> ParseDims(const std::vector<std::string>& dims) {
  DimBindings out;
  for (const std::string& d : dims) {
    Status s = ParseDimBinding(d, out);
    if (!s.ok()) return s;
  }
  return out;
}

Result<NetworkGraph> LoadNetwork(const std::string& model, const DimBindings& dims,
                                 DimBindings* analysis_dims) {
  if (IsOnnxFile(model)) {
    Result<NetworkGraph> g = LoadOnnxModel(model, dims);
    if (!g.ok()) return g.status();
    // The loader bound the dims; pass on those the graph still lists.
    analysis_dims->clear();
    for (const auto& [name, def] : g->dims) {
      const auto it = dims.find(name);
      if (it != dims.end()) (*analysis_dims)[name] = it->second;
    }
    if (g->origin.empty()) g->origin = model;
    return g;
  }
  *analysis_dims = dims;
  if (IsGraphPresetId(model)) {
    Result<std::optional<NetworkGraph>> preset = FindGraphPreset(model);
    if (!preset.ok()) return preset.status();
    if (*preset) return std::move(**preset);
  }
  return LoadGraphFile(model);
}

Status RejectLlmFlags(const CLI::App& app) {
  for (const char* flag :
       {"--batch", "--prompt", "--context", "--weight-dtype", "--kv-dtype", "--group-size", "--tp",
        "--attention", "--fusion", "--mla", "--all-logits", "--phase", "--modules"}) {
    if (app.count(flag) > 0) {
      return Status::Invalid(flag,
                             "applies to LLM configs; graph files and ONNX models take "
                             "--dim NAME=VALUE (e.g. --dim batch=8)");
    }
  }
  return Status::Ok();
}

Result<NetworkGraph> LoadNetworkRetyped(const std::string& model, const DimBindings& dims,
                                        const NetRetype& retype) {
  DimBindings unused;
  Result<NetworkGraph> g = LoadNetwork(model, dims, &unused);
  if (!g.ok()) return g;
  Result<int> retyped = RetypeNetwork(*g, retype);
  if (!retyped.ok()) return retyped.status();
  return g;
}

std::string RetypeSuffix(const NetRetype& retype) {
  const std::string s = DescribeRetype(retype);
  return s.empty() ? s : " (" + s + ")";
}

Result<NetRetype> NetRetypeOf(const ModelOptions& o) {
  NetRetype r;
  r.tf32 = o.tf32;
  if (!o.dtype.empty()) {
    Result<DType> d = ParseDType(o.dtype, "--dtype");
    if (!d.ok()) return d.status();
    r.dtype = *d;
  }
  return r;
}

Result<NetworkInput> LoadNetworkInput(Context& ctx, const std::string& model, const std::string& hw,
                                      const std::vector<std::string>& dim_args,
                                      const NetRetype& retype) {
  Result<DimBindings> dims = ParseDims(dim_args);
  if (!dims.ok()) return dims.status();
  NetworkInput in;
  Result<NetworkGraph> graph = LoadNetwork(model, *dims, &in.bound);
  if (!graph.ok()) return graph.status();
  in.graph = std::move(graph).value();
  Result<int> retyped = RetypeNetwork(in.graph, retype);
  if (!retyped.ok()) return retyped.status();
  Result<Device> device = ctx.ResolveHw(hw);
  if (!device.ok()) return device.status();
  in.device = std::move(device).value();
  return in;
}

}  // namespace roofline::cli
