// Nsight Systems reports and PyTorch traces summarized: time per op class, the kernels for a
// join with a prediction, and (torch, with shapes) each op group placed on a device's roofline.
#include <algorithm>
#include <map>

#include "roofline/profile.h"

namespace roofline {
namespace {

std::string ShapesOf(const TorchOp& op) {
  std::string s;
  for (const auto& dims : op.input_dims) {
    if (!s.empty()) s += " ";
    s += "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    s += "]";
  }
  return s;
}

/// The ceiling for an op's FLOPs from its first input's dtype: matrix ops on the tensor engine.
std::string TorchEngine(const TorchOp& op) {
  std::string dtype = "fp32";
  if (!op.input_types.empty()) {
    const std::string& t = op.input_types.front();
    if (t.find("BFloat16") != std::string::npos) dtype = "bf16";
    if (t.find("Half") != std::string::npos) dtype = "fp16";
    if (t == "double") dtype = "fp64";
    if (t.find("Float8") != std::string::npos) dtype = "fp8";
  }
  const bool matrix = op.op_class == OpClass::kGemm || op.op_class == OpClass::kAttention ||
                      op.op_class == OpClass::kConv;
  if (matrix && dtype == "fp32") return "tensor.tf32";
  return (matrix ? "tensor." : "vector.") + dtype;
}

}  // namespace

int CopyDirection(std::string_view name) {
  for (std::string_view up : {"Memcpy HtoD", "memcpy Host-to-Device", "memcpy HtoD"}) {
    if (name.find(up) != std::string_view::npos) return 1;
  }
  for (std::string_view down : {"Memcpy DtoH", "memcpy Device-to-Host", "memcpy DtoH"}) {
    if (name.find(down) != std::string_view::npos) return -1;
  }
  return 0;
}

void AddToClass(ClassTotal& total, std::string_view name, int64_t launches, double time_s) {
  total.launches += launches;
  total.time_s += time_s;
  const int direction = CopyDirection(name);
  if (direction > 0) {
    total.to_device += launches;
    total.to_device_s += time_s;
  } else if (direction < 0) {
    total.to_host += launches;
    total.to_host_s += time_s;
  }
}

NsysSummary SummarizeNsys(const NsysReport& report) {
  NsysSummary s;
  for (const NsysKernel& k : report.kernels) {
    s.gpu_time_s += k.total_s;
    s.launches += k.instances;
    AddToClass(s.classes[k.op_class], k.name, k.instances, k.total_s);
  }
  s.ordered = !report.launches.empty();
  LaunchCheck& lc = s.launch;
  if (s.ordered) {
    // Kernels in start order: the union of their intervals is the GPU's busy time.
    double busy = 0, first = 0, end = 0;
    for (const NsysLaunch& l : report.launches) {
      if (l.memory_op) continue;
      ++lc.kernels;
      lc.kernel_s += l.duration_s;
      if (l.duration_s < kEagerLaunchS) {
        ++lc.short_launches;
        lc.short_s += l.duration_s;
      }
      const double stop = l.start_s + l.duration_s;
      if (lc.kernels == 1) {
        first = l.start_s;
        busy = l.duration_s;
        end = stop;
        continue;
      }
      if (l.start_s >= end) {
        busy += l.duration_s;
      } else if (stop > end) {
        busy += stop - end;  // overlaps the kernel before (another stream)
      }
      end = std::max(end, stop);
    }
    lc.traced = lc.kernels > 0;
    lc.span_s = end - first;
    lc.idle_s = std::max(0.0, lc.span_s - busy);
  } else {
    for (const NsysKernel& k : report.kernels) {
      lc.kernels += k.instances;
      lc.kernel_s += k.total_s;
      if (k.avg_s < kEagerLaunchS) {
        lc.short_launches += k.instances;
        lc.short_s += k.total_s;
      }
    }
  }
  if (s.ordered) {
    for (const NsysLaunch& l : report.launches) {
      s.measured.push_back({l.name, l.op_class, l.duration_s, 1});
    }
  } else {
    for (const NsysKernel& k : report.kernels) {
      s.measured.push_back({k.name, k.op_class, k.total_s, k.instances});
    }
  }
  return s;
}

TorchSummary SummarizeTorch(const TorchTrace& trace, const Device* device) {
  TorchSummary s;
  // One measured entry per call of an aten op, however many kernels it launched: cuBLAS splits a
  // skinny product into a GEMM and a split-K reduction (seen on an H100 for every decode
  // projection of Llama-3-8B), and a prediction has one kernel per op. The entry takes the name
  // and class of the call's longest kernel.
  std::map<int, size_t> entry_of_op;
  std::vector<double> longest;
  for (const TorchKernel& k : trace.kernels) {
    s.gpu_time_s += k.duration_s;
    AddToClass(s.classes[k.op_class], k.name, 1, k.duration_s);
    // Only calls of aten ops: a CUDA-graph replay or a compiled region launches a whole step
    // under one op, which must stay one entry per kernel.
    const bool aten =
        k.op >= 0 && trace.ops[static_cast<size_t>(k.op)].name.rfind("aten::", 0) == 0;
    if (aten) {
      auto [it, fresh] = entry_of_op.try_emplace(k.op, s.measured.size());
      if (!fresh) {
        MeasuredKernel& m = s.measured[it->second];
        m.time_s += k.duration_s;
        if (k.duration_s > longest[it->second]) {
          longest[it->second] = k.duration_s;
          m.name = k.name;
          m.op_class = k.op_class;
        }
        continue;
      }
    }
    MeasuredKernel m{k.name, k.op_class, k.duration_s, 1};
    if (k.op >= 0 && trace.ops[static_cast<size_t>(k.op)].flops) {
      m.flops = *trace.ops[static_cast<size_t>(k.op)].flops;
      m.flops_from_shapes = true;
    }
    s.measured.push_back(std::move(m));
    longest.push_back(k.duration_s);
  }
  std::map<std::string, size_t> index;
  std::vector<bool> every_call_costed;
  for (const TorchOp& op : trace.ops) {
    const std::string shapes = ShapesOf(op);
    auto [it, fresh] = index.try_emplace(op.name + "\x1f" + shapes, s.groups.size());
    if (fresh) {
      TorchOpGroup g;
      g.name = op.name;
      g.shapes = shapes;
      g.op_class = op.op_class;
      g.cost_note = op.cost_note;
      if (device != nullptr) g.engine = TorchEngine(op);
      s.groups.push_back(std::move(g));
      every_call_costed.push_back(true);
    }
    TorchOpGroup& g = s.groups[it->second];
    ++g.calls;
    g.kernels += op.kernels;
    g.gpu_time_s += op.gpu_time_s;
    if (op.flops && op.min_bytes) {
      g.flops += *op.flops;
      g.min_bytes += *op.min_bytes;
    } else {
      every_call_costed[it->second] = false;
    }
  }
  for (size_t i = 0; i < s.groups.size(); ++i) {
    TorchOpGroup& g = s.groups[i];
    g.costed =
        trace.has_shapes && every_call_costed[i] && g.flops + g.min_bytes > 0 && g.gpu_time_s > 0;
    if (!g.costed || device == nullptr) continue;
    g.placement = PlaceKernel(*device, g.engine, g.flops, {{"dram", g.min_bytes}}, g.gpu_time_s);
    for (const std::string& w : g.placement->warnings) {
      s.warnings.insert(g.name + " " + g.shapes + ": " + w);
    }
  }
  std::stable_sort(
      s.groups.begin(), s.groups.end(),
      [](const TorchOpGroup& a, const TorchOpGroup& b) { return a.gpu_time_s > b.gpu_time_s; });
  return s;
}

}  // namespace roofline
