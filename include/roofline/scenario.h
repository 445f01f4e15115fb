// What to evaluate: one Scenario type (model, device, workload, layout, runtime and options)
// described by one field table. The table generates the command line's options, the keys the
// published-runs reader takes and the Python keywords; Validate(Scenario) holds every rule
// between fields. docs/architecture.md shows how a new option is added (one row here).
#ifndef ROOFLINE_SCENARIO_H_
#define ROOFLINE_SCENARIO_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/status.h"
#include "roofline/workload.h"

namespace roofline {

/// The model of the main job (`roofline` with no command).
inline constexpr const char* kScenarioDefaultModel = "llama-3-8b";

/// One field of a Scenario: the row of the field table that names it.
enum class FieldId : uint8_t {
  kModel,
  kHw,
  kPhase,
  kBatch,
  kPrompt,
  kContext,
  kDtype,
  kWeightDtype,
  kQuantizeLmHead,
  kZeroDtype,
  kKvDtype,
  kGroupSize,
  kTp,
  kPp,
  kAttention,
  kFusion,
  kFusedLinears,
  kMla,
  kAllLogits,
  kMemoryFraction,
  kTf32,
  kDims,
  kSteps,
  kCfg,
  kLaunchOverheadUs,
  kCeilings,
  kRuntime,
  kEfficiency,
  kWeightKernel,
  kMoeKernel,
  kAccumulate,
  kModules,
  kEngine,
};
inline constexpr int kNumFields = static_cast<int>(FieldId::kEngine) + 1;

/// What an LLM, a network (graph file, ONNX model, network preset) or both take.
enum FieldScope : uint8_t { kScopeLlm = 1, kScopeNetwork = 2, kScopeBoth = 3 };

/// How a field's text is read.
enum class FieldType : uint8_t {
  kText,    ///< a string as given (a path or an id)
  kSize,    ///< a positive integer; k (x1024) and M (x1024^2) suffixes: "32k"
  kCount,   ///< a non-negative integer (no suffixes)
  kReal,    ///< a number
  kDType,   ///< a dtype name ("bf16")
  kChoice,  ///< one of `choices`
  kFlag,    ///< true or false (a bare flag on the command line)
  kPairs,   ///< repeatable NAME=VALUE
};

/// A row of the field table. Every option of the workload, layout and runtime is one row.
struct Field {
  FieldId id;
  std::string_view name;      ///< Python keyword and JSON key ("kv_dtype")
  std::string_view flag;      ///< command-line option ("--kv-dtype")
  std::string_view metavar;   ///< what the value is in --help ("DTYPE", "N")
  FieldType type;
  std::string_view fallback;  ///< the default as --help shows it ("" when none is shown)
  std::string_view help;      ///< one sentence, no default (--help adds it)
  std::span<const std::string_view> choices;  ///< kChoice: the accepted names
  FieldScope scope;
  bool published;  ///< a published run may set it (data/validation/published_runs.json)
};

/// The field table, in FieldId order.
std::span<const Field> ScenarioFields();
/// The row of `id`.
const Field& FieldOf(FieldId id);
/// The row whose flag ("--kv-dtype") or name ("kv_dtype", "kv-dtype") is `key`; null if none.
const Field* FindField(std::string_view key);

/// The fields one command takes, as a set.
using FieldSet = std::bitset<kNumFields>;
/// Every field of the workload, layout and runtime an LLM or network command takes (all but
/// kModel, which commands take as an argument).
FieldSet WorkloadFields();
/// The fields an LLM (kScopeLlm) or a network (kScopeNetwork) takes, kModel left out.
FieldSet ScenarioFieldsOf(FieldScope scope);
/// `fields` less the ones named.
FieldSet Without(FieldSet fields, std::initializer_list<FieldId> ids);

/// Everything one evaluation needs, as the user described it (files not loaded yet).
/// Defaults are the tool's. `given` records which fields the user set, so a rule between two
/// fields can tell a default from a choice (provenance: set by the user or by default).
struct Scenario {
  std::string model = kScenarioDefaultModel;  ///< preset id, config.json, graph file, .onnx
  std::string hw = kDefaultDeviceId;            ///< device id or device JSON path
  PhaseSelection phases = PhaseSelection::kBoth;
  /// The LLM workload and layout (tensor and pipeline parallelism live in it).
  Workload workload;
  // General networks (graph files, ONNX models, network presets).
  std::vector<std::pair<std::string, int64_t>> dims;  ///< --dim NAME=VALUE, in the given order
  bool tf32 = false;   ///< fp32 products of a network on TF32 tensor cores
  int64_t steps = 0;   ///< diffusion denoising passes per image (0: one pass)
  bool cfg = false;    ///< classifier-free guidance: each pass at twice the image batch
  // How kernels are costed and expected.
  double launch_overhead_s = 0;  ///< added to every kernel's bound
  ExpectedOptions expected;
  /// --efficiency overrides as given ("matmul=0.7"), kept for descriptions.
  std::vector<std::string> efficiency_text;

  std::bitset<kNumFields> given;  ///< fields set by the user
  bool Given(FieldId id) const { return given[static_cast<size_t>(id)]; }
};

/// Reads `text` into field `id` of `s` and marks it given; a repeatable field (kPairs) adds to
/// what it holds. Errors name the flag ("--context: '32q' is not a size (..)").
Status SetField(Scenario& s, FieldId id, std::string_view text);
/// The same with `where` in place of the flag in errors (a file and a key).
Status SetField(Scenario& s, FieldId id, std::string_view text, const std::string& where);
/// A field's value as text, as the command line would take it back ("" for an unset optional).
std::string FieldText(const Scenario& s, FieldId id);

/// Sets the defaults that follow from other fields: without --prompt, a --context shorter than
/// the default prompt is the prompt too (a decode step attends to at least its prompt).
void ApplyDerivedDefaults(Scenario& s);

/// `status` with a flag in its where ("--kv-dtype") renamed to the field's key after `prefix`
/// ("runs.json: runs[3] (id).kv_dtype"): the errors of a scenario read from a file.
Status InFile(const Status& status, const std::string& prefix);

/// Whether `model` is a general network (a graph file, an ONNX model or a network preset id),
/// as opposed to an LLM config. `is_network` is decided by the caller (frontends know files).
/// Every rule between fields, given the kind of model: LLM-only fields on a network, network-
/// only fields on an LLM, --cfg without --steps, a context shorter than the prompt, --modules
/// with what it cannot run under, and each field's own range. Errors name a flag.
Status Validate(const Scenario& s, bool is_network);

/// A size with an optional k (x1024) or M (x1024^2) suffix ("32k" = 32768), at most `max` in
/// magnitude, suffix applied; errors name `where`.
Result<int64_t> ParseSize(std::string_view text, const std::string& where,
                          int64_t max = int64_t{1} << 40);

/// The Python keyword list of the fields in `fields`, for documentation:
/// "batch, prompt, context, ...".
std::string FieldNames(FieldSet fields);

}  // namespace roofline

#endif  // ROOFLINE_SCENARIO_H_
