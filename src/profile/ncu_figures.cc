// The roofline figures of one Nsight Compute kernel: time, FLOP per precision, tensor work, bytes
// per memory level and the peaks measured with it, each noting how it was obtained.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "roofline/profile.h"

namespace roofline {
namespace {

/// FLOP per tensor-pipe warp instruction (`sm__inst_executed_pipe_tensor.sum`), only for the
/// architectures where a published source gives one.
/// * 7.0 (GV100): 512. Nsight Compute's "SpeedOfLight_HierarchicalTensorRooflineChart.section"
///   (ncu 2020-2022) draws the tensor roof as sm__inst_executed_pipe_tensor.sum.peak_sustained
///   x 512 x sm__cycles_elapsed.avg.per_second; on Volta a 16x16x16 wmma (8192 FLOP) with FP32
///   accumulation issues 16 HMMA.884 instructions, 512 FLOP each. With FP16 accumulation it
///   issues 8 (1024 each), so the factor is an assumption even there.
/// Later architectures mix instruction shapes (HMMA.1688 = 2048 FLOP, HMMA.16816 = 4096, DMMA,
/// IMMA) and count the work itself in `sm__ops_path_tensor_*`; an NVIDIA developer-forum thread
/// ("Number of floating point operations in one HMMA instruction", A100 TF32 mma) shows the x512
/// rule under-counting there, so no factor is guessed for them.
struct TensorInstFactor {
  std::string_view cc;
  double flops_per_inst;
};
constexpr TensorInstFactor kTensorInstFactors[] = {{"7.0", 512.0}};

/// Reads one kernel's metrics into an NcuFigures, recording what is missing and how.
class Deriver {
 public:
  Deriver(const NcuKernel& k, NcuFigures* f) : k_(k), f_(f) {}

  void Run() {
    f_->duration_s = Duration();
    for (std::string_view clock : {"sm__cycles_elapsed.avg.per_second",
                                   "smsp__cycles_elapsed.avg.per_second", "SM Frequency"}) {
      if (const double* v = Get(clock); v != nullptr && *v > 0) {
        f_->sm_clock_hz = *v;
        break;
      }
    }
    f_->fp64_flops = VectorFlops('d', 1);
    f_->fp32_flops = VectorFlops('f', 1);
    f_->fp16_flops = VectorFlops('h', 2);
    if (f_->fp16_flops && *f_->fp16_flops > 0) {
      Note(
          "fp16 FLOP = 2 hadd + 2 hmul + 4 hfma: every half instruction counted as a paired "
          "half2 (HADD2/HMUL2/HFMA2); a scalar half instruction is counted twice");
    }
    Tensor();
    f_->dram_bytes = DramBytes();
    f_->l2_bytes = Bytes("lts__t_bytes");
    f_->l1_bytes = Bytes("l1tex__t_bytes");
    Peaks();
  }

 private:
  const double* Get(std::string_view name) const { return k_.Find(name); }

  void Missing(const std::string& name) {
    if (std::find(f_->missing.begin(), f_->missing.end(), name) == f_->missing.end()) {
      f_->missing.push_back(name);
    }
  }
  void Note(const std::string& note) {
    if (std::find(f_->notes.begin(), f_->notes.end(), note) == f_->notes.end()) {
      f_->notes.push_back(note);
    }
  }

  std::optional<double> Duration() {
    for (std::string_view name : {"gpu__time_duration.sum", "gpu__time_duration.avg"}) {
      if (const double* v = Get(name)) return *v;
    }
    if (const double* v = Get("Duration")) {
      Note("duration from the details page's \"Duration\" (GPU Speed Of Light section)");
      return *v;
    }
    for (std::string_view unit : {"smsp", "sm"}) {
      const double* cycles = Get(fmt::format("{}__cycles_elapsed.avg", unit));
      const double* rate = Get(fmt::format("{}__cycles_elapsed.avg.per_second", unit));
      if (cycles != nullptr && rate != nullptr && *rate > 0) {
        Note(
            fmt::format("duration = {0}__cycles_elapsed.avg / {0}__cycles_elapsed.avg.per_second "
                        "(no gpu__time_duration.sum)",
                        unit));
        return *cycles / *rate;
      }
    }
    Missing("gpu__time_duration.sum");
    return std::nullopt;
  }

  /// A `.sum` counter of `base` ("sass_thread_inst_executed_op_ffma_pred_on") under the sm__ or
  /// smsp__ prefix, or its `.sum.per_cycle_elapsed` rate times the elapsed cycles.
  std::optional<double> Count(std::string_view base) {
    for (std::string_view unit : {"sm", "smsp"}) {
      if (const double* v = Get(fmt::format("{}__{}.sum", unit, base))) return *v;
    }
    for (std::string_view unit : {"smsp", "sm"}) {
      const double* rate = Get(fmt::format("{}__{}.sum.per_cycle_elapsed", unit, base));
      if (rate == nullptr) continue;
      if (const double* cycles = Get(fmt::format("{}__cycles_elapsed.avg", unit))) {
        Note(fmt::format("counts from .sum.per_cycle_elapsed x {}__cycles_elapsed.avg", unit));
        return *rate * *cycles;
      }
      const double* per_s = Get(fmt::format("{}__cycles_elapsed.avg.per_second", unit));
      if (per_s != nullptr && f_->duration_s) {
        Note(fmt::format(
            "counts from .sum.per_cycle_elapsed x {}__cycles_elapsed.avg.per_second x duration",
            unit));
        return *rate * *per_s * *f_->duration_s;
      }
    }
    return std::nullopt;
  }

  /// add + mul + 2 fma, each times `weight` (2 for half2); all three counts or nothing.
  std::optional<double> VectorFlops(char precision, double weight) {
    double flops = 0;
    std::string have, lack;
    for (const auto& [op, per_inst] : {std::pair{"add", 1.0}, {"mul", 1.0}, {"fma", 2.0}}) {
      const std::string base =
          fmt::format("sass_thread_inst_executed_op_{}{}_pred_on", precision, op);
      const std::optional<double> n = Count(base);
      std::string& list = n ? have : lack;
      list += fmt::format("{}{}{}", list.empty() ? "" : ", ", precision, op);
      if (!n) {
        Missing("sm__" + base + ".sum");
        continue;
      }
      flops += weight * per_inst * *n;
    }
    if (have.empty()) return std::nullopt;
    if (!lack.empty()) {
      Note(fmt::format("{} FLOP counted from {} only ({} not collected): a lower bound",
                       precision == 'd'   ? "fp64"
                       : precision == 'f' ? "fp32"
                                          : "fp16",
                       have, lack));
    }
    return flops;
  }

  /// Tensor work: `sm__ops_path_tensor_src_<dtype>[_dst_<dtype>]` counters (one op = one FLOP),
  /// else the tensor-pipe instruction count where a factor is known.
  void Tensor() {
    std::map<std::string, double> plain, split;  // "src_fp16_dst_fp32" -> ops
    for (const auto& [name, value] : k_.metrics) {
      const size_t at = name.find("__ops_path_tensor");
      if (at == std::string::npos || !(name.starts_with("sm__") || name.starts_with("smsp__"))) {
        continue;
      }
      const std::string unit = name.substr(0, at);
      std::string path = name.substr(at);
      const size_t dot = path.find('.');
      if (dot == std::string::npos) continue;
      const std::string suffix = path.substr(dot);
      path.erase(dot);
      double ops = value;
      if (suffix == ".sum.per_cycle_elapsed") {
        const double* cycles = Get(unit + "__cycles_elapsed.avg");
        if (cycles == nullptr) continue;
        ops *= *cycles;
      } else if (suffix != ".sum") {
        continue;  // peaks, percentages, rates per second
      }
      const size_t src = path.find("src_");
      if (src == std::string::npos) continue;
      path.erase(0, src);
      bool sparsity_variant = false;
      for (std::string_view s : {"_sparsity_on", "_sparsity_off"}) {
        if (path.ends_with(s)) {
          path.erase(path.size() - s.size());
          sparsity_variant = true;
        }
      }
      if (path.size() <= 4) continue;  // "src_" with no dtype after it: not a tensor path
      if (sparsity_variant) {
        split[path] += ops;
      } else {
        plain.emplace(path, ops);  // first wins (op_hmma_ variants repeat the same work)
      }
    }
    for (const auto& [path, ops] : split) plain.emplace(path, ops);
    if (plain.empty()) return TensorFromInstructions();

    std::map<std::string, double> by_dtype;
    double total = 0;
    for (const auto& [path, ops] : plain) {
      std::string dtype = path.substr(4, path.find("_dst") - 4);
      by_dtype[dtype] += ops;
      total += ops;
      if (ops > by_dtype_best_ops_) {
        by_dtype_best_ops_ = ops;
        tensor_path_ = path;
      }
    }
    f_->tensor_flops = total;
    Note("tensor FLOP = sm__ops_path_tensor_* ops (one op = one FLOP, 2 per multiply-add)");
    if (total <= 0) return;
    std::string mix;
    double best = -1;
    for (const auto& [dtype, ops] : by_dtype) {
      if (ops > best) {
        best = ops;
        f_->tensor_dtype = dtype;
      }
      if (ops > 0) mix += fmt::format("{}{} {:.4g}", mix.empty() ? "" : ", ", dtype, ops);
    }
    if (std::count_if(by_dtype.begin(), by_dtype.end(), [](auto& d) { return d.second > 0; }) > 1) {
      Note("tensor work of several types (" + mix + " FLOP); tensor_dtype is the largest");
    }
  }

  void TensorFromInstructions() {
    const std::optional<double> inst = Count("inst_executed_pipe_tensor");
    if (!inst) {
      Missing("sm__ops_path_tensor_src_*.sum");
      return;
    }
    if (*inst == 0) {
      f_->tensor_flops = 0;
      Note("no tensor-pipe instructions (inst_executed_pipe_tensor = 0)");
      return;
    }
    for (const TensorInstFactor& t : kTensorInstFactors) {
      if (t.cc != k_.cc) continue;
      f_->tensor_flops = *inst * t.flops_per_inst;
      f_->tensor_dtype = "fp16";
      Note(fmt::format(
          "ASSUMPTION: tensor FLOP = {:.6g} tensor-pipe instructions x {} FLOP per instruction "
          "(CC {}, Nsight Compute's tensor roofline factor; exact only for FP32-accumulating "
          "HMMA)",
          *inst, t.flops_per_inst, t.cc));
      return;
    }
    Note(fmt::format(
        "inst_executed_pipe_tensor ({:.6g} instructions) unusable on CC {}: no published FLOP "
        "per instruction for this architecture; collect sm__ops_path_tensor_src_*.sum",
        *inst, k_.cc.empty() ? "?" : k_.cc));
    Missing("sm__ops_path_tensor_src_*.sum");
  }

  /// `<base>.sum`, else `<base>.sum.per_second` x duration.
  std::optional<double> Bytes(const std::string& base) {
    if (const double* v = Get(base + ".sum")) return *v;
    if (const double* rate = Get(base + ".sum.per_second"); rate != nullptr && f_->duration_s) {
      Note(base + ".sum = .sum.per_second x duration");
      return *rate * *f_->duration_s;
    }
    Missing(base + ".sum");
    return std::nullopt;
  }

  std::optional<double> DramBytes() {
    if (Get("dram__bytes.sum") == nullptr) {
      const double* read = Get("dram__bytes_read.sum");
      const double* write = Get("dram__bytes_write.sum");
      if (read != nullptr && write != nullptr) {
        Note("dram bytes = dram__bytes_read.sum + dram__bytes_write.sum");
        return *read + *write;
      }
      if (read != nullptr || write != nullptr) {
        Missing(read == nullptr ? "dram__bytes_read.sum" : "dram__bytes_write.sum");
        return std::nullopt;
      }
    }
    return Bytes("dram__bytes");
  }

  /// `<per_cycle>` x `<cycles_per_s>` x `factor`, when both are there.
  std::optional<double> Peak(const std::string& per_cycle, const std::string& cycles_per_s,
                             double factor) const {
    const double* a = Get(per_cycle);
    const double* b = Get(cycles_per_s);
    if (a == nullptr || b == nullptr) return std::nullopt;
    return *a * *b * factor;
  }

  void Peaks() {
    const std::string sm_clock = Get("sm__cycles_elapsed.avg.per_second") != nullptr
                                     ? "sm__cycles_elapsed.avg.per_second"
                                     : "smsp__cycles_elapsed.avg.per_second";
    auto fma_peak = [&](char p, double flops_per_inst) {
      return Peak(
          fmt::format("sm__sass_thread_inst_executed_op_{}fma_pred_on.sum.peak_sustained", p),
          sm_clock, flops_per_inst);
    };
    f_->peak_fp64_flops_per_s = fma_peak('d', 2);
    f_->peak_fp32_flops_per_s = fma_peak('f', 2);
    f_->peak_fp16_flops_per_s = fma_peak('h', 4);  // half2, as the fp16 count
    if (!tensor_path_.empty()) {
      const std::string base = "sm__ops_path_tensor_" + tensor_path_;
      f_->peak_tensor_flops_per_s = Peak(base + "_sparsity_off.sum.peak_sustained", sm_clock, 1);
      if (!f_->peak_tensor_flops_per_s) {
        f_->peak_tensor_flops_per_s = Peak(base + ".sum.peak_sustained", sm_clock, 1);
        if (f_->peak_tensor_flops_per_s) {
          Note("tensor peak from " + base +
               ".sum.peak_sustained, which counts the sparse rate "
               "(2x dense) where the path has one; _sparsity_off gives the dense peak");
        }
      }
    } else if (f_->tensor_dtype == "fp16") {  // from instructions, with the factor above
      for (const TensorInstFactor& t : kTensorInstFactors) {
        if (t.cc == k_.cc) {
          f_->peak_tensor_flops_per_s =
              Peak("sm__inst_executed_pipe_tensor.sum.peak_sustained", sm_clock, t.flops_per_inst);
        }
      }
    }
    f_->peak_dram_bytes_per_s =
        Peak("dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second", 1);
    f_->peak_l2_bytes_per_s =
        Peak("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second", 1);
    f_->peak_l1_bytes_per_s =
        Peak("l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second", 1);
  }

  const NcuKernel& k_;
  NcuFigures* f_;
  std::string tensor_path_;  ///< the tensor path with the most work ("src_fp16_dst_fp32")
  double by_dtype_best_ops_ = -1;
};

}  // namespace

NcuFigures DeriveNcuFigures(const NcuKernel& kernel) {
  NcuFigures f;
  Deriver(kernel, &f).Run();
  return f;
}

double NcuFigures::TotalFlops() const {
  return fp64_flops.value_or(0) + fp32_flops.value_or(0) + fp16_flops.value_or(0) +
         tensor_flops.value_or(0);
}

}  // namespace roofline
