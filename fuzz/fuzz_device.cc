// Device JSON (the hardware database schema, and `roofline measure -o` profiles with their
// measured ceilings and calibration, achievable figures): parse, then cost a matmul and an
// attention on it, bounds and expected times.
#include <memory>

#include "fuzz/fuzz_util.h"
#include "roofline/cost.h"
#include "roofline/device.h"
#include "roofline/efficiency.h"
#include "roofline/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  Result<Device> d = ParseDevice(fuzz::AsText(data, size), "fuzz/device.json");
  if (!d.ok()) return 0;
  Graph g;
  MatmulSpec mm;
  mm.m = 4096;
  mm.n = 4096;
  mm.k = 4096;
  (void)g.AddOp("matmul", mm);
  AttentionSpec at;
  (void)g.AddOp("attention", at);
  const CostModel model(*d);
  for (const Kernel& k : Fuse(g, FusionMode::kEager)) (void)model.Evaluate(g, k);
  static const Result<EfficiencyData> efficiency = LoadDefaultEfficiencyData();
  if (efficiency.ok()) {
    CostOptions o;
    o.efficiency = std::make_shared<const EfficiencyData>(*efficiency);
    const CostModel expecting(*d, o);
    for (const Kernel& k : Fuse(g, FusionMode::kEager)) (void)expecting.Evaluate(g, k);
  }
  return 0;
}
