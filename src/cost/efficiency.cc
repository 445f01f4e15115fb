// Parsing of data/efficiency.json and of the expected-time options.
#include "roofline/efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "roofline/suggest.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

using nlohmann::json;

constexpr std::string_view kRuntimeNames[kNumRuntimes] = {"eager", "cuda-graph", "compiled"};

// {"value": v, "source": "..."}; `max` bounds the value (a fraction: 1; a time: 1e-3 s; a
// rate: `unit` names it).
Figure ParseFigure(const json& j, const std::string& field, double max, bool zero_ok,
                   const std::string& unit = "") {
  RequireObject(j, field);
  CheckKeys(j, field, {"value", "source"});
  Figure f;
  f.value = zero_ok ? RequireNonNegative(j, "value", field) : RequirePositive(j, "value", field);
  if (f.value > max) {
    const std::string what = !unit.empty() ? " " + unit + ")"
                             : max == 1    ? ": a fraction of a ceiling)"
                                           : " s)";
    throw JsonFieldError(
        field + ".value",
        FormatNumber(f.value) + " is out of range (expected at most " + FormatNumber(max) + what);
  }
  f.source = RequireString(j, "source", field, "every figure needs its source");
  return f;
}

// A non-empty array (at most 64) of objects with exactly `keys`; `entry(object, field)` reads
// each ("name[i]").
template <typename Entry>
void ForEachEntry(const json& list, const std::string& name, const std::vector<std::string>& keys,
                  Entry entry) {
  if (!list.is_array() || list.empty() || list.size() > 64) {
    std::string shape;
    for (const std::string& k : keys) shape += (shape.empty() ? "\"" : ", \"") + k + "\"";
    throw JsonFieldError(name, "expected a non-empty array of {" + shape + "}");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = name + "[" + std::to_string(i) + "]";
    RequireObject(list[i], field);
    CheckKeys(list[i], field, keys);
    entry(list[i], field);
  }
}

EfficiencyData ParseEfficiencyJson(const json& root) {
  RequireObject(root, "");
  CheckKeys(
      root, "",
      {"schema_version", "comment", "assumed", "matmul_tiles", "flash_attention", "attention_waves",
       "collective_latency", "launch", "weight_only_kernels", "module_launches"});
  if (RequireNumber(root, "schema_version", "") != 1) {
    throw JsonFieldError("schema_version", "unsupported schema_version (expected 1)");
  }
  EfficiencyData d;
  auto need = [&](const json& j, const char* key, const std::string& parent) -> const json& {
    if (!j.contains(key)) throw JsonFieldError(JoinField(parent, key), "missing");
    return j.at(key);
  };
  const json& assumed = need(root, "assumed", "");
  RequireObject(assumed, "assumed");
  CheckKeys(assumed, "assumed", {"compute", "memory", "link"});
  d.assumed_compute = ParseFigure(need(assumed, "compute", "assumed"), "assumed.compute", 1, false);
  d.assumed_memory = ParseFigure(need(assumed, "memory", "assumed"), "assumed.memory", 1, false);
  d.assumed_link = ParseFigure(need(assumed, "link", "assumed"), "assumed.link", 1, false);

  const json& tiles = need(root, "matmul_tiles", "");
  RequireObject(tiles, "matmul_tiles");
  CheckKeys(tiles, "matmul_tiles", {"tiles", "source"});
  const json& list = need(tiles, "tiles", "matmul_tiles");
  if (!list.is_array() || list.empty() || list.size() > 64) {
    throw JsonFieldError("matmul_tiles.tiles", "expected a non-empty array of [m, n] tile shapes");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = "matmul_tiles.tiles[" + std::to_string(i) + "]";
    const json& t = list[i];
    if (!t.is_array() || t.size() != 2 || !t[0].is_number_integer() || !t[1].is_number_integer() ||
        t[0].get<int64_t>() < 1 || t[1].get<int64_t>() < 1 || t[0].get<int64_t>() > 4096 ||
        t[1].get<int64_t>() > 4096) {
      throw JsonFieldError(field, "expected [m, n]: two integers between 1 and 4096");
    }
    d.matmul_tiles.push_back({t[0].get<int64_t>(), t[1].get<int64_t>()});
  }
  d.matmul_tiles_source = RequireString(tiles, "source", "matmul_tiles", "the tiles need a source");

  // An entry's {"value", "source"} as a figure of at most `max`.
  auto figure = [&](const json& f, const std::string& field, double max) {
    return ParseFigure(
        json{{"value", need(f, "value", field)}, {"source", need(f, "source", field)}}, field, max,
        false);
  };
  ForEachEntry(need(root, "flash_attention", ""), "flash_attention", {"device", "value", "source"},
               [&](const json& f, const std::string& field) {
                 EfficiencyData::DeviceFigure df;
                 df.device =
                     RequireString(f, "device", field, "the device the fraction was measured on");
                 df.figure = figure(f, field, 1);
                 d.flash_attention.push_back(std::move(df));
               });

  if (root.contains("attention_waves")) {
    ForEachEntry(
        root.at("attention_waves"), "attention_waves",
        {"device", "q_block", "value", "source", "max_waves", "max_waves_source"},
        [&](const json& f, const std::string& field) {
          EfficiencyData::AttentionWaves w;
          w.device = RequireString(f, "device", field, "the device it was measured on");
          for (const auto& earlier : d.attention_waves) {
            if (earlier.device == w.device) {
              throw JsonFieldError(field + ".device", "'" + w.device + "' is listed twice");
            }
          }
          const json& q = need(f, "q_block", field);
          if (!q.is_number_integer() || q.get<int64_t>() < 1 || q.get<int64_t>() > 4096) {
            throw JsonFieldError(field + ".q_block", "expected an integer between 1 and 4096");
          }
          w.q_block = q.get<int64_t>();
          w.wave_s = figure(f, field, 1e-3);
          if (f.contains("max_waves") || f.contains("max_waves_source")) {
            const json& mw = need(f, "max_waves", field);
            if (!mw.is_number_integer() || mw.get<int64_t>() < 1 || mw.get<int64_t>() > 1000000) {
              throw JsonFieldError(field + ".max_waves",
                                   "expected an integer between 1 and 1000000");
            }
            w.max_waves = mw.get<int64_t>();
            w.max_waves_source =
                RequireString(f, "max_waves_source", field, "the cap needs its source");
          }
          d.attention_waves.push_back(std::move(w));
        });
  }

  ForEachEntry(need(root, "collective_latency", ""), "collective_latency",
               {"device", "link", "call_s", "step_s"},
               [&](const json& f, const std::string& field) {
                 EfficiencyData::LinkLatency l;
                 l.device = RequireString(f, "device", field, "the device it was measured on");
                 l.link = RequireString(f, "link", field, "the link it was measured on");
                 l.call_s = ParseFigure(need(f, "call_s", field), field + ".call_s", 1e-3, false);
                 l.step_s = ParseFigure(need(f, "step_s", field), field + ".step_s", 1e-3, false);
                 d.collective_latency.push_back(std::move(l));
               });

  const json& launch = need(root, "launch", "");
  RequireObject(launch, "launch");
  CheckKeys(launch, "launch", {"eager", "cuda-graph", "compiled"});
  for (int r = 0; r < kNumRuntimes; ++r) {
    const std::string name(kRuntimeNames[r]);
    const std::string field = "launch." + name;
    const json& l = need(launch, name.c_str(), "launch");
    RequireObject(l, field);
    CheckKeys(l, field, {"host_s", "gap_s"});
    d.launch[r].host_s = ParseFigure(need(l, "host_s", field), field + ".host_s", 1e-3, true);
    d.launch[r].gap_s = ParseFigure(need(l, "gap_s", field), field + ".gap_s", 1e-3, true);
  }

  if (root.contains("weight_only_kernels")) {
    ForEachEntry(
        root.at("weight_only_kernels"), "weight_only_kernels",
        {"name", "weight_dtype", "activation_dtype", "zero_points", "scales", "description",
         "measured_on", "runtimes", "source", "regimes"},
        [&](const json& f, const std::string& field) {
          EfficiencyData::WeightKernel k;
          k.name = RequireString(f, "name", field, "the name --weight-kernel takes");
          for (const auto& earlier : d.weight_kernels) {
            if (earlier.name == k.name) {
              throw JsonFieldError(field + ".name", "'" + k.name + "' is listed twice");
            }
          }
          Result<DType> dt =
              ParseDType(RequireString(f, "weight_dtype", field), field + ".weight_dtype");
          if (!dt.ok()) throw JsonFieldError(field + ".weight_dtype", dt.status().what());
          if (*dt != DType::kInt4 && *dt != DType::kInt8 && *dt != DType::kFp8) {
            throw JsonFieldError(field + ".weight_dtype",
                                 "expected a quantized weight dtype: int4, int8 or fp8");
          }
          k.weight_dtype = *dt;
          Result<DType> act =
              ParseDType(RequireString(f, "activation_dtype", field), field + ".activation_dtype");
          if (!act.ok()) throw JsonFieldError(field + ".activation_dtype", act.status().what());
          if (*act != DType::kBf16 && *act != DType::kFp16 && *act != DType::kFp8) {
            throw JsonFieldError(field + ".activation_dtype", "expected bf16, fp16 or fp8");
          }
          k.activation_dtype = *act;
          const json& zp = need(f, "zero_points", field);
          if (!zp.is_boolean())
            throw JsonFieldError(field + ".zero_points", "expected true or false");
          k.zero_points = zp.get<bool>();
          k.description = RequireString(f, "description", field, "say which kernel it is");
          const json& on = need(f, "measured_on", field);
          if (!on.is_array() || on.empty() || on.size() > 64) {
            throw JsonFieldError(field + ".measured_on",
                                 "expected a non-empty array of device ids");
          }
          for (const json& id : on) {
            if (!id.is_string() || id.get<std::string>().empty()) {
              throw JsonFieldError(field + ".measured_on", "expected device ids (strings)");
            }
            k.measured_on.push_back(id.get<std::string>());
          }
          k.source = RequireString(f, "source", field, "the measurements it comes from");
          if (f.contains("scales")) {
            const json& sc = f.at("scales");
            if (!sc.is_string() || (sc != "group" && sc != "channel")) {
              throw JsonFieldError(field + ".scales",
                                   "expected \"group\" (per group along K, the default) or "
                                   "\"channel\" (per output column)");
            }
            k.channel_scales = sc == "channel";
          }
          if (f.contains("runtimes")) {
            const json& rts = f.at("runtimes");
            if (!rts.is_array() || rts.empty()) {
              throw JsonFieldError(field + ".runtimes",
                                   "expected a non-empty array of runtimes (eager, cuda-graph, "
                                   "compiled); leave it out for any");
            }
            for (size_t i = 0; i < rts.size(); ++i) {
              const std::string at = field + ".runtimes[" + std::to_string(i) + "]";
              Result<Runtime> r = ParseRuntime(rts[i].is_string() ? rts[i].get<std::string>() : "");
              if (!r.ok()) {
                throw JsonFieldError(at, "expected eager, cuda-graph or compiled, got " +
                                             rts[i].dump().substr(0, 40));
              }
              if (std::find(k.runtimes.begin(), k.runtimes.end(), *r) != k.runtimes.end()) {
                throw JsonFieldError(at, "'" + std::string(NameOf(*r)) + "' is listed twice");
              }
              k.runtimes.push_back(*r);
            }
          }
          ForEachEntry(
              need(f, "regimes", field), field + ".regimes",
              {"min_rows", "max_rows", "fixed_s", "stream_bytes_per_sm_cycle", "memory_traffic",
               "matrix_flops_per_sm_cycle", "k_tile", "n_tile", "k_step_cycles"},
              [&](const json& g, const std::string& at) {
                EfficiencyData::WeightKernelRegime r;
                auto rows = [&](const char* key) {
                  const json& v = need(g, key, at);
                  if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
                      v.get<int64_t>() > (int64_t{1} << 30)) {
                    throw JsonFieldError(at + "." + key,
                                         "expected an integer between 1 and 2^30 (rows)");
                  }
                  return v.get<int64_t>();
                };
                r.min_rows = rows("min_rows");
                if (g.contains("max_rows")) {
                  r.max_rows = rows("max_rows");
                  if (r.max_rows < r.min_rows) {
                    throw JsonFieldError(at + ".max_rows", "below min_rows");
                  }
                }
                if (!k.regimes.empty()) {
                  const auto& prev = k.regimes.back();
                  if (prev.max_rows == 0 || r.min_rows <= prev.max_rows) {
                    throw JsonFieldError(at + ".min_rows",
                                         "regimes must be in ascending, disjoint ranges of rows");
                  }
                }
                r.fixed_s = ParseFigure(need(g, "fixed_s", at), at + ".fixed_s", 1e-3, true);
                // The memory term: a streaming rate of the SMs, or a traffic at the bandwidth.
                if (g.contains("stream_bytes_per_sm_cycle") == g.contains("memory_traffic")) {
                  throw JsonFieldError(at,
                                       "expected one of stream_bytes_per_sm_cycle (a rate "
                                       "of the SMs) and memory_traffic (bytes moved per "
                                       "byte read, at the device's bandwidth)");
                }
                if (g.contains("stream_bytes_per_sm_cycle")) {
                  r.stream_bytes_per_sm_cycle =
                      ParseFigure(g.at("stream_bytes_per_sm_cycle"),
                                  at + ".stream_bytes_per_sm_cycle", 4096, false, "B per SM-cycle");
                } else {
                  r.memory_traffic = ParseFigure(g.at("memory_traffic"), at + ".memory_traffic",
                                                 100, false, "bytes moved per byte read");
                  if (r.memory_traffic.value < 1) {
                    throw JsonFieldError(at + ".memory_traffic.value",
                                         "below 1: a kernel moves at least the bytes it reads");
                  }
                }
                if (g.contains("matrix_flops_per_sm_cycle")) {
                  r.matrix_flops_per_sm_cycle = ParseFigure(g.at("matrix_flops_per_sm_cycle"),
                                                            at + ".matrix_flops_per_sm_cycle",
                                                            65536, false, "FLOP per SM-cycle");
                }
                // A pipeline over K limited by latency: its tiles (from the kernel's source)
                // and the cycles a step takes, all three or none.
                const int tiles = static_cast<int>(g.contains("k_tile")) +
                                  static_cast<int>(g.contains("n_tile")) +
                                  static_cast<int>(g.contains("k_step_cycles"));
                if (tiles != 0 && tiles != 3) {
                  throw JsonFieldError(at,
                                       "expected k_tile, n_tile and k_step_cycles together (a "
                                       "kernel that walks K in steps) or none of them");
                }
                if (tiles == 3) {
                  auto tile = [&](const char* key) {
                    const json& v = g.at(key);
                    if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
                        v.get<int64_t>() > 65536) {
                      throw JsonFieldError(at + "." + key,
                                           "expected an integer between 1 and 65536 (elements)");
                    }
                    return v.get<int64_t>();
                  };
                  r.k_tile = tile("k_tile");
                  r.n_tile = tile("n_tile");
                  r.k_step_cycles = ParseFigure(g.at("k_step_cycles"), at + ".k_step_cycles", 1e7,
                                                false, "clock cycles per step");
                }
                k.regimes.push_back(std::move(r));
              });
          d.weight_kernels.push_back(std::move(k));
        });
  }
  if (root.contains("module_launches")) {
    ForEachEntry(
        root.at("module_launches"), "module_launches",
        {"name", "description", "source", "rms_norm", "rope", "attention", "grouped_kv",
         "grouped_kv_copy", "host_factor"},
        [&](const json& f, const std::string& field) {
          EfficiencyData::ModuleLaunches m;
          m.name = RequireString(f, "name", field, "the name --modules takes");
          for (const auto& earlier : d.module_launches) {
            if (earlier.name == m.name) {
              throw JsonFieldError(field + ".name", "'" + m.name + "' is listed twice");
            }
          }
          m.description = RequireString(f, "description", field, "say which framework it is");
          m.source = RequireString(f, "source", field, "the trace the counts come from");
          // Kernels per op: whole numbers, at least one (grouped_kv: at least zero more).
          auto count = [&](const char* key, int64_t least) {
            const json& v = need(f, key, field);
            const std::string at = field + "." + key;
            if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > 1000) {
              throw JsonFieldError(
                  at, fmt::format("expected a whole number of kernels from {} to 1000", least));
            }
            return v.get<int64_t>();
          };
          m.rms_norm = count("rms_norm", 1);
          m.rope = count("rope", 1);
          m.attention = count("attention", 1);
          m.grouped_kv = count("grouped_kv", 0);
          // The copies' rate: needed when the framework repeats grouped K/V heads.
          if (m.grouped_kv > 0 && !f.contains("grouped_kv_copy")) {
            throw JsonFieldError(field + ".grouped_kv_copy",
                                 "missing (the rate of the copies of grouped K/V heads, a "
                                 "fraction of the memory ceiling; needed when grouped_kv > 0)");
          }
          if (f.contains("grouped_kv_copy")) {
            m.grouped_kv_copy =
                ParseFigure(f.at("grouped_kv_copy"), field + ".grouped_kv_copy", 1, false);
          }
          // The framework's Python per launch: at least the bare op's (a factor of 1).
          if (f.contains("host_factor")) {
            const std::string at = field + ".host_factor";
            m.host_factor = ParseFigure(f.at("host_factor"), at, 100, false,
                                        "x the runtime's host time per launch");
            if (m.host_factor.value < 1) {
              throw JsonFieldError(at + ".value",
                                   FormatNumber(m.host_factor.value) +
                                       " is out of range (expected at least 1: a framework's "
                                       "modules add host time to a bare op's, never less)");
            }
          }
          d.module_launches.push_back(std::move(m));
        });
  }
  return d;
}

}  // namespace

std::string_view NameOf(CeilingSet c) { return c == CeilingSet::kSpec ? "spec" : "achievable"; }

namespace {

// The --efficiency CLASS names, in KernelClass order.
constexpr std::array<std::string_view, kNumClasses> kOverrideClasses = {"matmul", "attention",
                                                                        "vector", "comm"};
static_assert(kNumClasses == 4, "a kernel class was added: name it in kOverrideClasses");

}  // namespace

std::string_view EfficiencyClassName(KernelClass c) {
  return kOverrideClasses[static_cast<size_t>(c)];
}

std::string DescribeExpectedOptions(const ExpectedOptions& o) {
  std::string s = fmt::format("{} ceilings, runtime {}", NameOf(o.ceilings), NameOf(o.runtime));
  if (!o.modules.empty()) s += ", --modules " + o.modules;
  if (!o.weight_kernel.empty()) s += ", --weight-kernel " + o.weight_kernel;
  if (o.fp16_accumulate) s += ", --accumulate fp16";
  for (size_t c = 0; c < o.class_efficiency.size(); ++c) {
    if (o.class_efficiency[c] > 0) {
      s += fmt::format(", --efficiency {}={}", kOverrideClasses[c], o.class_efficiency[c]);
    }
  }
  return s;
}

std::string_view NameOf(Runtime r) { return kRuntimeNames[static_cast<int>(r)]; }

Result<EfficiencyData> ParseEfficiencyData(std::string_view json_text, const std::string& origin) {
  Result<json> parsed = ParseJsonText(json_text, origin);
  if (!parsed.ok()) return parsed.status();
  try {
    EfficiencyData d = ParseEfficiencyJson(*parsed);
    d.origin = origin;
    return d;
  } catch (const JsonFieldError& e) {
    return Status::Invalid(origin + (e.field().empty() ? "" : ": " + e.field()), e.what());
  } catch (const json::exception& e) {
    return Status::Invalid(origin, std::string("malformed efficiency data: ") + e.what());
  }
}

Result<EfficiencyData> LoadDefaultEfficiencyData() {
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') {
    const std::string path = std::string(dir) + "/efficiency.json";
    Result<std::string> text = ReadTextFile(path);
    if (!text.ok()) return text.status();
    return ParseEfficiencyData(*text, path);
  }
  if (const EmbeddedFile* f = FindEmbeddedFile("efficiency.json")) {
    return ParseEfficiencyData(f->content, "<embedded>/data/efficiency.json");
  }
  return Status::NotFound("<embedded>/data/efficiency.json", "not compiled into this build");
}

namespace {

// The entry of `list` named `name`, or an error naming `where`, the names there are and a
// near miss.
template <typename Entry>
Result<const Entry*> FindNamed(const std::vector<Entry>& list, std::string_view name,
                               const std::string& where, const std::string& what,
                               const std::string& origin) {
  std::vector<std::string> names;
  for (const Entry& e : list) {
    if (e.name == name) return &e;
    names.push_back(e.name);
  }
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  return Status::Invalid(
      where, "unknown " + what + " '" + std::string(name) + "'" +
                 DidYouMean(std::string(name), names) +
                 (names.empty() ? " (" + origin + " lists none)" : " (expected " + known + ")"));
}

}  // namespace

std::string RowsPhrase(const EfficiencyData::WeightKernelRegime& r) {
  const auto rows = [](int64_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); };
  if (r.max_rows == 0) return "from " + rows(r.min_rows) + " on";
  if (r.max_rows == r.min_rows) return rows(r.min_rows);
  return fmt::format("{}-{} rows", r.min_rows, r.max_rows);
}

Result<const EfficiencyData::WeightKernel*> FindWeightKernel(const EfficiencyData& data,
                                                             std::string_view name,
                                                             const std::string& where) {
  return FindNamed(data.weight_kernels, name, where, "weight kernel", data.origin);
}

Result<const EfficiencyData::ModuleLaunches*> FindModuleLaunches(const EfficiencyData& data,
                                                                 std::string_view name,
                                                                 const std::string& where) {
  return FindNamed(data.module_launches, name, where, "modules", data.origin);
}

Result<CeilingSet> ParseCeilingSet(std::string_view text) {
  if (text == "spec") return CeilingSet::kSpec;
  if (text == "achievable") return CeilingSet::kAchievable;
  return Status::Invalid("--ceilings", "unknown ceiling set '" + std::string(text) +
                                           "' (expected spec or achievable)");
}

Result<Runtime> ParseRuntime(std::string_view text) {
  for (int r = 0; r < kNumRuntimes; ++r) {
    if (text == kRuntimeNames[r]) return static_cast<Runtime>(r);
  }
  const std::vector<std::string> names(std::begin(kRuntimeNames), std::end(kRuntimeNames));
  return Status::Invalid("--runtime", "unknown runtime '" + std::string(text) + "'" +
                                          DidYouMean(std::string(text), names) +
                                          " (expected eager, cuda-graph or compiled)");
}

Status ParseEfficiencyOverride(std::string_view text, ExpectedOptions& options) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::Invalid("--efficiency",
                           "expected CLASS=F (e.g. matmul=0.7), got '" + std::string(text) + "'");
  }
  const std::string cls(text.substr(0, eq));
  const std::string value(text.substr(eq + 1));
  const auto found = std::find(kOverrideClasses.begin(), kOverrideClasses.end(), cls);
  if (found == kOverrideClasses.end()) {
    // Only the error needs the list of classes.
    const std::vector<std::string> classes(kOverrideClasses.begin(), kOverrideClasses.end());
    std::string listed;
    for (size_t i = 0; i < classes.size(); ++i) {
      listed += (i == 0 ? "" : i + 1 == classes.size() ? " or " : ", ") + classes[i];
    }
    return Status::Invalid("--efficiency", "unknown kernel class '" + cls + "'" +
                                               DidYouMean(cls, classes) + " (expected " + listed +
                                               ")");
  }
  const auto index = static_cast<size_t>(found - kOverrideClasses.begin());
  char* end = nullptr;
  const double f = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !(f >= 1e-3 && f <= 1)) {
    return Status::Invalid("--efficiency",
                           "efficiency of " + cls +
                               " must be a number in (0, 1], at least 0.001; got '" + value + "'");
  }
  options.class_efficiency[index] = f;
  return Status::Ok();
}

}  // namespace roofline
