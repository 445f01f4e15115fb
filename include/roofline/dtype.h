// Numeric data types and their storage sizes.
#ifndef ROOFLINE_DTYPE_H_
#define ROOFLINE_DTYPE_H_

#include <string>
#include <string_view>

#include "roofline/status.h"

namespace roofline {

/// Storage / compute data types. Sizes are in bits so that int4 is exact.
enum class DType { kFp64, kFp32, kTf32, kBf16, kFp16, kFp8, kInt8, kInt4, kFp4 };

/// Storage size in bits per element (tf32 is stored as fp32: 32); inline, the cost rules ask for
/// it per operand. dtype.cc checks it against the dtype table.
constexpr int BitsOf(DType t) {
  switch (t) {
    case DType::kFp64:
      return 64;
    case DType::kFp32:
    case DType::kTf32:
      return 32;
    case DType::kBf16:
    case DType::kFp16:
      return 16;
    case DType::kFp8:
    case DType::kInt8:
      return 8;
    case DType::kInt4:
    case DType::kFp4:
      return 4;
  }
  return 64;  // out of range: the table's first entry, as NameOf
}
/// Storage size in bytes per element (0.5 for 4-bit types).
inline double BytesOf(DType t) { return BitsOf(t) / 8.0; }
/// Lower-case name used on the command line and in device ceilings ("bf16").
std::string_view NameOf(DType t);
/// True for int8 / int4 (their ceilings are in OP/s, not FLOP/s).
bool IsInteger(DType t);
/// Parses "bf16", "fp16", "fp8", ... ; the error names `where` and lists the known names.
Result<DType> ParseDType(std::string_view text, const std::string& where);
/// The list of accepted dtype names, comma separated.
std::string DTypeNames();

}  // namespace roofline

#endif  // ROOFLINE_DTYPE_H_
