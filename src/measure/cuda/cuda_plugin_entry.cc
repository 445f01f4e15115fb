// The CUDA plugin's one exported symbol: the table of its entry points.
#include "src/measure/cuda/cuda_plugin_api.h"

extern "C" __attribute__((visibility("default"))) const roofline::CudaPluginApi*
roofline_cuda_plugin_v1() {
  static const roofline::CudaPluginApi api = [] {
    roofline::CudaPluginApi a = roofline::MakeCudaPluginApi();
    a.device_count = &roofline::cuda_plugin::CudaDeviceCount;
    a.measure = &roofline::cuda_plugin::MeasureCuda;
    a.run_graph = &roofline::cuda_plugin::RunGraphOnCuda;
    a.check_kernels = &roofline::cuda_plugin::CheckCudaKernels;
    return a;
  }();
  return &api;
}
