// Kernel cost: combines the op rules of a kernel's ops, drops fused intermediates, and applies
// the roofline against the device.
#include "roofline/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/units.h"
#include "src/cost/op_rules.h"

namespace roofline {
namespace {

constexpr DType kAllDTypes[] = {DType::kFp64, DType::kFp32, DType::kTf32,
                                DType::kBf16, DType::kFp16, DType::kFp8,
                                DType::kInt8, DType::kInt4, DType::kFp4};

/// Ceilings to try, in order, for a request (see docs/cost-model.md, "Engines and fallbacks").
std::vector<std::string> FallbackChain(const EngineKey& k) {
  if (k.tensor) {
    switch (k.dtype) {
      case DType::kFp64:
        return {"tensor.fp64", "vector.fp64"};
      case DType::kFp32:
        return {"vector.fp32", "tensor.tf32", "tensor.bf16"};
      case DType::kTf32:
        return {"tensor.tf32", "vector.fp32", "tensor.bf16"};
      case DType::kBf16:
        return {"tensor.bf16", "tensor.fp16", "vector.bf16", "vector.fp16", "vector.fp32"};
      case DType::kFp16:
        return {"tensor.fp16", "tensor.bf16", "vector.fp16", "vector.bf16", "vector.fp32"};
      case DType::kFp8:
        return {"tensor.fp8", "tensor.bf16", "tensor.fp16", "vector.fp32"};
      case DType::kInt8:
        return {"tensor.int8", "tensor.bf16", "tensor.fp16", "vector.fp32"};
      case DType::kInt4:
        return {"tensor.int8", "tensor.bf16", "tensor.fp16", "vector.fp32"};
      case DType::kFp4:
        return {"tensor.fp4", "tensor.fp8", "tensor.bf16", "tensor.fp16", "vector.fp32"};
    }
  }
  switch (k.dtype) {
    case DType::kFp64:
      return {"vector.fp64"};
    case DType::kFp16:
      return {"vector.fp16", "vector.bf16", "vector.fp32"};
    case DType::kBf16:
      return {"vector.bf16", "vector.fp16", "vector.fp32"};
    default:
      return {"vector.fp32", "vector.bf16", "vector.fp16"};
  }
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

LevelModel MakeLevels(const Device& d) {
  LevelModel lv;
  lv.num_levels = static_cast<int>(std::min<size_t>(d.memory.size(), kMaxLevels));
  lv.weights_only_first = d.memory.front().weights_only;
  for (int l = 0; l < lv.num_levels; ++l) {
    lv.name[l] = d.memory[l].name;
    if (l + 1 < lv.num_levels) {
      lv.next_capacity[l] = d.memory[l + 1].instance_capacity_bytes();
      lv.next_name[l] = d.memory[l + 1].name;
      for (size_t halves = 1; halves < lv.tile_side[l].size(); ++halves) {
        lv.tile_side[l][halves] =
            LevelModel::TileSideOf(lv.next_capacity[l], static_cast<double>(halves) / 2);
      }
    }
  }
  return lv;
}

}  // namespace

std::string EngineKey::Name() const {
  return fmt::format("{}.{}", tensor ? "tensor" : "vector", NameOf(dtype));
}

CostModel::CostModel(const Device& device, CostOptions options)
    : device_(&device),
      options_(options),
      levels_(std::make_shared<const LevelModel>(MakeLevels(device))) {
  for (int t = 0; t < 2; ++t) {
    for (DType dt : kAllDTypes) {
      int found = -1;
      for (const std::string& name : FallbackChain({t == 1, dt})) {
        for (size_t c = 0; c < device.compute.size(); ++c) {
          if (device.compute[c].engine == name) {
            found = static_cast<int>(c);
            break;
          }
        }
        if (found >= 0) break;
      }
      engine_table_[t][static_cast<int>(dt)] = found;
    }
  }
  if (!ExpectsTimesOn(device)) options_.efficiency = nullptr;
  if (options_.efficiency) SetUpExpected();
}

int CostModel::ResolveEngine(const EngineKey& key) const {
  return engine_table_[key.tensor ? 1 : 0][static_cast<int>(key.dtype)];
}

KernelCost CostModel::Evaluate(const Graph& graph, const Kernel& kernel, Trace* trace) const {
  KernelCost c;
  Fill(graph, kernel, nullptr, trace, c);
  return c;
}

void CostModel::EvaluateInto(const Graph& graph, const Kernel& kernel, KernelClass cls,
                             KernelCost& out, bool named) const {
  Fill(graph, kernel, &cls, nullptr, out, named);
}

void CostModel::Fill(const Graph& graph, const Kernel& kernel, const KernelClass* cls, Trace* trace,
                     KernelCost& c, bool named) const {
  const LevelModel& lv = *levels_;

  // Every figure is reset, field by field (a sweep refills the same costs: the name's storage
  // is kept, and a fresh KernelCost copied in whole would cost more than the kernel itself).
  // EngineTerms are reset as they are taken; `expected` is filled below when there is one.
  if (!named) c.SetName(kernel.name);
  c.num_engines = 0;
  c.flops = 0;
  c.compute_time_s = 0;
  c.bytes.fill(0);
  c.memory_time_s.fill(0);
  c.comm_bytes = 0;
  c.link = -1;
  c.comm_steps = 0;
  c.comm_calls = 0;
  c.comm_time_s = 0;
  if (c.has_expected && !has_expected()) {
    // Without expected times `expected` stays as made (a cost that had them drops them).
    static const ExpectedCost kNone{};  // copied, not built here (see above)
    c.expected = kNone;
  }
  c.has_expected = false;
  c.repeat = kernel.repeat;
  c.num_levels = lv.num_levels;

  // External input tensors read by the kernel, each counted once (the largest traffic).
  struct Seen {
    int tensor;
    std::array<double, kMaxLevels> bytes;
  };
  std::array<Seen, 32> seen;  // filled as tensors are met (no zeroing: the hot path)
  int num_seen = 0;
  const auto& tensors = graph.tensors();

  for (int op_index : kernel.ops) {
    OpWork w;
    if (trace && kernel.ops.size() > 1) {
      trace->Add(fmt::format("[{}: {}]", graph.ops()[op_index].name,
                             NameOf(graph.ops()[op_index].kind())));
    }
    ApplyRule(graph, op_index, lv, w, trace);
    for (int f = 0; f < w.num_flops; ++f) {
      int slot = -1;
      for (int e = 0; e < c.num_engines; ++e) {
        if (c.engines[e].requested == w.engine[f]) slot = e;
      }
      if (slot < 0 && c.num_engines < kMaxEngineTerms) {
        slot = c.num_engines++;
        c.engines[slot] = EngineTerm{w.engine[f], ResolveEngine(w.engine[f]), 0, 0};
      }
      if (slot >= 0) c.engines[slot].flops += w.flops[f];
    }
    if (w.comm_bytes > 0) {
      int link = -1;
      if (w.link && !w.link->empty()) {
        for (size_t i = 0; i < device_->links.size(); ++i) {
          if (device_->links[i].name == *w.link) link = static_cast<int>(i);
        }
      } else if (!device_->links.empty()) {
        link = 0;
      }
      c.link = link;
      c.comm_bytes += w.comm_bytes;
      c.comm_steps += w.comm_steps;
      c.comm_calls += w.comm_calls;
    }
    const Op& op = graph.ops()[op_index];
    if (lv.weights_only_first) {
      // Activations and the KV cache live in the nearer level: only weights cross the store.
      double dropped = 0, kept = 0;
      for (int j = 0; j < w.num_operands; ++j) {
        if (tensors[op.operands[j]].role != TensorRole::kWeight) {
          dropped += w.bytes[j][0];
          w.bytes[j][0] = 0;
        } else {
          kept += w.bytes[j][0];
        }
      }
      if (trace && dropped > 0) {
        trace->Add(
            fmt::format("  {} holds only weights: the {} B of other operands above cross "
                        "only {}; {} carries {} B",
                        device_->memory[0].name, Sci(dropped), device_->memory[1].name,
                        device_->memory[0].name, Sci(kept)));
      }
    }
    if (kernel.ops.size() == 1 && !op.input_twice && w.num_operands == op.num_inputs + 1) {
      // One op, one output, no input bound twice: nothing stays on chip or is deduplicated.
      // The output is written, then the inputs read (the general path's sums, in its order).
      for (int l = 0; l < lv.num_levels; ++l) {
        double sum = c.bytes[l] + w.bytes[op.num_inputs][l];  // in a register, not in `c`
        for (int j = 0; j < op.num_inputs; ++j) sum += w.bytes[j][l];
        c.bytes[l] = sum;
      }
      continue;
    }
    for (int j = 0; j < w.num_operands; ++j) {
      const int tid = op.operands[j];
      const Tensor& t = tensors[tid];
      const bool is_output = t.producer == op_index;
      if (is_output) {
        bool internal = !t.consumers.empty();
        for (int consumer : t.consumers) internal = internal && Contains(kernel.ops, consumer);
        if (internal) {
          if (trace) trace->Add(fmt::format("  fused: {} stays on chip", graph.TensorName(tid)));
          continue;
        }
        for (int l = 0; l < lv.num_levels; ++l) c.bytes[l] += w.bytes[j][l];
      } else {
        if (t.producer >= 0 && Contains(kernel.ops, t.producer)) continue;  // produced on chip
        int s = 0;
        while (s < num_seen && seen[s].tensor != tid) ++s;
        if (s == num_seen) {
          if (num_seen == static_cast<int>(seen.size())) {
            for (int l = 0; l < lv.num_levels; ++l) c.bytes[l] += w.bytes[j][l];
            continue;
          }
          seen[s].tensor = tid;
          seen[s].bytes.fill(0);
          ++num_seen;
        }
        for (int l = 0; l < lv.num_levels; ++l) {
          seen[s].bytes[l] = std::max(seen[s].bytes[l], w.bytes[j][l]);
        }
      }
    }
  }
  for (int s = 0; s < num_seen; ++s) {
    for (int l = 0; l < lv.num_levels; ++l) c.bytes[l] += seen[s].bytes[l];
  }

  // Roofline terms.
  for (int e = 0; e < c.num_engines; ++e) {
    EngineTerm& term = c.engines[e];
    c.flops += term.flops;
    if (term.ceiling >= 0) {
      term.time_s = term.flops / device_->compute[term.ceiling].peak.value;
      c.compute_time_s += term.time_s;
    }
  }
  for (int l = 0; l < lv.num_levels; ++l) {
    const double bw = device_->memory[l].bandwidth_bytes_per_s();
    c.memory_time_s[l] = bw > 0 ? c.bytes[l] / bw : 0.0;
  }
  if (c.link >= 0) {
    const Link& link = device_->links[c.link];
    c.comm_time_s = c.comm_bytes / link.bandwidth.value + c.comm_steps * link.latency_s();
  }
  double best = c.compute_time_s;
  c.bound = {BoundKind::kCompute, DominantEngine(c)};
  for (int l = 0; l < lv.num_levels; ++l) {
    if (c.memory_time_s[l] > best) {
      best = c.memory_time_s[l];
      c.bound = {BoundKind::kMemory, l};
    }
  }
  if (c.comm_time_s > best) {
    best = c.comm_time_s;
    c.bound = {BoundKind::kComm, c.link};
  }
  c.overhead_s = options_.launch_overhead_s;
  if (best == 0) c.bound = {BoundKind::kOverhead, 0};
  c.time_s = best + c.overhead_s;
  c.attainable_flops_per_s = c.time_s > 0 ? c.flops / c.time_s : 0.0;

  if (trace) {
    trace->Add("Time terms:");
    for (int e = 0; e < c.num_engines; ++e) {
      const EngineTerm& term = c.engines[e];
      if (term.ceiling < 0) {
        trace->Add(
            fmt::format("  compute {}: {} FLOP, but the device lists no usable ceiling "
                        "for it: no compute term",
                        term.requested.Name(), Sci(term.flops)));
        continue;
      }
      const auto& ceiling = device_->compute[term.ceiling];
      trace->Add(fmt::format("  compute {}: {} FLOP / {} = {}{}", ceiling.engine, Sci(term.flops),
                             Si(ceiling.peak.value, ceiling.peak.unit), Seconds(term.time_s),
                             ceiling.engine == term.requested.Name()
                                 ? ""
                                 : fmt::format("  (no {} ceiling: fell back to {})",
                                               term.requested.Name(), ceiling.engine)));
    }
    for (int l = 0; l < lv.num_levels; ++l) {
      const MemoryLevel& m = device_->memory[l];
      if (m.has_bandwidth()) {
        trace->Add(fmt::format("  memory {}: {} B / {} = {}", m.name, Sci(c.bytes[l]),
                               Si(m.bandwidth_bytes_per_s(), "B/s"), Seconds(c.memory_time_s[l])));
      } else {
        trace->Add(fmt::format("  memory {}: {} B (no bandwidth known: no time term)", m.name,
                               Sci(c.bytes[l])));
      }
    }
    if (c.comm_bytes > 0) {
      if (c.link < 0) {
        trace->Add("  comm: the device has no such link (or lists none): no comm term");
      } else {
        const Link& link = device_->links[c.link];
        trace->Add(fmt::format("  comm {}: {} B / {} + {} steps * {} latency = {}", link.name,
                               Sci(c.comm_bytes), Si(link.bandwidth.value, "B/s"), c.comm_steps,
                               link.latency ? Seconds(link.latency_s()) : "0 (not listed)",
                               Seconds(c.comm_time_s)));
      }
    }
    if (c.overhead_s > 0) trace->Add(fmt::format("  + launch overhead {}", Seconds(c.overhead_s)));
    trace->Add(fmt::format("Time bound = max of the terms{} = {} -> {}",
                           c.overhead_s > 0 ? " + overhead" : "", Seconds(c.time_s), BoundName(c)));
  }
  if (has_expected()) {
    c.has_expected = true;
    ExpectInto(graph, kernel, cls != nullptr ? *cls : ClassOf(graph, kernel), c, trace, c.expected);
  }
}

int CostModel::DominantEngine(const KernelCost& c) const {
  int best = -1;
  for (int e = 0; e < c.num_engines; ++e) {
    if (best < 0) {
      best = e;
      continue;
    }
    const EngineTerm& a = c.engines[e];
    const EngineTerm& b = c.engines[best];
    if (a.time_s > b.time_s || (a.time_s == b.time_s && a.flops > b.flops)) best = e;
  }
  return best;
}

int CostModel::DominantLevel(const KernelCost& c) const {
  int best = 0;
  for (int l = 1; l < c.num_levels; ++l) {
    if (c.memory_time_s[l] > c.memory_time_s[best]) best = l;
  }
  return best;
}

std::string CostModel::CeilingName(const EngineTerm& term) const {
  if (term.ceiling < 0) return "none";
  return device_->compute[term.ceiling].engine;
}

std::optional<CostOptions> PrefillOptions(const CostOptions& options) {
  const std::optional<Runtime>& r = options.expected.prefill_runtime;
  if (!r || *r == options.expected.runtime) return std::nullopt;
  CostOptions o = options;
  o.expected.runtime = *r;
  return o;
}

Status Validate(const CostOptions& o) {
  if (!(o.launch_overhead_s >= 0 && o.launch_overhead_s <= 1)) {
    return Status::Invalid("--launch-overhead-us", "must be between 0 and 1e6 microseconds");
  }
  return Status::Ok();
}

std::string CostModel::BoundName(const KernelCost& c, Bound b) const {
  switch (b.kind) {
    case BoundKind::kCompute:
      if (b.index < 0) return "compute";
      return "compute:" + CeilingName(c.engines[b.index]);
    case BoundKind::kMemory:
      return "memory:" + device_->memory[b.index].name;
    case BoundKind::kComm:
      return "comm:" + device_->links[b.index].name;
    case BoundKind::kOverhead:
      return "overhead";
  }
  return "?";
}

double CostModel::Ridge(const KernelCost& c, int level) const {
  const int e = DominantEngine(c);
  if (e < 0 || c.engines[e].ceiling < 0) return 0;
  const double bw = device_->memory[level].bandwidth_bytes_per_s();
  if (bw <= 0) return 0;
  return device_->compute[c.engines[e].ceiling].peak.value / bw;
}

std::vector<std::pair<std::string, double>> UntimedFlops(const std::vector<KernelCost>& costs) {
  std::vector<std::pair<std::string, double>> out;
  for (const KernelCost& c : costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      const EngineTerm& t = c.engines[e];
      if (t.ceiling >= 0 || !(t.flops > 0)) continue;
      const std::string name = t.requested.Name();
      auto it =
          std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == name; });
      if (it == out.end()) it = out.insert(out.end(), {name, 0.0});
      it->second += t.flops * static_cast<double>(c.repeat);
    }
  }
  return out;
}

std::vector<FallbackFlops> FallbackTensorFlops(const std::vector<KernelCost>& costs,
                                               const Device& device) {
  std::vector<FallbackFlops> out;
  for (const KernelCost& c : costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      const EngineTerm& t = c.engines[e];
      if (!t.requested.tensor || t.ceiling < 0 || !(t.flops > 0)) continue;
      const std::string requested = t.requested.Name();
      const std::string& used = device.compute[t.ceiling].engine;
      // The first choice of the request's chain is no fallback (fp32 products on vector.fp32,
      // int4 x int4 on tensor.int8, by design).
      if (used == requested || used == FallbackChain(t.requested).front()) continue;
      auto it = std::find_if(out.begin(), out.end(), [&](const FallbackFlops& f) {
        return f.requested == requested && f.used == used;
      });
      if (it == out.end()) it = out.insert(out.end(), {requested, used, 0.0});
      it->flops += t.flops * static_cast<double>(c.repeat);
    }
  }
  return out;
}

}  // namespace roofline
