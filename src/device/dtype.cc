#include "roofline/dtype.h"

#include <array>
#include <utility>

#include "roofline/suggest.h"

namespace roofline {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  int bits;
};

constexpr std::array<DTypeInfo, 9> kDTypes = {{
    {DType::kFp64, "fp64", 64},
    {DType::kFp32, "fp32", 32},
    {DType::kTf32, "tf32", 32},
    {DType::kBf16, "bf16", 16},
    {DType::kFp16, "fp16", 16},
    {DType::kFp8, "fp8", 8},
    {DType::kInt8, "int8", 8},
    {DType::kInt4, "int4", 4},
    {DType::kFp4, "fp4", 4},
}};

// The table is in enum order, so a type's entry is at its index.
constexpr bool InEnumOrder() {
  for (size_t i = 0; i < kDTypes.size(); ++i) {
    if (static_cast<size_t>(kDTypes[i].type) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder());

// The header's BitsOf agrees with the table.
constexpr bool BitsAgree() {
  for (const DTypeInfo& d : kDTypes) {
    if (BitsOf(d.type) != d.bits) return false;
  }
  return true;
}
static_assert(BitsAgree());

const DTypeInfo& Info(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < kDTypes.size() ? kDTypes[i] : kDTypes[0];
}

}  // namespace

std::string_view NameOf(DType t) { return Info(t).name; }
bool IsInteger(DType t) { return t == DType::kInt8 || t == DType::kInt4; }

std::string DTypeNames() {
  std::string out;
  for (const auto& d : kDTypes) {
    if (!out.empty()) out += ", ";
    out += d.name;
  }
  return out;
}

Result<DType> ParseDType(std::string_view text, const std::string& where) {
  for (const auto& d : kDTypes) {
    if (d.name == text) return d.type;
  }
  // Common aliases users type.
  static const std::array<std::pair<std::string_view, DType>, 7> kAliases = {{
      {"bfloat16", DType::kBf16},
      {"float16", DType::kFp16},
      {"half", DType::kFp16},
      {"float32", DType::kFp32},
      {"float", DType::kFp32},
      {"float64", DType::kFp64},
      {"float8", DType::kFp8},
  }};
  for (const auto& [alias, type] : kAliases) {
    if (alias == text) return type;
  }
  std::vector<std::string> names;
  for (const auto& d : kDTypes) names.emplace_back(d.name);
  return Status::Invalid(where, "unknown dtype '" + std::string(text) + "'" +
                                    DidYouMean(std::string(text), names) +
                                    " (expected one of: " + DTypeNames() + ")");
}

}  // namespace roofline
