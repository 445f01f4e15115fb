// The CUDA backend's host-side logic (planning, statistics, device JSON) and its behaviour on a
// machine without a GPU (or without nvcc at build time).
#include "roofline/cuda_measure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "roofline/profile.h"
#include "roofline/validate.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace cuda_measure_test {

using roofline::testing::Dev;

constexpr double kMiB = 1024.0 * 1024.0;

/// What cudaGetDeviceProperties reports on an H100 SXM5 80 GB (the clocks are the
/// datasheet's boost clocks, as cudaDevAttrClockRate reports them).
CudaDeviceInfo H100() {
  CudaDeviceInfo i;
  i.name = "NVIDIA H100 80GB HBM3";
  i.cc_major = 9;
  i.cc_minor = 0;
  i.sm_count = 132;
  i.sm_clock_hz = 1.98e9;
  i.memory_clock_hz = 2.619e9;
  i.memory_bus_width_bits = 5120;
  i.global_memory_bytes = 79.1e9;
  i.l2_bytes = 50 * kMiB;
  i.smem_per_sm_bytes = 233472;
  i.smem_per_block_optin_bytes = 232448;
  i.max_threads_per_sm = 2048;
  return i;
}

CudaDeviceInfo A100() {
  CudaDeviceInfo i;
  i.name = "NVIDIA A100-SXM4-80GB";
  i.cc_major = 8;
  i.cc_minor = 0;
  i.sm_count = 108;
  i.sm_clock_hz = 1.41e9;
  i.memory_clock_hz = 1.593e9;
  i.memory_bus_width_bits = 5120;
  i.global_memory_bytes = 85.1e9;
  i.l2_bytes = 40 * kMiB;
  return i;
}

double Spec(const Device& d, const std::string& engine) {
  const ComputeCeiling* c = d.FindCompute(engine);
  EXPECT_NE(c, nullptr) << d.id << " has no " << engine;
  return c == nullptr ? 0 : c->peak.value;
}

TEST(CudaPlan, ParsesDeviceSpecs) {
  EXPECT_EQ(*cuda_plan::ParseCudaDevice("cuda"), 0);
  EXPECT_EQ(*cuda_plan::ParseCudaDevice("cuda:0"), 0);
  EXPECT_EQ(*cuda_plan::ParseCudaDevice("cuda:3"), 3);
  for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1x", "gpu", "cuda0", "cuda:99999"}) {
    const Result<int> r = cuda_plan::ParseCudaDevice(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().where(), "--device");
  }
}

TEST(CudaPlan, DramWorkingSetIsFarLargerThanL2AndFitsMemory) {
  const CudaDeviceInfo h = H100();
  EXPECT_DOUBLE_EQ(cuda_plan::DramWorkingSetBytes(h, false), 400 * kMiB);  // 8 x 50 MiB
  EXPECT_DOUBLE_EQ(cuda_plan::DramWorkingSetBytes(h, true), 400 * kMiB);
  CudaDeviceInfo big = h;
  big.l2_bytes = 256 * kMiB;  // 8x would be 2 GiB: quick mode stops at 1 GiB
  EXPECT_DOUBLE_EQ(cuda_plan::DramWorkingSetBytes(big, true), 1024 * kMiB);
  EXPECT_DOUBLE_EQ(cuda_plan::DramWorkingSetBytes(big, false), 2048 * kMiB);
  CudaDeviceInfo small;
  small.l2_bytes = 4 * kMiB;
  small.global_memory_bytes = 8e9;
  EXPECT_DOUBLE_EQ(cuda_plan::DramWorkingSetBytes(small, false), 256 * kMiB);  // the floor
  small.global_memory_bytes = 513 * kMiB;  // a quarter of memory, rounded down to 2 MiB
  EXPECT_DOUBLE_EQ(cuda_plan::DramWorkingSetBytes(small, false), 128 * kMiB);
}

TEST(CudaPlan, L2WorkingSetSitsInsideL2) {
  EXPECT_DOUBLE_EQ(cuda_plan::L2WorkingSetBytes(H100()), 20 * kMiB);
  CudaDeviceInfo l4;
  l4.l2_bytes = 48 * kMiB;
  const double ws = cuda_plan::L2WorkingSetBytes(l4);
  EXPECT_LT(ws, 0.5 * l4.l2_bytes);
  EXPECT_EQ(std::fmod(ws, 65536.0), 0.0);
}

// The theoretical peaks from SMs x per-SM rate x clock agree with the database's datasheet
// figures (data/hardware, each citing its whitepaper) within 1%.
TEST(CudaPlan, TheoreticalPeaksMatchTheDatasheets) {
  const Device& h100 = Dev("h100-sxm");
  const CudaDeviceInfo h = H100();
  EXPECT_NEAR(cuda_plan::TheoreticalVectorPeak(h, "fp32").value, Spec(h100, "vector.fp32"),
              0.01 * Spec(h100, "vector.fp32"));
  EXPECT_NEAR(cuda_plan::TheoreticalVectorPeak(h, "fp64").value, Spec(h100, "vector.fp64"),
              0.01 * Spec(h100, "vector.fp64"));
  CudaDeviceInfo h_tensor = h;
  h_tensor.sm_clock_hz = 1.83e9;  // the clock the whitepaper's tensor peaks assume
  for (const char* dtype : {"tf32", "bf16", "fp16", "fp8", "int8"}) {
    const double spec = Spec(h100, std::string("tensor.") + dtype);
    EXPECT_NEAR(cuda_plan::TheoreticalTensorPeak(h_tensor, dtype).value, spec, 0.01 * spec)
        << dtype;
  }
  const Device& a100 = Dev("a100-sxm-80gb");
  for (const char* dtype : {"tf32", "bf16", "fp16", "int8"}) {
    const double spec = Spec(a100, std::string("tensor.") + dtype);
    EXPECT_NEAR(cuda_plan::TheoreticalTensorPeak(A100(), dtype).value, spec, 0.01 * spec) << dtype;
  }
  EXPECT_EQ(cuda_plan::TheoreticalTensorPeak(A100(), "fp8").value, 0);  // no fp8 on sm_80
  // Non-tensor 16-bit peaks (packed HFMA2): H100 133.8 TFLOPS for both, A100 78 fp16, 39 bf16.
  for (const char* dtype : {"fp16", "bf16"}) {
    const std::string engine = std::string("vector.") + dtype;
    EXPECT_NEAR(cuda_plan::TheoreticalVectorPeak(h, dtype).value, Spec(h100, engine),
                0.01 * Spec(h100, engine))
        << dtype;
    EXPECT_NEAR(cuda_plan::TheoreticalVectorPeak(A100(), dtype).value, Spec(a100, engine),
                0.01 * Spec(a100, engine))
        << dtype;
  }
  EXPECT_NEAR(cuda_plan::TheoreticalDramBandwidth(h).value, 3.35e12, 0.01 * 3.35e12);
  EXPECT_NEAR(cuda_plan::TheoreticalSmemBandwidth(h).value,
              h100.FindMemory("smem")->bandwidth_bytes_per_s(), 1e9);
  EXPECT_NE(cuda_plan::TheoreticalVectorPeak(h, "fp32").formula.find("132 SMs"), std::string::npos);
  CudaDeviceInfo unknown = h;
  unknown.cc_major = 5;
  EXPECT_EQ(cuda_plan::TheoreticalVectorPeak(unknown, "fp32").value, 0);
  EXPECT_EQ(cuda_plan::TheoreticalTensorPeak(unknown, "bf16").value, 0);
}

TEST(CudaPlan, TensorDtypesFollowTheComputeCapability) {
  using V = std::vector<std::string>;
  EXPECT_EQ(cuda_plan::TensorDtypes(75), (V{"fp16", "int8"}));
  EXPECT_EQ(cuda_plan::TensorDtypes(80), (V{"tf32", "bf16", "fp16", "int8"}));
  EXPECT_EQ(cuda_plan::TensorDtypes(86), (V{"tf32", "bf16", "fp16", "int8"}));
  EXPECT_EQ(cuda_plan::TensorDtypes(89), (V{"tf32", "bf16", "fp16", "fp8", "int8"}));
  EXPECT_EQ(cuda_plan::TensorDtypes(90), (V{"tf32", "bf16", "fp16", "fp8", "int8"}));
  EXPECT_NE(cuda_plan::TensorDtypeUnavailable(80, "fp8").find("8.9"), std::string::npos);
  EXPECT_FALSE(cuda_plan::TensorDtypeUnavailable(90, "fp4").empty());
}

TEST(CudaPlan, GemmEdgeShrinksOnlyWhenMemoryIsShort) {
  EXPECT_EQ(cuda_plan::GemmEdge(H100(), "bf16", false), 8192);
  EXPECT_EQ(cuda_plan::GemmEdge(H100(), "tf32", false), 8192);
  EXPECT_EQ(cuda_plan::GemmEdge(H100(), "bf16", true), 4096);
  CudaDeviceInfo small;
  small.global_memory_bytes = 2e9;  // a quarter: 500 MB, too little for 8192^2 x 4 bf16 matrices
  EXPECT_EQ(cuda_plan::GemmEdge(small, "bf16", false), 4096);
  EXPECT_EQ(cuda_plan::GemmEdge(small, "tf32", false), 4096);
}

TEST(CudaPlan, NamesAndIds) {
  EXPECT_EQ(cuda_plan::DeviceMemoryName(H100()), "hbm");
  CudaDeviceInfo l4;
  l4.memory_bus_width_bits = 192;
  EXPECT_EQ(cuda_plan::DeviceMemoryName(l4), "gddr");
  EXPECT_EQ(cuda_plan::MeasuredDeviceId("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3-measured");
  EXPECT_EQ(cuda_plan::MeasuredDeviceId("  "), "cuda-measured");
  EXPECT_EQ(H100().ComputeCapability(), "9.0");
  EXPECT_EQ(H100().Sm(), 90);
}

TEST(CudaPlan, Statistics) {
  const Sample s = cuda_plan::RatesFromSeconds({1, 2, 4, 0}, 8);  // the 0 is dropped
  EXPECT_DOUBLE_EQ(s.median, 4);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 8);
  EXPECT_DOUBLE_EQ(s.spread, 1.5);
  EXPECT_EQ(s.repetitions, 3);
  double median = 0, spread = 0;
  cuda_plan::MedianAndSpread({3e-3, 1e-3, 2e-3, 4e-3}, &median, &spread);
  EXPECT_DOUBLE_EQ(median, 2.5e-3);
  EXPECT_DOUBLE_EQ(spread, 3e-3 / 2.5e-3);
  cuda_plan::MedianAndSpread({}, &median, &spread);
  EXPECT_EQ(median, 0);
  EXPECT_EQ(cuda_plan::ScaleIterations(100, 1e-3, 5e-3, 1 << 20), 500);
  EXPECT_EQ(cuda_plan::ScaleIterations(100, 1.0, 1e-6, 1 << 20), 1);
  EXPECT_EQ(cuda_plan::ScaleIterations(100, 1e-9, 10, 1000), 1000);
  EXPECT_EQ(cuda_plan::ScaleIterations(100, 0, 1, 1 << 20), 1600);  // too fast to time: grow
}

CudaMeasurement FakeH100Measurement() {
  CudaMeasurement m;
  m.info = H100();
  m.date = "2026-11-22";
  m.cublas = "cuBLASLt 13.0.0";
  auto sample = [](double median) {
    Sample s;
    s.median = median;
    s.min = 0.99 * median;
    s.max = 1.01 * median;
    s.spread = 0.02;
    s.repetitions = 20;
    return s;
  };
  m.bandwidths = {{"dram", "read", 400 * kMiB, sample(3.0e12)},
                  {"dram", "write", 400 * kMiB, sample(2.9e12)},
                  {"dram", "copy", 800 * kMiB, sample(3.05e12)},
                  {"l2", "read", 20 * kMiB, sample(1.1e13)},
                  {"smem", "read", 132 * 7 * 32768.0, sample(3.2e13)}};
  CudaGemm bf16;
  bf16.dtype = "bf16";
  bf16.m = bf16.n = bf16.k = 8192;
  bf16.layout = "A^T B (TN), bf16 in/out, fp32 accumulate";
  bf16.flops_per_s = sample(7.5e14);
  CudaGemm int8 = bf16;
  int8.dtype = "int8";
  int8.flops_per_s = sample(1.3e15);
  CudaGemm fp8;
  fp8.dtype = "fp8";
  fp8.skipped = true;
  fp8.why_skipped = "cuBLASLt has no algorithm for it on this GPU (status 15)";
  m.gemms = {bf16, int8, fp8};
  MeasuredCeiling fp32;
  fp32.engine = "vector.fp32";
  fp32.method = "8 independent fp32 FMA chains per thread";
  fp32.flops_per_s = sample(5.9e13);
  fp32.theoretical = 6.69e13;
  fp32.theoretical_formula = "132 SMs x 128 x 2 x 1.98e9";
  m.ceilings = {fp32};
  return m;
}

TEST(CudaDevice, ToDeviceIsAValidMeasuredProfile) {
  const Device d = ToDevice(FakeH100Measurement());
  EXPECT_EQ(d.id, "nvidia-h100-80gb-hbm3-measured");
  EXPECT_EQ(d.kind, "gpu");
  // Round trip through the schema validator: usable with --hw.
  Result<Device> back = ParseDevice(DeviceToJson(d), "measured.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const ComputeCeiling* bf16 = back->FindCompute("tensor.bf16");
  ASSERT_NE(bf16, nullptr);
  // Each ceiling is the fastest launch of its sample (1.01 x the median here), not the median:
  // on an H100 (2026-11-25) validate's kernels beat medians of the same calls (CudaCeilingOf).
  EXPECT_DOUBLE_EQ(bf16->peak.value, 1.01 * 7.5e14);
  EXPECT_NE(bf16->peak.method.find("the fastest of 20 launches"), std::string::npos)
      << bf16->peak.method;
  EXPECT_NE(bf16->peak.method.find("median 750 TFLOP/s"), std::string::npos)
      << bf16->peak.method;
  EXPECT_EQ(bf16->peak.provenance, Provenance::kMeasured);
  EXPECT_EQ(bf16->peak.date, "2026-11-22");
  EXPECT_NE(bf16->peak.method.find("8192x8192x8192"), std::string::npos);
  EXPECT_NE(bf16->peak.note.find("of theoretical"), std::string::npos);
  EXPECT_EQ(back->FindCompute("tensor.int8")->peak.unit, "OP/s");
  EXPECT_EQ(back->FindCompute("tensor.fp8"), nullptr);  // skipped: said in the notes
  EXPECT_NE(back->notes.find("fp8 GEMM not measured"), std::string::npos);
  EXPECT_DOUBLE_EQ(back->FindCompute("vector.fp32")->peak.value, 1.01 * 5.9e13);
  // Device memory first, with the best kernel's bandwidth (copy here).
  ASSERT_EQ(back->memory.size(), 3u);
  EXPECT_EQ(back->memory[0].name, "hbm");
  EXPECT_DOUBLE_EQ(back->memory[0].bandwidth_bytes_per_s(), 1.01 * 3.05e12);
  EXPECT_NE(back->memory[0].bandwidth->method.find("copy kernel"), std::string::npos);
  EXPECT_NE(back->memory[0].bandwidth->method.find("read"), std::string::npos);  // the others
  EXPECT_DOUBLE_EQ(back->memory[0].capacity.value, 79.1e9);
  EXPECT_EQ(back->memory[1].name, "l2");
  EXPECT_DOUBLE_EQ(back->memory[1].bandwidth_bytes_per_s(), 1.01 * 1.1e13);
  EXPECT_EQ(back->memory[2].name, "smem");
  EXPECT_EQ(back->memory[2].instances, 132);
  bool has_cc = false;
  for (const auto& [key, q] : back->info) {
    if (key == "compute_capability") {
      has_cc = true;
      EXPECT_DOUBLE_EQ(q.value, 9.0);
    }
  }
  EXPECT_TRUE(has_cc);
  // The cost model takes it.
  const CostModel model(*back);
  const OpAnalysis a = testing::Analyze(OpRequest{testing::Mm(4096, 4096, 4096)}, model);
  EXPECT_GT(a.totals.time_s, 0);
}

// ---------------------------------------------------------------------------------------------
// Without a GPU (or without the backend): clear errors, never a crash.

bool HasGpu() { return CudaBackendCompiled() && CudaDeviceCount().ok(); }

TEST(CudaBackend, ReportsWhyItCannotRun) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present: the no-GPU behaviour cannot be checked";
  const Result<CudaMeasurement> m = MeasureCuda(CudaMeasureOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().where(), "--device cuda");
  if (CudaBackendCompiled()) {
    EXPECT_TRUE(CudaBackendMissingReason().empty());
    EXPECT_NE(m.status().what().find("no CUDA device found"), std::string::npos)
        << m.status().what();
    EXPECT_NE(CudaDeviceCount().status().what().find("cudaGetDeviceCount"), std::string::npos);
  } else {
    // No plugin: the build has none, or it is missing or does not load; the reason says which.
    EXPECT_FALSE(CudaBackendMissingReason().empty());
    EXPECT_EQ(m.status().what(), CudaBackendMissingReason());
  }
  Graph g;
  ASSERT_TRUE(g.AddOp("mm", testing::Mm(64, 64, 64)).ok());
  const CostModel model(Dev("h100-sxm"));
  const Result<Validation> v = ValidateOnCuda(g, model, CudaRunOptions{});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().where(), "--device cuda");
}

using testing::CliOutput;
using testing::RunCli;

void ExpectOneLineDeviceError(const CliOutput& o, const std::string& where) {
  EXPECT_EQ(o.status, 2);
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_EQ(o.err.rfind("error: " + where + ": ", 0), 0u) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
  if (CudaBackendCompiled()) {
    EXPECT_NE(o.err.find("no CUDA device found"), std::string::npos) << o.err;
  } else {
    EXPECT_NE(o.err.find(CudaBackendMissingReason()), std::string::npos) << o.err;
  }
}

TEST(CudaCli, MeasureWithoutAGpuExits2WithOneLine) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present";
  ExpectOneLineDeviceError(RunCli({"measure", "--device", "cuda"}), "--device cuda");
  ExpectOneLineDeviceError(RunCli({"measure", "--device", "cuda:1", "--quick"}), "--device cuda:1");
}

TEST(CudaCli, ValidateWithoutAGpuExits2WithOneLine) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present";
  ExpectOneLineDeviceError(RunCli({"validate", "op", "matmul", "--m", "64", "--n", "64", "--k",
                                   "64", "--device", "cuda"}),
                           "--device cuda");
  ExpectOneLineDeviceError(
      RunCli({"validate", "llama-3-8b", "--phase", "decode", "--device", "cuda"}), "--device cuda");
}

TEST(CudaCli, BadDeviceSpecIsAUsageError) {
  const CliOutput m = RunCli({"measure", "--device", "cuda:x"});
  EXPECT_EQ(m.status, 2);
  EXPECT_EQ(m.err.rfind("error: --device: ", 0), 0u) << m.err;
  const CliOutput v = RunCli({"validate", "llama-3-8b", "--device", "gpu"});
  EXPECT_EQ(v.status, 2);
  EXPECT_EQ(v.err.rfind("error: --device: ", 0), 0u) << v.err;
}

// ---------------------------------------------------------------------------------------------
// ncu-command.

TEST(NcuCommand, EveryNvidiaGpuHasAComputeCapability) {
  int gpus = 0;
  for (const Device& d : testing::Db().devices()) {
    if (d.vendor != "NVIDIA") continue;
    ++gpus;
    bool found = false;
    for (const auto& [key, q] : d.info) {
      if (key != "compute_capability") continue;
      found = true;
      EXPECT_GE(q.value, 7.0) << d.id;  // Volta and later (the T4 is Turing, 7.5)
      EXPECT_EQ(q.provenance, Provenance::kSpec) << d.id;
      EXPECT_FALSE(q.source.empty()) << d.id;
    }
    EXPECT_TRUE(found) << d.id;
  }
  EXPECT_GE(gpus, 14);  // the fourteen NVIDIA files of data/hardware
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

TEST(NcuCommand, PrintsTheExactCommandForTheArchitecture) {
  const CliOutput o = RunCli({"ncu-command", "--hw", "h100-sxm"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "ncu --target-processes all --metrics " + Joined(NcuRooflineMetrics("9.0")) +
                       " --csv --page raw --print-units base --clock-control none"
                       " --log-file roofline-ncu.csv python run.py\n");
  EXPECT_NE(o.err.find("roofline profile ncu roofline-ncu.csv --hw h100-sxm"), std::string::npos);
  // It says which metrics decide the verdict, and what it leaves out on a Hopper: the fp8 tensor
  // counter, whose name no public source confirms there.
  EXPECT_NE(o.err.find("#   bytes: dram__bytes_read/write.sum (DRAM)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("not collected: an fp8 tensor counter"), std::string::npos) << o.err;
  // Ada's src_fp8 is collected (8.9); an A100 or a T4 has no fp8 tensor cores to leave out.
  for (const char* hw : {"rtx-4090", "a100-sxm-80gb", "t4"}) {
    const CliOutput other = RunCli({"ncu-command", "--hw", hw});
    ASSERT_EQ(other.status, 0) << other.err;
    EXPECT_EQ(other.err.find("not collected: an fp8"), std::string::npos) << hw << other.err;
  }
  const CliOutput a =
      RunCli({"ncu-command", "--hw", "a100-sxm-80gb", "--app", "./bench --n 4", "-o", "my run.csv",
              "--kernel-regex", "gemm|attn", "--launch-count", "50"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, "ncu --target-processes all --metrics " + Joined(NcuRooflineMetrics("8.0")) +
                       " --csv --page raw --print-units base --clock-control none"
                       " --kernel-name 'regex:gemm|attn' "
                       "--launch-count 50 --log-file 'my run.csv' ./bench --n 4\n");
  const CliOutput b = RunCli({"ncu-command", "--hw", "b200"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find(Joined(NcuRooflineMetrics("10.0"))), std::string::npos);
}

TEST(NcuCommand, NonNvidiaDevicesAreRefused) {
  for (const char* id : {"tpu-v5e", "mi300x", "cpu-generic", "gaudi3"}) {
    const CliOutput o = RunCli({"ncu-command", "--hw", id});
    EXPECT_EQ(o.status, 2) << id;
    EXPECT_EQ(o.err.rfind(std::string("error: --hw: ") + id + " is not an NVIDIA GPU", 0), 0u)
        << o.err;
    EXPECT_TRUE(o.out.empty());
  }
  const CliOutput bad = RunCli({"ncu-command", "--hw", "h100-sxm", "--launch-count", "-1"});
  EXPECT_EQ(bad.status, 2);
  const CliOutput missing = RunCli({"ncu-command"});
  EXPECT_EQ(missing.status, 2);
}

}  // namespace cuda_measure_test
}  // namespace roofline
