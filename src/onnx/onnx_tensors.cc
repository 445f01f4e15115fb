// Tensor sizes for the ONNX frontend: element types, initializer checks (absurd or inconsistent
// sizes) and overflow checks of inferred shapes.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "src/onnx/onnx_internal.h"

namespace roofline::onnx_frontend {

using onnx::TensorProto;

std::optional<int64_t> ElementCount(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

double ElemTypeBytes(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64:
      return 8;
    case TensorProto::COMPLEX128:
      return 16;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
      return 2;
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      return 1;
    default:
      // FLOAT8 variants (17-20) are one byte, 4-bit types (21, 22) half a byte.
      if (elem_type >= 17 && elem_type <= 20) return 1;
      if (elem_type == 21 || elem_type == 22) return 0.5;
      return 0;
  }
}

bool IsFloatElemType(int32_t elem_type) {
  return elem_type == TensorProto::FLOAT || elem_type == TensorProto::DOUBLE ||
         elem_type == TensorProto::FLOAT16 || elem_type == TensorProto::BFLOAT16 ||
         (elem_type >= 17 && elem_type <= 20);
}

DType DTypeOfElemType(int32_t elem_type) {
  // Names of docs/graph-format.md; where this build's DType lacks one, the type of the same size.
  const char* name = nullptr;
  DType same_size = DType::kFp32;
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kFp32;
    case TensorProto::DOUBLE:
      return DType::kFp64;
    case TensorProto::FLOAT16:
      return DType::kFp16;
    case TensorProto::BFLOAT16:
      return DType::kBf16;
    case TensorProto::INT8:
      return DType::kInt8;
    case TensorProto::INT64:
      name = "int64";
      same_size = DType::kFp64;
      break;
    case TensorProto::UINT64:
      name = "int64";
      same_size = DType::kFp64;
      break;
    case TensorProto::INT32:
      name = "int32";
      same_size = DType::kFp32;
      break;
    case TensorProto::UINT32:
      name = "int32";
      same_size = DType::kFp32;
      break;
    case TensorProto::INT16:
      name = "int16";
      same_size = DType::kFp16;
      break;
    case TensorProto::UINT16:
      name = "int16";
      same_size = DType::kFp16;
      break;
    case TensorProto::UINT8:
      name = "uint8";
      same_size = DType::kInt8;
      break;
    case TensorProto::BOOL:
      name = "bool";
      same_size = DType::kInt8;
      break;
    case TensorProto::COMPLEX64:
      return DType::kFp64;
    default:
      if (elem_type >= 17 && elem_type <= 20) return DType::kFp8;
      if (elem_type == 21 || elem_type == 22) return DType::kInt4;
      return DType::kFp32;
  }
  auto parsed = ParseDType(name, "");
  return parsed.ok() ? *parsed : same_size;
}

Status CheckInitializer(const TensorProto& t, const std::string& origin) {
  const std::string where = origin + ": initializer '" + t.name() + "'";
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  std::string text;
  for (int64_t d : dims) text += (text.empty() ? "" : " x ") + std::to_string(d);
  if (text.empty()) text = "scalar";
  for (int64_t d : dims) {
    if (d < 0) return Status::Invalid(where, "has a negative dimension (" + text + ")");
  }
  const auto count = ElementCount(dims);
  const double bytes_per = ElemTypeBytes(t.data_type());
  if (!count || (bytes_per > 0 && static_cast<double>(*count) * bytes_per > 9.0e18)) {
    return Status::Invalid(where, "absurd size " + text + ": the element count overflows");
  }
  if (t.data_location() == TensorProto::EXTERNAL) {
    for (const auto& kv : t.external_data()) {
      if (kv.key() != "length") continue;
      char* end = nullptr;
      const double length = std::strtod(kv.value().c_str(), &end);
      if (bytes_per > 0 && length + 0.5 < static_cast<double>(*count) * bytes_per) {
        return Status::Invalid(where, "external data length " + kv.value() +
                                          " bytes is shorter than its dims " + text + " need");
      }
    }
    return Status::Ok();
  }
  int64_t stored = -1;  // elements the file holds (-1: not checked)
  if (!t.raw_data().empty()) {
    if (bytes_per > 0) stored = static_cast<int64_t>(t.raw_data().size() / bytes_per);
  } else {
    switch (t.data_type()) {
      case TensorProto::FLOAT:
        stored = t.float_data_size();
        break;
      case TensorProto::COMPLEX64:
        stored = t.float_data_size() / 2;
        break;
      case TensorProto::DOUBLE:
        stored = t.double_data_size();
        break;
      case TensorProto::COMPLEX128:
        stored = t.double_data_size() / 2;
        break;
      case TensorProto::INT64:
        stored = t.int64_data_size();
        break;
      case TensorProto::UINT32:
      case TensorProto::UINT64:
        stored = t.uint64_data_size();
        break;
      case TensorProto::STRING:
        stored = t.string_data_size();
        break;
      case TensorProto::INT32:
      case TensorProto::INT16:
      case TensorProto::INT8:
      case TensorProto::UINT16:
      case TensorProto::UINT8:
      case TensorProto::BOOL:
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16:
        stored = t.int32_data_size();
        break;
      default:
        break;
    }
  }
  // 4-bit types pack two elements per byte or int32: only check they are not short.
  const bool packed = bytes_per > 0 && bytes_per < 1;
  if (stored >= 0 && !packed && stored != *count) {
    return Status::Invalid(where, "its dims " + text + " hold " + std::to_string(*count) +
                                      " elements but the file stores " + std::to_string(stored));
  }
  return Status::Ok();
}

Status CheckNodeAttributes(const onnx::GraphProto& graph, const std::string& origin) {
  static const std::set<std::string> kWindowOps = {
      "Conv",   "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",   "AveragePool",
      "LpPool", "MaxUnpool",     "DeformConv",  "Col2Im",      "MaxRoiPool"};
  // [min, max] per attribute: windows of up to 2^20, pads and output sizes up to 2^31.
  static const std::map<std::string, std::pair<int64_t, int64_t>> kRanges = {
      {"kernel_shape", {1, int64_t{1} << 20}},   {"strides", {1, int64_t{1} << 20}},
      {"dilations", {1, int64_t{1} << 20}},      {"pads", {0, int64_t{1} << 31}},
      {"output_padding", {0, int64_t{1} << 20}}, {"output_shape", {0, int64_t{1} << 31}},
      {"group", {1, int64_t{1} << 31}}};
  for (const auto& n : graph.node()) {
    if (kWindowOps.count(n.op_type()) == 0) continue;
    for (const auto& a : n.attribute()) {
      auto range = kRanges.find(a.name());
      if (range == kRanges.end()) continue;
      std::vector<int64_t> values(a.ints().begin(), a.ints().end());
      if (a.type() == onnx::AttributeProto::INT) values.push_back(a.i());
      for (int64_t v : values) {
        if (v >= range->second.first && v <= range->second.second) continue;
        return Status::Invalid(origin + ": node '" + n.name() + "' (" + n.op_type() + ")",
                               "attribute " + a.name() + " value " + std::to_string(v) +
                                   " is out of range [" + std::to_string(range->second.first) +
                                   ", " + std::to_string(range->second.second) + "]");
      }
    }
  }
  return Status::Ok();
}

Status CheckValueSizes(const onnx::GraphProto& graph, const std::string& origin) {
  std::map<std::string, std::string> writer;
  for (const auto& n : graph.node()) {
    for (const auto& o : n.output()) writer[o] = n.name().empty() ? n.op_type() : n.name();
  }
  auto check = [&](const onnx::ValueInfoProto& vi) -> Status {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return Status::Ok();
    std::vector<int64_t> dims;
    std::string text;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 0) return Status::Ok();
      dims.push_back(d.dim_value());
      text += (text.empty() ? "" : " x ") + std::to_string(d.dim_value());
    }
    const auto count = ElementCount(dims);
    const double bytes = ElemTypeBytes(vi.type().tensor_type().elem_type());
    if (count && static_cast<double>(*count) * std::max(bytes, 1.0) <= 9.0e18) {
      return Status::Ok();
    }
    auto w = writer.find(vi.name());
    return Status::Invalid(origin,
                           "tensor '" + vi.name() + "'" +
                               (w == writer.end() ? "" : " (output of node '" + w->second + "')") +
                               " has absurd size " + text + ": the element count overflows");
  };
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& vi : *list) {
      if (Status s = check(vi); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace roofline::onnx_frontend
