// Phrases the report layer's sentences share.
#ifndef ROOFLINE_SRC_REPORT_PHRASES_H_
#define ROOFLINE_SRC_REPORT_PHRASES_H_

#include <string>

namespace roofline {

/// "compute-bound (tensor.bf16)" for the verdict name "compute:tensor.bf16", likewise
/// "memory-bound (hbm)" and "communication-bound (nvlink)"; other names unchanged.
std::string BoundPhrase(const std::string& verdict_name);

/// A fraction as a whole percentage: 0.237 is "24%".
std::string Pct(double fraction);

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_PHRASES_H_
