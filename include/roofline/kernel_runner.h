// Running an op graph's kernels for real on the host CPU and timing them.
#ifndef ROOFLINE_KERNEL_RUNNER_H_
#define ROOFLINE_KERNEL_RUNNER_H_

#include <string>
#include <vector>

#include "roofline/graph.h"
#include "roofline/status.h"

namespace roofline {

/// How to time.
struct RunOptions {
  int threads = 0;         ///< 0: every online CPU (BLAS and the parallel loops)
  int repetitions = 5;     ///< timed runs after one warm-up; the median is reported
  double max_seconds = 2;  ///< stop repeating an op once this much time was spent on it
  /// Before the warm-up and every timed run, write a buffer twice the size of the last-level
  /// cache, so each run starts cold as the roofline bound assumes (data in device memory).
  bool flush_caches = true;
  /// Attention runs as a tiled (flash-style) kernel when true; eager attention is always three
  /// ops in the graph (attn_qk, attn_softmax, attn_pv) and runs as such.
  bool tiled_attention = true;
  /// Ops whose buffers would exceed this many bytes are skipped (reported as skipped).
  double max_bytes = 4e9;
};

/// The measured time of one op.
struct OpTiming {
  int op = -1;  ///< index in the graph
  std::string name;
  double seconds = 0;  ///< median of the repetitions; 0 when skipped
  double spread = 0;   ///< (max - min) / median
  int repetitions = 0;
  bool skipped = false;
  std::string why_skipped;
  std::string implementation;  ///< "cblas_sgemm", "tiled attention (fp32)", "loop"
};

/// Runs every op of `graph` once per repetition, in fp32 (the host computes in fp32 whatever the
/// op's dtype; the byte counts of the prediction keep the op's dtype), with random inputs, and
/// times it. Matmuls go through BLAS (cblas_sgemm, batched as a loop); attention through a tiled
/// fp32 kernel; softmax, norms, elementwise, embedding through threaded loops. Collectives are
/// skipped (single host).
Result<std::vector<OpTiming>> RunGraphOnCpu(const Graph& graph, const RunOptions& options);

}  // namespace roofline

#endif  // ROOFLINE_KERNEL_RUNNER_H_
