// Trust bands in words: the group a band comes from, the range it gives and the runs behind it.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/band_json.h"
#include "src/report/table.h"

namespace roofline {

std::string DescribeTrustGroup(const TrustKey& key, TrustLevel level) {
  const int l = static_cast<int>(level);
  std::vector<std::string> parts;
  if (l <= static_cast<int>(TrustLevel::kPhase)) parts.emplace_back(NameOf(key.phase));
  if (l <= static_cast<int>(TrustLevel::kAnyModules)) {
    parts.push_back("runtime " + std::string(NameOf(key.runtime)));
  }
  if (l <= static_cast<int>(TrustLevel::kAnyLayout)) {
    parts.emplace_back(key.modules ? "framework modules counted" : "one kernel per op");
  }
  if (l <= static_cast<int>(TrustLevel::kAnyVendor)) {
    parts.emplace_back(key.parallel ? "several chips" : "one chip");
  }
  if (l <= static_cast<int>(TrustLevel::kOwn)) {
    parts.push_back(key.vendor);
    parts.emplace_back(key.moe ? "mixture of experts" : "dense");
  }
  if (parts.empty()) return "every run";
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string DescribeBand(const TrustBand& band, double expected_s) {
  if (band.empty()) return "no published run to go by";
  std::string figures =
      fmt::format("the expected time was {:+.0f}% to {:+.0f}% off the measurement (median {:+.0f}%)",
                  100 * band.min_error, 100 * band.max_error, 100 * band.median_error);
  if (expected_s > 0) {
    figures += fmt::format(": expect {} to {}, most likely {}", Seconds(band.Low(expected_s)),
                           Seconds(band.High(expected_s)), Seconds(band.Central(expected_s)));
  }
  const std::string group = DescribeTrustGroup(band.key, band.level);
  const std::string caveat =
      band.key.overridden ? " (for the model's own figures: --ceilings spec and --efficiency "
                            "choices are not validated)"
                          : "";
  if (band.own()) {
    return fmt::format("on {} published runs costed alike ({}) {}{}", band.runs.size(), group,
                       figures, caveat);
  }
  return fmt::format(
      "not validated for {} (fewer than {} published runs); on the nearest group with them, {} "
      "runs ({}), {}{}",
      DescribeTrustGroup(band.key, TrustLevel::kOwn), kTrustMinRows, band.runs.size(), group,
      figures, caveat);
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
  j["validated"] = band.own() && !band.empty();
  j["own_group"] = DescribeTrustGroup(band.key, TrustLevel::kOwn);
  j["rows"] = band.runs.size();
  std::vector<std::string> ids;
  for (const TrustRun& r : band.runs) ids.push_back(r.id);
  if (!band.empty()) {
    j["min_error"] = band.min_error;
    j["median_error"] = band.median_error;
    j["max_error"] = band.max_error;
    if (expected_s > 0) {
      j["low_s"] = band.Low(expected_s);
      j["median_s"] = band.Central(expected_s);
      j["high_s"] = band.High(expected_s);
    }
  }
  j["runs"] = ids;
  return j;
}

}  // namespace roofline
