// The metric list `ncu --metrics` needs for a roofline on one architecture. Every name here is
// one DeriveNcuFigures reads (tests/profile_ncu_test.cc checks that).
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "roofline/profile.h"

namespace roofline {
namespace {

/// Tensor-core counters per architecture. A name ncu does not know makes the whole ncu run fail,
/// so only names seen in real reports or in NVIDIA's answers are listed:
/// * sm__ops_path_tensor_src_{fp16_dst_fp16, fp16_dst_fp32, bf16_dst_fp32}, src_fp64, src_int1,
///   src_int4 and their _sparsity_off/_on variants: `ncu --query-metrics` output quoted by NVIDIA
///   staff (forums.developer.nvidia.com, "How many FLOPs does one tensor_op_hmma instruction
///   do?", 2024); src_tf32_dst_fp32 and src_int8 from the same alphabetical family as used in
///   public roofline scripts for A100/H100.
/// * src_fp8 on AD10x (8.9) and src_fp8_dst_fp{16,32} on consumer Blackwell (12.0): public
///   profiling scripts run on RTX 4090 / 5080; fp8 names for GH100/GB100 are not listed (not
///   seen in a public source).
/// * Volta/Turing (7.x) have only the tensor-pipe instruction count.
std::vector<std::string> TensorMetrics(std::string_view cc) {
  const std::string p = "sm__ops_path_tensor_src_";
  std::vector<std::string> dense = {p + "fp16_dst_fp16.sum", p + "fp16_dst_fp32.sum",
                                    p + "bf16_dst_fp32.sum", p + "tf32_dst_fp32.sum",
                                    p + "int8.sum"};
  // Dense peaks of the two common GEMM paths (the plain metric's peak counts the sparse rate).
  const std::vector<std::string> peaks = {p + "fp16_dst_fp32_sparsity_off.sum.peak_sustained",
                                          p + "bf16_dst_fp32_sparsity_off.sum.peak_sustained"};
  std::vector<std::string> out;
  if (cc == "7.0" || cc == "7.2" || cc == "7.5") {
    return {"sm__inst_executed_pipe_tensor.sum",
            "sm__inst_executed_pipe_tensor.sum.peak_sustained"};
  }
  if (cc == "8.0" || cc == "9.0") {
    out = dense;
    out.push_back(p + "fp64.sum");
  } else if (cc == "8.6" || cc == "8.7" || cc == "10.0") {
    out = dense;
  } else if (cc == "8.9") {
    out = dense;
    out.push_back(p + "fp8.sum");
  } else if (cc == "12.0") {
    out = dense;
    out.push_back(p + "fp8_dst_fp16.sum");
    out.push_back(p + "fp8_dst_fp32.sum");
  } else {
    return {};  // unknown architecture: only the portable instruction count
  }
  out.insert(out.end(), peaks.begin(), peaks.end());
  return out;
}

}  // namespace

std::vector<std::string> NcuRooflineMetrics(std::string_view cc) {
  std::vector<std::string> m = {
      // time, and the cycles that convert rates and give the peaks
      "gpu__time_duration.sum",
      "smsp__cycles_elapsed.avg",
      "smsp__cycles_elapsed.avg.per_second",
      "sm__cycles_elapsed.avg.per_second",
      // the SM count, which tells apart parts of one compute capability (an RTX A6000's 84 from
      // an A10G's 80) and of one name (the H100 SXM5's 132 from the PCIe card's 114)
      "device__attribute_multiprocessor_count",
  };
  for (char p : {'d', 'f', 'h'}) {
    for (std::string_view op : {"add", "mul", "fma"}) {
      m.push_back("sm__sass_thread_inst_executed_op_" + std::string(1, p) + std::string(op) +
                  "_pred_on.sum");
    }
  }
  // Tensor-pipe instructions on every architecture: cheap, and says whether the tensor cores ran.
  m.push_back("sm__inst_executed_pipe_tensor.sum");
  for (std::string& t : TensorMetrics(cc)) {
    if (t != "sm__inst_executed_pipe_tensor.sum") m.push_back(std::move(t));
  }
  for (const char* bytes : {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
                            "l1tex__t_bytes.sum"}) {
    m.emplace_back(bytes);
  }
  // Peaks: per-cycle peaks x cycles per second of their clock domain.
  for (char p : {'d', 'f', 'h'}) {
    m.push_back("sm__sass_thread_inst_executed_op_" + std::string(1, p) +
                "fma_pred_on.sum.peak_sustained");
  }
  for (const char* peak :
       {"dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second",
        "lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second",
        "l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second"}) {
    m.emplace_back(peak);
  }
  return m;
}

std::string ShellQuote(const std::string& s) {
  const std::string safe = "+-./:=@%_,";
  bool plain = !s.empty();
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && safe.find(c) == std::string::npos) {
      plain = false;
    }
  }
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

/// The device's compute capability as "9.0", or an error naming --hw.
Result<std::string> ComputeCapabilityOf(const Device& d, const std::string& hw) {
  if (d.vendor != "NVIDIA" || d.kind != "gpu") {
    return Status::Unsupported(
        "--hw", fmt::format("{} is not an NVIDIA GPU (vendor {}, kind {}): Nsight Compute "
                            "profiles NVIDIA GPUs only",
                            hw, d.vendor.empty() ? "unknown" : d.vendor, d.kind));
  }
  for (const auto& [key, q] : d.info) {
    if (key != "compute_capability") continue;
    if (!(q.value >= 1 && q.value < 100)) {
      return Status::Invalid("--hw", fmt::format("{}: info.compute_capability {} is not a "
                                                 "compute capability (e.g. 9.0)",
                                                 hw, q.value));
    }
    const int major = static_cast<int>(std::floor(q.value + 1e-6));
    const int minor = static_cast<int>(std::lround((q.value - major) * 10));
    return fmt::format("{}.{}", major, minor);
  }
  return Status::Invalid(
      "--hw", fmt::format("{} has no info.compute_capability: add it to the device file (e.g. "
                          "\"compute_capability\": {{ \"value\": 9.0, \"unit\": \"count\", ... }})",
                          hw));
}

}  // namespace

Status CheckNcuCommandRequest(const NcuCommandRequest& r) {
  if (r.launch_count < 0) {
    return Status::Invalid("--launch-count", "must be >= 0 (0: every kernel)");
  }
  if (r.app.find_first_not_of(" \t") == std::string::npos) {
    return Status::Invalid("--app", "is empty: give the command to profile");
  }
  if (r.output.empty()) return Status::Invalid("--output", "is empty");
  return Status::Ok();
}

Result<NcuCommandLine> MakeNcuCommand(const Device& device, const NcuCommandRequest& r) {
  if (Status st = CheckNcuCommandRequest(r); !st.ok()) return st;
  Result<std::string> cc = ComputeCapabilityOf(device, r.hw);
  if (!cc.ok()) return cc.status();
  const std::vector<std::string> metrics = NcuRooflineMetrics(*cc);
  if (metrics.empty()) {
    return Status::Unsupported("--hw", "no Nsight Compute metric list for compute capability " +
                                           *cc);
  }
  std::string list;
  for (const std::string& m : metrics) list += (list.empty() ? "" : ",") + m;
  NcuCommandLine out;
  out.command = "ncu --target-processes all --metrics " + list +
                " --csv --page raw --print-units base --clock-control none";
  if (!r.kernel_regex.empty()) out.command += " --kernel-name " + ShellQuote("regex:" + r.kernel_regex);
  if (r.launch_count > 0) out.command += fmt::format(" --launch-count {}", r.launch_count);
  out.command += " --log-file " + ShellQuote(r.output) + " " + r.app;
  out.compute_capability = *cc;
  out.metrics = metrics.size();
  return out;
}

}  // namespace roofline
