// A measured kernel against the device roofline, and the device a profile was taken on.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "roofline/profile.h"
#include "roofline/units.h"

namespace roofline {
namespace {

/// Utilization at or above which a resource is called the binding one. Below it on every
/// resource, the kernel is limited by neither: latency, occupancy or launch size.
constexpr double kBoundUtilization = 0.5;
/// Achieved above ceiling x this factor is flagged (clocks above the base and rounding in the
/// datasheet leave a few percent of slack).
constexpr double kImplausible = 1.05;

/// The device level a profiler's level name refers to. "dram" is device memory (whatever the
/// device calls it); "l1" is the level next to the cores ("l1", else "smem": NVIDIA's L1 and
/// shared memory are one SRAM).
int LevelIndex(const Device& device, const std::string& level) {
  if (level == "dram" || level == "hbm" || level == "gddr") return 0;
  for (size_t i = 0; i < device.memory.size(); ++i) {
    if (device.memory[i].name == level) return static_cast<int>(i);
  }
  if (level == "l1") {
    for (size_t i = 0; i < device.memory.size(); ++i) {
      if (device.memory[i].name == "smem") return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

Placement PlaceKernel(const Device& device, const std::string& engine, double flops,
                      const std::vector<LevelBytes>& bytes, double time_s) {
  Placement p;
  p.time_s = time_s;
  p.flops = flops > 0 ? flops : 0;
  if (!(time_s > 0)) {
    p.verdict = "unknown (no duration)";
    return p;
  }
  p.achieved_flops_per_s = p.flops / time_s;
  const ComputeCeiling* ceiling = p.flops > 0 ? device.FindCompute(engine) : nullptr;
  if (p.flops > 0) {
    p.engine = engine;
    if (ceiling) {
      p.peak_flops_per_s = ceiling->peak.value;
    } else {
      p.warnings.push_back(
          fmt::format("{} has no {} ceiling: FLOP/s not compared with a peak", device.id, engine));
    }
  }
  double roof = p.peak_flops_per_s > 0 ? p.peak_flops_per_s : 0;
  for (const LevelBytes& b : bytes) {
    const int index = LevelIndex(device, b.level);
    if (index < 0) {
      p.warnings.push_back(
          fmt::format("{} bytes ignored: {} lists no such memory level", b.level, device.id));
      continue;
    }
    Placement::Level l;
    l.level = device.memory[index].name;
    l.bytes = b.bytes;
    l.intensity = b.bytes > 0 ? p.flops / b.bytes : 0;
    l.achieved_bytes_per_s = b.bytes / time_s;
    l.peak_bytes_per_s = device.memory[index].bandwidth_bytes_per_s();
    if (l.peak_bytes_per_s > 0 && p.peak_flops_per_s > 0 && b.bytes > 0) {
      l.roof_flops_per_s = std::min(p.peak_flops_per_s, l.intensity * l.peak_bytes_per_s);
      roof = std::min(roof, l.roof_flops_per_s);
    }
    if (l.peak_bytes_per_s > 0 && l.achieved_bytes_per_s > kImplausible * l.peak_bytes_per_s) {
      p.warnings.push_back(fmt::format(
          "implausible: {} at {} / {} = {} exceeds the {} bandwidth {} ({}): the byte count, the "
          "duration or the device (--hw) is wrong",
          Si(b.bytes, "B"), l.level, Seconds(time_s), Si(l.achieved_bytes_per_s, "B/s"), l.level,
          Si(l.peak_bytes_per_s, "B/s"), device.id));
    }
    p.levels.push_back(l);
  }
  if (p.peak_flops_per_s > 0 && p.achieved_flops_per_s > kImplausible * p.peak_flops_per_s) {
    p.warnings.push_back(fmt::format(
        "implausible: {} / {} = {} exceeds the {} peak {} ({}): the FLOP count, the duration or "
        "the device (--hw) is wrong",
        Si(p.flops, "FLOP"), Seconds(time_s), Si(p.achieved_flops_per_s, "FLOP/s"), engine,
        Si(p.peak_flops_per_s, "FLOP/s"), device.id));
  }
  p.roof_flops_per_s = roof;

  // Utilization of each resource; the largest decides the verdict.
  double best = 0;
  std::string best_name;
  if (p.peak_flops_per_s > 0) {
    best = p.achieved_flops_per_s / p.peak_flops_per_s;
    best_name = "compute-bound (" + engine + ")";
  }
  double best_memory = 0;
  for (const Placement::Level& l : p.levels) {
    if (l.peak_bytes_per_s <= 0) continue;
    const double u = l.achieved_bytes_per_s / l.peak_bytes_per_s;
    best_memory = std::max(best_memory, u);
    if (u > best) {
      best = u;
      best_name = "memory-bound (" + l.level + ")";
    }
  }
  if (p.flops > 0 && roof > 0) {
    p.percent_of_roof = 100 * p.achieved_flops_per_s / roof;
  } else {
    p.percent_of_roof = 100 * best_memory;  // no FLOPs: how close to the busiest level's roof
  }
  if (best_name.empty()) {
    p.verdict = "unknown (no ceiling for the figures available)";
  } else if (best >= kBoundUtilization) {
    p.verdict = best_name;
  } else {
    p.verdict = fmt::format("latency / occupancy (busiest resource at {:.0f}%)", 100 * best);
  }
  return p;
}

namespace {

std::vector<std::string> Tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string Squash(std::string_view s) {
  std::string out;
  for (const std::string& t : Tokens(s)) out += t;
  return out;
}

/// The compute capability a device file states in info.compute_capability, or -1.
double CcOf(const Device& d) {
  for (const auto& [key, q] : d.info) {
    if (key == "compute_capability") return q.value;
  }
  return -1;
}

/// Devices a name or a compute capability leaves equally close, told apart by the SM count,
/// then by the memory size (within 10%: totalGlobalMem counts GiB of the marketed GB, less what
/// the driver reserves), when `hints` give them; narrows `best` in place and says how.
std::string Narrow(std::vector<const Device*>& best, const DeviceHints& hints) {
  std::string told;
  auto narrow = [&](auto&& keep, const std::string& why) {
    std::vector<const Device*> kept;
    for (const Device* d : best) {
      if (keep(*d)) kept.push_back(d);
    }
    if (!kept.empty() && kept.size() < best.size()) {
      best = kept;
      told = why;
    }
  };
  if (best.size() > 1 && hints.sms > 0) {
    narrow(
        [&](const Device& d) {
          for (const auto& [key, q] : d.info) {
            if ((key == "sm_count" || key == "cu_count") &&
                static_cast<int64_t>(q.value) == hints.sms) {
              return true;
            }
          }
          return false;
        },
        fmt::format(", told apart by its {} SMs", hints.sms));
  }
  if (best.size() > 1 && hints.memory_bytes > 0) {
    narrow(
        [&](const Device& d) {
          const double cap = d.memory.empty() ? 0 : d.device_memory().total_usable_bytes();
          return cap > 0 && std::fabs(hints.memory_bytes - cap) <= 0.1 * cap;
        },
        fmt::format(", told apart by its {} of memory", Si(hints.memory_bytes, "B")));
  }
  return told;
}

}  // namespace

Result<const Device*> MatchDevice(const std::vector<Device>& devices, std::string_view name,
                                  std::string_view cc, std::string* how, const DeviceHints& hints) {
  // By name: the device's model token (its first token with a digit: "a100", "h100", "4090")
  // must appear in the profile's name; more shared tokens rank higher; the database order breaks
  // ties (and the alternatives are named).
  const std::string squashed = Squash(name);
  const std::vector<std::string> name_tokens = Tokens(name);
  // The model token whole among the name's tokens ("h20" is not "h200", "l40" not "l40s"); only
  // where no device's is, at the end of one of them ("rtx4090", "gh200": not "h20").
  auto model_token = [](const Device& d) {
    for (const std::string& t : Tokens(d.name)) {
      if (t != "nvidia" && t != "amd" && std::any_of(t.begin(), t.end(), ::isdigit)) return t;
    }
    return std::string();
  };
  bool exact = false;
  for (const Device& d : devices) {
    const std::string model = model_token(d);
    if (d.kind == "gpu" && !model.empty() &&
        std::find(name_tokens.begin(), name_tokens.end(), model) != name_tokens.end()) {
      exact = true;
    }
  }
  if (!squashed.empty()) {
    int best_score = 0;
    std::vector<const Device*> best;
    for (const Device& d : devices) {
      if (d.kind != "gpu") continue;
      const std::vector<std::string> tokens = Tokens(d.name);
      const std::string model = model_token(d);
      if (model.empty()) continue;
      const bool ends_a_token =
          std::any_of(name_tokens.begin(), name_tokens.end(), [&](const std::string& t) {
            return t.size() >= model.size() &&
                   t.compare(t.size() - model.size(), model.size(), model) == 0;
          });
      if (exact ? std::find(name_tokens.begin(), name_tokens.end(), model) == name_tokens.end()
                : !ends_a_token) {
        continue;
      }
      int score = 0;
      for (const std::string& t : tokens) {
        if (t != "nvidia" && t != "gb" && squashed.find(t) != std::string::npos) ++score;
      }
      if (score > best_score) {
        best_score = score;
        best.clear();
      }
      if (score == best_score) best.push_back(&d);
    }
    const std::string told = Narrow(best, hints);
    if (!best.empty()) {
      *how = fmt::format("matched by name '{}' to {}{}", name, best.front()->id, told);
      if (best.size() > 1) {
        *how += " (equally close:";
        for (size_t i = 1; i < best.size(); ++i) *how += " " + best[i]->id;
        *how += "; pass --hw to choose)";
      }
      return best.front();
    }
  }
  if (!cc.empty()) {
    char* end = nullptr;
    const std::string cc_text(cc);
    const double want = std::strtod(cc_text.c_str(), &end);
    std::vector<const Device*> hits;
    for (const Device& d : devices) {
      if (std::fabs(CcOf(d) - want) < 1e-6) hits.push_back(&d);
    }
    if (!hits.empty()) {
      const std::string told = Narrow(hits, hints);
      *how = fmt::format("matched by compute capability {} to {}{}", cc, hits.front()->id, told);
      if (hits.size() > 1) {
        *how += " (also";
        for (size_t i = 1; i < hits.size(); ++i) *how += " " + hits[i]->id;
        *how += "; pass --hw to choose)";
      }
      return hits.front();
    }
  }
  std::string what = "cannot tell the device of the profile";
  if (!name.empty()) what += fmt::format(" (name '{}')", name);
  if (!cc.empty()) what += fmt::format(" (compute capability {})", cc);
  what += ": no database device matches; pass --hw ID or a measured profile";
  return Status::NotFound("--hw", what);
}

}  // namespace roofline
