// General networks on the command line: telling graph files and ONNX models from LLM configs,
// loading them with `--dim` bindings, and the LLM-only flags they reject.
#ifndef ROOFLINE_TOOLS_ROOFLINE_NETWORK_INPUT_H_
#define ROOFLINE_TOOLS_ROOFLINE_NETWORK_INPUT_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "roofline/device.h"
#include "roofline/network.h"
#include "tools/roofline/commands.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {

/// True when MODEL is an ONNX model (`.onnx`), a graph file (JSON with "format":
/// "roofline-graph") or the id of a graph preset (data/graphs/, unless a file of that name
/// exists); false for everything `roofline model` resolves as an LLM.
bool IsNetworkInput(const std::string& model);

/// True when MODEL is the id of a graph preset and no file or folder of that name exists.
bool IsGraphPresetId(const std::string& model);

/// True when MODEL names an ONNX model (`.onnx`).
bool IsOnnxFile(const std::string& model);

/// Parses the `--dim NAME=VALUE` list.
Result<DimBindings> ParseDims(const std::vector<std::string>& dims);

/// Loads a graph file or ONNX model. The returned bindings are those the analysis should apply
/// (an ONNX model's dims are bound while loading).
Result<NetworkGraph> LoadNetwork(const std::string& model, const DimBindings& dims,
                                 DimBindings* analysis_dims);

/// What `model` and `sweep` need of a network input: the graph, the bindings to analyse it with,
/// and the device (`hw`, resolved as for LLMs).
struct NetworkInput {
  NetworkGraph graph;
  DimBindings bound;
  Device device;
};

/// LoadNetwork, then RetypeNetwork (an ONNX model reloaded at another value of a dimension).
Result<NetworkGraph> LoadNetworkRetyped(const std::string& model, const DimBindings& dims,
                                        const NetRetype& retype);

/// " (--dtype bf16 --tf32)" for a title, or "" when nothing is re-typed.
std::string RetypeSuffix(const NetRetype& retype);

/// `--dtype` and `--tf32` as a graph re-typing; errors name the flag.
Result<NetRetype> NetRetypeOf(const ModelOptions& o);

/// Parses `dim_args`, loads `model` with them, re-types it and resolves `hw`.
Result<NetworkInput> LoadNetworkInput(Context& ctx, const std::string& model, const std::string& hw,
                                      const std::vector<std::string>& dim_args,
                                      const NetRetype& retype);

/// An error naming the first LLM-only flag of `app` that was given (graph inputs take --dim).
Status RejectLlmFlags(const CLI::App& app);

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_NETWORK_INPUT_H_
