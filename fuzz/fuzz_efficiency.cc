// Efficiency data (data/efficiency.json: assumed fractions, matmul tiles, flash attention and
// its waves, launch costs, weight-only kernels): parse, then expect a matmul, an int4 weight-only
// matmul (as the file's first weight kernel, when it lists one), attentions and a tiny kernel.
#include <memory>
#include <string>
#include <vector>

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
  MatmulSpec int4 = mm;
  int4.m = 3;
  int4.b_dtype = DType::kInt4;
  int4.group_size = 128;
  (void)g.AddOp("int4", int4);
  MatmulSpec int8 = mm;  // per-column scales: a regime of Inductor's int8 kernel
  int8.m = 3;
  int8.b_dtype = DType::kInt8;
  (void)g.AddOp("int8", int8);
  for (const Device& d : db->devices()) {
    // The model without a weight kernel, and with each one the device can run.
    std::vector<std::string> kernels = {""};
    for (const auto& wk : e->weight_kernels) {
      if (CheckWeightKernel(*e, wk.name, d, Runtime::kCompiled, "fuzz").ok()) {
        kernels.push_back(wk.name);
      }
    }
    for (const std::string& name : kernels) {
      CostOptions o;
      o.efficiency = std::make_shared<const EfficiencyData>(*e);
      o.expected.runtime = Runtime::kCompiled;
      o.expected.weight_kernel = name;
      const CostModel model(d, o);
      for (const Kernel& k : Fuse(g, FusionMode::kEager)) (void)model.Evaluate(g, k);
    }
  }
  return 0;
}
