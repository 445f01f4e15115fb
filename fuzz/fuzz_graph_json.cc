// Graph files (docs/graph-format.md): parse, lower every node and cost it, as `roofline model
// GRAPH.json` does with the graph's default dims.
#include "fuzz/fuzz_util.h"
#include "roofline/device_db.h"
#include "roofline/network_analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Device device = **DeviceDatabase::LoadEmbedded()->Find("h100-sxm");
  Result<NetworkGraph> g = ParseGraphJson(fuzz::AsText(data, size), "fuzz/graph.json");
  if (!g.ok()) return 0;
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, {}, CostModel(device));
  if (a.ok()) (void)PeakActivationBytes(*g, a->dims);
  return 0;
}
