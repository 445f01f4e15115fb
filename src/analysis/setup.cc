// Resolving a Scenario against the data: model, device, cost options.
#include "roofline/setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "roofline/engine.h"
#include "roofline/model_registry.h"

namespace roofline {

Result<std::shared_ptr<const Engine>> ApplyEngineFields(Scenario& s) {
  if (s.expected.engine.empty()) return std::shared_ptr<const Engine>();
  Result<Engine> loaded = LoadEngine(s.expected.engine, "--engine");
  if (!loaded.ok()) return loaded.status();
  auto e = std::make_shared<const Engine>(std::move(loaded).value());
  Workload& w = s.workload;
  if (!s.Given(FieldId::kFusion) && e->fused) {
    w.fusion = *e->fused ? FusionMode::kFused : FusionMode::kEager;
  }
  if (!s.Given(FieldId::kFusedLinears) && e->fused_linears) w.fused_linears = *e->fused_linears;
  if (!s.Given(FieldId::kRuntime)) {
    if (e->runtime[1]) s.expected.runtime = *e->runtime[1];
    s.expected.prefill_runtime = e->runtime[0];
  }
  // The engine's modules where they can run (eager kernels, flash attention, not compiled).
  if (!s.Given(FieldId::kModules) && !e->modules.empty() && w.fusion == FusionMode::kEager &&
      w.attention == AttentionImpl::kFlash && s.expected.runtime != Runtime::kCompiled) {
    s.expected.modules = e->modules;
  }
  // The first choices for the weights' dtype (MakeCostOptions takes the first that runs on the
  // device): --weight-dtype, else --dtype, else the configs' usual bf16 (a kernel whose dtypes
  // do not match a product's is not applied to it).
  const std::string weights(NameOf(w.weight_dtype.value_or(w.dtype.value_or(DType::kBf16))));
  if (!s.Given(FieldId::kWeightKernel)) {
    const auto k = e->weight_kernels.find(weights);
    if (k != e->weight_kernels.end()) s.expected.weight_kernel = k->second.front();
  }
  if (!s.Given(FieldId::kMoeKernel)) {
    const auto k = e->moe_kernels.find(weights);
    if (k != e->moe_kernels.end()) s.expected.moe_kernel = k->second.front();
  }
  return e;
}

Result<CostOptions> MakeCostOptions(const Scenario& given, const Device& d,
                                    std::shared_ptr<const EfficiencyData> efficiency,
                                    bool refuse_unused) {
  Scenario s = given;
  Result<std::shared_ptr<const Engine>> engine = ApplyEngineFields(s);
  if (!engine.ok()) return engine.status();
  CostOptions c;
  if (*engine) c.step_terms.push_back(std::make_shared<const EngineHost>(*engine));
  c.launch_overhead_s = s.launch_overhead_s;
  if (Status st = Validate(c); !st.ok()) return st;
  if (refuse_unused && !CostModel::ExpectsTimesOn(d)) {
    // The first expected-time field given, in table order.
    for (FieldId id : {FieldId::kEfficiency, FieldId::kWeightKernel, FieldId::kMoeKernel,
                       FieldId::kAccumulate,
                       FieldId::kModules, FieldId::kRuntime, FieldId::kCeilings,
                       FieldId::kEngine}) {
      if (s.Given(id) && FieldText(s, id) != FieldText(Scenario{}, id)) {
        return Status::Invalid(
            std::string(FieldOf(id).flag),
            "device '" + d.id +
                "' has no expected times (it splits models over SRAM chips or streams weights: "
                "no published kernel efficiencies), only the bound; drop the flag");
      }
    }
  }
  c.expected = s.expected;
  if (efficiency == nullptr) {
    Result<EfficiencyData> data = LoadDefaultEfficiencyData();
    if (!data.ok()) return data.status();
    efficiency = std::make_shared<const EfficiencyData>(std::move(data).value());
  }
  const EfficiencyData& data = *efficiency;
  // An engine file's own names are checked against the data, its file named: a kernel it
  // names must exist (it may be unmeasured on this device: then the weights stream as without),
  // and so must its modules.
  if (*engine) {
    const Engine& e = **engine;
    const std::string where = (e.file.empty() ? e.id : e.file) + ": entry " + e.versions;
    for (const auto& [key, map] : {std::pair{"weight_kernels", &e.weight_kernels},
                                    std::pair{"moe_kernels", &e.moe_kernels}}) {
      for (const auto& entry : *map) {
        const std::string& dtype = entry.first;
        for (const std::string& kernel : entry.second) {
          const auto found =
              std::find_if(data.weight_kernels.begin(), data.weight_kernels.end(),
                           [&kernel](const auto& k) { return k.name == kernel; });
          if (found == data.weight_kernels.end()) {
            return Status::Invalid(where + "." + key + "." + dtype,
                                   "no weight kernel '" + kernel + "' in " + data.origin);
          }
          if (found->experts != (map == &e.moe_kernels)) {
            return Status::Invalid(where + "." + key + "." + dtype,
                                   "'" + kernel + "' is " +
                                       (found->experts ? "a fused MoE call (moe_kernels)"
                                                       : "a linear's kernel (weight_kernels)"));
          }
          if (NameOf(found->weight_dtype) != dtype) {
            return Status::Invalid(where + "." + key + "." + dtype,
                                   "'" + kernel + "' takes " +
                                       std::string(NameOf(found->weight_dtype)) + " weights");
          }
        }
      }
    }
    if (!e.modules.empty() && !FindModuleLaunches(data, e.modules, where + ".modules").ok()) {
      return FindModuleLaunches(data, e.modules, where + ".modules").status();
    }
  }
  // A kernel given is checked; an engine's is its first choice that runs on this device (its
  // vendor, the runtime), or none: the weights stream as without.
  auto choose = [&](FieldId field, bool experts, std::string& name,
                    const std::map<std::string, std::vector<std::string>>* choices,
                    DType weights) -> Status {
    if (name.empty()) return Status::Ok();
    const std::string flag(FieldOf(field).flag);
    Status st = CheckWeightKernel(data, name, d, s.expected.runtime, flag, experts);
    if (st.ok()) return st;
    if (s.Given(field)) return st;
    name.clear();
    if (choices == nullptr) return Status::Ok();
    const auto k = choices->find(std::string(NameOf(weights)));
    if (k == choices->end()) return Status::Ok();
    for (const std::string& candidate : k->second) {
      if (CheckWeightKernel(data, candidate, d, s.expected.runtime, flag, experts).ok()) {
        name = candidate;
        break;
      }
    }
    return Status::Ok();
  };
  const Engine* e = engine->get();
  const DType weights =
      s.workload.weight_dtype.value_or(s.workload.dtype.value_or(DType::kBf16));
  if (Status st = choose(FieldId::kWeightKernel, false, c.expected.weight_kernel,
                         e != nullptr ? &e->weight_kernels : nullptr, weights);
      !st.ok()) {
    return st;
  }
  if (Status st = choose(FieldId::kMoeKernel, true, c.expected.moe_kernel,
                         e != nullptr ? &e->moe_kernels : nullptr, weights);
      !st.ok()) {
    return st;
  }
  if (!s.expected.modules.empty()) {
    Result<const EfficiencyData::ModuleLaunches*> m =
        FindModuleLaunches(data, s.expected.modules, "--modules");
    if (!m.ok()) return m.status();
  }
  c.efficiency = std::move(efficiency);
  return c;
}

Result<Setup> Resolve(const Scenario& s, const DeviceDatabase& db) {
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return registry.status();
  Result<TransformerConfig> config = ResolveModel(s.model, *registry);
  if (!config.ok()) return config.status();
  if (Status st = Validate(s, /*is_network=*/false); !st.ok()) return st;
  Scenario with_engine = s;
  Result<std::shared_ptr<const Engine>> engine = ApplyEngineFields(with_engine);
  if (!engine.ok()) return engine.status();
  Result<Device> device = ResolveDevice(s.hw, db);
  if (!device.ok()) return device.status();
  Result<CostOptions> cost = MakeCostOptions(s, *device);
  if (!cost.ok()) return cost.status();
  // A fused MoE call needs routed experts: refused where given for a dense model, left out
  // where an engine named it.
  if (config->experts == 0 && !cost->expected.moe_kernel.empty()) {
    if (s.Given(FieldId::kMoeKernel)) {
      return Status::Invalid("--moe-kernel", "runs a mixture of experts' routed products; " +
                                                 s.model + " has no routed experts");
    }
    cost->expected.moe_kernel.clear();
  }
  return Setup{std::move(config).value(), with_engine.workload, std::move(device).value(),
               *cost};
}

CostModel BoundOnly(const CostOptions& cost, const Device& device) {
  CostOptions bound_only;
  bound_only.launch_overhead_s = cost.launch_overhead_s;
  return CostModel(device, bound_only);
}

std::string DescribeWorkload(const Workload& w, const TransformerConfig& c,
                             const std::vector<FieldId>& varied) {
  auto swept = [&](FieldId v) { return std::find(varied.begin(), varied.end(), v) != varied.end(); };
  std::vector<std::string> parts;
  if (!swept(FieldId::kBatch)) parts.push_back(fmt::format("batch {}", w.batch));
  if (!swept(FieldId::kPrompt)) parts.push_back(fmt::format("prompt {}", w.prompt));
  if (!swept(FieldId::kContext) && w.context > 0) {
    parts.push_back(fmt::format("context {}", w.context));
  }
  if (!swept(FieldId::kTp)) parts.push_back(fmt::format("tp {}", w.tp));
  const DType act = w.dtype.value_or(c.torch_dtype);
  if (!swept(FieldId::kDtype)) parts.emplace_back(NameOf(act));
  // How quantized weights are stored, said even when the weight dtype is swept.
  std::string stored;
  if (w.zero_dtype.has_value()) stored = fmt::format("zeros {}", NameOf(*w.zero_dtype));
  if (w.quantize_lm_head) stored += stored.empty() ? "lm_head too" : ", lm_head too";
  if (!swept(FieldId::kWeightDtype) && w.weight_dtype.value_or(act) != act) {
    parts.push_back(fmt::format("weights {}{}", NameOf(*w.weight_dtype),
                                stored.empty() ? "" : " (" + stored + ")"));
  } else if (swept(FieldId::kWeightDtype) && !stored.empty()) {
    parts.push_back("quantized weights: " + stored);
  }
  if (!swept(FieldId::kKvDtype) && w.kv_dtype.value_or(act) != act) {
    parts.push_back(fmt::format("kv {}", NameOf(*w.kv_dtype)));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace roofline
