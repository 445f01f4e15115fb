// Helpers shared by the libFuzzer targets: inputs as text, and as a file for the loaders that
// read paths (ONNX, PyTorch traces).
#ifndef ROOFLINE_FUZZ_FUZZ_UTIL_H_
#define ROOFLINE_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace roofline::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Writes the input to a file of this process (one per suffix, rewritten each run) and returns
/// its path.
inline std::string WriteInput(const uint8_t* data, size_t size, const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/roofline-fuzz-" +
                           std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();  // the harness itself is broken, not the input
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace roofline::fuzz

#endif  // ROOFLINE_FUZZ_FUZZ_UTIL_H_
