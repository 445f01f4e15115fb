// PyTorch profiler traces (Chrome trace JSON, kineto or legacy), streamed from a file. Built
// twice: plain JSON, and gzip (ROOFLINE_FUZZ_GZIP), where an input that is not already gzip is
// compressed first so the mutations reach the JSON behind the decompressor.
#include <zlib.h>

#include <vector>

#include "fuzz/fuzz_util.h"
#include "roofline/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
#ifdef ROOFLINE_FUZZ_GZIP
  std::vector<uint8_t> gz;
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) {
    z_stream z{};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    gz.resize(deflateBound(&z, size) + 32);
    z.next_in = const_cast<Bytef*>(data);
    z.avail_in = static_cast<uInt>(size);
    z.next_out = gz.data();
    z.avail_out = static_cast<uInt>(gz.size());
    const int rc = deflate(&z, Z_FINISH);
    gz.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return 0;
    data = gz.data();
    size = gz.size();
  }
  const std::string path = fuzz::WriteInput(data, size, ".json.gz");
#else
  const std::string path = fuzz::WriteInput(data, size, ".json");
#endif
  // Read, then summarized: the per-op FLOP and byte rules read the recorded shapes and
  // concrete arguments (CostTorchOp), which a trace may hold in any form.
  Result<TorchTrace> trace = LoadTorchTrace(path);
  if (trace.ok()) (void)SummarizeTorch(*trace, nullptr);
  return 0;
}
