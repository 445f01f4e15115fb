// `roofline calibrate`: reading a user's runs, fitting an engine's host work to them, and the
// fit's own errors.
#include "roofline/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "roofline/model_analysis.h"
#include "roofline/published.h"
#include "roofline/setup.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

using nlohmann::json;

constexpr size_t kMaxRuns = 2000;  // a fit is O(n^2); leave-one-out up to kMaxLooRuns
constexpr size_t kMaxLooRuns = 400;

std::string SettingOf(const Scenario& s, Phase phase) {
  const Workload& w = s.workload;
  auto dt = [](const std::optional<DType>& d) {
    return d ? std::string(NameOf(*d)) : std::string("-");
  };
  return fmt::format("{} on {}, tp {}{}, {}/{}/{}, {}", s.model, s.hw, w.tp,
                     w.pp > 1 ? fmt::format(" pp {}", w.pp) : "", dt(w.dtype), dt(w.weight_dtype),
                     dt(w.kv_dtype), NameOf(phase));
}

CalibrationRun Run(std::string id, const std::string& path, Scenario s, Phase phase,
                   double measured_s, const std::string& where) {
  s.phases = phase == Phase::kPrefill ? PhaseSelection::kPrefill : PhaseSelection::kDecode;
  if (Status st = Validate(s, /*is_network=*/false); !st.ok()) {
    const Status in_file = InFile(st, where);
    throw JsonFieldError(in_file.where(), in_file.what());
  }
  CalibrationRun r;
  // Errors name the file and the row ("runs.csv: line 3"); a published run's where has both.
  r.where = where.rfind(path, 0) == 0 ? where : path + ": " + where;
  r.id = std::move(id);
  r.file = path;
  r.setting = SettingOf(s, phase);
  r.scenario = std::move(s);
  r.phase = phase;
  r.measured_s = measured_s;
  return r;
}

void CheckMeasured(double v, const std::string& where) {
  if (!(std::isfinite(v) && v > 0)) throw JsonFieldError(where, "expected a positive time");
  if (v < 1e-6) throw JsonFieldError(where, "implausible: a step of under a microsecond");
  if (v > 1e3) throw JsonFieldError(where, "implausible: a step of over 1000 s");
}

void SetOrThrow(Scenario& s, FieldId id, const std::string& text, const std::string& where) {
  if (Status st = SetField(s, id, text); !st.ok()) {
    const Status in_file = InFile(st, where);
    throw JsonFieldError(in_file.where(), in_file.what());
  }
}

/// A benchmark's two steps: a prefill of one request at the mean prompt (its time to first
/// token) and a decode step at batch = concurrency, halfway through the mean output (its time
/// per output token). `concurrency` 0: the command line's --batch, which must be given.
void AddBenchmark(std::vector<CalibrationRun>& out, const std::string& id, const std::string& path,
                  const Scenario& defaults, double concurrency, double prompt, double output,
                  double ttft_s, double tpot_s, const std::string& where) {
  if (!defaults.Given(FieldId::kModel) || !defaults.Given(FieldId::kHw)) {
    throw JsonFieldError(where, "a benchmark's result does not say what ran: give --model and --hw "
                                "(and --tp, --dtype ... as the server ran)");
  }
  Scenario s = defaults;
  int64_t batch = 0;
  if (concurrency > 0) {
    if (concurrency > 1e6 || concurrency != std::floor(concurrency)) {
      throw JsonFieldError(where + ".max_concurrency", "expected a whole number of requests");
    }
    batch = static_cast<int64_t>(concurrency);
  } else if (defaults.Given(FieldId::kBatch)) {
    batch = defaults.workload.batch;
  } else {
    throw JsonFieldError(where + ".max_concurrency",
                         "no concurrency in the file (an open-loop rate): give --batch, the "
                         "requests decoding at once");
  }
  if (!(prompt >= 1 && prompt < 1e7)) throw JsonFieldError(where, "no plausible mean prompt length");
  if (!(output >= 1 && output < 1e7)) throw JsonFieldError(where, "no plausible mean output length");
  const auto p = static_cast<int64_t>(std::llround(prompt));
  const auto o = static_cast<int64_t>(std::llround(output));
  if (ttft_s > 0) {
    Scenario pre = s;
    SetOrThrow(pre, FieldId::kBatch, "1", where);
    SetOrThrow(pre, FieldId::kPrompt, std::to_string(p), where);
    SetOrThrow(pre, FieldId::kPhase, "prefill", where);
    CheckMeasured(ttft_s, where + ".ttft");
    out.push_back(Run(id + " ttft", path, std::move(pre), Phase::kPrefill, ttft_s, where));
  }
  if (tpot_s > 0) {
    Scenario dec = s;
    SetOrThrow(dec, FieldId::kBatch, std::to_string(batch), where);
    SetOrThrow(dec, FieldId::kPrompt, std::to_string(p), where);
    SetOrThrow(dec, FieldId::kContext, std::to_string(p + o / 2), where);
    SetOrThrow(dec, FieldId::kPhase, "decode", where);
    CheckMeasured(tpot_s, where + ".tpot");
    out.push_back(Run(id + " tpot", path, std::move(dec), Phase::kDecode, tpot_s, where));
  }
}

double Number(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_number()) {
    throw JsonFieldError(where + "." + key, "missing or not a number");
  }
  return j.at(key).get<double>();
}

/// `vllm bench serve --save-result` and `sglang.bench_serving` (one object per line).
void ReadServeBench(std::vector<CalibrationRun>& out, const json& j, const std::string& path,
                    const Scenario& defaults, const std::string& where) {
  const double completed = Number(j, "completed", where);
  if (!(completed >= 1)) throw JsonFieldError(where + ".completed", "no completed requests");
  const double prompt = Number(j, "total_input_tokens", where) / completed;
  const double output = Number(j, "total_output_tokens", where) / completed;
  double concurrency = 0;
  if (j.contains("max_concurrency") && j.at("max_concurrency").is_number()) {
    concurrency = j.at("max_concurrency").get<double>();
  }
  const double ttft = j.contains("mean_ttft_ms") ? Number(j, "mean_ttft_ms", where) * 1e-3 : 0;
  const double tpot = j.contains("mean_tpot_ms") ? Number(j, "mean_tpot_ms", where) * 1e-3 : 0;
  if (ttft <= 0 && tpot <= 0) throw JsonFieldError(where, "neither mean_ttft_ms nor mean_tpot_ms");
  AddBenchmark(out, where, path, defaults, concurrency, prompt, output, ttft, tpot, where);
}

/// A genai-perf / AIPerf metric: {"avg": x, "unit": "ms"|"s"} in seconds; 0 when absent.
double Metric(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) return 0;
  const json& m = j.at(key);
  RequireObject(m, where + "." + key);
  const double v = Number(m, "avg", where + "." + key);
  const std::string unit = m.contains("unit") && m.at("unit").is_string()
                               ? m.at("unit").get<std::string>() : "ms";
  if (unit == "ms") return v * 1e-3;
  if (unit == "s") return v;
  if (unit == "us") return v * 1e-6;
  throw JsonFieldError(where + "." + key + ".unit", "unknown unit '" + unit + "' (ms, s, us)");
}

/// A genai-perf / AIPerf length in tokens ({"avg": n, "unit": "tokens"}; no unit: tokens).
double Tokens(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) throw JsonFieldError(where + "." + key, "missing");
  const json& m = j.at(key);
  RequireObject(m, where + "." + key);
  const double v = Number(m, "avg", where + "." + key);
  if (m.contains("unit") && !(m.at("unit").is_string() && m.at("unit").get<std::string>() == "tokens")) {
    throw JsonFieldError(where + "." + key + ".unit", "expected tokens");
  }
  return v;
}

/// The first integer "concurrency" anywhere under `j` (genai-perf nests it in input_config).
double FindConcurrency(const json& j, int depth = 0) {
  if (depth > 8 || !j.is_object()) return 0;
  for (const auto& [k, v] : j.items()) {
    if (k == "concurrency" && v.is_number_integer() && v.get<int64_t>() > 0) {
      return static_cast<double>(v.get<int64_t>());
    }
  }
  for (const auto& [k, v] : j.items()) {
    if (const double c = FindConcurrency(v, depth + 1); c > 0) return c;
  }
  return 0;
}

void ReadGenaiPerf(std::vector<CalibrationRun>& out, const json& j, const std::string& path,
                   const Scenario& defaults, const std::string& where) {
  const double ttft = Metric(j, "time_to_first_token", where);
  const double tpot = Metric(j, "inter_token_latency", where);
  const double prompt = Tokens(j, "input_sequence_length", where);
  const double output = Tokens(j, "output_sequence_length", where);
  AddBenchmark(out, where, path, defaults, FindConcurrency(j), prompt, output, ttft, tpot, where);
}

/// A row of scenario fields and measured times (JSON object or CSV record as strings).
void ReadRow(std::vector<CalibrationRun>& out, const std::map<std::string, std::string>& row,
             const std::string& path, const Scenario& defaults, const std::string& where) {
  Scenario s = defaults;
  double ttft = 0, tpot = 0;
  std::string id = where;
  for (const auto& cell : row) {
    const std::string& key = cell.first;
    const std::string& text = cell.second;
    const Field* field = FindField(key);
    const bool known = key == "ttft_s" || key == "ttft_ms" || key == "tpot_s" ||
                       key == "tpot_ms" || key == "id" ||
                       (field != nullptr && field->published && key == field->name);
    if (!known) {
      throw JsonFieldError(where + "." + key,
                           "unknown column (scenario fields as `roofline calibrate --help` "
                           "lists them, ttft_s, ttft_ms, tpot_s, tpot_ms, id)");
    }
    if (text.empty()) continue;  // an empty cell: not given
    auto time = [&](double scale) {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) {
        throw JsonFieldError(where + "." + key, "'" + text + "' is not a number");
      }
      CheckMeasured(v * scale, where + "." + key);
      return v * scale;
    };
    if (key == "ttft_s") {
      ttft = time(1);
    } else if (key == "ttft_ms") {
      ttft = time(1e-3);
    } else if (key == "tpot_s") {
      tpot = time(1);
    } else if (key == "tpot_ms") {
      tpot = time(1e-3);
    } else if (key == "id") {
      id = where + " (" + text + ")";
    } else {
      if (field->id == FieldId::kPhase) {
        throw JsonFieldError(where + ".phase", "give ttft_s and/or tpot_s, not a phase");
      }
      SetOrThrow(s, field->id, text, where);
    }
  }
  if (ttft <= 0 && tpot <= 0) throw JsonFieldError(where, "no ttft_s, ttft_ms, tpot_s or tpot_ms");
  for (FieldId needed : {FieldId::kModel, FieldId::kHw}) {
    if (!row.count(std::string(FieldOf(needed).name)) && !defaults.Given(needed)) {
      throw JsonFieldError(where, fmt::format("no {0}: a {0} column or {1}",
                                              FieldOf(needed).name, FieldOf(needed).flag));
    }
  }
  ApplyDerivedDefaults(s);
  if (ttft > 0) {
    Scenario pre = s;
    SetOrThrow(pre, FieldId::kPhase, "prefill", where);
    out.push_back(Run(id + " ttft", path, std::move(pre), Phase::kPrefill, ttft, where));
  }
  if (tpot > 0) {
    Scenario dec = s;
    SetOrThrow(dec, FieldId::kPhase, "decode", where);
    out.push_back(Run(id + " tpot", path, std::move(dec), Phase::kDecode, tpot, where));
  }
}

std::map<std::string, std::string> RowOf(const json& r, const std::string& where) {
  RequireObject(r, where);
  std::map<std::string, std::string> row;
  for (const auto& [k, v] : r.items()) {
    if (v.is_string()) {
      row[k] = v.get<std::string>();
    } else if (v.is_boolean()) {
      row[k] = v.get<bool>() ? "true" : "false";
    } else if (v.is_number_integer()) {
      row[k] = std::to_string(v.get<int64_t>());
    } else if (v.is_number()) {
      row[k] = fmt::format("{}", v.get<double>());
    } else if (!v.is_null()) {
      throw JsonFieldError(where + "." + k, "expected a string or a number");
    }
  }
  return row;
}

std::vector<std::string> SplitCsv(const std::string& line, const std::string& where) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (quoted) throw JsonFieldError(where, "unterminated quote");
  cells.push_back(cell);
  for (std::string& s : cells) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  }
  return cells;
}

void ReadCsv(std::vector<CalibrationRun>& out, std::string_view text, const std::string& path,
             const Scenario& defaults) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<std::string> header;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    const std::string where = fmt::format("line {}", n);
    std::vector<std::string> cells = SplitCsv(line, where);
    if (header.empty()) {
      header = cells;
      std::set<std::string> seen;
      for (const std::string& h : header) {
        if (h.empty() || !seen.insert(h).second) {
          throw JsonFieldError(where, "the header names each column once");
        }
      }
      continue;
    }
    if (cells.size() != header.size()) {
      throw JsonFieldError(where, fmt::format("{} cells where the header has {}", cells.size(),
                                              header.size()));
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < cells.size(); ++i) row[header[i]] = cells[i];
    ReadRow(out, row, path, defaults, where);
  }
  if (header.empty()) throw JsonFieldError("", "empty: no header line");
}

/// Python's json module writes Infinity, -Infinity and NaN for non-finite floats (a benchmark's
/// request rate of inf): JSON has no such literals, so each becomes null outside strings.
std::string WithoutNonFiniteLiterals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (std::string_view lit : {std::string_view("-Infinity"), std::string_view("Infinity"),
                                 std::string_view("NaN")}) {
      if (text.substr(i, lit.size()) == lit) {
        out += "null";
        i += lit.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

}  // namespace

Result<std::vector<CalibrationRun>> ReadCalibrationRuns(std::string_view raw,
                                                        const std::string& path,
                                                        const Scenario& defaults) {
  std::vector<CalibrationRun> out;
  const size_t start = raw.find_first_not_of(" \t\r\n");
  const bool json_text = start != std::string_view::npos && (raw[start] == '{' || raw[start] == '[');
  const std::string cleaned = json_text ? WithoutNonFiniteLiterals(raw) : std::string(raw);
  const std::string_view text = cleaned;
  try {
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) throw JsonFieldError("", "empty file");
    if (text[first] != '{' && text[first] != '[') {
      ReadCsv(out, text, path, defaults);
    } else {
      Result<json> parsed = ParseJsonText(text, path);
      if (!parsed.ok()) {
        // JSON lines (sglang.bench_serving appends one result object per line).
        std::istringstream in{std::string(text)};
        std::string line;
        int n = 0;
        bool any = false;
        while (std::getline(in, line)) {
          ++n;
          if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
          Result<json> obj = ParseJsonText(line, fmt::format("{}:{}", path, n));
          if (!obj.ok()) return parsed.status();  // not JSON lines: the whole file's error
          if (!obj->is_object() || !obj->contains("completed")) return parsed.status();
          ReadServeBench(out, *obj, path, defaults, fmt::format("line {}", n));
          any = true;
        }
        if (!any) return parsed.status();
      } else {
        const json& j = *parsed;
        const json* rows = nullptr;
        if (j.is_array()) {
          rows = &j;
        } else if (j.is_object() && j.contains("runs") && j.at("runs").is_array()) {
          const json& runs = j.at("runs");
          if (!runs.empty() && runs.at(0).is_object() && runs.at(0).contains("measured")) {
            // The published runs' own schema (data/validation/published_runs.json).
            Result<std::vector<PublishedRun>> published = ParsePublishedRuns(text, path);
            if (!published.ok()) return published.status();
            for (const PublishedRun& p : *published) {
              out.push_back(Run(p.id, path, p.scenario, p.phase, p.measured_s, p.where));
            }
          } else {
            rows = &runs;
          }
        } else if (j.is_object() && j.contains("completed")) {
          ReadServeBench(out, j, path, defaults, "result");
        } else if (j.is_object() && (j.contains("time_to_first_token") ||
                                     j.contains("inter_token_latency"))) {
          ReadGenaiPerf(out, j, path, defaults, "result");
        } else {
          throw JsonFieldError("", "not a file calibrate reads: rows of scenario fields with "
                                   "ttft_s/tpot_s, published runs, or a vllm bench serve, "
                                   "sglang.bench_serving or genai-perf result");
        }
        if (rows != nullptr) {
          size_t i = 0;
          for (const json& r : *rows) {
            const std::string where = fmt::format("runs[{}]", i++);
            ReadRow(out, RowOf(r, where), path, defaults, where);
          }
        }
      }
    }
  } catch (const JsonFieldError& e) {
    return Status::Invalid(path + (e.field().empty() ? "" : ": " + e.field()), e.what());
  } catch (const json::exception& e) {
    return Status::Invalid(path, std::string("malformed: ") + e.what());
  }
  if (out.empty()) return Status::Invalid(path, "no runs");
  if (out.size() > kMaxRuns) {
    return Status::Invalid(path, fmt::format("{} runs: at most {} are fitted", out.size(), kMaxRuns));
  }
  return out;
}

namespace {

/// The lower weighted median of `v` (weights `w` > 0).
double WeightedMedian(std::vector<std::pair<double, double>> vw) {
  if (vw.empty()) return 0;
  std::sort(vw.begin(), vw.end());
  double total = 0;
  for (const auto& [v, w] : vw) total += w;
  double acc = 0;
  for (const auto& [v, w] : vw) {
    acc += w;
    if (acc >= total / 2) return v;
  }
  return vw.back().first;
}

struct Points {
  std::vector<double> y, b, w;  // y = measured - kernels, b = requests, w = 1 / measured
};

double Objective(const Points& p, double h0, double h1) {
  double s = 0;
  for (size_t i = 0; i < p.y.size(); ++i) s += p.w[i] * std::abs(p.y[i] - h0 - h1 * p.b[i]);
  return s;
}

/// The best per-step time at per-request `h1`: the weighted median of y - h1 b.
double StepAt(const Points& p, double h1) {
  std::vector<std::pair<double, double>> vw;
  for (size_t i = 0; i < p.y.size(); ++i) vw.emplace_back(p.y[i] - h1 * p.b[i], p.w[i]);
  return WeightedMedian(vw);
}

HostFit Fit(const Points& p) {
  HostFit f;
  const size_t n = p.y.size();
  if (n == 0) return f;
  std::set<double> batches(p.b.begin(), p.b.end());
  double h0 = StepAt(p, 0), h1 = 0;
  if (batches.size() >= 2) {
    f.per_request = true;
    // The objective, minimized over h0 at each h1, is convex and piecewise linear in h1 with
    // its kinks at the slopes between runs: take the best of them.
    std::vector<double> slopes;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        if (p.b[i] != p.b[j]) slopes.push_back((p.y[j] - p.y[i]) / (p.b[j] - p.b[i]));
      }
    }
    std::sort(slopes.begin(), slopes.end());
    // A ternary search over the sorted kinks (the objective is convex along them).
    size_t lo = 0, hi = slopes.size() - 1;
    auto at = [&](size_t k) { return Objective(p, StepAt(p, slopes[k]), slopes[k]); };
    while (hi - lo > 2) {
      const size_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      if (at(m1) <= at(m2)) {
        hi = m2;
      } else {
        lo = m1;
      }
    }
    double best = Objective(p, h0, 0);
    for (size_t k = lo; k <= hi; ++k) {
      const double o = at(k);
      if (o < best * (1 - 1e-12)) {
        best = o;
        h1 = slopes[k];
        h0 = StepAt(p, h1);
      }
    }
  }
  f.raw_per_step_s = h0;
  f.raw_per_request_s = h1;
  // Host work is not negative: a negative term is set to zero and the other fitted again.
  if (h1 < 0) {
    h1 = 0;
    h0 = StepAt(p, 0);
  }
  if (h0 < 0) {
    h0 = 0;
    if (f.per_request) {
      std::vector<std::pair<double, double>> vw;
      for (size_t i = 0; i < n; ++i) {
        if (p.b[i] > 0) vw.emplace_back(p.y[i] / p.b[i], p.w[i] * p.b[i]);
      }
      h1 = std::max(0.0, WeightedMedian(vw));
    }
  }
  f.per_step_s = h0;
  f.per_request_s = h1;
  return f;
}

double Predict(const HostFit& f, double kernels, double requests) {
  return kernels + f.per_step_s + f.per_request_s * requests;
}

std::string Ms(double s) { return fmt::format("{:.3g} ms", s * 1e3); }

}  // namespace

HostFit FitHostWork(const std::vector<double>& measured, const std::vector<double>& kernels,
                    const std::vector<double>& requests) {
  Points p;
  const size_t n = std::min({measured.size(), kernels.size(), requests.size()});
  for (size_t i = 0; i < n; ++i) {
    if (!(measured[i] > 0)) continue;  // a weight of 1 / measured: only positive times
    p.y.push_back(measured[i] - kernels[i]);
    p.b.push_back(requests[i]);
    p.w.push_back(1 / measured[i]);
  }
  return Fit(p);
}

CalibrationErrors ErrorsOf(const std::vector<double>& errors) {
  CalibrationErrors e;
  std::vector<double> abs, sig;
  for (double x : errors) {
    if (!std::isfinite(x)) continue;
    sig.push_back(x);
    abs.push_back(std::abs(x));
    e.within_15 += std::abs(x) <= 0.15;
    e.within_40 += std::abs(x) <= 0.40;
    e.max_abs = std::max(e.max_abs, std::abs(x));
  }
  e.runs = static_cast<int>(abs.size());
  auto median = [](std::vector<double> v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  e.median_abs = median(abs);
  e.median_signed = median(sig);
  return e;
}

Result<EngineCalibration> Calibrate(const std::vector<CalibrationRun>& runs,
                              const std::vector<CalibrationRun>& check, const std::string& base,
                              const std::vector<std::string>& files, const std::string& date,
                              const DeviceDatabase& db, const ModelRegistry& registry,
                              std::shared_ptr<const EfficiencyData> efficiency) {
  if (runs.empty()) return Status::Invalid("calibrate", "no runs to fit");
  EngineCalibration cal;
  cal.files = files;
  cal.date = date;
  // The base engine: --engine, else the one every run names, else none.
  cal.base = base;
  if (cal.base.empty()) {
    cal.base = runs.front().scenario.expected.engine;
    for (const CalibrationRun& r : runs) {
      if (r.scenario.expected.engine != cal.base) {
        return Status::Invalid(r.where, fmt::format("engine '{}' where the first run names '{}': "
                                                 "calibrate one engine at a time (--engine)",
                                                 r.scenario.expected.engine, cal.base));
      }
    }
  }
  std::shared_ptr<const Engine> base_engine;
  if (!cal.base.empty()) {
    Result<Engine> e = LoadEngine(cal.base, "--engine");
    if (!e.ok()) {
      // An engine the runs name is theirs to answer for: their file and row.
      return base.empty() ? InFile(e.status(), runs.front().where + ".engine") : e.status();
    }
    base_engine = std::make_shared<const Engine>(std::move(e).value());
  }
  // Each run's expected step with no engine host work, and with the base engine's own.
  auto cost = [&](const CalibrationRun& r, CalibratedRow& row) -> Status {
    Scenario s = r.scenario;
    if (!cal.base.empty()) s.expected.engine = cal.base;
    Result<std::shared_ptr<const Engine>> applied = ApplyEngineFields(s);
    if (!applied.ok()) return InFile(applied.status(), r.where);
    Result<const Device*> device = db.Find(s.hw);
    if (!device.ok()) return Status::Invalid(r.where + ".hw", device.status().what());
    Result<TransformerConfig> config = ResolveModel(s.model, registry);
    if (!config.ok()) return Status::Invalid(r.where + ".model", config.status().what());
    if (Status st = Validate(s, /*is_network=*/false); !st.ok()) return InFile(st, r.where);
    Result<CostOptions> o = MakeCostOptions(s, **device, efficiency, /*refuse_unused=*/false);
    if (!o.ok()) return InFile(o.status(), r.where);
    Result<Workload> staged = ResolveStages(*config, s.workload, **device);
    if (!staged.ok()) return Status::Invalid(r.where, staged.status().ToString());
    auto expected = [&](const CostOptions& options) -> Result<double> {
      Result<PhaseResult> ph = AnalyzePhase(*config, *staged, CostModel(**device, options), r.phase);
      if (!ph.ok()) return Status::Invalid(r.where, ph.status().ToString());
      if (!ph->totals.has_expected) {
        return Status::Invalid(r.where + ".hw", "device '" + (*device)->id +
                                                 "' has no expected times (only the bound): "
                                                 "nothing to calibrate against");
      }
      return ph->totals.expected_s;
    };
    Result<double> before = expected(*o);
    if (!before.ok()) return before.status();
    CostOptions bare = *o;
    bare.step_terms.erase(std::remove_if(bare.step_terms.begin(), bare.step_terms.end(),
                                         [](const auto& t) {
                                           return dynamic_cast<const EngineHost*>(t.get()) != nullptr;
                                         }),
                          bare.step_terms.end());
    Result<double> kernels = expected(bare);
    if (!kernels.ok()) return kernels.status();
    row.before_s = *before;
    row.kernels_s = *kernels;
    return Status::Ok();
  };
  for (const auto* set : {&runs, &check}) {
    for (const CalibrationRun& r : *set) {
      CalibratedRow row;
      row.run = r;
      row.check = set == &check;
      if (Status st = cost(r, row); !st.ok()) return st;
      row.after_s = row.loo_s = row.loso_s = std::numeric_limits<double>::quiet_NaN();
      cal.rows.push_back(std::move(row));
    }
  }
  auto requests = [](const CalibratedRow& r) {
    return static_cast<double>(r.run.scenario.workload.batch);
  };
  auto points = [&](const std::vector<const CalibratedRow*>& rows) {
    Points p;
    for (const CalibratedRow* r : rows) {
      p.y.push_back(r->run.measured_s - r->kernels_s);
      p.b.push_back(requests(*r));
      p.w.push_back(1 / r->run.measured_s);
    }
    return p;
  };
  auto err = [](double expected, double measured) { return (expected - measured) / measured; };
  const std::string provenance_base =
      fmt::format("{} ({} run{}, {}, {})", "calibrated", runs.size(), runs.size() == 1 ? "" : "s",
                  date, [&] {
                    std::string f;
                    for (const std::string& x : files) f += (f.empty() ? "" : ", ") + x;
                    return f;
                  }());
  for (Phase phase : {Phase::kDecode, Phase::kPrefill}) {
    std::vector<CalibratedRow*> fit_rows, check_rows;
    for (CalibratedRow& r : cal.rows) {
      if (r.run.phase != phase) continue;
      (r.check ? check_rows : fit_rows).push_back(&r);
    }
    if (fit_rows.empty()) continue;
    PhaseCalibration pc;
    pc.phase = phase;
    pc.runs = static_cast<int>(fit_rows.size());
    const std::vector<const CalibratedRow*> all(fit_rows.begin(), fit_rows.end());
    pc.fit = Fit(points(all));
    std::vector<double> before, after, loo, loso;
    for (CalibratedRow* r : fit_rows) {
      r->after_s = Predict(pc.fit, r->kernels_s, requests(*r));
      before.push_back(err(r->before_s, r->run.measured_s));
      after.push_back(err(r->after_s, r->run.measured_s));
    }
    if (fit_rows.size() > kMaxLooRuns) {
      cal.warnings.push_back(fmt::format("{}: {} runs: leaving each out is skipped above {}",
                                         NameOf(phase), fit_rows.size(), kMaxLooRuns));
    }
    if (fit_rows.size() >= 3 && fit_rows.size() <= kMaxLooRuns) {
      for (size_t i = 0; i < fit_rows.size(); ++i) {
        std::vector<const CalibratedRow*> rest;
        for (size_t j = 0; j < fit_rows.size(); ++j) {
          if (j != i) rest.push_back(fit_rows[j]);
        }
        const HostFit f = Fit(points(rest));
        fit_rows[i]->loo_s = Predict(f, fit_rows[i]->kernels_s, requests(*fit_rows[i]));
        loo.push_back(err(fit_rows[i]->loo_s, fit_rows[i]->run.measured_s));
      }
    }
    std::set<std::string> settings;
    for (const CalibratedRow* r : fit_rows) settings.insert(r->run.setting);
    pc.settings = static_cast<int>(settings.size());
    // Each setting left out is one more fit (quadratic in the runs): within a budget.
    const double loso_work = static_cast<double>(settings.size()) *
                             static_cast<double>(fit_rows.size()) *
                             static_cast<double>(fit_rows.size());
    if (settings.size() >= 2 && loso_work > 4e8) {
      cal.warnings.push_back(fmt::format(
          "{}: {} settings of {} runs: leaving each setting out is skipped (too many fits)",
          NameOf(phase), settings.size(), fit_rows.size()));
    }
    if (settings.size() >= 2 && loso_work <= 4e8) {
      for (const std::string& s : settings) {
        std::vector<const CalibratedRow*> rest;
        for (const CalibratedRow* r : fit_rows) {
          if (r->run.setting != s) rest.push_back(r);
        }
        const HostFit f = Fit(points(rest));
        for (CalibratedRow* r : fit_rows) {
          if (r->run.setting != s) continue;
          r->loso_s = Predict(f, r->kernels_s, requests(*r));
          loso.push_back(err(r->loso_s, r->run.measured_s));
        }
      }
    }
    std::vector<double> cb, ca;
    for (CalibratedRow* r : check_rows) {
      r->after_s = Predict(pc.fit, r->kernels_s, requests(*r));
      cb.push_back(err(r->before_s, r->run.measured_s));
      ca.push_back(err(r->after_s, r->run.measured_s));
    }
    pc.before = ErrorsOf(before);
    pc.after = ErrorsOf(after);
    pc.loo = ErrorsOf(loo);
    pc.loso = ErrorsOf(loso);
    pc.check_before = ErrorsOf(cb);
    pc.check_after = ErrorsOf(ca);
    // What a physical host term cannot be.
    const std::string ph(NameOf(phase));
    if (pc.fit.raw_per_step_s < 0 || pc.fit.raw_per_request_s < 0) {
      cal.warnings.push_back(fmt::format(
          "{}: the best fit has a negative host term ({} per step, {} per request): the model's "
          "kernels are slower than these runs somewhere, which host work cannot explain; kept "
          "at zero, the fit is {} per step, {} per request",
          ph, Ms(pc.fit.raw_per_step_s), Ms(pc.fit.raw_per_request_s), Ms(pc.fit.per_step_s),
          Ms(pc.fit.per_request_s)));
    }
    int longer = 0;
    std::string example;
    for (const CalibratedRow* r : fit_rows) {
      const double host = pc.fit.per_step_s + pc.fit.per_request_s * requests(*r);
      if (host > 0.5 * r->run.measured_s) {
        ++longer;
        if (example.empty()) {
          example = fmt::format("{}: {} of a {} step", r->run.id, Ms(host), Ms(r->run.measured_s));
        }
      }
    }
    if (longer > 0) {
      cal.warnings.push_back(fmt::format(
          "{}: the fitted host work is more than half the measured step on {} of {} runs ({}): "
          "a gap that large is rarely the host's alone (queueing, a slower kernel, a different "
          "setup); read the leave-one-setting-out error before predicting other settings",
          ph, longer, fit_rows.size(), example));
    }
    if (fit_rows.size() < 3) {
      cal.warnings.push_back(fmt::format("{}: {} run{}: too few for a leave-one-out error", ph,
                                         fit_rows.size(), fit_rows.size() == 1 ? "" : "s"));
    }
    // The calibrated part of the engine.
    HostPart part;
    part.name = fmt::format("fitted to the runs ({})", ph);
    part.mode = HostMode::kSerial;
    part.phase = phase;
    const std::string how = fmt::format(
        "roofline calibrate: least absolute relative error over {} {} run{} ({}); error on them "
        "{:.1f}% before, {:.1f}% after (median |error|){}",
        fit_rows.size(), ph, fit_rows.size() == 1 ? "" : "s",
        pc.settings == 1 ? "one setting" : fmt::format("{} settings", pc.settings),
        100 * pc.before.median_abs, 100 * pc.after.median_abs,
        pc.loo.runs > 0 ? fmt::format(", leaving one run out {:.1f}%", 100 * pc.loo.median_abs)
                        : "");
    part.per[static_cast<size_t>(HostPer::kStep)] = HostFigure{pc.fit.per_step_s, provenance_base, how};
    if (pc.fit.per_request) {
      part.per[static_cast<size_t>(HostPer::kRequest)] =
          HostFigure{pc.fit.per_request_s, provenance_base, how};
    }
    cal.engine.host.push_back(part);
    cal.phases.push_back(pc);
  }
  // The engine entry: what the base engine runs, its host work replaced by the fit.
  Engine& e = cal.engine;
  std::vector<HostPart> fitted = std::move(e.host);
  if (base_engine) {
    e = *base_engine;
    e.name = base_engine->name + " (calibrated)";
  } else {
    e = Engine{};
    e.id = "calibrated";
    e.name = "calibrated engine";
    e.versions = "0-";
  }
  e.host = std::move(fitted);
  e.calibrated = true;
  e.label = fmt::format("host work fitted to {} of the user's run{} on {}", runs.size(),
                        runs.size() == 1 ? "" : "s", date);
  std::string file_list;
  for (const std::string& x : files) file_list += (file_list.empty() ? "" : ", ") + x;
  e.notes = fmt::format(
      "Written by roofline calibrate on {} from {} run{} of {}{}: the host work is fitted to "
      "those runs (serial, per phase); kernels and everything else are the model's. A fit to a "
      "user's runs, never a published figure.",
      date, runs.size(), runs.size() == 1 ? "" : "s", file_list,
      base_engine ? fmt::format("; runtime choices from {} {}", base_engine->id,
                                base_engine->versions)
                  : "");
  e.chosen_as.clear();
  e.file.clear();
  // The file written must be one --engine reads (host work of at most 1 s a step and request).
  Result<std::vector<Engine>> back = ParseEngineFile(EngineFileText(e), "the calibrated engine");
  if (!back.ok()) {
    return Status::Invalid("calibrate", "the fitted host work cannot be an engine's (" +
                                            back.status().ToString() +
                                            "): these runs' gaps are not host work");
  }
  return cal;
}

}  // namespace roofline
