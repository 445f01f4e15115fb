// What `roofline op KIND` takes, as one table per operator kind: each field's name, flag, type,
// default and help, from which the command line's options are generated, and the one function
// that reads the given texts into an OpRequest (sizes take k and M, every message names the
// flag).
#ifndef ROOFLINE_OP_FIELDS_H_
#define ROOFLINE_OP_FIELDS_H_

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "roofline/op_analysis.h"
#include "roofline/status.h"

namespace roofline {

enum class OpFieldType {
  kSize,   ///< an integer size (tokens, rows, features); k (x1024) and M (x1024^2) suffixes
  kCount,  ///< an integer count (heads, groups, strides); takes k and M too
  kReal,   ///< a decimal number
  kDType,  ///< a dtype name (ParseDType)
  kText,   ///< free text the kind reads (conv2d's R or RxS)
  kChoice, ///< one of `choices`
  kFlag,   ///< present or not
};

struct OpField {
  std::string_view name;      ///< "kv-len": the flag without its dashes, the key of the values
  OpFieldType type;
  bool required = false;
  std::string_view fallback;  ///< the default as text ("" when there is none or it is derived)
  std::string_view help;
  std::span<const std::string_view> choices = {};
};

struct OpKindInfo {
  std::string_view name;  ///< "matmul"
  std::string_view help;  ///< what it computes, and an example command
  std::span<const OpField> fields;
};

/// Every kind, in the order `roofline op --help` lists them.
std::span<const OpKindInfo> OpKinds();

/// The kind named `name`, or null.
const OpKindInfo* FindOpKind(std::string_view name);

/// Reads `given` (field name -> text as typed; a flag's text is "true") into the kind's
/// request, with the activation dtype `dtype` ("bf16"). Fields not given take their defaults.
/// Errors name the flag ("--m: '2q' is not a size ...") and include the spec's own checks.
Result<OpRequest> BuildOpRequest(const OpKindInfo& kind,
                                 const std::map<std::string, std::string, std::less<>>& given,
                                 std::string_view dtype);

}  // namespace roofline

#endif  // ROOFLINE_OP_FIELDS_H_
