// HuggingFace config.json: parse, then analyse both phases on an H100, as `roofline model` does.
#include "fuzz/fuzz_util.h"
#include "roofline/device_db.h"
#include "roofline/model_analysis.h"
#include "roofline/transformer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Device device = **DeviceDatabase::LoadEmbedded()->Find("h100-sxm");
  Result<TransformerConfig> c = ParseHfConfig(fuzz::AsText(data, size), "fuzz/config.json");
  if (!c.ok()) return 0;
  const CostModel model(device);
  Workload w;
  w.prompt = 512;
  (void)AnalyzeModel(*c, w, model, PhaseSelection::kBoth);
  return 0;
}
