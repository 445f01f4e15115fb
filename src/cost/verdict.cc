#include "roofline/verdict.h"

#include <algorithm>

namespace roofline {

Verdict VerdictOf(const KernelCost& c) {
  switch (c.bound.kind) {
    case BoundKind::kCompute:
      return {BoundKind::kCompute, c.bound.index < 0 ? -1 : c.engines[c.bound.index].ceiling};
    case BoundKind::kMemory:
    case BoundKind::kComm:
      return {c.bound.kind, c.bound.index};
    case BoundKind::kOverhead:
      break;
  }
  return {BoundKind::kOverhead, -1};
}

Verdict ResourceTimes::Classify() const {
  double best = compute_s;
  int engine = -1;
  for (int e = 0; e < engines; ++e) {
    if (engine_s[e] > 0 && (engine < 0 || engine_s[e] > engine_s[engine])) engine = e;
  }
  Verdict v{BoundKind::kCompute, engine};
  for (int l = 0; l < levels; ++l) {
    if (memory_s[l] > best) {
      best = memory_s[l];
      v = {BoundKind::kMemory, l};
    }
  }
  if (comm_s > best && link >= 0) {
    best = comm_s;
    v = {BoundKind::kComm, link};
  }
  if (best == 0) v = {BoundKind::kOverhead, -1};
  return v;
}

ResourceNames ResourceNames::Of(const Device& d) {
  ResourceNames n;
  for (const auto& c : d.compute) n.compute.push_back(c.engine);
  for (const auto& m : d.memory) n.memory.push_back(m.name);
  for (const auto& l : d.links) n.links.push_back(l.name);
  return n;
}

namespace {

template <typename Compute, typename Memory, typename Link>
std::string Named(const Verdict& v, int computes, int levels, int links, Compute compute,
                  Memory memory, Link link) {
  auto valid = [&v](int n) { return v.index >= 0 && v.index < n; };
  switch (v.kind) {
    case BoundKind::kCompute:
      if (v.index < 0) return "compute";
      return "compute:" + (valid(computes) ? compute(v.index) : std::string("?"));
    case BoundKind::kMemory:
      return "memory:" + (valid(levels) ? memory(v.index) : std::string("?"));
    case BoundKind::kComm:
      return "comm:" + (valid(links) ? link(v.index) : std::string("?"));
    case BoundKind::kOverhead:
      break;
  }
  return "overhead";
}

}  // namespace

std::string NameOf(const Verdict& v, const Device& d) {
  return Named(
      v, static_cast<int>(d.compute.size()), static_cast<int>(d.memory.size()),
      static_cast<int>(d.links.size()), [&d](int i) { return d.compute[i].engine; },
      [&d](int i) { return d.memory[i].name; }, [&d](int i) { return d.links[i].name; });
}

std::string ResourceNames::Name(const Verdict& v) const {
  return Named(
      v, static_cast<int>(compute.size()), static_cast<int>(memory.size()),
      static_cast<int>(links.size()), [this](int i) { return compute[i]; },
      [this](int i) { return memory[i]; }, [this](int i) { return links[i]; });
}

}  // namespace roofline
