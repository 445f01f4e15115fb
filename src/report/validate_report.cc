// Reports of `roofline validate`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/table.h"

namespace roofline {

std::string RenderValidationTable(const ValidationReport& r) {
  std::string out = r.title + "\non " + r.device_name + " (" + r.device_origin + ")\n\n";
  TextTable t({"kernel", "group", "class", "predicted", "bound", "measured", "efficiency", "ran"},
              {false, false, false, true, false, true, true, false});
  for (const ValidationRow& row : r.rows) {
    t.AddRow({row.name, row.group, std::string(NameOf(row.kernel_class)), Seconds(row.predicted_s),
              row.bound, row.skipped ? "skipped" : Seconds(row.measured_s),
              row.skipped ? "-" : fmt::format("{:.0f}%", 100 * row.efficiency), row.note});
  }
  out += t.Render();
  const Calibration& c = r.fit.calibration;
  out += fmt::format(
      "\nefficiency per class (least squares on log time): matmul {:.3f}, attention {:.3f}, "
      "norms/elementwise {:.3f} ({})\n",
      c.matmul, c.attention, c.vector, Count(static_cast<double>(c.kernels), "kernel"));
  out += fmt::format(
      "median |log(expected / measured)|: {:.3f} with the bound alone, {:.3f} "
      "calibrated\n",
      r.fit.median_abs_log_before, r.fit.median_abs_log_after);
  out +=
      "efficiency = predicted bound / measured time; above 100% the kernel beat its bound "
      "(e.g. data still in cache). ";
  if (r.request.IsCuda()) {
    out += "Kernels ran on " + r.request.device +
           " in their own dtype, timed with CUDA events (median), L2 flushed before each run.\n";
  } else {
    out += "Kernels run in fp32 on the host.\n";
  }
  return out;
}

std::string RenderValidationJson(const ValidationReport& r) {
  nlohmann::json j;
  j["device"] = r.device_id;
  j["title"] = r.title;
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidationRow& row : r.rows) {
    nlohmann::json x;
    x["name"] = row.name;
    x["group"] = row.group;
    x["class"] = std::string(NameOf(row.kernel_class));
    x["bound"] = row.bound;
    x["predicted_s"] = row.predicted_s;
    x["measured_s"] = row.measured_s;
    x["efficiency"] = row.efficiency;
    x["skipped"] = row.skipped;
    x["note"] = row.note;
    rows.push_back(x);
  }
  j["kernels"] = rows;
  const Calibration& c = r.fit.calibration;
  j["calibration"] = {{"matmul", c.matmul},
                      {"attention", c.attention},
                      {"vector", c.vector},
                      {"kernels", c.kernels},
                      {"median_abs_log_error_before", r.fit.median_abs_log_before},
                      {"median_abs_log_error_after", r.fit.median_abs_log_after}};
  return j.dump(2) + "\n";
}

}  // namespace roofline
