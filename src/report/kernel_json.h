// The one JSON shape of a costed kernel, shared by `op`, `model` and the network commands.
#ifndef ROOFLINE_SRC_REPORT_KERNEL_JSON_H_
#define ROOFLINE_SRC_REPORT_KERNEL_JSON_H_

#include <nlohmann/json.hpp>

#include "roofline/cost.h"

namespace roofline {

/// Writes a kernel's cost into `k`: name, repeat, flops, flops_by_engine (ceiling -> FLOP),
/// bytes and intensity (memory level -> bytes, FLOP/byte), comm_bytes (when it communicates),
/// time_terms_s (compute, each memory level with a bandwidth, the link), time_s, bound and
/// attainable_flops_per_s. Commands add their own fields (a model's group and ops, a network
/// node's module and source) beside these. Defined for nlohmann::json and ordered_json.
template <class Json>
void WriteKernelJson(const KernelCost& cost, const CostModel& model, Json& k);

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_KERNEL_JSON_H_
