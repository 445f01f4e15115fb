// The ONNX frontend when the project was built without the ONNX library: LoadOnnxModel reports
// how to get it instead of failing at link time.
#include "roofline/network.h"

namespace roofline {

Result<NetworkGraph> LoadOnnxModel(const std::string& path, const DimBindings& /*dims*/) {
  return Status::Unsupported(path,
                             "built without the ONNX library (install libonnx-dev and rebuild)");
}

bool OnnxFrontendAvailable() { return false; }

}  // namespace roofline
