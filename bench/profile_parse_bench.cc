// Parsing throughput and peak memory of the profile readers on large synthetic inputs.
//
//   roofline_profile_parse_bench [--mb 200] [--dir DIR] [--keep]
//
// Writes a kineto trace of about --mb MB (plain and gzip), and an ncu long-form CSV and an nsys
// cuda_gpu_trace CSV of about half that size each, into DIR (a fresh temp dir by default,
// removed afterwards), then parses each file in a child process of its own (fork + exec of this
// program with --child) so that each peak RSS (the child's ru_maxrss) is isolated. Prints one
// table row per file.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "roofline/profile.h"

namespace {

namespace fs = std::filesystem;
using roofline::Result;

double FileMb(const std::string& path) { return fs::file_size(path) / 1e6; }

/// One transformer-ish step of a kineto trace: nested cpu ops with shapes, runtime calls, flows
/// and kernels, as PyTorch 2.x writes them.
void WriteStep(FILE* f, long step, double* ts) {
  const long c = step * 8;  // correlation / external ids
  const double t = *ts;
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 7, "
               "\"tid\": 7, \"ts\": %.3f, \"dur\": 40.5, \"args\": {\"External id\": %ld, "
               "\"Record function id\": 0, \"Input Dims\": [[8, 512, 4096], [4096, 4096], "
               "[4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
               "\"c10::BFloat16\"], \"Input Strides\": [[2097152, 4096, 1], [4096, 1], [1]], "
               "\"Concrete Inputs\": [\"\", \"\", \"\"], \"Sequence number\": %ld}},\n",
               t, c, step);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 7, "
               "\"tid\": 7, \"ts\": %.3f, \"dur\": 30.25, \"args\": {\"External id\": %ld, "
               "\"Input Dims\": [[4096], [4096, 4096], [4096, 4096], [], []], \"Input type\": "
               "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", "
               "\"Scalar\"], \"Input Strides\": [[1], [4096, 1], [1, 4096], [], []], "
               "\"Concrete Inputs\": [\"\", \"\", \"\", \"1\", \"1\"]}},\n",
               t + 5, c + 1);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
               "\"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"dur\": 6.125, \"args\": {\"External id\": "
               "%ld, \"cbid\": 211, \"correlation\": %ld}},\n",
               t + 10, c + 1, c + 1);
  std::fprintf(f,
               "{\"ph\": \"s\", \"id\": %ld, \"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"cat\": "
               "\"ac2g\", \"name\": \"ac2g\"},\n",
               c + 1, t + 10);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"torch/nn/modules/"
               "activation.py(681): forward\", \"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"dur\": 12, "
               "\"args\": {\"Python parent id\": %ld, \"Python id\": %ld, \"Ev Idx\": %ld}},\n",
               t + 45, step, step + 1, c);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::gelu\", \"pid\": 7, "
               "\"tid\": 7, \"ts\": %.3f, \"dur\": 9.5, \"args\": {\"External id\": %ld, "
               "\"Input Dims\": [[8, 512, 4096], []], \"Input type\": [\"c10::BFloat16\", \"\"], "
               "\"Concrete Inputs\": [\"\", \"'none'\"]}},\n",
               t + 46, c + 2);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
               "\"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"dur\": 4.0, \"args\": {\"External id\": "
               "%ld, \"cbid\": 211, \"correlation\": %ld}},\n",
               t + 48, c + 2, c + 2);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm_bf16bf16_bf16f32_"
               "f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_"
               "cublas\", \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"dur\": 210.375, \"args\": "
               "{\"External id\": %ld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": "
               "7, \"correlation\": %ld, \"registers per thread\": 168, \"shared memory\": 213248, "
               "\"blocks per SM\": 1, \"warps per SM\": 12, \"grid\": [132, 1, 1], \"block\": "
               "[384, 1, 1], \"est. achieved occupancy %%\": 19}},\n",
               t + 60, c + 1, c + 1);
  std::fprintf(f,
               "{\"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"cat\": "
               "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n",
               c + 1, t + 60);
  std::fprintf(f,
               "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::vectorized_"
               "elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
               "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()"
               "() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, "
               "at::detail::Array<char*, 2>)\", \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"dur\": "
               "35.5, \"args\": {\"External id\": %ld, \"device\": 0, \"stream\": 7, "
               "\"correlation\": %ld, \"grid\": [16384, 1, 1], \"block\": [128, 1, 1]}},\n",
               t + 271, c + 2, c + 2);
  *ts = t + 320;
}

/// A kineto trace of at least `mb` MB; returns its path.
std::string WriteTorch(const std::string& dir, double mb) {
  const std::string path = dir + "/big.pt.trace.json";
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs(
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB "
      "HBM3\", \"totalGlobalMem\": 85028765696, \"computeMajor\": 9, \"computeMinor\": 0, "
      "\"numSms\": 132}],\n\"traceEvents\": [\n",
      f);
  double ts = 1700000000000000.0;
  for (long step = 0; std::ftell(f) < mb * 1e6; ++step) WriteStep(f, step, &ts);
  std::fputs(
      "{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", "
      "\"tid\": \"\", \"ts\": 1700000000000000}\n], \"traceName\": \"big\"}\n",
      f);
  std::fclose(f);
  return path;
}

std::string Gzip(const std::string& path) {
  const std::string out = path + ".gz";
  FILE* in = std::fopen(path.c_str(), "rb");
  gzFile gz = gzopen(out.c_str(), "wb6");
  std::vector<char> buf(1 << 20);
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), in)) > 0;) {
    gzwrite(gz, buf.data(), static_cast<unsigned>(n));
  }
  gzclose(gz);
  std::fclose(in);
  return out;
}

/// An nsys cuda_gpu_trace CSV of at least `mb` MB.
std::string WriteNsysTrace(const std::string& dir, double mb) {
  const std::string path = dir + "/big_cuda_gpu_trace.csv";
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs(
      "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
      "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,"
      "Strm,Name\n",
      f);
  long start = 1000;
  for (long i = 0; std::ftell(f) < mb * 1e6; ++i, start += 30000) {
    if (i % 10 == 0) {
      std::fprintf(f,
                   "%ld,5000,%ld,,,,,,,,,,16.777,3355.4,Pageable,Device,NVIDIA H100 80GB HBM3 "
                   "(0),1,,7,[CUDA memcpy Host-to-Device]\n",
                   start, i);
    } else if (i % 2) {
      std::fprintf(f,
                   "%ld,20000,%ld,132,1,1,384,1,1,168,0.000,0.213,,,,,NVIDIA H100 80GB HBM3 "
                   "(0),1,,7,nvjet_tst_128x256_64x4_1x2_h_bz_coopB_TNT\n",
                   start, i);
    } else {
      std::fprintf(f,
                   "%ld,3000,%ld,1024,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA H100 80GB HBM3 "
                   "(0),1,,7,\"void at::native::vectorized_elementwise_kernel<(int)4, "
                   "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, (unsigned "
                   "long)3>>(int, T2, T3)\"\n",
                   start, i);
    }
  }
  std::fclose(f);
  return path;
}

/// An Nsight Compute long-form CSV (`ncu --csv --metrics ...`, thousands separators) of at least
/// `mb` MB: kernel launches alternating a GEMM and an elementwise kernel, 13 metrics each.
std::string WriteNcu(const std::string& dir, double mb) {
  const std::string path = dir + "/big_ncu_metrics.csv";
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs(
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
      "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric "
      "Name\",\"Metric Unit\",\"Metric Value\"\n",
      f);
  static const char* const kMetrics[][2] = {
      {"dram__bytes_read.sum", "byte"},
      {"dram__bytes_write.sum", "byte"},
      {"gpu__time_duration.sum", "nsecond"},
      {"l1tex__t_bytes.sum", "byte"},
      {"lts__t_bytes.sum", "byte"},
      {"sm__inst_executed_pipe_tensor.sum", "inst"},
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", ""},
      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst"},
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst"},
      {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst"},
      {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", "inst"},
      {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", "inst"},
      {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", "inst"},
  };
  for (long id = 0; std::ftell(f) < mb * 1e6; ++id) {
    const char* name =
        id % 2 ? "void at::native::vectorized_elementwise_kernel<4, "
                 "at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char *, 3>>(int, "
                 "T2, T3)"
               : "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
                 "execute_segment_k_off_kernel__5x_cublas";
    for (const auto& m : kMetrics) {
      std::fprintf(f,
                   "\"%ld\",\"41277\",\"python3.10\",\"127.0.0.1\",\"%s\",\"1\",\"7\","
                   "\"(128, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler "
                   "metrics\",\"%s\",\"%s\",\"%ld,%03ld.00\"\n",
                   id, name, m[0], m[1], 1 + id % 997, id % 1000);
    }
  }
  std::fclose(f);
  return path;
}

/// The child: parses one file, prints "<seconds> <items>" and exits.
int Child(const std::string& format, const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  long items = 0;
  if (format == "torch") {
    Result<roofline::TorchTrace> r = roofline::LoadTorchTrace(path);
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 1;
    items = static_cast<long>(r->kernels.size());
  } else if (format == "nsys") {
    Result<roofline::NsysReport> r = roofline::LoadNsysCsv(path);
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 1;
    items = static_cast<long>(r->launches.size());
  } else if (format == "ncu") {
    Result<roofline::NcuReport> r = roofline::LoadNcuCsv(path);
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 1;
    for (const roofline::NcuKernel& k : r->kernels)
      items += roofline::DeriveNcuFigures(k).duration_s ? 1 : 0;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.6f %ld\n", s, items);
  return 0;
}

struct Run {
  double seconds = 0, max_rss_mb = 0;
  long items = 0;
  bool ok = false;
};

Run RunChild(const char* self, const std::string& format, const std::string& path) {
  Run run;
  int fds[2];
  if (pipe(fds) != 0) return run;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    execl(self, self, "--child", format.c_str(), path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char buf[128] = {};
  const ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  run.ok = n > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
           std::sscanf(buf, "%lf %ld", &run.seconds, &run.items) == 2;
  run.max_rss_mb = ru.ru_maxrss / 1024.0;  // KiB on Linux
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) return Child(argv[2], argv[3]);
  double mb = 200;
  std::string dir;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc) mb = std::atof(argv[++i]);
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    if (a == "--keep") keep = true;
  }
  const bool own_dir = dir.empty();
  if (own_dir) {
    std::string tmpl = (fs::temp_directory_path() / "roofline_parse_bench_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return std::perror("mkdtemp"), 1;
    dir = tmpl;
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::printf("generating inputs in %s ...\n", dir.c_str());
  std::fflush(stdout);
  const std::string torch = WriteTorch(dir, mb);
  const std::string torch_gz = Gzip(torch);
  const std::string nsys = WriteNsysTrace(dir, mb / 2);
  const std::string ncu = WriteNcu(dir, mb / 2);

  const Run base = RunChild(self.c_str(), "none", torch);
  std::printf("baseline child (no parse): peak RSS %.1f MB\n\n", base.max_rss_mb);
  std::printf(
      "| input | file MB | text MB | parse s | text MB/s | peak RSS MB | over baseline MB "
      "| items |\n|---|---|---|---|---|---|---|---|\n");
  struct Input {
    const char* label;
    std::string format, path;
    double text_mb;
  };
  const std::vector<Input> inputs = {
      {"torch kineto JSON", "torch", torch, FileMb(torch)},
      {"torch kineto JSON.gz", "torch", torch_gz, FileMb(torch)},
      {"nsys cuda_gpu_trace CSV", "nsys", nsys, FileMb(nsys)},
      {"ncu long-form CSV (parse + figures)", "ncu", ncu, FileMb(ncu)},
  };
  int rc = 0;
  for (const Input& in : inputs) {
    const Run r = RunChild(self.c_str(), in.format, in.path);
    if (!r.ok) {
      std::printf("| %s | parse failed |\n", in.label);
      rc = 1;
      continue;
    }
    std::printf("| %s | %.1f | %.1f | %.2f | %.0f | %.1f | %.1f | %ld |\n", in.label,
                FileMb(in.path), in.text_mb, r.seconds, in.text_mb / r.seconds, r.max_rss_mb,
                r.max_rss_mb - base.max_rss_mb, r.items);
  }
  if (own_dir && !keep) fs::remove_all(dir);
  return rc;
}
