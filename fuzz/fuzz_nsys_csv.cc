// Nsight Systems `nsys stats` CSV (cuda_gpu_kern_sum, cuda_gpu_trace): parse.
#include "fuzz/fuzz_util.h"
#include "roofline/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  Result<NsysReport> r = ParseNsysCsv(fuzz::AsText(data, size), "fuzz/nsys.csv");
  (void)r;
  return 0;
}
