// ONNX models: load (shape inference, folding, mapping) binding each symbolic input dimension
// the loader asks for to 2, then lower and cost, as `roofline model x.onnx --dim ...` does.
#include "fuzz/fuzz_util.h"
#include "roofline/device_db.h"
#include "roofline/network_analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Device device = **DeviceDatabase::LoadEmbedded()->Find("h100-sxm");
  const std::string path = fuzz::WriteInput(data, size, ".onnx");
  DimBindings dims;
  for (int tries = 0; tries < 8; ++tries) {
    Result<NetworkGraph> g = LoadOnnxModel(path, dims);
    if (g.ok()) {
      (void)AnalyzeNetwork(*g, {}, CostModel(device));
      return 0;
    }
    // "... dimension 'batch' is symbolic: bind it with --dim batch=N": bind it and load again.
    const std::string msg = g.status().ToString();
    const std::string key = "bind it with --dim ";
    const size_t at = msg.find(key);
    if (at == std::string::npos) return 0;
    const size_t from = at + key.size(), eq = msg.find("=N", from);
    if (eq == std::string::npos || eq == from) return 0;
    dims[msg.substr(from, eq - from)] = 2;
  }
  return 0;
}
