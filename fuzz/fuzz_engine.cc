// Engine files (data/engines/*.json): parse, then apply every entry's host work to steps of a
// few sizes and describe it, as `--engine FILE` and `engines show FILE` would.
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "roofline/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  Result<std::vector<Engine>> entries = ParseEngineFile(fuzz::AsText(data, size), "fuzz/engine.json");
  if (!entries.ok()) return 0;
  for (const Engine& e : *entries) {
    const EngineHost term(std::make_shared<const Engine>(e));
    for (int64_t requests : {int64_t{0}, int64_t{1}, int64_t{256}}) {
      StepTime step;
      step.gpu_s = 1e-3;
      step.time_s = 1e-3;
      step.requests = requests;
      step.layers = 80;
      term.Apply(step);
      (void)term.Explain(step);
    }
    (void)DescribeHostWork(e);
  }
  return 0;
}
