// Nsight Compute CSV (long `--csv --page details` and raw `--page raw` layouts): parse, then
// derive every kernel's roofline figures, as `roofline profile ncu` does.
#include "fuzz/fuzz_util.h"
#include "roofline/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  Result<NcuReport> r = ParseNcuCsv(fuzz::AsText(data, size), "fuzz/ncu.csv");
  if (!r.ok()) return 0;
  for (const NcuKernel& k : r->kernels) (void)DeriveNcuFigures(k).TotalFlops();
  return 0;
}
