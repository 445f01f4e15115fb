// Fused (flash) attention: its compute efficiency, a fraction of the dense matmul ceiling, and its
// fixed time per wave of thread blocks (data/efficiency.json `flash_attention`,
// `attention_waves`; docs/expected-time.md).
#include <fmt/format.h>

#include <algorithm>

#include "roofline/units.h"
#include "src/cost/efficiency_json.h"
#include "src/cost/kernel_term.h"
#include "src/cost/round_whole.h"

namespace roofline {

using nlohmann::json;

void ParseFlashAttention(const json& root, EfficiencyData& d) {
  ForEachEntry(Need(root, "flash_attention", ""), "flash_attention", {"device", "value", "source"},
               [&](const json& f, const std::string& field) {
                 EfficiencyData::DeviceFigure df;
                 df.device =
                     RequireString(f, "device", field, "the device the fraction was measured on");
                 df.figure = EntryFigure(f, field, 1);
                 d.flash_attention.push_back(std::move(df));
               });
}

void ParseAttentionWaves(const json& root, EfficiencyData& d) {
  if (!root.contains("attention_waves")) return;
  ForEachEntry(
      root.at("attention_waves"), "attention_waves",
      {"device", "q_block", "value", "source", "max_waves", "max_waves_source"},
      [&](const json& f, const std::string& field) {
        EfficiencyData::AttentionWaves w;
        w.device = RequireString(f, "device", field, "the device it was measured on");
        for (const auto& earlier : d.attention_waves) {
          if (earlier.device == w.device) {
            throw JsonFieldError(field + ".device", "'" + w.device + "' is listed twice");
          }
        }
        const json& q = Need(f, "q_block", field);
        if (!q.is_number_integer() || q.get<int64_t>() < 1 || q.get<int64_t>() > 4096) {
          throw JsonFieldError(field + ".q_block", "expected an integer between 1 and 4096");
        }
        w.q_block = q.get<int64_t>();
        w.wave_s = EntryFigure(f, field, 1e-3);
        if (f.contains("max_waves") || f.contains("max_waves_source")) {
          const json& mw = Need(f, "max_waves", field);
          if (!mw.is_number_integer() || mw.get<int64_t>() < 1 || mw.get<int64_t>() > 1000000) {
            throw JsonFieldError(field + ".max_waves", "expected an integer between 1 and 1000000");
          }
          w.max_waves = mw.get<int64_t>();
          w.max_waves_source =
              RequireString(f, "max_waves_source", field, "the cap needs its source");
        }
        d.attention_waves.push_back(std::move(w));
      });
}

namespace {

// A fused attention kernel reaches a fraction of the dense matmul ceiling (the device's own
// figure, else the first listed, printed as assumed).
class FlashAttention final : public KernelTerm {
 public:
  FlashAttention(const EfficiencyData::DeviceFigure& figure, bool measured_here)
      : figure_(figure), measured_here_(measured_here) {}
  std::string_view name() const override { return "flash attention"; }
  Phase phase() const override { return Phase::kEfficiency; }
  bool Apply(KernelTermContext& k, ExpectedCost& e) const override {
    if (k.cls != KernelClass::kAttention || FusedAttention(k.graph, k.kernel) == nullptr) {
      return false;
    }
    e.efficiency = figure_.figure.value;
    if (k.lines != nullptr) {
      k.lines->why =
          fmt::format("fused attention at {} of the dense matmul ceiling ({}{})",
                      Percent(e.efficiency), figure_.figure.source,
                      measured_here_ ? "" : "; measured on " + figure_.device + ", assumed here");
    }
    return true;
  }

 private:
  const EfficiencyData::DeviceFigure& figure_;  // into the model's efficiency data
  bool measured_here_;
};

// Fused attention's fixed time per wave of thread blocks: only for the kernels the figure was
// measured on (flash kernels of head dims up to 256, not MLA's absorbed form) on a device with a
// known SM count, and not under an --efficiency override, which replaces the model for its class.
class AttentionWaves final : public KernelTerm {
 public:
  AttentionWaves(const EfficiencyData::AttentionWaves& w, double sms, bool measured_here)
      : wave_s_(w.wave_s.value),
        q_block_(static_cast<double>(w.q_block)),
        max_waves_(static_cast<double>(w.max_waves)),
        sms_(sms),
        max_waves_why_(w.max_waves_source),
        wave_why_(measured_here
                      ? w.wave_s.source
                      : w.wave_s.source + "; measured on " + w.device + ", assumed here") {}
  std::string_view name() const override { return "attention waves"; }
  Phase phase() const override { return Phase::kAdded; }
  bool Apply(KernelTermContext& k, ExpectedCost& e) const override {
    if (k.forced != 0 || k.cls != KernelClass::kAttention) return false;
    const AttentionSpec* a = FusedAttention(k.graph, k.kernel);
    if (a == nullptr || a->v_in_k || a->head_dim > 256) return false;
    // Decode with grouped queries: the queries of a group share their K/V head's tile (unless a
    // framework repeated the K/V heads: then every query head has its own).
    const bool grouped =
        a->q_len == 1 && a->kv_heads > 0 && a->heads % a->kv_heads == 0 && k.repeated_kv == nullptr;
    const double rows =
        grouped ? static_cast<double>(a->heads / a->kv_heads) : static_cast<double>(a->q_len);
    const double heads = static_cast<double>(grouped ? a->kv_heads : a->heads);
    const double blocks = static_cast<double>(a->batch) * heads * CeilWhole(rows / q_block_);
    const double waves = std::max(1.0, CeilWhole(blocks / sms_));
    const double counted = max_waves_ > 0 ? std::min(waves, max_waves_) : waves;
    e.wave_s = counted * wave_s_;
    if (k.lines != nullptr) {
      std::string range;
      if (max_waves_ > 0 && waves > max_waves_) {
        range += fmt::format("; waves beyond {} add nothing [{}]", max_waves_, max_waves_why_);
      } else if (max_waves_ == 0 && waves > 16) {
        range += "; extrapolated: the fit saw at most 16 waves";
      }
      if (a->head_dim != 64 && a->head_dim != 128) {
        range += fmt::format("; extrapolated: head dim {}, the fit saw 64 and 128", a->head_dim);
      }
      k.lines->Detail(TermSection::kWaves,
                      fmt::format("  attention waves: {} blocks of {} query rows over {} SMs = {} "
                                  "wave(s); {} x {} = {}{}  [{}]",
                                  blocks, q_block_, k.model.sm_count(), waves, counted,
                                  Seconds(wave_s_), Seconds(e.wave_s), range, wave_why_));
    }
    return true;
  }

 private:
  double wave_s_, q_block_, max_waves_, sms_;
  std::string max_waves_why_, wave_why_;
};

}  // namespace

std::shared_ptr<const KernelTerm> MakeFlashAttentionTerm(const CostModel& model) {
  const EfficiencyData& data = *model.options().efficiency;
  if (data.flash_attention.empty()) return nullptr;
  const EfficiencyData::DeviceFigure* f = &data.flash_attention.front();
  for (const auto& entry : data.flash_attention) {
    if (entry.device == model.device().id) f = &entry;
  }
  return std::make_shared<const FlashAttention>(*f, f->device == model.device().id);
}

std::shared_ptr<const KernelTerm> MakeAttentionWavesTerm(const CostModel& model) {
  const EfficiencyData& data = *model.options().efficiency;
  if (data.attention_waves.empty() || model.sm_count() <= 0) return nullptr;
  const EfficiencyData::AttentionWaves* w = &data.attention_waves.front();
  for (const auto& entry : data.attention_waves) {
    if (entry.device == model.device().id) w = &entry;
  }
  if (!(w->wave_s.value > 0)) return nullptr;
  return std::make_shared<const AttentionWaves>(*w, static_cast<double>(model.sm_count()),
                                                w->device == model.device().id);
}

}  // namespace roofline
