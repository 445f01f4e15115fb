// Host (fp32) attention kernels of the CPU kernel runner, exposed for the tests.
#ifndef ROOFLINE_SRC_MEASURE_CPU_ATTENTION_KERNEL_H_
#define ROOFLINE_SRC_MEASURE_CPU_ATTENTION_KERNEL_H_

#include <cstdint>

#include "roofline/op.h"

namespace roofline {

/// Keys [begin, end) that one query sees.
struct KeyRange {
  int64_t begin = 0;
  int64_t end = 0;
};

/// The keys query `query` (0-based, < q_len) of `a` sees. Queries sit at the end of the kv
/// sequence: query i is at position p = kv_len - q_len + i.
///  * causal: keys j <= p, and with a window w also j > p - w (the w most recent keys);
///  * non-causal with a window w < kv_len: the w keys centred on p, shifted to stay inside
///    [0, kv_len) (so every query sees exactly w keys, as AttentionPairs counts);
///  * otherwise every key.
/// The ranges never move backwards as the query index grows. Summed over the queries they give
/// AttentionPairs(a, /*skip_masked=*/true).
KeyRange VisibleKeys(const AttentionSpec& a, int64_t query);

/// Fused attention in fp32: O = softmax(Q K^T / sqrt(head_dim)) V with the mask of VisibleKeys.
/// Layouts (row-major): Q [batch, heads, q_len, head_dim], K [batch, kv_heads, kv_len, head_dim],
/// V [batch, kv_heads, kv_len, v_dim], O [batch, heads, q_len, v_dim]. Query head h reads
/// key/value head h / (heads / kv_heads). With v_in_k (and v_dim <= head_dim), V is the first
/// v_dim columns of K's rows and `v` is not read (it may be null).
///
/// Tiled (flash-style): per (sequence, head, block of 64 queries) K and V stream in blocks of 64
/// keys, block products through cblas_sgemm, an online softmax (running max and sum) rescales
/// the accumulated output; key blocks that no query of the block sees are never touched.
/// Work is spread over `threads` threads (<= 0: every online CPU); BLAS runs single-threaded
/// meanwhile (restored afterwards). Throws std::bad_alloc when its scratch cannot be allocated.
void TiledAttentionFp32(const AttentionSpec& a, const float* q, const float* k, const float* v,
                        float* o, int threads);

/// Unfused attention in fp32 (same layouts and mask): per (sequence, head) the whole
/// q_len x kv_len score matrix through cblas_sgemm, a row softmax, then P V. Needs
/// threads x q_len x kv_len floats of scratch.
void UntiledAttentionFp32(const AttentionSpec& a, const float* q, const float* k, const float* v,
                          float* o, int threads);

}  // namespace roofline

#endif  // ROOFLINE_SRC_MEASURE_CPU_ATTENTION_KERNEL_H_
