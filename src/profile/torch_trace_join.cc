// From the compact records of the SAX pass to a TorchTrace: GPU events joined to the cpu op that
// launched them, ops costed from their shapes, times in seconds.
//
// The join rule. A GPU event (kernel, memcpy, memset) belongs to the innermost cpu op that
// launched it:
// 1. its `correlation` names the host launch point: the cuda_runtime / cuda_driver event
//    (legacy: Runtime) with that correlation, or else the ac2g flow start with that id;
// 2. the op is the innermost cpu_op on the same (pid, tid) whose [ts, ts + dur] contains the
//    launch call's [ts, ts + dur] (nested aten::linear > aten::addmm: aten::addmm);
// 3. without a launch point (or none of the thread's ops contains it), the GPU event's
//    `External id` (legacy: `external id`) names the op, unless this trace's External ids
//    disagree with rule 2 where both apply (some kineto versions write the correlation id there).
// Rule 2 comes first because it holds in every format; rule 3 alone is what kineto means by
// External id, and the two agree in traces where External id links to the op.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "roofline/profile.h"
#include "src/profile/torch_op_cost.h"
#include "src/profile/torch_trace_sax.h"

namespace roofline {
namespace {

int64_t EndNs(const TorchRawOp& o) { return o.ts_ns + o.dur_ns; }

/// The innermost op enclosing each needed launch (same thread), by a sweep over start times.
std::vector<int32_t> EnclosingOps(const std::vector<TorchRawOp>& ops,
                                  const std::vector<TorchRawLaunch>& launches,
                                  const std::vector<char>& needed) {
  std::vector<int32_t> op_of(launches.size(), -1);
  std::vector<uint32_t> by_start(ops.size());
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) {
    const TorchRawOp &x = ops[a], &y = ops[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    if (x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;  // the enclosing one first
    return a < b;
  });
  std::vector<uint32_t> queries;
  for (uint32_t i = 0; i < launches.size(); ++i) {
    if (needed[i]) queries.push_back(i);
  }
  std::sort(queries.begin(), queries.end(), [&](uint32_t a, uint32_t b) {
    const TorchRawLaunch &x = launches[a], &y = launches[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    return x.ts_ns != y.ts_ns ? x.ts_ns < y.ts_ns : a < b;
  });
  std::vector<uint32_t> open;  // ops that may still contain later launches, outermost first
  size_t oi = 0;
  uint64_t thread = 0;
  for (uint32_t q : queries) {
    const TorchRawLaunch& l = launches[q];
    if (open.empty() || l.thread != thread) open.clear(), thread = l.thread;
    while (oi < by_start.size() && ops[by_start[oi]].thread < l.thread) ++oi;
    // Open every op of this thread that starts no later than the launch.
    for (; oi < by_start.size() && ops[by_start[oi]].thread == l.thread &&
           ops[by_start[oi]].ts_ns <= l.ts_ns;
         ++oi) {
      const TorchRawOp& o = ops[by_start[oi]];
      while (!open.empty() && EndNs(ops[open.back()]) < o.ts_ns) open.pop_back();
      open.push_back(by_start[oi]);
    }
    while (!open.empty() && EndNs(ops[open.back()]) < l.ts_ns) open.pop_back();
    for (size_t j = open.size(); j-- > 0;) {
      if (EndNs(ops[open[j]]) >= l.ts_ns + l.dur_ns) {
        op_of[q] = static_cast<int32_t>(open[j]);
        break;
      }
    }
  }
  return op_of;
}

std::string Seconds(double s) { return std::to_string(s); }

}  // namespace

TorchTrace BuildTorchTrace(TorchRawTrace raw) {
  TorchTrace t;
  t.events = raw.events;
  t.schema_version = raw.schema_version;
  t.has_shapes = !raw.shapes.empty();
  t.format = raw.legacy_events > raw.kineto_events ? "legacy (Operator / Kernel)"
                                                   : "kineto (cpu_op / kernel)";
  const int64_t base = raw.min_ts_ns == INT64_MAX ? 0 : raw.min_ts_ns;
  t.time_origin_us = base / 1000.0;

  // Launch points by correlation: runtime calls, then flow starts for the rest.
  std::vector<TorchRawLaunch> launches = std::move(raw.runtime);
  std::unordered_map<int64_t, uint32_t> launch_of;
  launch_of.reserve(launches.size() + raw.flows.size());
  for (uint32_t i = 0; i < launches.size(); ++i) launch_of.emplace(launches[i].corr, i);
  for (const TorchRawLaunch& f : raw.flows) {
    if (launch_of.emplace(f.corr, static_cast<uint32_t>(launches.size())).second) {
      launches.push_back(f);
    }
  }
  std::vector<int64_t> launch_of_kernel(raw.kernels.size(), -1);
  std::vector<char> needed(launches.size(), 0);
  for (size_t k = 0; k < raw.kernels.size(); ++k) {
    auto it = raw.kernels[k].corr >= 0 ? launch_of.find(raw.kernels[k].corr) : launch_of.end();
    if (it != launch_of.end()) launch_of_kernel[k] = it->second, needed[it->second] = 1;
  }
  const std::vector<int32_t> op_of_launch = EnclosingOps(raw.ops, launches, needed);

  // Rule 2, then rule 3 where the External ids agree with rule 2.
  std::vector<int32_t> op_of_kernel(raw.kernels.size(), -1);
  int64_t by_time = 0, by_ext = 0, agree = 0, disagree = 0;
  for (size_t k = 0; k < raw.kernels.size(); ++k) {
    if (launch_of_kernel[k] < 0) continue;
    const int32_t op = op_of_launch[launch_of_kernel[k]];
    if (op < 0) continue;
    op_of_kernel[k] = op;
    ++by_time;
    if (raw.kernels[k].ext >= 0) (raw.ops[op].ext == raw.kernels[k].ext ? agree : disagree)++;
  }
  const bool ext_usable = disagree == 0 || agree > disagree;
  if (ext_usable && by_time < static_cast<int64_t>(raw.kernels.size())) {
    std::unordered_map<int64_t, int32_t> op_of_ext;
    for (size_t i = 0; i < raw.ops.size(); ++i) {
      if (raw.ops[i].ext >= 0) op_of_ext.emplace(raw.ops[i].ext, static_cast<int32_t>(i));
    }
    for (size_t k = 0; k < raw.kernels.size(); ++k) {
      auto it = op_of_kernel[k] < 0 && raw.kernels[k].ext >= 0 ? op_of_ext.find(raw.kernels[k].ext)
                                                               : op_of_ext.end();
      if (it != op_of_ext.end()) op_of_kernel[k] = it->second, ++by_ext;
    }
  }

  // Ops with GPU work, in start order; kernels in start order.
  std::vector<int32_t> out_index(raw.ops.size(), -1);
  std::vector<uint32_t> kept;
  for (int32_t op : op_of_kernel) {
    if (op >= 0 && out_index[op] < 0) out_index[op] = 0, kept.push_back(op);
  }
  std::sort(kept.begin(), kept.end(), [&](uint32_t a, uint32_t b) {
    const TorchRawOp &x = raw.ops[a], &y = raw.ops[b];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    return x.dur_ns != y.dur_ns ? x.dur_ns > y.dur_ns : a < b;
  });
  t.ops.reserve(kept.size());
  std::unordered_map<uint64_t, TorchOpCost> cost_cache;
  for (uint32_t i : kept) {
    const TorchRawOp& r = raw.ops[i];
    out_index[i] = static_cast<int32_t>(t.ops.size());
    TorchOp& op = t.ops.emplace_back();
    op.name = raw.names[r.name];
    op.op_class = ClassifyAtenOp(op.name);
    op.external_id = r.ext;
    op.start_s = (r.ts_ns - base) * 1e-9;
    op.cpu_duration_s = r.dur_ns * 1e-9;
    if (r.shapes >= 0) {
      const TorchOpShapes& s = raw.shapes[r.shapes];
      op.input_dims = s.dims;
      op.input_types = s.types;
      // Same op, same shapes: same cost (computed once).
      auto [it, added] = cost_cache.try_emplace((uint64_t{r.name} << 32) | uint32_t(r.shapes));
      if (added) it->second = CostTorchOp(op.name, s);
      op.flops = it->second.flops;
      op.min_bytes = it->second.min_bytes;
      op.cost_note = it->second.note;
    } else {
      op.cost_note = "no shapes recorded: time by op class only";
    }
  }
  std::vector<uint32_t> korder(raw.kernels.size());
  std::iota(korder.begin(), korder.end(), 0);
  std::stable_sort(korder.begin(), korder.end(), [&](uint32_t a, uint32_t b) {
    return raw.kernels[a].ts_ns < raw.kernels[b].ts_ns;
  });
  std::vector<int8_t> class_of_name(raw.names.size(), -1);
  t.kernels.reserve(korder.size());
  for (uint32_t k : korder) {
    const TorchRawKernel& r = raw.kernels[k];
    TorchKernel& out = t.kernels.emplace_back();
    out.name = raw.names[r.name];
    if (r.kind != TorchEventKind::kKernel) {
      out.op_class = OpClass::kCopy;
    } else {
      if (class_of_name[r.name] < 0)
        class_of_name[r.name] = static_cast<int8_t>(ClassifyKernel(out.name));
      out.op_class = static_cast<OpClass>(class_of_name[r.name]);
    }
    out.start_s = (r.ts_ns - base) * 1e-9;
    out.duration_s = r.dur_ns * 1e-9;
    out.external_id = r.ext;
    out.correlation = r.corr;
    if (op_of_kernel[k] >= 0) {
      out.op = out_index[op_of_kernel[k]];
      TorchOp& op = t.ops[out.op];
      op.gpu_time_s += out.duration_s;
      ++op.kernels;
    }
  }
  // The device: the one the first kernel ran on, else the first listed.
  int64_t device_id = -1;
  for (const TorchRawKernel& k : raw.kernels) {
    if (k.device >= 0) {
      device_id = k.device;
      break;
    }
  }
  const TorchRawDevice* dev = raw.devices.empty() ? nullptr : &raw.devices[0];
  for (const TorchRawDevice& d : raw.devices) {
    if (d.id == device_id) dev = &d;
  }
  if (dev) {
    t.device_name = dev->name;
    if (dev->major >= 0 && dev->minor >= 0) {
      t.cc = std::to_string(dev->major) + "." + std::to_string(dev->minor);
    }
    t.num_sms = dev->num_sms;
    t.device_memory_bytes = dev->total_global_mem_bytes;
  }

  // Notes.
  const int64_t n = static_cast<int64_t>(raw.kernels.size());
  std::string join = "joined " + std::to_string(by_time + by_ext) + " of " + std::to_string(n) +
                     " GPU events to the innermost launching cpu op: " + std::to_string(by_time) +
                     " by correlation + time, " + std::to_string(by_ext) + " by External id";
  t.notes.push_back(join);
  if (disagree > 0) {
    std::string s = std::to_string(disagree) + " GPU events carry an External id of another op";
    s += " than the one enclosing their launch call (" + std::to_string(agree) + " agree)";
    s += ext_usable ? "" : "; External ids not used (they look like correlation ids)";
    t.notes.push_back(s);
  }
  if (!t.has_shapes) t.notes.push_back("no shapes recorded (record_shapes=False): time only");
  if (raw.shapes_dropped > 0) {
    t.notes.push_back(std::to_string(raw.shapes_dropped) + " ops had shapes beyond the caps " +
                      "(256 inputs, rank 16): their shapes were dropped");
  }
  if (raw.names_cut > 0) {
    t.notes.push_back(std::to_string(raw.names_cut) + " names longer than 4096 bytes were cut");
  }
  if (raw.missing_times > 0) {
    t.notes.push_back(std::to_string(raw.missing_times) + " events without ts / dur skipped");
  }
  if (!raw.skipped_categories.empty()) {
    std::string s = "not used:";
    for (const auto& [cat, count] : raw.skipped_categories) {
      s += " " + cat + " " + std::to_string(count) + ",";
    }
    s.pop_back();
    t.notes.push_back(s);
  }
  if (raw.devices.size() > 1) {
    t.notes.push_back(std::to_string(raw.devices.size()) + " devices in deviceProperties; " +
                      "described: id " + std::to_string(dev->id) + " (the first kernel's)");
  }
  t.notes.push_back("times in seconds from the earliest event, ts " + Seconds(base * 1e-9) + " s");
  return t;
}

}  // namespace roofline
