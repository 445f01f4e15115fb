// The kernels `validate --device cuda` times compute the functions they are costed as: softmax,
// RMSNorm, LayerNorm and tiled attention against a float64 host reference (CheckCudaKernels).
// Needs a GPU: skipped, saying why, on a machine without one or in a build without the backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "roofline/cuda_measure.h"

namespace roofline {
namespace cuda_kernels_test {

TEST(CudaKernels, MatchAFloat64ReferenceOnRandomInputs) {
  if (!CudaBackendCompiled()) GTEST_SKIP() << CudaBackendMissingReason();
  Result<int> count = CudaDeviceCount();
  if (!count.ok() || count.value() == 0) {
    GTEST_SKIP() << "no CUDA device: " << (count.ok() ? "0 devices" : count.status().ToString());
  }
  Result<std::vector<CudaKernelCheck>> checks = CheckCudaKernels(0);
  ASSERT_TRUE(checks.ok()) << checks.status().ToString();
  // Two dtypes, each: 2 softmax, 2 norm and 12 attention shapes (7 through the split-key decode
  // kernel, 5 through the tiled one; 3 with Q scaled so the softmax is peaked).
  ASSERT_EQ(checks.value().size(), 32u);
  for (const CudaKernelCheck& c : checks.value()) {
    std::printf("%-9s %-4s %-36s rel. error %.2e (tolerance %.0e), unwritten %lld of %lld\n",
                c.kernel.c_str(), c.dtype.c_str(), c.shape.c_str(), c.relative_error, c.tolerance,
                static_cast<long long>(c.unwritten), static_cast<long long>(c.elements));
    EXPECT_EQ(c.unwritten, 0) << c.kernel << " " << c.shape << " " << c.dtype;
    EXPECT_LE(c.relative_error, c.tolerance) << c.kernel << " " << c.shape << " " << c.dtype;
  }
}

}  // namespace cuda_kernels_test
}  // namespace roofline
