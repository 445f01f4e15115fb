#include "src/report/kernel_json.h"

namespace roofline {

template <class Json>
void WriteKernelJson(const KernelCost& c, const CostModel& model, Json& k) {
  const Device& d = model.device();
  k["name"] = c.name;
  k["repeat"] = c.repeat;
  k["flops"] = c.flops;
  Json engines = Json::object();
  for (int e = 0; e < c.num_engines; ++e) {
    engines[model.CeilingName(c.engines[e])] = c.engines[e].flops;
  }
  k["flops_by_engine"] = engines;
  Json bytes = Json::object();
  Json intensity = Json::object();
  Json terms = Json::object();
  terms["compute"] = c.compute_time_s;
  for (int l = 0; l < c.num_levels; ++l) {
    bytes[d.memory[l].name] = c.bytes[l];
    intensity[d.memory[l].name] = c.Intensity(l);
    if (d.memory[l].has_bandwidth()) terms["memory:" + d.memory[l].name] = c.memory_time_s[l];
  }
  if (c.comm_bytes > 0 || c.link >= 0) k["comm_bytes"] = c.comm_bytes;
  if (c.link >= 0) terms["comm:" + d.links[c.link].name] = c.comm_time_s;
  k["bytes"] = bytes;
  k["intensity"] = intensity;
  k["time_terms_s"] = terms;
  k["time_s"] = c.time_s;
  k["bound"] = model.BoundName(c);
  k["attainable_flops_per_s"] = c.attainable_flops_per_s;
  if (c.has_expected) {
    const ExpectedCost& e = c.expected;
    k["expected_time_s"] = e.time_s;
    Json x = Json::object();
    Json xt = Json::object();
    xt["compute"] = e.compute_s;
    for (int l = 0; l < c.num_levels; ++l) {
      if (d.memory[l].has_bandwidth()) xt["memory:" + d.memory[l].name] = e.memory_s[l];
    }
    if (c.link >= 0) xt["comm:" + d.links[c.link].name] = e.comm_s;
    x["time_terms_s"] = xt;
    x["efficiency"] = e.efficiency;
    if (e.wave_s > 0) x["attention_waves_s"] = e.wave_s;
    if (e.weight_kernel_regime >= 0) {
      x["weight_kernel_regime"] = e.weight_kernel_regime;  // index into setup's regimes
      x["weight_kernel_fixed_s"] = e.fixed_s;
      if (e.k_steps_s > 0) x["weight_kernel_k_steps_s"] = e.k_steps_s;  // floors memory:<level 0>
    }
    if (e.moe_kernel_regime >= 0) {
      x["moe_kernel_regime"] = e.moe_kernel_regime;  // index into setup's moe_kernel regimes
      x["moe_kernel_fixed_s"] = e.fixed_s;
      if (e.k_steps_s > 0) x["moe_kernel_k_steps_s"] = e.k_steps_s;
    }
    if (e.grouped_kv_copy_s > 0) {
      x["grouped_kv_copies_s"] = e.grouped_kv_copy_s;
      x["grouped_kv_read_bytes"] = e.grouped_kv_read_bytes;
    }
    x["overhead_s"] = e.overhead_s;
    x["host_launch_s"] = e.host_s;
    if (e.launches > 1) x["launches"] = e.launches;
    x["bound"] = model.BoundName(c, e.bound);
    k["expected"] = x;
  }
}

template void WriteKernelJson(const KernelCost&, const CostModel&, nlohmann::json&);
template void WriteKernelJson(const KernelCost&, const CostModel&, nlohmann::ordered_json&);

}  // namespace roofline
