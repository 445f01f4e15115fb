// The ONNX frontend: reads a .onnx file (protobuf) with size limits, checks it, binds the symbolic
// input dimensions, runs shape inference and maps the nodes (onnx_ops.cc).
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "src/onnx/onnx_internal.h"

namespace roofline {
namespace {

namespace fs = std::filesystem;
using onnx_frontend::CheckInitializer;

/// protobuf cannot parse a message of 2 GiB or more; larger models keep weights as external data.
constexpr uintmax_t kMaxModelBytes = std::numeric_limits<int32_t>::max();

Status ReadModel(const std::string& path, onnx::ModelProto* model) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path, "no such file");
  if (fs::is_directory(path, ec)) return Status::Io(path, "is a directory, not an ONNX model");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Status::Io(path, "cannot read: " + ec.message());
  if (size == 0) return Status::Parse(path, "not an ONNX model (empty file)");
  if (size > kMaxModelBytes) {
    return Status::Unsupported(path, "is " + std::to_string(size) +
                                         " bytes, over protobuf's 2 GiB limit (export the "
                                         "weights as external data)");
  }
  std::ifstream in(path, std::ios::binary);
  std::string data(size, '\0');
  if (!in || !in.read(data.data(), static_cast<std::streamsize>(size))) {
    return Status::Io(path, "cannot read the file");
  }
  if (!model->ParseFromString(data)) {
    return Status::Parse(path, "not an ONNX model (protobuf parse failed)");
  }
  if (model->ir_version() <= 0 || !model->has_graph()) {
    return Status::Parse(path, std::string("not an ONNX model (") +
                                   (model->ir_version() <= 0 ? "no ir_version" : "no graph") + ")");
  }
  if (model->opset_import_size() == 0) {
    return Status::Parse(path, "not an ONNX model (no opset_import)");
  }
  if (model->graph().node_size() == 0) return Status::Invalid(path, "the graph has no nodes");
  return Status::Ok();
}

/// Checks every initializer and Constant value: absurd or inconsistent sizes are errors here,
/// before shape inference sees them.
Status CheckTensors(const onnx::GraphProto& graph, const std::string& path) {
  for (const auto& t : graph.initializer()) {
    if (Status s = CheckInitializer(t, path); !s.ok()) return s;
  }
  for (const auto& n : graph.node()) {
    for (const auto& a : n.attribute()) {
      if (!a.has_t()) continue;
      if (Status s = CheckInitializer(a.t(), path); !s.ok()) {
        return Status::Invalid(path + ": node '" + n.name() + "' (" + n.op_type() + ")",
                               "attribute '" + a.name() + "': " + s.what());
      }
    }
  }
  if (graph.sparse_initializer_size() > 0) {
    return Status::Unsupported(path, "sparse initializers are not supported");
  }
  return Status::Ok();
}

/// Notes which external-data files the model references and whether they exist (the frontend
/// needs only the shapes, so a missing file is not an error).
void NoteExternalData(const onnx::GraphProto& graph, const std::string& path,
                      std::vector<std::string>* notes) {
  std::map<std::string, int> files;
  for (const auto& t : graph.initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") ++files[kv.value()];
    }
  }
  const fs::path dir = fs::path(path).parent_path();
  for (const auto& [file, count] : files) {
    std::error_code ec;
    const bool present = fs::exists(dir / file, ec);
    notes->push_back("external data '" + file + "' (" + std::to_string(count) +
                     " tensors): " + (present ? "present" : "missing; only the shapes are needed"));
  }
}

}  // namespace

Result<NetworkGraph> LoadOnnxModel(const std::string& path, const DimBindings& dims) {
  onnx::ModelProto model;
  if (Status s = ReadModel(path, &model); !s.ok()) return s;
  if (Status s = CheckTensors(model.graph(), path); !s.ok()) return s;
  if (Status s = onnx_frontend::CheckNodeAttributes(model.graph(), path); !s.ok()) return s;
  NetworkGraph graph;
  graph.origin = path;
  std::vector<std::pair<std::string, int64_t>> used;
  if (Status s = onnx_frontend::BindInputDims(model, dims, path, &used); !s.ok()) return s;
  if (Status s = onnx_frontend::InferModelShapes(model, path, &graph.notes); !s.ok()) return s;
  if (Status s = onnx_frontend::CheckValueSizes(model.graph(), path); !s.ok()) return s;

  const onnx::GraphProto& g = model.graph();
  onnx_frontend::ModelValues values = onnx_frontend::CollectValues(g);
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") values.opset = o.version();
  }
  onnx_frontend::MarkConstantValues(g, &values);

  graph.name = g.name().empty() ? fs::path(path).stem().string() : g.name();
  graph.producer = model.producer_name();
  if (!model.producer_version().empty()) graph.producer += " " + model.producer_version();
  graph.producer += (graph.producer.empty() ? "" : ", ") + std::string("ONNX IR ") +
                    std::to_string(model.ir_version()) + ", opset " + std::to_string(values.opset);
  for (const auto& [name, value] : used) graph.dims.emplace_back(name, value);
  for (const auto& in : g.input()) {
    if (!values.IsInitializer(in.name())) graph.inputs.push_back(in.name());
  }
  for (const auto& out : g.output()) graph.outputs.push_back(out.name());
  NoteExternalData(g, path, &graph.notes);
  if (Status s = onnx_frontend::MapNodes(g, values, &graph); !s.ok()) return s;
  return graph;
}

bool OnnxFrontendAvailable() { return true; }

}  // namespace roofline
