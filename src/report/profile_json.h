// The JSON documents of `roofline profile`, as objects the command completes (a --model join
// adds its part) before printing.
#ifndef ROOFLINE_SRC_REPORT_PROFILE_JSON_H_
#define ROOFLINE_SRC_REPORT_PROFILE_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "roofline/profile.h"

namespace roofline {

/// `roofline profile ncu --format json`: file, format, device, device_match, kernels_total,
/// kernels[] (figures per launch, placement per level; each with its 1-based `index` in the
/// file's order; with `top` > 0 only the `top` with the most time), missing_metrics, warnings.
/// `device_note` says how the device was matched, or why there is none.
nlohmann::json NcuProfileJson(const NcuSummary& summary, const std::string& file,
                              const std::string& layout, const Device* device,
                              const std::string& device_note, int top = 0);

/// `roofline profile nsys --format json`: file, format, gpu_time_s, classes[], kernels[].
nlohmann::json NsysProfileJson(const NsysReport& report, const NsysSummary& summary,
                               const std::string& file);

/// `roofline profile torch --format json`: file, format, device_name, device, gpu_time_s,
/// classes[], shapes, ops[] (with shapes: FLOPs, bytes and placement), warnings.
nlohmann::json TorchProfileJson(const TorchTrace& trace, const TorchSummary& summary,
                                const std::string& file, const Device* device);

/// The `prediction` object a --model join adds: steps, ordered, classes[], kernels[], notes,
/// title.
nlohmann::json ProfileJoinJson(const ProfileJoin& join, const std::string& title);

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_PROFILE_JSON_H_
