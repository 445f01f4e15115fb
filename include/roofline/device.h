// Device model: compute ceilings, memory levels and links, each value with its provenance.
#ifndef ROOFLINE_DEVICE_H_
#define ROOFLINE_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roofline/status.h"

namespace roofline {

/// Where a number came from.
enum class Provenance {
  kSpec,       ///< read from a datasheet / vendor document (`source` says which)
  kDerived,    ///< computed from other figures (`formula` says how)
  kMeasured,   ///< measured by `roofline measure` (`method`, `date`)
  kPublished,  ///< measured by others and published (`source`: who and where, `method`, `date`)
  kAssumed,    ///< a documented default standing in for a figure nobody published (`note`)
};

std::string_view NameOf(Provenance p);

/// One number with its unit and provenance.
struct Quantity {
  double value = 0;  ///< in SI units: FLOP/s, B, B/s, s, Hz, W or a count
  std::string unit;  ///< "FLOP/s", "OP/s", "B", "B/s", "s", "Hz", "W", "count"
  Provenance provenance = Provenance::kSpec;
  std::string source;   ///< for kSpec: the document the value was read from
  std::string formula;  ///< for kDerived: the computation with its inputs
  std::string method;   ///< for kMeasured: how it was measured
  std::string date;     ///< for kMeasured: YYYY-MM-DD
  double spread = 0;    ///< for kMeasured: relative spread of repetitions (0 if unknown)
  std::string note;     ///< optional caveat

  /// One line: "spec: <source>", "derived: <formula>", "measured: <method>, <date>",
  /// "published: <source>, <method>, <date>" or "assumed: <note>".
  std::string Describe() const;
};

/// A figure measured by `method` on `date` (a negative spread is stored as 0).
Quantity MeasuredQuantity(double value, const std::string& unit, const std::string& method,
                          const std::string& date, double spread);
/// A figure read from the document `source`.
Quantity SpecQuantity(double value, const std::string& unit, const std::string& source);

/// Peak throughput of one engine for one dtype, e.g. "tensor.bf16".
struct ComputeCeiling {
  std::string engine;  ///< "<engine>.<dtype>", e.g. "tensor.bf16", "vector.fp32"
  Quantity peak;       ///< FLOP/s (or OP/s for integer dtypes)
};

/// One level of the memory hierarchy. Devices list them far to near.
struct MemoryLevel {
  std::string name;                   ///< "hbm", "gddr", "dram", "l2", "smem", ...
  Quantity capacity;                  ///< bytes per instance
  /// Device memory: the bytes per instance the driver reports (nvidia-smi's memory.total,
  /// rocm-smi's VRAM total), where published; what an engine's memory fraction is taken of.
  /// Absent: the capacity (the marketed figure) stands for it.
  std::optional<Quantity> usable;
  int64_t instances = 1;              ///< copies of the level (SMs for shared memory)
  std::optional<Quantity> bandwidth;  ///< aggregate B/s; absent: bytes counted, no time term
  /// The level holds only the weights ("holds": "weights"): an external store weights stream
  /// from once per step while activations and the KV cache stay in the next level. Only the
  /// first level may be one.
  bool weights_only = false;

  /// Total capacity over all instances, bytes.
  double total_capacity_bytes() const { return capacity.value * static_cast<double>(instances); }
  /// Total usable capacity over all instances (`usable`, else the capacity), bytes.
  double total_usable_bytes() const {
    return (usable ? usable->value : capacity.value) * static_cast<double>(instances);
  }
  /// Capacity of one instance, bytes.
  double instance_capacity_bytes() const { return capacity.value; }
  bool has_bandwidth() const { return bandwidth.has_value(); }
  /// Aggregate bandwidth in B/s, 0 when unknown.
  double bandwidth_bytes_per_s() const { return bandwidth ? bandwidth->value : 0.0; }
};

/// An interconnect. Bandwidth is per device per direction.
struct Link {
  std::string name;                 ///< "nvlink", "pcie", "ici", ...
  Quantity bandwidth;               ///< B/s per device per direction
  std::optional<Quantity> latency;  ///< seconds per message step; absent means 0
  int max_devices = 0;              ///< largest all-to-all group (0 = not stated)

  double latency_s() const { return latency ? latency->value : 0.0; }
};

/// How a model larger than one chip is placed on a device whose memory is on the chip (SRAM-only
/// and wafer-scale accelerators): over as many chips as hold it, in pipeline stages joined by
/// the device's primary link (docs/sram-accelerators.md).
struct ModelSplit {
  std::string source;  ///< where the vendor describes how models are split over chips
};

/// What real kernels reach on a device, below its datasheet ceilings: each entry names a spec
/// ceiling (an engine of `compute`, a level of `memory`, a link of `links`) and holds a figure
/// at most that ceiling, `published` or `measured` (docs/expected-time.md).
struct AchievableCeilings {
  std::vector<std::pair<std::string, Quantity>> compute;  ///< engine -> FLOP/s (or OP/s)
  /// engine -> FLOP/s of kernels that accumulate in FP16 (`--accumulate fp16`), where a card
  /// runs those faster than FP32-accumulating ones (GeForce); elsewhere `compute` serves both.
  std::vector<std::pair<std::string, Quantity>> compute_fp16_accumulate;
  std::vector<std::pair<std::string, Quantity>> memory;  ///< level -> B/s
  std::vector<std::pair<std::string, Quantity>> links;   ///< link -> B/s (NCCL bus bandwidth)

  /// The figure for one engine, level or link, or nullptr.
  const Quantity* ComputeFigure(std::string_view engine) const;
  const Quantity* Fp16AccumulateFigure(std::string_view engine) const;
  const Quantity* MemoryFigure(std::string_view level) const;
  const Quantity* LinkFigure(std::string_view link) const;
  bool empty() const {
    return compute.empty() && compute_fp16_accumulate.empty() && memory.empty() && links.empty();
  }
};

/// Efficiency factors fitted by `roofline validate --save-calibration`: measured time is
/// predicted bound / efficiency, per kernel class.
struct Calibration {
  double matmul = 1;     ///< matmul kernels
  double attention = 1;  ///< attention kernels (fused, or attn_qk/softmax/pv)
  double vector = 1;     ///< norms, elementwise, softmax, embedding
  int kernels = 0;       ///< how many kernels the fit used
  std::string method;    ///< how it was obtained
  std::string date;      ///< YYYY-MM-DD
};

/// A device: what it can compute, store and move, and where each figure came from.
struct Device {
  std::string id;    ///< command-line id, e.g. "h100-sxm"
  std::string name;  ///< full name
  std::string vendor;
  std::string kind;  ///< "gpu", "tpu", "accelerator", "cpu"
  std::string notes;
  std::vector<ComputeCeiling> compute;  ///< in file order
  std::vector<MemoryLevel> memory;      ///< far to near; memory[0] is device memory
  std::vector<Link> links;
  std::vector<std::pair<std::string, Quantity>> info;  ///< informational only
  AchievableCeilings achievable;                       ///< published or measured; may be empty
  std::optional<ModelSplit> model_split;   ///< the model is split over the chips that hold it
  std::optional<Calibration> calibration;  ///< from `validate --save-calibration`
  std::string origin;  ///< file the device was loaded from ("<embedded>/h100-sxm.json", a path)

  /// The ceiling for "tensor.bf16" etc., or nullptr.
  const ComputeCeiling* FindCompute(std::string_view engine) const;
  /// A memory level by name, or nullptr.
  const MemoryLevel* FindMemory(std::string_view level) const;
  /// A link by name, or nullptr.
  const Link* FindLink(std::string_view name) const;
  /// The first link listed (the device's main scale-up interconnect), or nullptr.
  const Link* PrimaryLink() const { return links.empty() ? nullptr : &links.front(); }
  /// Device memory (memory[0]).
  const MemoryLevel& device_memory() const { return memory.front(); }
};

/// Parses and validates a device from JSON text. `origin` names the file in error messages.
Result<Device> ParseDevice(std::string_view json_text, const std::string& origin);
/// Reads and parses a device file.
Result<Device> LoadDeviceFile(const std::string& path);
/// Serializes a device back to the schema of docs/hardware-schema.md (pretty JSON).
std::string DeviceToJson(const Device& device);

/// Engines and dtypes a device file may list, e.g. "tensor.bf16".
const std::vector<std::string>& KnownEngines();

}  // namespace roofline

#endif  // ROOFLINE_DEVICE_H_
