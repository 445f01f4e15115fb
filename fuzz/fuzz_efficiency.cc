// Efficiency data (data/efficiency.json: assumed fractions, matmul tiles, flash attention and
// its waves, launch costs): parse, then expect a matmul, an attention and a tiny kernel with it.
#include <memory>

#include "fuzz/fuzz_util.h"
#include "roofline/cost.h"
#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Result<DeviceDatabase> db = DeviceDatabase::LoadEmbedded();
  Result<EfficiencyData> e = ParseEfficiencyData(fuzz::AsText(data, size), "fuzz/efficiency.json");
  if (!e.ok() || !db.ok()) return 0;
  Graph g;
  MatmulSpec mm;
  mm.m = 1000;
  mm.n = 4096;
  mm.k = 4096;
  (void)g.AddOp("matmul", mm);
  AttentionSpec at;
  (void)g.AddOp("attention", at);
  AttentionSpec prefill;  // 32 heads x 8 blocks of 128 queries: waves of blocks
  prefill.heads = 32;
  prefill.kv_heads = 8;
  prefill.head_dim = 128;
  prefill.q_len = prefill.kv_len = 1000;
  prefill.causal = true;
  (void)g.AddOp("attention", prefill);
  ElementwiseSpec tiny;
  (void)g.AddOp("add", tiny);
  for (const Device& d : db->devices()) {
    CostOptions o;
    o.efficiency = std::make_shared<const EfficiencyData>(*e);
    const CostModel model(d, o);
    for (const Kernel& k : Fuse(g, FusionMode::kEager)) (void)model.Evaluate(g, k);
  }
  return 0;
}
