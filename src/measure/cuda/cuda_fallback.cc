// The CUDA entry points of a build without the CUDA backend: each says why there is none.
#include <string>
#include <vector>

#include "roofline/cuda_measure.h"

#ifndef ROOFLINE_CUDA_MISSING_REASON
#define ROOFLINE_CUDA_MISSING_REASON "nvcc was not found at configure time"
#endif

namespace roofline {
namespace {

Status NoBackend() { return Status::Unsupported("--device cuda", CudaBackendMissingReason()); }

}  // namespace

bool CudaBackendCompiled() { return false; }

std::string CudaBackendMissingReason() {
  return std::string("this build has no CUDA backend: ") + ROOFLINE_CUDA_MISSING_REASON +
         " (rebuild where nvcc is on PATH, or use --device cpu)";
}

Result<int> CudaDeviceCount() { return NoBackend(); }

Result<CudaMeasurement> MeasureCuda(const CudaMeasureOptions&) { return NoBackend(); }

Result<std::vector<OpTiming>> RunGraphOnCuda(const Graph&, const CudaRunOptions&) {
  return NoBackend();
}

Result<std::vector<CudaKernelCheck>> CheckCudaKernels(int) { return NoBackend(); }

}  // namespace roofline
