// Workload knobs: phase names and the checks of each knob on its own.
#include "roofline/workload.h"

#include <fmt/format.h>

namespace roofline {

std::string_view NameOf(Phase p) { return p == Phase::kPrefill ? "prefill" : "decode"; }

std::optional<LinearMerge> ParseLinearMerge(std::string_view text) {
  for (size_t i = 0; i < std::size(kLinearMergeNames); ++i) {
    if (kLinearMergeNames[i] == text) return static_cast<LinearMerge>(i);
  }
  return std::nullopt;
}

Status Validate(const Workload& w) {
  auto positive = [](int64_t v, const char* field, int64_t max) -> Status {
    if (v < 1 || v > max) {
      return Status::Invalid(field, fmt::format("must be between 1 and {}, got {}", max, v));
    }
    return Status::Ok();
  };
  Status s = positive(w.batch, "--batch", int64_t{1} << 24);
  if (s.ok()) s = positive(w.prompt, "--prompt", int64_t{1} << 30);
  if (s.ok() && w.context != 0) s = positive(w.context, "--context", int64_t{1} << 30);
  if (s.ok()) s = positive(w.tp, "--tp", 4096);
  if (s.ok() && w.pp != 0) s = positive(w.pp, "--pp", 100000);
  if (s.ok() && (w.group_size < 1 || w.group_size > (int64_t{1} << 20))) {
    s = Status::Invalid("--group-size", fmt::format("must be positive, got {}", w.group_size));
  }
  if (s.ok() && w.chunk != 0) s = positive(w.chunk, "chunk", int64_t{1} << 30);
  if (s.ok()) s = positive(w.chunk_seqs, "chunk_seqs", int64_t{1} << 24);
  if (s.ok() && (w.chunk_offset < 0 || w.chunk_offset > (int64_t{1} << 30))) {
    s = Status::Invalid("chunk_offset",
                        fmt::format("must be between 0 and 2^30, got {}", w.chunk_offset));
  }
  // The KV-cache dtypes the cost model and the footprint are written for: a 4-bit cache would
  // need its scales and dequantization modelled, which they are not.
  // Without --kv-dtype the cache takes the activations' dtype.
  const std::optional<DType> kv = w.kv_dtype.has_value() ? w.kv_dtype : w.dtype;
  if (s.ok() && kv.has_value() && (*kv == DType::kInt4 || *kv == DType::kFp4)) {
    s = Status::Invalid(w.kv_dtype.has_value() ? "--kv-dtype" : "--dtype",
                        fmt::format("a KV cache in {} is not modelled (its scales and "
                                    "dequantization are not); use bf16, fp16, fp8 or int8{}",
                                    NameOf(*kv), w.kv_dtype.has_value() ? "" : " with --kv-dtype"));
  }
  return s;
}

}  // namespace roofline
