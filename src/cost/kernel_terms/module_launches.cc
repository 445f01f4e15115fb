// A framework whose modules run op by op (--modules): how many kernels its RMSNorm, rotary
// embedding and attention modules launch, and its copies of grouped K/V heads to every query
// head before a decode attention (data/efficiency.json `module_launches`; docs/expected-time.md).
#include <fmt/format.h>

#include <cmath>

#include "roofline/units.h"
#include "src/cost/efficiency_json.h"
#include "src/cost/kernel_term.h"
#include "src/cost/op_rules.h"

namespace roofline {

using nlohmann::json;

void ParseModuleLaunches(const json& root, EfficiencyData& d) {
  if (!root.contains("module_launches")) return;
  ForEachEntry(
      root.at("module_launches"), "module_launches",
      {"name", "description", "source", "rms_norm", "rope", "attention", "grouped_kv",
       "grouped_kv_copy", "host_factor"},
      [&](const json& f, const std::string& field) {
        EfficiencyData::ModuleLaunches m;
        m.name = RequireString(f, "name", field, "the name --modules takes");
        for (const auto& earlier : d.module_launches) {
          if (earlier.name == m.name) {
            throw JsonFieldError(field + ".name", "'" + m.name + "' is listed twice");
          }
        }
        m.description = RequireString(f, "description", field, "say which framework it is");
        m.source = RequireString(f, "source", field, "the trace the counts come from");
        // Kernels per op: whole numbers, at least one (grouped_kv: at least zero more).
        auto count = [&](const char* key, int64_t least) {
          const json& v = Need(f, key, field);
          const std::string at = field + "." + key;
          if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > 1000) {
            throw JsonFieldError(
                at, fmt::format("expected a whole number of kernels from {} to 1000", least));
          }
          return v.get<int64_t>();
        };
        m.rms_norm = count("rms_norm", 1);
        m.rope = count("rope", 1);
        m.attention = count("attention", 1);
        m.grouped_kv = count("grouped_kv", 0);
        // The copies' rate: needed when the framework repeats grouped K/V heads.
        if (m.grouped_kv > 0 && !f.contains("grouped_kv_copy")) {
          throw JsonFieldError(field + ".grouped_kv_copy",
                               "missing (the rate of the copies of grouped K/V heads, a "
                               "fraction of the memory ceiling; needed when grouped_kv > 0)");
        }
        if (f.contains("grouped_kv_copy")) {
          m.grouped_kv_copy =
              ParseFigure(f.at("grouped_kv_copy"), field + ".grouped_kv_copy", 1, false);
        }
        // The framework's Python per launch: at least the bare op's (a factor of 1).
        if (f.contains("host_factor")) {
          const std::string at = field + ".host_factor";
          m.host_factor = ParseFigure(f.at("host_factor"), at, 100, false,
                                      "x the runtime's host time per launch");
          if (m.host_factor.value < 1) {
            throw JsonFieldError(at + ".value",
                                 FormatNumber(m.host_factor.value) +
                                     " is out of range (expected at least 1: a framework's "
                                     "modules add host time to a bare op's, never less)");
          }
        }
        d.module_launches.push_back(std::move(m));
      });
}

namespace {

// Whether a framework that repeats K/V heads (--modules) copies them to every query head for
// this attention: a decode step (one query per sequence: the static cache's mask makes
// transformers' SDPA path call repeat_kv; a prefill without padding runs SDPA's own grouped
// form) whose K/V heads serve groups of query heads (MLA's absorbed form shares one latent head).
// The framework `m` must repeat them (grouped_kv launches at a known rate).
bool RepeatsKv(const EfficiencyData::ModuleLaunches& m, const AttentionSpec& a) {
  return m.grouped_kv > 0 && m.grouped_kv_copy.value > 0 && a.q_len == 1 && !a.v_in_k &&
         a.kv_heads > 0 && a.kv_heads < a.heads;
}

// The bytes of a decode attention's K and V of its kv_heads at `dtype` (the keys the op reads:
// AttentionKeysRead).
double KvBytes(const AttentionSpec& a, DType dtype) {
  return static_cast<double>(a.batch) * static_cast<double>(a.kv_heads) * AttentionKeysRead(a) *
         static_cast<double>(a.head_dim + a.v_dim()) * BytesOf(dtype);
}

// The framework's launches per op, and its copies of grouped K/V heads: the copies read the
// cache and write it `heads / kv_heads` times at `grouped_kv_copy` of the device memory ceiling
// used, and attention reads the copies from device memory (level 0), not the cache; both at the
// activation dtype (a quantized cache is dequantized before it is repeated; the dequantizing is
// not counted).
class ModuleLaunchesTerm final : public KernelTerm {
 public:
  explicit ModuleLaunchesTerm(const EfficiencyData::ModuleLaunches& m) : m_(m) {}
  std::string_view name() const override { return "module launches"; }
  Phase phase() const override { return Phase::kTerms; }
  bool Apply(KernelTermContext& k, ExpectedCost& e) const override {
    e.launches = k.model.LaunchesOf(k.graph, k.kernel);
    if (k.lines != nullptr && e.launches > 1) {
      k.lines->Detail(TermSection::kLaunches,
                      fmt::format("  launches: {} kernels, as the {} module for this op runs [{}]",
                                  e.launches, m_.name, m_.source));
    }
    const std::vector<UsedCeiling>& memory = k.model.used_memory();
    if (k.cost.num_levels == 0 || !(memory[0].value > 0)) return false;
    const AttentionSpec* a = FusedAttention(k.graph, k.kernel);
    if (a == nullptr || !RepeatsKv(m_, *a)) return false;
    k.repeated_kv = a;
    const double kv_bytes = KvBytes(*a, a->dtype);
    const double groups = static_cast<double>(a->heads) / static_cast<double>(a->kv_heads);
    const double copy_rate = m_.grouped_kv_copy.value * memory[0].value;
    // Negative where the cache's dtype is wider than the activations'.
    e.grouped_kv_read_bytes = groups * kv_bytes - KvBytes(*a, a->kv_dtype);
    e.grouped_kv_copy_s = (1 + groups) * kv_bytes / copy_rate;
    if (k.lines != nullptr) {
      k.lines->Detail(
          TermSection::kCopies,
          fmt::format("  repeated K/V heads ({}): K and V copied from {} to {} heads, (1 + {}) x "
                      "{} B at {} of {} ({}) = {}; attention reads the copies, {} B in place of "
                      "the cache's {} B [{}]",
                      m_.name, a->kv_heads, a->heads, groups, Sci(kv_bytes),
                      Percent(m_.grouped_kv_copy.value), Si(memory[0].value, "B/s"),
                      Si(copy_rate, "B/s"), Seconds(e.grouped_kv_copy_s), Sci(groups * kv_bytes),
                      Sci(KvBytes(*a, a->kv_dtype)), m_.grouped_kv_copy.source));
    }
    return true;
  }

 private:
  const EfficiencyData::ModuleLaunches& m_;  // into the model's efficiency data
};

}  // namespace

int64_t CostModel::LaunchesOf(const Graph& graph, const Kernel& kernel) const {
  if (modules_ == nullptr) return 1;
  int64_t launches = 1;
  for (int o : kernel.ops) {
    const OpSpec& spec = graph.ops()[static_cast<size_t>(o)].spec;
    int64_t n = 1;
    if (const auto* norm = std::get_if<NormSpec>(&spec)) {
      n = norm->kind == NormKind::kRms ? modules_->rms_norm : 1;
    } else if (const auto* ew = std::get_if<ElementwiseSpec>(&spec)) {
      n = ew->function == "rope" ? modules_->rope : 1;
    } else if (const auto* a = std::get_if<AttentionSpec>(&spec)) {
      n = modules_->attention + (RepeatsKv(*modules_, *a) ? modules_->grouped_kv : 0);
    }
    // A kernel of several ops (fused) runs as one launch of its largest module at most.
    launches = std::max(launches, n);
  }
  return launches;
}

std::shared_ptr<const KernelTerm> MakeModuleLaunchesTerm(const CostModel& model) {
  const EfficiencyData::ModuleLaunches* m = model.used_modules();
  return m != nullptr ? std::make_shared<const ModuleLaunchesTerm>(*m) : nullptr;
}

}  // namespace roofline
