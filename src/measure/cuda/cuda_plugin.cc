// The CUDA entry points of cuda_measure.h in the tool: each loads the CUDA plugin
// (libroofline_cuda.so, built where nvcc was found) on first use and calls into it, so that
// commands other than `measure --device cuda` and `validate --device cuda` never load the CUDA
// runtime. Without the plugin, each says why there is none.
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "src/measure/cuda/cuda_plugin_api.h"

#ifndef ROOFLINE_CUDA_MISSING_REASON
#define ROOFLINE_CUDA_MISSING_REASON "nvcc was not found at configure time"
#endif

namespace roofline {
namespace {

/// The plugin as loaded (or why it could not be).
struct Plugin {
  const CudaPluginApi* api = nullptr;
  std::string missing;  ///< why there is none
};

#ifdef ROOFLINE_CUDA_PLUGIN_BUILT
/// Where the plugin may be, first found first: $ROOFLINE_CUDA_PLUGIN, beside the executable or
/// shared object holding this code, and the build folder it was configured in.
std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("ROOFLINE_CUDA_PLUGIN"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
    return out;
  }
  // Beside the shared object holding this code (the Python module, say), and beside the
  // executable.
  Dl_info info{};
  std::error_code ec;
  if (dladdr(reinterpret_cast<const void*>(&Candidates), &info) != 0 &&
      info.dli_fname != nullptr && *info.dli_fname != '\0') {
    const std::filesystem::path holder = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) out.push_back(fmt::format("{}/{}", holder.parent_path().string(), kCudaPluginFile));
  }
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe", ec);
  if (!ec) out.push_back(fmt::format("{}/{}", self.parent_path().string(), kCudaPluginFile));
  out.push_back(fmt::format("{}/{}", ROOFLINE_CUDA_PLUGIN_BUILD_DIR, kCudaPluginFile));
  return out;
}
#endif

const Plugin& Load() {
  static Plugin plugin;
  static std::once_flag once;
  std::call_once(once, [] {
#ifndef ROOFLINE_CUDA_PLUGIN_BUILT
    plugin.missing = std::string("this build has no CUDA backend: ") +
                     ROOFLINE_CUDA_MISSING_REASON +
                     " (rebuild where nvcc is on PATH, or use --device cpu)";
#else
    std::string tried;
    for (const std::string& path : Candidates()) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* e = dlerror();
        plugin.missing = "the CUDA plugin " + path + " does not load (" +
                         (e != nullptr ? e : "dlopen failed") +
                         "): is the CUDA runtime installed? (or use --device cpu)";
        return;
      }
      using Entry = const CudaPluginApi* (*)();
      auto entry = reinterpret_cast<Entry>(dlsym(handle, kCudaPluginSymbol));
      const CudaPluginApi* api = entry != nullptr ? entry() : nullptr;
      const CudaPluginApi want = MakeCudaPluginApi();
      if (api == nullptr || api->abi != want.abi || api->sizes[0] != want.sizes[0] ||
          api->sizes[1] != want.sizes[1] || api->sizes[2] != want.sizes[2] ||
          api->sizes[3] != want.sizes[3]) {
        plugin.missing = "the CUDA plugin " + path +
                         " is from another build of roofline (rebuild it with the tool)";
        return;
      }
      plugin.api = api;
      return;
    }
    plugin.missing = "this build's CUDA plugin (" + std::string(kCudaPluginFile) +
                     ") was not found (looked at " + tried +
                     "; set ROOFLINE_CUDA_PLUGIN to its path, or use --device cpu)";
#endif
  });
  return plugin;
}

Status NoBackend() { return Status::Unsupported("--device cuda", Load().missing); }

}  // namespace

bool CudaBackendCompiled() { return Load().api != nullptr; }

std::string CudaBackendMissingReason() { return Load().missing; }

Result<int> CudaDeviceCount() {
  const Plugin& p = Load();
  return p.api ? p.api->device_count() : NoBackend();
}

Result<CudaMeasurement> MeasureCuda(const CudaMeasureOptions& options) {
  const Plugin& p = Load();
  return p.api ? p.api->measure(options) : NoBackend();
}

Result<std::vector<OpTiming>> RunGraphOnCuda(const Graph& graph, const CudaRunOptions& options) {
  const Plugin& p = Load();
  return p.api ? p.api->run_graph(graph, options) : NoBackend();
}

Result<std::vector<CudaKernelCheck>> CheckCudaKernels(int device) {
  const Plugin& p = Load();
  return p.api ? p.api->check_kernels(device) : NoBackend();
}

}  // namespace roofline
