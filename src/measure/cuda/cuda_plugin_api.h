// The interface between the tool and its CUDA measurement plugin (libroofline_cuda.so): the
// plugin's entry points, and the table of them it hands over when loaded (cuda_plugin.cc loads
// it only for `measure --device cuda` and `validate --device cuda`, so no other command loads
// the CUDA runtime).
#ifndef ROOFLINE_SRC_MEASURE_CUDA_CUDA_PLUGIN_API_H_
#define ROOFLINE_SRC_MEASURE_CUDA_CUDA_PLUGIN_API_H_

#include <cstddef>
#include <vector>

#include "roofline/cuda_measure.h"

namespace roofline {

/// The plugin's definitions of the CUDA entry points of cuda_measure.h.
namespace cuda_plugin {
Result<int> CudaDeviceCount();
Result<CudaMeasurement> MeasureCuda(const CudaMeasureOptions& options);
Result<std::vector<OpTiming>> RunGraphOnCuda(const Graph& graph, const CudaRunOptions& options);
Result<std::vector<CudaKernelCheck>> CheckCudaKernels(int device);
}  // namespace cuda_plugin

/// The table the plugin hands over. C++ types cross the boundary, so the plugin must come from
/// the same build as the tool: `abi` and the sizes of the types passed are compared on load.
struct CudaPluginApi {
  int abi = 0;
  size_t sizes[4] = {};  ///< sizeof CudaMeasurement, Graph, OpTiming, CudaKernelCheck
  Result<int> (*device_count)() = nullptr;
  Result<CudaMeasurement> (*measure)(const CudaMeasureOptions&) = nullptr;
  Result<std::vector<OpTiming>> (*run_graph)(const Graph&, const CudaRunOptions&) = nullptr;
  Result<std::vector<CudaKernelCheck>> (*check_kernels)(int) = nullptr;
};

/// Bumped whenever CudaPluginApi or a type it passes changes.
inline constexpr int kCudaPluginAbi = 1;
/// The plugin's exported symbol: returns its table.
inline constexpr const char* kCudaPluginSymbol = "roofline_cuda_plugin_v1";
/// The plugin's file name, looked for beside the executable or module that loads it.
inline constexpr const char* kCudaPluginFile = "libroofline_cuda.so";

inline CudaPluginApi MakeCudaPluginApi() {
  CudaPluginApi api;
  api.abi = kCudaPluginAbi;
  api.sizes[0] = sizeof(CudaMeasurement);
  api.sizes[1] = sizeof(Graph);
  api.sizes[2] = sizeof(OpTiming);
  api.sizes[3] = sizeof(CudaKernelCheck);
  return api;
}

}  // namespace roofline

#endif  // ROOFLINE_SRC_MEASURE_CUDA_CUDA_PLUGIN_API_H_
