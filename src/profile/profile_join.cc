// Measured kernels mapped onto a model's predicted kernels, by op class and launch order.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "roofline/model_analysis.h"
#include "roofline/profile.h"

namespace roofline {
namespace {

/// The step's predicted kernels in execution order, as indices into `predicted`. A run of
/// consecutive kernels of one layer group with repeat > 1 is one layer: it is emitted `repeat`
/// times as a block (exact for models whose layers are identical or come in contiguous groups).
std::vector<int> ExpandStep(const std::vector<PredictedKernel>& predicted) {
  std::vector<int> order;
  size_t i = 0;
  while (i < predicted.size()) {
    const PredictedKernel& k = predicted[i];
    if (k.repeat <= 1 || k.group.empty()) {
      for (int64_t r = 0; r < std::max<int64_t>(k.repeat, 1); ++r) {
        order.push_back(static_cast<int>(i));
      }
      ++i;
      continue;
    }
    size_t j = i;
    while (j < predicted.size() && predicted[j].group == k.group &&
           predicted[j].repeat == k.repeat) {
      ++j;
    }
    for (int64_t r = 0; r < k.repeat; ++r) {
      for (size_t x = i; x < j; ++x) order.push_back(static_cast<int>(x));
    }
    i = j;
  }
  return order;
}

OpClass ClassOfOp(OpKind kind) {
  switch (kind) {
    case OpKind::kMatmul:
      return OpClass::kGemm;
    case OpKind::kAttention:
      return OpClass::kAttention;
    case OpKind::kElementwise:
      return OpClass::kElementwise;
    case OpKind::kNorm:
      return OpClass::kNorm;
    case OpKind::kSoftmax:
      return OpClass::kSoftmax;
    case OpKind::kEmbedding:
      return OpClass::kCopy;
    case OpKind::kConv2d:
      return OpClass::kConv;
    case OpKind::kCollective:
      return OpClass::kComm;
  }
  return OpClass::kOther;
}

}  // namespace

std::vector<PredictedKernel> PredictedKernelsOf(const PhaseResult& phase, const CostModel& model) {
  std::vector<PredictedKernel> out;
  const Graph& g = phase.graph.graph;
  for (size_t i = 0; i < phase.kernels.size() && i < phase.costs.size(); ++i) {
    const Kernel& k = phase.kernels[i];
    const KernelCost& cost = phase.costs[i];
    PredictedKernel p;
    p.name = k.name;
    p.group = k.group;
    p.repeat = k.repeat;
    p.bound_s = cost.time_s;
    // --modules: the repeated K/V heads' copies run as copy kernels of their own, each with
    // its launch gap (a trace shows them in the copy class, not in attention's).
    const EfficiencyData::ModuleLaunches* modules = model.used_modules();
    if (cost.has_expected && cost.expected.grouped_kv_copy_s > 0 && modules != nullptr) {
      const double gap = cost.expected.overhead_s / static_cast<double>(cost.expected.launches);
      p.expected_copies_s =
          cost.expected.grouped_kv_copy_s + static_cast<double>(modules->grouped_kv) * gap;
    }
    p.expected_s = cost.has_expected ? cost.expected.time_s - p.expected_copies_s : 0;
    p.bound = model.BoundName(cost);
    p.flops = cost.flops;
    p.device_bytes = cost.num_levels > 0 ? cost.bytes[0] : 0;
    p.op_class = k.ops.empty() ? OpClass::kOther : ClassOfOp(g.ops()[k.ops.front()].kind());
    for (int op : k.ops) {
      const OpKind kind = g.ops()[op].kind();
      if (kind == OpKind::kAttention) p.op_class = OpClass::kAttention;
      if (kind == OpKind::kMatmul && p.op_class != OpClass::kAttention) p.op_class = OpClass::kGemm;
    }
    out.push_back(std::move(p));
  }
  return out;
}

ProfileJoin JoinWithPrediction(const std::vector<PredictedKernel>& predicted,
                               const std::vector<MeasuredKernel>& measured_in, bool ordered) {
  // cuBLAS runs a skinny product as a split-K GEMM followed by `splitKreduce_kernel` (seen on an
  // H100 for every decode projection of Llama-3-8B); one predicted matmul is both, so in launch
  // order a reduction is folded into the GEMM before it.
  // A GEMM whose FLOPs are known and under 1% of both the smallest predicted matmul's and the
  // median of the profile's own GEMMs is none of the predicted kernels (HuggingFace's Llama
  // computes the rotary frequencies as a [64,1] x [1,1] fp32 product once per step): mapped, it
  // would shift every projection after it by one. The second test keeps every GEMM when the
  // prediction is of another workload than the profile.
  double smallest_gemm = 0;
  for (const PredictedKernel& p : predicted) {
    if (p.op_class == OpClass::kGemm && p.flops > 0) {
      smallest_gemm = smallest_gemm > 0 ? std::min(smallest_gemm, p.flops) : p.flops;
    }
  }
  std::vector<double> gemm_flops;
  for (const MeasuredKernel& m : measured_in) {
    if (m.op_class == OpClass::kGemm && m.flops >= 0) gemm_flops.push_back(m.flops);
  }
  double median_gemm = 0;
  if (!gemm_flops.empty()) {
    std::nth_element(gemm_flops.begin(), gemm_flops.begin() + gemm_flops.size() / 2,
                     gemm_flops.end());
    median_gemm = gemm_flops[gemm_flops.size() / 2];
  }
  const auto negligible = [&](const MeasuredKernel& m) {
    return m.op_class == OpClass::kGemm && m.flops >= 0 && smallest_gemm > 0 &&
           m.flops < 0.01 * smallest_gemm && m.flops < 0.01 * median_gemm;
  };
  std::vector<MeasuredKernel> measured;
  measured.reserve(measured_in.size());
  int64_t folded = 0, tiny = 0;
  double tiny_s = 0;
  bool after_tiny = false;  // a reduction right after a left-out GEMM belongs to it
  for (const MeasuredKernel& m : measured_in) {
    const bool reduction = m.name.find("splitKreduce_kernel") != std::string::npos;
    if (ordered && reduction && after_tiny) {
      tiny_s += m.time_s;
      continue;
    }
    after_tiny = false;
    if (ordered && reduction && !measured.empty() && measured.back().op_class == OpClass::kGemm &&
        m.count == measured.back().count) {
      measured.back().time_s += m.time_s;
      folded += m.count;
      continue;
    }
    if (ordered && negligible(m)) {
      tiny += m.count;
      tiny_s += m.time_s;
      after_tiny = true;
      continue;
    }
    measured.push_back(m);
  }
  ProfileJoin join;
  join.ordered = ordered;
  const std::vector<int> step = ExpandStep(predicted);
  std::array<std::vector<int>, kNumOpClasses> per_class;  // the step's kernels of each class
  for (int index : step) per_class[static_cast<int>(predicted[index].op_class)].push_back(index);

  std::array<ClassJoin, kNumOpClasses> classes{};
  double copies_s = 0;  // per step
  for (int c = 0; c < kNumOpClasses; ++c) {
    classes[c].op_class = static_cast<OpClass>(c);
    classes[c].predicted_per_step = static_cast<int64_t>(per_class[c].size());
    for (int index : per_class[c]) {
      classes[c].predicted_s_per_step += predicted[index].bound_s;
      classes[c].expected_s_per_step += predicted[index].expected_s;
      // Copies the framework runs beside a kernel are measured as copy kernels.
      classes[static_cast<int>(OpClass::kCopy)].expected_s_per_step +=
          predicted[index].expected_copies_s;
      copies_s += predicted[index].expected_copies_s;
    }
  }
  join.rows.resize(predicted.size());
  for (size_t i = 0; i < predicted.size(); ++i) join.rows[i].predicted = predicted[i];
  std::vector<double> sum(predicted.size(), 0);
  std::vector<std::map<std::string, int64_t>> names(predicted.size());
  std::array<int64_t, kNumOpClasses> seen{};
  for (const MeasuredKernel& m : measured) {
    const int c = static_cast<int>(m.op_class);
    classes[c].measured += m.count;
    classes[c].measured_s += m.time_s;
    if (!ordered || per_class[c].empty()) continue;
    const int index = per_class[c][static_cast<size_t>(seen[c] % per_class[c].size())];
    ++seen[c];
    join.rows[index].matched += m.count;
    sum[index] += m.time_s;
    const double want = predicted[index].flops;
    // GEMMs only: their FLOPs follow from the shapes alone, while an eager run's pointwise ops
    // map onto a prediction's fused ones loosely.
    if (m.op_class == OpClass::kGemm && m.flops_from_shapes && m.flops >= 0 && want > 0) {
      join.mismatch.shapes_checked += m.count;
      if (m.flops > 2 * want || 2 * m.flops < want) join.mismatch.shapes_off += m.count;
    }
    ++names[index][m.name];
  }
  for (size_t i = 0; i < predicted.size(); ++i) {
    JoinRow& r = join.rows[i];
    if (r.matched == 0) continue;
    r.measured_s = sum[i] / static_cast<double>(r.matched);
    r.efficiency = r.measured_s > 0 ? r.predicted.bound_s / r.measured_s : 0;
    r.of_expected = r.measured_s > 0 ? r.predicted.expected_s / r.measured_s : 0;
    int64_t best = 0;
    for (const auto& [name, n] : names[i]) {
      if (n > best) {
        best = n;
        r.example = name;
      }
    }
    if (r.efficiency > 1.05) {
      ++join.mismatch.faster_than_bound;
      join.mismatch.max_efficiency = std::max(join.mismatch.max_efficiency, r.efficiency);
      join.notes.push_back(fmt::format(
          "{}: measured {:.3g} us is below the predicted bound {:.3g} us: the kernel mapped onto "
          "it is not the one predicted, or the workload flags differ from the profiled run",
          r.predicted.name, 1e6 * r.measured_s, 1e6 * r.predicted.bound_s));
    }
  }
  for (int c = 0; c < kNumOpClasses; ++c) {
    ClassJoin& cj = classes[c];
    if (cj.predicted_per_step > 0) {
      cj.steps = static_cast<double>(cj.measured) / static_cast<double>(cj.predicted_per_step);
    }
    if (cj.predicted_per_step == 0 && cj.measured == 0 && !(cj.expected_s_per_step > 0)) continue;
    join.classes.push_back(cj);
  }
  for (const ClassJoin& cj : join.classes) {
    const bool structural = cj.op_class == OpClass::kGemm || cj.op_class == OpClass::kAttention ||
                            cj.op_class == OpClass::kNorm;
    if (!structural || cj.predicted_per_step == 0 || cj.measured == 0) continue;
    JoinMismatch& mm = join.mismatch;
    if (mm.fewest_steps == 0 || cj.steps < mm.fewest_steps) {
      mm.fewest_steps = cj.steps;
      mm.fewest_class = cj.op_class;
    }
    if (cj.steps > mm.most_steps) {
      mm.most_steps = cj.steps;
      mm.most_class = cj.op_class;
    }
  }
  const ClassJoin* gemm = nullptr;
  for (const ClassJoin& cj : join.classes) {
    if (cj.op_class == OpClass::kGemm && cj.predicted_per_step > 0) gemm = &cj;
  }
  if (gemm) {
    join.steps = gemm->steps;
  } else {
    for (const ClassJoin& cj : join.classes) join.steps = std::max(join.steps, cj.steps);
  }
  if (tiny > 0) {
    join.notes.insert(join.notes.begin(),
                      fmt::format("{} GEMM call(s) under 1% of the FLOPs of the smallest predicted "
                                  "matmul and of the profile's median GEMM ({:.4g} us in all) left "
                                  "out of the mapping: none of the predicted kernels",
                                  tiny, 1e6 * tiny_s));
  }
  if (folded > 0) {
    join.notes.insert(join.notes.begin(),
                      fmt::format("{} split-K reduction kernel(s) (splitKreduce_kernel) folded "
                                  "into the GEMM launched just before each",
                                  folded));
  }
  if (ordered) {
    join.notes.insert(
        join.notes.begin(),
        "mapping: within each op class, the i-th measured kernel in launch order is the "
        "(i mod n)-th predicted kernel of that class in the step's execution order (n = the "
        "class's kernels per step); measured times are means over every kernel mapped");
  } else {
    join.notes.insert(join.notes.begin(),
                      "mapping: the profile has no launch order (a summary), so measured and "
                      "predicted time are compared per op class only");
  }
  if (copies_s > 0) {
    join.notes.push_back(fmt::format(
        "copy: the expected time per step includes {:.4g} ms of the copies of repeated K/V heads "
        "that the framework's attention makes (--modules), measured as copy kernels; attention's "
        "rows leave them out",
        1e3 * copies_s));
  }
  for (const ClassJoin& cj : join.classes) {
    if (cj.predicted_per_step == 0) {
      if (cj.measured == 0) continue;  // only the framework's copies (noted above)
      join.notes.push_back(
          fmt::format("{} measured {} kernel(s) ({:.4g} ms) that the prediction has no kernel for",
                      cj.measured, NameOf(cj.op_class), 1e3 * cj.measured_s));
    } else if (ordered && cj.measured % cj.predicted_per_step != 0) {
      join.notes.push_back(fmt::format(
          "{}: {} measured for {} predicted per step is not a whole number of steps ({:.2f}): "
          "the mapping of the last step is partial",
          NameOf(cj.op_class), cj.measured, cj.predicted_per_step, cj.steps));
    }
  }
  return join;
}

}  // namespace roofline
