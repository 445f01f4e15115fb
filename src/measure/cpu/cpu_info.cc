// Host CPU detection: model, online CPUs, ISA extensions, clock and caches.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "roofline/measure.h"

namespace roofline {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool ReadFirstLine(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  if (!std::getline(in, line)) return false;
  *out = Trim(line);
  return true;
}

// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`.
std::string CpuinfoField(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (Trim(line.substr(0, colon)) == key) return Trim(line.substr(colon + 1));
  }
  return "";
}

[[maybe_unused]] bool HasCpuinfoFlag(const std::string& flags, const std::string& flag) {
  std::istringstream in(flags);
  std::string f;
  while (in >> f) {
    if (f == flag) return true;
  }
  return false;
}

// Number of CPUs in a sysfs list such as "0-3,8-11" or "5".
int CountCpuList(const std::string& list) {
  int count = 0;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    part = Trim(part);
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      ++count;
    } else {
      const int lo = std::atoi(part.substr(0, dash).c_str());
      const int hi = std::atoi(part.substr(dash + 1).c_str());
      if (hi >= lo) count += hi - lo + 1;
    }
  }
  return count;
}

// "32K", "512K", "32768K", "1M" -> bytes.
double ParseSize(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v <= 0) return 0;
  switch (end ? *end : '\0') {
    case 'K':
    case 'k':
      return v * 1024.0;
    case 'M':
    case 'm':
      return v * 1024.0 * 1024.0;
    case 'G':
    case 'g':
      return v * 1024.0 * 1024.0 * 1024.0;
    default:
      return v;
  }
}

int OnlineCpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n <= 0) n = static_cast<long>(std::thread::hardware_concurrency());
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

std::string CpuInfo::Isa() const {
  if (avx512f) return "avx512";
  if (avx2 && fma) return "avx2+fma";
  return "scalar";
}

CpuInfo DetectCpu() {
  CpuInfo info;
  info.model = CpuinfoField("model name");
  if (info.model.empty()) info.model = "unknown";
  info.logical_cpus = OnlineCpus();

#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // libgcc/compiler-rt also check that the OS saves the AVX / AVX-512 register state.
  info.avx2 = __builtin_cpu_supports("avx2");
  info.fma = __builtin_cpu_supports("fma");
  info.avx512f = __builtin_cpu_supports("avx512f");
  const std::string flags = CpuinfoField("flags");
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  info.avx512_bf16 = info.avx512f && __builtin_cpu_supports("avx512bf16");
  info.avx512_vnni = info.avx512f && __builtin_cpu_supports("avx512vnni");
  info.avx_vnni = info.avx2 && __builtin_cpu_supports("avxvnni");
#else
  // Older compilers (clang 14) do not know every feature name: read the kernel's flags.
  info.avx512_bf16 = info.avx512f && HasCpuinfoFlag(flags, "avx512_bf16");
  info.avx512_vnni = info.avx512f && HasCpuinfoFlag(flags, "avx512_vnni");
  info.avx_vnni = info.avx2 && HasCpuinfoFlag(flags, "avx_vnni");
#endif
  // The kernel may have the feature disabled even when CPUID lists it; trust /proc/cpuinfo when
  // it lists flags at all.
  if (!flags.empty()) {
    info.avx512_bf16 = info.avx512_bf16 && HasCpuinfoFlag(flags, "avx512_bf16");
    info.avx512_vnni = info.avx512_vnni && HasCpuinfoFlag(flags, "avx512_vnni");
    info.avx_vnni = info.avx_vnni && HasCpuinfoFlag(flags, "avx_vnni");
  }
#endif

  // Clock: the highest frequency the kernel reports, else the current one from /proc/cpuinfo.
  std::string text;
  const std::string max_freq = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq";
  if (ReadFirstLine(max_freq, &text) && std::strtod(text.c_str(), nullptr) > 0) {
    info.clock_hz = std::strtod(text.c_str(), nullptr) * 1e3;  // kHz
    info.clock_source = "sysfs " + max_freq;
  } else {
    const std::string mhz = CpuinfoField("cpu MHz");
    if (!mhz.empty() && std::strtod(mhz.c_str(), nullptr) > 0) {
      info.clock_hz = std::strtod(mhz.c_str(), nullptr) * 1e6;
      info.clock_source = "/proc/cpuinfo cpu MHz (clock when read)";
    }
  }

  // Caches: data and unified ones of cpu0, one entry per level.
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::string level, type, size, shared;
    if (!ReadFirstLine(dir + "/level", &level)) {
      if (index >= 4) break;
      continue;
    }
    if (!ReadFirstLine(dir + "/type", &type) || !ReadFirstLine(dir + "/size", &size)) continue;
    if (type != "Data" && type != "Unified") continue;
    CpuInfo::Cache c;
    c.level = std::atoi(level.c_str());
    c.bytes = ParseSize(size);
    if (c.level <= 0 || c.bytes <= 0) continue;
    int sharing = 1;
    if (ReadFirstLine(dir + "/shared_cpu_list", &shared))
      sharing = std::max(1, CountCpuList(shared));
    c.instances = std::max(1, (info.logical_cpus + sharing - 1) / sharing);
    const bool duplicate = std::any_of(info.caches.begin(), info.caches.end(),
                                       [&](const CpuInfo::Cache& o) { return o.level == c.level; });
    if (!duplicate) info.caches.push_back(c);
  }
  std::sort(info.caches.begin(), info.caches.end(),
            [](const CpuInfo::Cache& a, const CpuInfo::Cache& b) { return a.level < b.level; });
  return info;
}

}  // namespace roofline
