// `roofline validate` as one library call: check the request, run the kernels where it says,
// fit the calibration.
#include <string>
#include <utility>

#include "roofline/cuda_measure.h"
#include "roofline/llm.h"
#include "roofline/validate.h"

namespace roofline {

Status Check(const ValidateRequest& v) {
  if (v.IsCuda()) {
    Result<int> index = cuda_plan::ParseCudaDevice(v.device);
    if (!index.ok()) return index.status();
    if (!CudaBackendCompiled()) {
      return Status::Unsupported("--device " + v.device, CudaBackendMissingReason());
    }
    Result<int> count = CudaDeviceCount();
    if (!count.ok()) return Status::Unsupported("--device " + v.device, count.status().what());
    if (*index >= *count) {
      return Status::Invalid("--device", v.device + " does not exist: this machine has " +
                                             std::to_string(*count) + " CUDA device(s)");
    }
  } else if (v.device != "cpu") {
    return Status::Invalid("--device", "expected cpu or cuda[:N], got '" + v.device + "'");
  }
  if (v.repetitions < 1 || v.repetitions > 1000) {
    return Status::Invalid("--repetitions", "must be between 1 and 1000");
  }
  if (v.threads < 0 || v.threads > 4096) {
    return Status::Invalid("--threads", "must be between 0 and 4096");
  }
  return Status::Ok();
}

Result<Validation> RunValidation(const Graph& graph, const CostModel& model,
                                 const ValidateRequest& v) {
  if (v.IsCuda()) {
    Result<int> index = cuda_plan::ParseCudaDevice(v.device);
    if (!index.ok()) return index.status();
    CudaRunOptions co;
    co.device = *index;
    co.repetitions = v.repetitions;
    return ValidateOnCuda(graph, model, co);
  }
  RunOptions ro;
  ro.threads = v.threads;
  ro.repetitions = v.repetitions;
  return ValidateOnCpu(graph, model, ro);
}

namespace {

ValidationReport ReportHeader(const CostModel& model, const ValidateRequest& v, std::string title) {
  ValidationReport r;
  r.title = std::move(title);
  r.device_id = model.device().id;
  r.device_name = model.device().name;
  r.device_origin = model.device().origin;
  r.request = v;
  return r;
}

}  // namespace

Result<ValidationReport> ValidateGraph(const Graph& graph, const CostModel& model,
                                       const ValidateRequest& v, std::string title) {
  Result<Validation> val = RunValidation(graph, model, v);
  if (!val.ok()) return val.status();
  ValidationReport r = ReportHeader(model, v, std::move(title));
  r.rows = std::move(val->rows);
  r.fit = val->fit;
  return r;
}

Result<ValidationReport> ValidateModel(const TransformerConfig& config, const Workload& workload,
                                       const CostModel& model, PhaseSelection phases,
                                       const ValidateRequest& v, std::string title) {
  ValidationReport r = ReportHeader(model, v, std::move(title));
  for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
    if (phases == PhaseSelection::kPrefill && p != Phase::kPrefill) continue;
    if (phases == PhaseSelection::kDecode && p != Phase::kDecode) continue;
    Result<LlmGraph> g = BuildLlmGraph(config, workload, p);
    if (!g.ok()) return g.status();
    Result<Validation> val = RunValidation(g->graph, model, v);
    if (!val.ok()) return val.status();
    for (ValidationRow& row : val->rows) {
      row.group = std::string(NameOf(p)) + (row.group.empty() ? "" : " " + row.group);
      r.rows.push_back(std::move(row));
    }
  }
  r.fit = FitCalibration(r.rows);
  return r;
}

}  // namespace roofline
