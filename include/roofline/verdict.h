// The typed verdict of a kernel, a class of kernels or a whole step, and the one classifier that
// gives it: the resource (engine, memory level or link of the device) with the largest summed
// time. Names are for reports only.
#ifndef ROOFLINE_VERDICT_H_
#define ROOFLINE_VERDICT_H_

#include <array>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/device.h"

namespace roofline {

/// Which resource binds, in device terms.
struct Verdict {
  BoundKind kind = BoundKind::kOverhead;
  /// kCompute: index into Device::compute (-1: no ceiling); kMemory: into Device::memory;
  /// kComm: into Device::links; kOverhead: -1.
  int index = -1;

  friend bool operator==(const Verdict&, const Verdict&) = default;
};

/// The verdict of one kernel (its binding term, with the engine resolved to the device ceiling).
Verdict VerdictOf(const KernelCost& cost);

/// Time per resource summed over kernels (each times its repeat): what the classifier reads.
struct ResourceTimes {
  static constexpr int kNoCeiling = 15;           ///< slot of engine terms without a ceiling
  std::array<double, kNoCeiling + 1> engine_s{};  ///< per Device::compute index
  std::array<double, kMaxLevels> memory_s{};
  int levels = 0;
  double compute_s = 0;  ///< every engine term
  double comm_s = 0;
  int link = -1;    ///< the link of the last kernel that communicates
  int engines = 0;  ///< engine_s[e] is 0 for every ceiling index e >= engines

  void Add(const KernelCost& cost, double repeat) {  // inline: a sweep adds every kernel twice
    levels = levels > cost.num_levels ? levels : cost.num_levels;
    compute_s += cost.compute_time_s * repeat;
    for (int l = 0; l < cost.num_levels; ++l) memory_s[l] += cost.memory_time_s[l] * repeat;
    comm_s += cost.comm_time_s * repeat;
    if (cost.link >= 0) link = cost.link;
    for (int e = 0; e < cost.num_engines; ++e) {
      const int ceiling = cost.engines[e].ceiling;
      const bool listed = ceiling >= 0 && ceiling < kNoCeiling;
      engine_s[listed ? ceiling : kNoCeiling] += cost.engines[e].time_s * repeat;
      if (listed && ceiling >= engines) engines = ceiling + 1;
    }
  }
  /// a.Add(cost, repeat) and b.Add(cost, repeat) in one pass: each product made once and added
  /// to both (the same sums, bit for bit). A step's totals and its class's, per kernel.
  static void AddToBoth(ResourceTimes& a, ResourceTimes& b, const KernelCost& cost, double repeat) {
    const int levels = cost.num_levels;
    a.levels = a.levels > levels ? a.levels : levels;
    b.levels = b.levels > levels ? b.levels : levels;
    const double compute = cost.compute_time_s * repeat;
    a.compute_s += compute;
    b.compute_s += compute;
    for (int l = 0; l < levels; ++l) {
      const double m = cost.memory_time_s[l] * repeat;
      a.memory_s[l] += m;
      b.memory_s[l] += m;
    }
    const double comm = cost.comm_time_s * repeat;
    a.comm_s += comm;
    b.comm_s += comm;
    if (cost.link >= 0) a.link = b.link = cost.link;
    for (int e = 0; e < cost.num_engines; ++e) {
      const int ceiling = cost.engines[e].ceiling;
      const bool listed = ceiling >= 0 && ceiling < kNoCeiling;
      const int slot = listed ? ceiling : kNoCeiling;
      const double t = cost.engines[e].time_s * repeat;
      a.engine_s[slot] += t;
      b.engine_s[slot] += t;
      if (listed && ceiling >= a.engines) a.engines = ceiling + 1;
      if (listed && ceiling >= b.engines) b.engines = ceiling + 1;
    }
  }
  /// The resource with the largest summed time: compute (on the engine with the most time)
  /// unless a memory level or the link takes longer; overhead when nothing takes time.
  Verdict Classify() const;
};

/// "compute:tensor.bf16", "compute" (no ceiling), "memory:hbm", "comm:nvlink", "overhead".
std::string NameOf(const Verdict& v, const Device& device);

/// The names of a device's resources, so a typed verdict can be printed without the device.
struct ResourceNames {
  std::vector<std::string> compute;  ///< Device::compute[i].engine ("tensor.bf16")
  std::vector<std::string> memory;   ///< Device::memory[i].name ("hbm")
  std::vector<std::string> links;    ///< Device::links[i].name ("nvlink")

  static ResourceNames Of(const Device& device);
  /// "compute:tensor.bf16", "compute" (no ceiling), "memory:hbm", "comm:nvlink", "overhead".
  std::string Name(const Verdict& v) const;
};

}  // namespace roofline

#endif  // ROOFLINE_VERDICT_H_
