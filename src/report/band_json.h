// A trust band as JSON (model and plan reports).
#ifndef ROOFLINE_SRC_REPORT_BAND_JSON_H_
#define ROOFLINE_SRC_REPORT_BAND_JSON_H_

#include <nlohmann/json.hpp>

#include "roofline/model_analysis.h"

namespace roofline {

/// {"group", "validated" (the figures are the step's own group's), "own_group", "rows",
/// "min_error", "median_error", "max_error", "runs": [ids]}, and with an expected time
/// (`expected_s` > 0) the range it suggests: "low_s", "median_s", "high_s".
nlohmann::json BandJson(const TrustBand& band, double expected_s);

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_BAND_JSON_H_
