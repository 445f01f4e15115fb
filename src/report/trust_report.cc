// Trust bands in words: the group a band comes from, the range it gives and the runs behind it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/band_json.h"
#include "src/report/table.h"

namespace roofline {

namespace {

/// The stacks among a band's runs.
double Stacks(const TrustBand& band) {
  std::vector<std::string> stacks;
  for (const TrustRun& r : band.runs) {
    if (std::find(stacks.begin(), stacks.end(), r.stack) == stacks.end()) stacks.push_back(r.stack);
  }
  return static_cast<double>(stacks.size());
}

}  // namespace

std::string DescribeTrustGroup(const TrustKey& key, TrustLevel level) {
  const int l = static_cast<int>(level);
  std::vector<std::string> parts;
  if (level == TrustLevel::kEngine) {
    parts = {"engine " + key.engine,
             std::string(NameOf(key.phase)),
             "runtime " + std::string(NameOf(key.runtime)),
             key.modules ? "framework modules counted" : "modules not counted",
             key.quantized ? "weight-only quantized" : "unquantized weights",
             key.parallel ? "several chips" : "one chip",
             key.vendor,
             key.moe ? "mixture of experts" : "dense"};
  } else {
    if (l <= static_cast<int>(TrustLevel::kPhase)) parts.emplace_back(NameOf(key.phase));
    if (l <= static_cast<int>(TrustLevel::kAnyModules)) {
      parts.push_back("runtime " + std::string(NameOf(key.runtime)));
    }
    if (l <= static_cast<int>(TrustLevel::kAnyLayout)) {
      parts.emplace_back(key.modules ? "framework modules counted" : "modules not counted");
      parts.emplace_back(key.quantized ? "weight-only quantized" : "unquantized weights");
    }
    if (l <= static_cast<int>(TrustLevel::kAnyVendor)) {
      parts.emplace_back(key.parallel ? "several chips" : "one chip");
    }
    if (l <= static_cast<int>(TrustLevel::kOwn)) {
      parts.push_back(key.vendor);
      parts.emplace_back(key.moe ? "mixture of experts" : "dense");
    }
  }
  if (parts.empty()) return "every run";
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

namespace {

/// A signed error as words: "16% below", "7% above", "0%".
std::string Side(double e) {
  const long pct = std::lround(100 * std::abs(e));
  if (pct == 0) return "0%";
  return fmt::format("{}% {}", pct, e < 0 ? "below" : "above");
}

}  // namespace

std::string DescribeBand(const TrustBand& band, double expected_s) {
  if (band.empty()) return "no published run to go by";
  std::string figures = fmt::format(
      "the expected time ran from {} to {} the measured time (median {}; {} of {})",
      Side(band.min_error), Side(band.max_error), Side(band.median_error),
      Count(static_cast<double>(band.runs.size()), "run"), Count(Stacks(band), "stack"));
  const bool overridden = !band.key.overridden.empty();
  if (expected_s > 0 && !overridden) {
    figures +=
        fmt::format(": expect {} to {} ({} at the median error)", Seconds(band.Low(expected_s)),
                    Seconds(band.High(expected_s)), Seconds(band.Central(expected_s)));
  }
  const std::string group = DescribeTrustGroup(band.key, band.level);
  std::string out;
  if (band.own()) {
    out = fmt::format("on the published runs costed as this step is ({}) {}", group, figures);
  } else {
    out = fmt::format(
        "not validated for {} (fewer than {} published runs); on the nearest group with them "
        "({}) {}",
        DescribeTrustGroup(band.key, band.own_level()), kTrustMinRows, group, figures);
  }
  if (overridden) {
    out += fmt::format(
        "; with {} the figures are not the model's own, which no published run was costed with: "
        "no range",
        band.key.overridden);
  }
  return out;
}

std::string RenderBandRuns(const TrustBand& band) {
  TextTable t({"run", "stack", "device", "measured", "expected", "error"},
              {false, false, false, true, true, true});
  for (const TrustRun& r : band.runs) {
    t.AddRow({r.id, r.stack, r.hw, Seconds(r.measured_s), Seconds(r.expected_s),
              fmt::format("{:+.1f}%", 100 * r.error)});
  }
  return t.Render(2);
}

nlohmann::json BandJson(const TrustBand& band, double expected_s) {
  nlohmann::json j;
  j["group"] = DescribeTrustGroup(band.key, band.level);
  const bool overridden = !band.key.overridden.empty();
  j["validated"] = band.own() && !band.empty() && !overridden;
  j["own_group"] = DescribeTrustGroup(band.key, band.own_level());
  // 0: the step's own group; higher: criteria dropped.
  j["level"] = static_cast<int>(band.level) - static_cast<int>(band.own_level());
  if (overridden) j["overridden"] = band.key.overridden;
  j["rows"] = band.runs.size();
  std::vector<std::string> ids;
  for (const TrustRun& r : band.runs) ids.push_back(r.id);
  if (!band.empty()) {
    j["min_error"] = band.min_error;
    j["median_error"] = band.median_error;
    j["max_error"] = band.max_error;
    if (expected_s > 0 && !overridden) {
      j["low_s"] = band.Low(expected_s);
      j["median_s"] = band.Central(expected_s);
      j["high_s"] = band.High(expected_s);
    }
  }
  j["runs"] = ids;
  return j;
}

}  // namespace roofline
