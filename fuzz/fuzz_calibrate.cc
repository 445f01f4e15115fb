// Files of measured runs for `roofline calibrate` (CSV rows, JSON rows, published runs, vllm
// bench serve, sglang.bench_serving JSON lines, genai-perf): read, and fit each phase's host work
// against made-up kernel times, as calibrate would.
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "roofline/calibrate.h"
#include "roofline/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Scenario defaults = [] {
    Scenario s;
    (void)SetField(s, FieldId::kModel, "llama-3-8b");
    (void)SetField(s, FieldId::kHw, "h100-sxm");
    return s;
  }();
  Result<std::vector<CalibrationRun>> runs =
      ReadCalibrationRuns(fuzz::AsText(data, size), "fuzz/runs", defaults);
  if (!runs.ok()) return 0;
  std::vector<double> measured, kernels, requests;
  for (const CalibrationRun& r : *runs) {
    if (measured.size() == 200) break;  // the fit is quadratic in the runs: keep each input fast
    measured.push_back(r.measured_s);
    kernels.push_back(r.measured_s / 2);
    requests.push_back(static_cast<double>(r.scenario.workload.batch));
  }
  (void)FitHostWork(measured, kernels, requests);
  return 0;
}
