// The extension module of the Python package: the Scenario's field table, a sweep evaluated
// from a Scenario into the columns of its Table (NumPy arrays that own the table's memory: no
// copy, no JSON), and the CLI's subcommand table run in-process on an argument list for
// everything else. The package and the CLI compute the same numbers by construction.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/network.h"
#include "roofline/report.h"
#include "roofline/scenario.h"
#include "roofline/setup.h"
#include "roofline/sweep.h"
#include "roofline/sweep_table.h"
#include "roofline/trust.h"
#include "tools/roofline/commands.h"

namespace nb = nanobind;

namespace {

/// Runs `roofline ARGV...`; returns (exit status, stdout, stderr).
std::tuple<int, std::string, std::string> RunCli(const std::vector<std::string>& argv) {
  std::ostringstream out;
  std::ostringstream err;
  // The library keeps per-thread caches but no state shared between calls; the GIL stays held,
  // so calls from several Python threads run one at a time.
  const int status = roofline::cli::Run(argv, out, err);
  return {status, out.str(), err.str()};
}

/// The Scenario's field table: (name, flag, type, default, help, choices, scope) per field.
using FieldRow = std::tuple<std::string, std::string, std::string, std::string, std::string,
                            std::vector<std::string>, std::string>;
std::vector<FieldRow> Fields() {
  static constexpr const char* kTypes[] = {"text", "size", "count", "real",
                                           "dtype", "choice", "flag", "pairs"};
  std::vector<FieldRow> out;
  for (const roofline::Field& f : roofline::ScenarioFields()) {
    const std::string scope = f.scope == roofline::kScopeBoth  ? "both"
                              : f.scope == roofline::kScopeLlm ? "llm"
                                                               : "network";
    out.emplace_back(std::string(f.name), std::string(f.flag),
                     kTypes[static_cast<int>(f.type)], std::string(f.fallback),
                     std::string(f.help),
                     std::vector<std::string>(f.choices.begin(), f.choices.end()), scope);
  }
  return out;
}

/// A library error as the CLI prints it, raised as ValueError (the package makes it a
/// RooflineError with the same line).
[[noreturn]] void Raise(const roofline::Status& st) {
  std::string line = "error: " + st.ToString();
  for (char& c : line) c = c == '\n' ? ' ' : c;
  throw nb::value_error(line.c_str());
}

/// A vector handed to NumPy: the array owns it (freed with the array).
template <typename T>
nb::object Array(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, owner));
}

/// `roofline.sweep()` of an LLM on one device: the scenario's fields as (name, text) pairs (a
/// repeatable field once per value), the --vary specs. Returns the JSON document of `sweep
/// --format json` without the values of its columns, and the columns: {id: array} for numbers,
/// {id: (codes array, labels)} for labels. None when the CLI path serves the request (a network,
/// or several devices).
nb::object SweepColumns(const std::vector<std::pair<std::string, std::string>>& fields,
                        const std::vector<std::string>& vary) {
  using namespace roofline;
  Scenario s;
  for (const auto& [name, text] : fields) {
    const Field* f = FindField(name);
    if (f == nullptr) Raise(Status::Invalid(name, "not a field of the scenario"));
    if (Status st = SetField(s, f->id, text); !st.ok()) Raise(st);
  }
  ApplyDerivedDefaults(s);
  Result<SweepRequest> request = ParseSweepRequest(vary);
  if (!request.ok()) Raise(request.status());
  if (!request->devices.empty() || IsNetworkInput(s.model)) return nb::none();
  Result<std::vector<SweepAxis>> axes = ParseSweepAxes(s, request->specs);
  if (!axes.ok()) Raise(axes.status());
  Result<DeviceDatabase> db = DeviceDatabase::LoadDefault();
  if (!db.ok()) Raise(db.status());
  Result<Setup> setup = Resolve(s, *db);
  if (!setup.ok()) Raise(setup.status());
  const CostModel model(setup->device, setup->cost);
  Result<SweepResult> r = RunSweep(setup->config, setup->workload, model, s.phases, *axes);
  if (!r.ok()) Raise(r.status());
  if (Status b = AttachBands(*r, setup->config, setup->workload, setup->device, setup->cost, *db); !b.ok()) {
    r->notes.push_back("no trust band: " + b.ToString());
  }
  std::ostringstream head;
  WriteSweepJson(*r, s.model, setup->device.id, JsonLayout::kColumns, head, /*with_data=*/false);
  Table t = SweepTable(*r, SweepColumns::kAll);
  nb::dict columns;
  for (Column& c : t.columns()) {
    const char* id = c.spec.id.c_str();
    switch (c.spec.kind) {
      case ColumnKind::kReal:
        columns[id] = Array(std::move(c.reals));
        break;
      case ColumnKind::kInt:
        columns[id] = Array(std::move(c.ints));
        break;
      case ColumnKind::kBool: {
        std::vector<uint8_t> bytes(c.ints.begin(), c.ints.end());
        columns[id] = nb::make_tuple("bool", Array(std::move(bytes)));
        break;
      }
      case ColumnKind::kCode:
        columns[id] = nb::make_tuple(Array(std::move(c.ints)), nb::cast(c.labels));
        break;
      case ColumnKind::kText:
        columns[id] = nb::cast(c.texts);
        break;
    }
  }
  return nb::make_tuple(head.str(), columns);
}

}  // namespace

NB_MODULE(_roofline, m) {
  m.doc() = "roofline's C++ core: run(argv) -> (status, stdout, stderr), as the CLI would";
  m.def("run", &RunCli, nb::arg("argv"),
        "Runs one roofline subcommand in-process, e.g. run(['model', 'llama-3-8b', '--format', "
        "'json']). Returns (exit status, stdout, stderr): 0 on success, 2 with one 'error: ...' "
        "line on bad input, 1 when a check found a violation.");
  m.def("fields", &Fields,
        "The scenario's field table, one (name, flag, type, default, help, choices, scope) per "
        "option: the keywords model() and sweep() take.");
  m.def("sweep_columns", &SweepColumns, nb::arg("fields"), nb::arg("vary"),
        "An LLM sweep on one device from the scenario's (name, text) fields: (the JSON document "
        "of `sweep --format json` without its columns' values, {id: array or (codes, labels)}), "
        "or None when the CLI serves the request. Bad input raises ValueError with the CLI's "
        "one line.");
  m.attr("exit_ok") = roofline::cli::kExitOk;
  m.attr("exit_usage") = roofline::cli::kExitUsage;
  m.attr("exit_check_failed") = roofline::cli::kExitCheckFailed;
}
