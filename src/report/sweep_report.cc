// Reports of `roofline sweep`.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string_view>
#include <vector>

#include "roofline/report.h"
#include "roofline/units.h"
#include "roofline/sweep_table.h"
#include "src/report/sweep_pivot.h"
#include "src/util/number_text.h"
#include "src/report/phrases.h"
#include "src/report/table.h"

namespace roofline {
namespace {

/// What the communication wall compares with compute time.
const char* CommNoun(const SweepResult& r) {
  return r.pipelined ? "communication (all-reduce and pipeline-send)" : "all-reduce";
}

using nlohmann::json;

/// The class a kLargestShare value names ("attention", "launch overhead").
std::string ShareName(int64_t share) {
  if (share >= 0 && share < kNumClasses)
    return std::string(NameOf(static_cast<KernelClass>(share)));
  return "launch overhead";
}

/// "stays"/"stay", "becomes"/"become" for a signal name.
/// "matmuls 77%": a point's largest share of the step and its percentage.
std::string LargestShareCell(const PhasePoint& ph) {
  const int share = ph.LargestShare();
  const double t =
      share == kOverheadShare ? ph.overhead_s : ph.class_time_s[static_cast<size_t>(share)];
  return fmt::format("{} {:.0f}%", ShareName(share), ph.time_s > 0 ? 100 * t / ph.time_s : 0.0);
}

std::string Verb(const std::string& what, const std::string& singular) {
  const bool plural = what.size() >= 7 && (what.compare(what.size() - 7, 7, "matmuls") == 0 ||
                                           what.find("elementwise") != std::string::npos);
  return plural ? singular.substr(0, singular.size() - 1) : singular;
}

/// The other axis' label where a line of a two-axis sweep was held ("" for one axis).
std::string AtLabel(const SweepResult& r, size_t axis, const std::optional<size_t>& at) {
  if (!at.has_value() || r.axes.size() != 2) return "";
  return r.axes[1 - axis].Label(*at);
}

/// The point at grid position k along `axis` (the other axis at `at`).
const SweepPoint* PointAt(const SweepResult& r, size_t axis, const std::optional<size_t>& at,
                          size_t k) {
  const size_t n1 = r.axes.size() == 2 ? r.axes[1].size() : 1;
  size_t i = k, j = 0;
  if (r.axes.size() == 2) {
    i = axis == 0 ? k : at.value_or(0);
    j = axis == 0 ? at.value_or(0) : k;
  }
  const size_t idx = i * n1 + j;
  return idx < r.points.size() ? &r.points[idx] : nullptr;
}

/// Verdict names as the device names them, each made once (a sweep prints 100k of them).
class VerdictNames {
 public:
  explicit VerdictNames(const ResourceNames& names, bool quoted) : names_(names), quoted_(quoted) {}
  const std::string& operator()(const Verdict& v) {
    for (const auto& [k, text] : cache_) {
      if (k == v) return text;
    }
    cache_.emplace_back(v, quoted_ ? json(names_.Name(v)).dump() : names_.Name(v));
    return cache_.back().second;
  }

 private:
  const ResourceNames& names_;
  bool quoted_;
  std::vector<std::pair<Verdict, std::string>> cache_;
};

/// A number as nlohmann::json's dump(2) writes it: the shortest text that reads back to the
/// same double, "null" when not finite.
void AppendNumber(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  std::array<char, 64> buf{};
  const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), x);
  out.append(buf.data(), static_cast<size_t>(end - buf.data()));
}

/// The sweep's points as the JSON array `json::dump(2)` writes at the document's first level
/// (keys sorted, two spaces per level); tests/sweep_test.cc reads it back and dumps it again.
void AppendPointsJson(const SweepResult& r, std::string& out) {
  if (r.points.empty()) {
    out += "[]";
    return;
  }
  auto quoted = [](std::string_view text) { return json(std::string(text)).dump(); };
  VerdictNames name(r.names, /*quoted=*/true);
  // A point's keys in sorted order: the axes' variables and the fixed ones.
  enum class Field { kAxis, kCapacity, kChips, kFits, kFootprint, kPhases };
  struct Key {
    std::string key;
    Field field;
    size_t axis = 0;
  };
  std::vector<Key> keys = {{"capacity_bytes", Field::kCapacity},
                           {"fits", Field::kFits},
                           {"footprint_bytes", Field::kFootprint},
                           {"phases", Field::kPhases}};
  if (r.chips_tracked) keys.push_back({"chips", Field::kChips});
  for (size_t a = 0; a < r.axes.size(); ++a) {
    keys.push_back({std::string(NameOf(r.axes[a].variable)), Field::kAxis, a});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& x, const Key& y) { return x.key < y.key; });
  // Axis values as text, once per value.
  std::vector<std::vector<std::string>> axis_text(r.axes.size());
  for (size_t a = 0; a < r.axes.size(); ++a) {
    for (size_t i = 0; i < r.axes[a].size(); ++i) {
      axis_text[a].push_back(IsInteger(r.axes[a].variable) ? std::to_string(r.axes[a].values[i])
                                                           : quoted(NameOf(r.axes[a].dtypes[i])));
    }
  }
  // Kernel classes in the order of their names.
  std::vector<int> classes(kNumClasses);
  for (int c = 0; c < kNumClasses; ++c) classes[static_cast<size_t>(c)] = c;
  std::sort(classes.begin(), classes.end(), [](int x, int y) {
    return NameOf(static_cast<KernelClass>(x)) < NameOf(static_cast<KernelClass>(y));
  });
  std::vector<std::string> class_keys(kNumClasses);
  for (int c = 0; c < kNumClasses; ++c) {
    class_keys[static_cast<size_t>(c)] = quoted(NameOf(static_cast<KernelClass>(c))) + ": ";
  }
  std::vector<std::string> share_names;
  for (int c = 0; c <= kOverheadShare; ++c) share_names.push_back(quoted(ShareName(c)));
  const std::string prefill = quoted(NameOf(Phase::kPrefill));
  const std::string decode = quoted(NameOf(Phase::kDecode));
  auto number = [&](const char* key, double x) {
    out += key;
    AppendNumber(out, x);
  };
  out += "[\n";
  for (size_t pi = 0; pi < r.points.size(); ++pi) {
    const SweepPoint& p = r.points[pi];
    out += "    {\n";
    for (size_t k = 0; k < keys.size(); ++k) {
      out += "      \"";
      out += keys[k].key;
      out += "\": ";
      switch (keys[k].field) {
        case Field::kAxis:
          out += axis_text[keys[k].axis][p.index[keys[k].axis]];
          break;
        case Field::kCapacity:
          AppendNumber(out, p.capacity_bytes);
          break;
        case Field::kChips:
          out += std::to_string(p.chips);
          break;
        case Field::kFits:
          out += p.fits ? "true" : "false";
          break;
        case Field::kFootprint:
          AppendNumber(out, p.footprint_bytes);
          break;
        case Field::kPhases:
          if (p.phases.empty()) {
            out += "[]";
            break;
          }
          out += "[\n";
          for (size_t q = 0; q < p.phases.size(); ++q) {
            const PhasePoint& ph = p.phases[q];
            out += "        {\n          \"bound\": ";
            out += name(ph.bound);
            out += ",\n          \"class_bounds\": ";
            bool any = false;
            for (int c : classes) {
              if (!ph.class_bound[static_cast<size_t>(c)].has_value()) continue;
              out += any ? ",\n            " : "{\n            ";
              out += class_keys[static_cast<size_t>(c)];
              out += name(*ph.class_bound[static_cast<size_t>(c)]);
              any = true;
            }
            out += any ? "\n          }" : "{}";
            out += ",\n          \"class_times_s\": ";
            any = false;
            for (int c : classes) {
              if (!ph.class_bound[static_cast<size_t>(c)].has_value()) continue;
              out += any ? ",\n            " : "{\n            ";
              out += class_keys[static_cast<size_t>(c)];
              AppendNumber(out, ph.class_time_s[static_cast<size_t>(c)]);
              any = true;
            }
            out += any ? "\n          }" : "{}";
            number(",\n          \"comm_bound_time_s\": ", ph.comm_bound_s);
            number(",\n          \"compute_bound_time_s\": ", ph.compute_bound_s);
            if (ph.has_expected) {
              number(",\n          \"expected_time_s\": ", ph.expected_time_s);
              number(",\n          \"expected_tokens_per_s\": ", ph.expected_tokens_per_s);
            }
            out += ",\n          \"largest_share\": ";
            out += share_names[static_cast<size_t>(ph.LargestShare())];
            number(",\n          \"memory_bound_time_s\": ", ph.memory_bound_s);
            number(",\n          \"overhead_time_s\": ", ph.overhead_s);
            out += ",\n          \"phase\": ";
            out += ph.phase == Phase::kPrefill ? prefill : decode;
            number(",\n          \"time_s\": ", ph.time_s);
            number(",\n          \"tokens_per_s\": ", ph.tokens_per_s);
            out += q + 1 < p.phases.size() ? "\n        },\n" : "\n        }\n";
          }
          out += "      ]";
          break;
      }
      out += k + 1 < keys.size() ? ",\n" : "\n";
    }
    out += pi + 1 < r.points.size() ? "    },\n" : "    }\n";
  }
  out += "  ]";
}

}  // namespace

std::string SignalName(const SignalId& s) {
  const std::string phase(NameOf(s.phase));
  switch (s.kind) {
    case SignalKind::kStep:
      return phase + " step";
    case SignalKind::kClass:
      return phase + " " + std::string(NameOf(s.cls));
    case SignalKind::kCommWall:
      return phase + " comm wall";
    case SignalKind::kCapacity:
      return "capacity";
    case SignalKind::kChips:
      return "chips";
    case SignalKind::kNetwork:
      return "network";
    case SignalKind::kMatrixKernels:
      return "matrix kernels";
    case SignalKind::kOtherKernels:
      return "other kernels";
    case SignalKind::kAttentionShare:
      return "attention";
    case SignalKind::kLargestShare:
      return phase + " largest share";
  }
  return "?";
}

std::string ValueName(const SignalId& s, const SignalValue& v, const ResourceNames& names) {
  switch (s.kind) {
    case SignalKind::kCommWall:
      return v.yes ? "comm > compute" : "comm <= compute";
    case SignalKind::kCapacity:
      return v.yes ? "fits" : "exceeds";
    case SignalKind::kAttentionShare:
      return v.yes ? "attention > conv+matmul" : "attention <= conv+matmul";
    case SignalKind::kChips:
      return v.count < 0 ? std::string("no chip count")
                         : Count(static_cast<double>(v.count), "chip");
    case SignalKind::kLargestShare:
      return ShareName(v.count);
    default:
      return names.Name(v.verdict);
  }
}

SweepLine Describe(const Crossover& x, const SweepResult& r) {
  SweepLine l;
  const SweepAxis& ax = r.axes[x.axis];
  const bool integer = IsInteger(ax.variable);
  l.what = SignalName(x.signal);
  l.variable = x.variable;
  l.value = integer ? std::to_string(x.int_value) : std::string(NameOf(ax.dtypes[x.grid]));
  l.from = ValueName(x.signal, x.from, r.names);
  l.to = ValueName(x.signal, x.to, r.names);
  l.at = AtLabel(r, x.axis, x.at);
  if (ax.variable == SweepVariable::kTp) {
    // Only degrees that divide the heads are valid: the change lies between grid points.
    const std::string still = fmt::format("tp={} still {}", ax.values[x.grid - 1], l.from);
    l.at = l.at.empty() ? still : l.at + ", " + still;
  }
  const std::string where = l.at.empty() ? "" : " (" + l.at + ")";
  const char* op = integer ? ">=" : "=";
  if (x.signal.kind == SignalKind::kCapacity) {
    const SweepPoint* before = PointAt(r, x.axis, x.at, x.grid - 1);
    l.sentence =
        !x.to.yes && r.chips_tracked
            ? fmt::format(
                  "no count of pipeline stages (up to {}) holds the model in chips of {} "
                  "from {} {} {} on{}",
                  kMaxStagesCount, Si(before != nullptr ? before->capacity_bytes : 0, "B"),
                  l.variable, op, l.value, where)
        : !x.to.yes
            ? fmt::format("weights + KV cache + workspace no longer fit {} x {} at {} {} {}{}",
                          Si(before != nullptr ? before->capacity_bytes : 0, "B"), r.tp, l.variable,
                          op, l.value, where)
            : fmt::format("weights + KV cache + workspace fit from {} {} {} on{}", l.variable, op,
                          l.value, where);
  } else if (x.signal.kind == SignalKind::kChips) {
    auto count = [](int64_t n) { return n < 0 ? std::string("none") : std::to_string(n); };
    l.sentence =
        fmt::format("the chips that hold the model go from {} to {} at {} {} {}{}",
                    count(x.from.count), count(x.to.count), l.variable, op, l.value, where);
  } else if (x.signal.kind == SignalKind::kLargestShare) {
    l.sentence = fmt::format("{}: {} {} {} as the largest share of the step's time at {} {} {}{}",
                             NameOf(x.signal.phase), l.to, Verb(l.to, "overtakes"), l.from,
                             l.variable, op, l.value, where);
  } else if (x.signal.kind == SignalKind::kCommWall) {
    l.sentence = fmt::format("{}: {} time {} compute time at {} {} {}{}", NameOf(x.signal.phase),
                             CommNoun(r), x.to.yes ? "exceeds" : "drops below", l.variable, op,
                             l.value, where);
  } else {
    l.sentence =
        fmt::format("{} {} {} at {} {} {}{} ({} before)", l.what, Verb(l.what, "becomes"),
                    BoundPhrase(l.to), l.variable, op, l.value, where, BoundPhrase(l.from));
  }
  return l;
}

SweepLine Describe(const NeverFlips& n, const SweepResult& r) {
  SweepLine l;
  l.what = SignalName(n.signal);
  l.variable = n.variable;
  l.from = ValueName(n.signal, n.value, r.names);
  l.at = AtLabel(r, n.axis, n.at);
  const std::string at_text = l.at.empty() ? "" : " (" + l.at + ")";
  const std::string stays = Verb(l.what, "stays");
  if (n.signal.kind == SignalKind::kCapacity) {
    const std::string beyond =
        n.reach == NeverFlips::Reach::kBeyond
            ? fmt::format("; the capacity wall lies beyond the range, at {} >= {}", l.variable,
                          n.beyond_value)
            : "";
    l.sentence = fmt::format("weights + KV cache + workspace fit at {} swept {}{}{}",
                             n.value.yes ? "every" : "no", l.variable, at_text, beyond);
    return l;
  }
  if (n.signal.kind == SignalKind::kChips) {
    l.sentence = n.value.count < 0 ? fmt::format("no chip count holds the model at any swept {}{}",
                                                 l.variable, at_text)
                                   : fmt::format("{} chips hold the model at every swept {}{}",
                                                 n.value.count, l.variable, at_text);
    return l;
  }
  if (n.signal.kind == SignalKind::kLargestShare) {
    const std::string takes = Verb(l.from, "takes");
    const std::string range = n.reach == NeverFlips::Reach::kAnyValue
                                  ? "at any " + l.variable
                                  : "over the swept " + l.variable;
    l.sentence = fmt::format("{}: {} {} the largest share of the step's time {}{}",
                             NameOf(n.signal.phase), l.from, takes, range, at_text);
    if (n.reach == NeverFlips::Reach::kBeyond) {
      const std::string other = ShareName(n.beyond_to.count);
      l.sentence += fmt::format("; beyond it, {} {} at {} >= {}", other, Verb(other, "overtakes"),
                                l.variable, n.beyond_value);
    }
    return l;
  }
  const bool wall = n.signal.kind == SignalKind::kCommWall;
  const std::string wall_side = n.value.yes ? "above" : "below";
  switch (n.reach) {
    case NeverFlips::Reach::kLookFailed:
      l.sentence = fmt::format("{} {} {} over the swept {}{}", l.what, stays, BoundPhrase(l.from),
                               l.variable, at_text);
      break;
    case NeverFlips::Reach::kBeyond:
      l.sentence = fmt::format(
          "{} {} {} over the swept range{}; beyond it, {} at {} >= {}", l.what, stays,
          BoundPhrase(l.from), at_text,
          Verb(l.what, "becomes") + " " + BoundPhrase(ValueName(n.signal, n.beyond_to, r.names)),
          l.variable, n.beyond_value);
      break;
    case NeverFlips::Reach::kAnyValue: {
      if (wall) {
        l.sentence =
            fmt::format("{}: {} time stays {} compute time at any {}{}", NameOf(n.signal.phase),
                        CommNoun(r), wall_side, l.variable, at_text);
        break;
      }
      std::string why;
      if (n.limit_intensity > 0) {
        const bool has_ceiling =
            n.ridge_ceiling >= 0 && n.ridge_ceiling < static_cast<int>(r.names.compute.size());
        why = fmt::format(
            ": its intensity tends to {} FLOP/B as {} grows ({})", Num(n.limit_intensity),
            l.variable,
            has_ceiling
                ? fmt::format("{} ridge {} FLOP/B", r.names.compute[n.ridge_ceiling], Num(n.ridge))
                : "the device lists no ceiling for its FLOPs, so only its bytes are timed");
        if (n.heads_per_kv > 0) {
          why += fmt::format(
              ", set by the {} query heads sharing each K/V head and the KV dtype, not by {}",
              n.heads_per_kv, l.variable);
        }
      }
      l.sentence = fmt::format("{} {} {} at any {}{}{}", l.what, stays, BoundPhrase(l.from),
                               l.variable, at_text, why);
      break;
    }
    case NeverFlips::Reach::kSweptRange:
      l.sentence =
          wall ? fmt::format("{}: {} time stays {} compute time over the swept {}{}",
                             NameOf(n.signal.phase), CommNoun(r), wall_side, l.variable, at_text)
               : fmt::format("{} {} {} over the swept {}{}", l.what, stays, BoundPhrase(l.from),
                             l.variable, at_text);
      break;
  }
  return l;
}

namespace {

/// The never-flip sentences of a sweep, those of a two-axis sweep that say the same at several
/// values of the other axis joined into one: "(context=1024, 2048, 4096)", or "(every swept
/// context)", with the intensity limits they tend to given as a range.
std::vector<std::string> GroupedNeverFlips(const SweepResult& r) {
  struct Group {
    std::string key;    // the sentence without its "at" label, the limit as "#"
    std::string base;   // the first member's sentence without its "at" label
    size_t at_pos = 0;  // where that label stood
    std::string other;  // the other axis's variable
    std::vector<std::string> at_values;
    double lo = 0, hi = 0;  // the intensity limits
    std::string whole;      // a group of one: its sentence as it was
  };
  std::vector<Group> groups;
  const std::string tends = "tends to ";
  for (const NeverFlips& n : r.never) {
    const SweepLine l = Describe(n, r);
    Group g;
    g.whole = l.sentence;
    g.base = l.sentence;
    const std::string at_text = l.at.empty() ? "" : " (" + l.at + ")";
    const size_t at = l.at.empty() ? std::string::npos : g.base.find(at_text);
    if (at != std::string::npos) {
      g.base.erase(at, at_text.size());
      g.at_pos = at;
      const size_t eq = l.at.find('=');
      g.other = l.at.substr(0, eq);
      g.at_values.push_back(eq == std::string::npos ? l.at : l.at.substr(eq + 1));
    }
    g.key = g.base;
    g.lo = g.hi = n.limit_intensity;
    const size_t t = g.key.find(tends);
    if (t != std::string::npos && n.limit_intensity > 0) {
      const size_t end = g.key.find(' ', t + tends.size());
      g.key.replace(t + tends.size(), end - t - tends.size(), "#");
    }
    auto same = std::find_if(groups.begin(), groups.end(), [&](const Group& o) {
      return !o.at_values.empty() && !g.at_values.empty() && o.key == g.key && o.other == g.other;
    });
    if (same == groups.end()) {
      groups.push_back(std::move(g));
      continue;
    }
    same->at_values.push_back(g.at_values.front());
    same->lo = std::min(same->lo, g.lo);
    same->hi = std::max(same->hi, g.hi);
  }
  std::vector<std::string> out;
  for (Group& g : groups) {
    if (g.at_values.size() <= 1) {
      out.push_back(g.whole);
      continue;
    }
    std::string text = g.base;
    const size_t t = text.find(tends);
    if (t != std::string::npos && g.lo > 0 && t > g.at_pos) {
      const size_t end = text.find(' ', t + tends.size());
      const std::string range = Num(g.lo) == Num(g.hi) ? Num(g.lo) : Num(g.lo) + "-" + Num(g.hi);
      text.replace(t + tends.size(), end - t - tends.size(), range);
    }
    size_t other_size = 0;
    for (const SweepAxis& a : r.axes) {
      if (NameOf(a.variable) == g.other) other_size = a.size();
    }
    std::string values;
    for (const std::string& v : g.at_values) values += (values.empty() ? "" : ", ") + v;
    const std::string label = g.at_values.size() == other_size && other_size > 2
                                  ? " (every swept " + g.other + ")"
                                  : " (" + g.other + "=" + values + ")";
    text.insert(g.at_pos, label);
    out.push_back(text);
  }
  return out;
}

}  // namespace

std::string RenderSweepTable(const SweepResult& r, const std::string& title) {
  std::string out = title + "\n\n";
  const SweepPivot v(r);
  std::vector<std::string> header;
  std::vector<bool> right;
  auto column = [&](std::string h, bool r_align) {
    header.push_back(std::move(h));
    right.push_back(r_align);
  };
  for (const Column* a : v.axes) column(a->spec.id, true);
  for (size_t k = 0; k < v.phases; ++k) {
    const std::string ph = v.phase->Text(k);
    column(ph + " time", true);
    column(ph + " bound", false);
    column(ph + " tokens/s", true);
    // Per chip: a GPU's, or an SRAM device's chip where the device chooses the count.
    if (v.tokens_per_chip != nullptr) {
      column(ph + (r.chips_tracked ? " tokens/s/chip" : " tokens/s/GPU"), true);
    }
    if (v.expected != nullptr) column(ph + " expected", true);
    column(ph + " largest share", false);
  }
  column("footprint", true);
  column("fits", false);
  if (v.chips != nullptr) column("chips", true);
  TextTable t(header, right);
  for (size_t p = 0; p < v.points; ++p) {
    std::vector<std::string> row;
    const size_t first = p * v.phases;
    for (const Column* a : v.axes) row.push_back(a->Text(first));
    for (size_t k = 0; k < v.phases; ++k) {
      const size_t i = first + k;
      row.push_back(Seconds(v.time->reals[i]));
      row.push_back(v.bound->Text(i));
      row.push_back(Num(std::round(v.tokens->reals[i])));
      if (v.tokens_per_chip != nullptr) {
        const double x = v.tokens_per_chip->reals[i];
        row.push_back(Num(x >= 100 ? std::round(x) : x));  // four figures below 100
      }
      if (v.expected != nullptr) row.push_back(Seconds(v.expected->reals[i]));
      row.push_back(v.LargestShareCell(i));
    }
    const bool fits = v.fits->ints[first] != 0;
    row.push_back(Si(v.footprint->reals[first], "B"));
    row.push_back(fits ? "yes" : "NO");
    if (v.chips != nullptr) row.push_back(fits ? v.chips->Text(first) : "-");
    t.AddRow(std::move(row));
  }
  out += t.Render();
  out += RenderSweepWhy(r);
  return out;
}

std::string RenderSweepWhy(const SweepResult& r) {
  std::string out;
  out += "\nCrossovers (exact values, found by bisection between grid points):\n";
  if (r.crossovers.empty()) out += "  none in the swept range\n";
  for (size_t i = 0; i < r.crossovers.size(); ++i) {
    const Crossover& x = r.crossovers[i];
    // Into or out of "no count holds it": the capacity line says it.
    if (x.signal.kind == SignalKind::kChips && (x.from.count < 0 || x.to.count < 0)) continue;
    if (x.signal.kind == SignalKind::kChips) {
      // The chip count moves in every interval of a long sweep: one line per run of changes.
      size_t last = i;
      while (last + 1 < r.crossovers.size() &&
             r.crossovers[last + 1].signal.kind == SignalKind::kChips &&
             r.crossovers[last + 1].axis == x.axis && r.crossovers[last + 1].at == x.at &&
             r.crossovers[last + 1].to.count >= 0) {
        ++last;
      }
      if (last - i >= 2) {
        const SweepLine first = Describe(x, r);
        const size_t n = r.axes[x.axis].size();
        const SweepLine final_change = Describe(r.crossovers[last], r);
        const Crossover& y = r.crossovers[last];
        out += fmt::format(
            "  - the chips that hold the model change in {} of the {} grid intervals of {}{}: "
            "first at {} >= {} ({} -> {}), last at {} >= {} ({} -> {}); --format json lists the "
            "first change in each interval\n",
            last - i + 1, n - 1, first.variable, first.at.empty() ? "" : " (" + first.at + ")",
            first.variable, first.value, x.from.count, x.to.count, first.variable,
            final_change.value, y.from.count, y.to.count);
        i = last;
        continue;
      }
    }
    out += "  - " + Describe(x, r).sentence + "\n";
  }
  out += "\nNever flips:\n";
  if (r.never.empty()) out += "  nothing: every verdict changes somewhere in the range\n";
  for (const std::string& line : GroupedNeverFlips(r)) out += "  - " + line + "\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  if (r.has_expected) {
    out += fmt::format(
        "note: expected columns: {} (docs/expected-time.md; `model --explain KERNEL` derives "
        "one point); verdicts and crossovers are of the bound\n",
        DescribeExpectedOptions(r.expected));
  }
  out += fmt::format("({} workload evaluations)\n", r.evaluations);
  return out;
}

namespace {

/// The sweep's JSON document without its points, open at the end (no closing brace): keys
/// sorted as dump(2) writes them, "points" (rows) or the columns appended after it.
std::string SweepJsonHead(const SweepResult& r, const std::string& model,
                          const std::string& device) {
  json j;
  j["model"] = model;
  j["device"] = device;
  json axes = json::array();
  for (const SweepAxis& a : r.axes) {
    json ax;
    ax["variable"] = std::string(NameOf(a.variable));
    json values = json::array();
    for (size_t i = 0; i < a.size(); ++i) {
      if (IsInteger(a.variable)) {
        values.push_back(a.values[i]);
      } else {
        values.push_back(std::string(NameOf(a.dtypes[i])));
      }
    }
    ax["values"] = values;
    axes.push_back(ax);
  }
  j["axes"] = axes;
  json crossovers = json::array();
  for (const Crossover& x : r.crossovers) {
    const SweepLine l = Describe(x, r);
    json jx;
    jx["what"] = l.what;
    jx["variable"] = l.variable;
    if (IsInteger(r.axes[x.axis].variable) && x.int_value > 0) {
      jx["value"] = x.int_value;
    } else {
      jx["value"] = l.value;
    }
    jx["from"] = l.from;
    jx["to"] = l.to;
    if (!l.at.empty()) jx["at"] = l.at;
    jx["sentence"] = l.sentence;
    crossovers.push_back(jx);
  }
  j["crossovers"] = crossovers;
  json never = json::array();
  for (const NeverFlips& n : r.never) {
    const SweepLine l = Describe(n, r);
    json jn;
    jn["what"] = l.what;
    jn["variable"] = l.variable;
    jn["bound"] = l.from;
    if (n.limit_intensity > 0) jn["limit_intensity"] = n.limit_intensity;
    if (n.ridge > 0) jn["ridge"] = n.ridge;
    if (!l.at.empty()) jn["at"] = l.at;
    jn["sentence"] = l.sentence;
    never.push_back(jn);
  }
  j["never_flips"] = never;
  j["notes"] = r.notes;
  j["evaluations"] = r.evaluations;
  std::string out = j.dump(2);
  out.resize(out.size() - 2);  // the closing "\n}"
  return out;
}

}  // namespace

std::string RenderSweepJson(const SweepResult& r, const std::string& model,
                            const std::string& device) {
  // "points" sorts last among the keys: the document without it, then the points written
  // directly (a sweep's points are most of its JSON; a tree of them costs ~10x the text).
  std::string out = SweepJsonHead(r, model, device);
  out += ",\n  \"points\": ";
  AppendPointsJson(r, out);
  out += "\n}\n";
  return out;
}

void WriteSweepCsv(const SweepResult& r, std::ostream& os) {
  WriteCsv(SweepTable(r, SweepColumns::kCsv), os);
}

void WriteSweepJson(const SweepResult& r, const std::string& model, const std::string& device,
                    JsonLayout layout, std::ostream& os, bool with_data) {
  if (layout == JsonLayout::kRows) {
    os << RenderSweepJson(r, model, device);
    return;
  }
  // The document of the rows layout without its points (keys sorted, as dump(2) writes them),
  // then the columns: "columns" (what each is), "rows" and "data" (the values, column by column).
  const Table t = SweepTable(r, SweepColumns::kAll);
  std::string out = SweepJsonHead(r, model, device);
  out += ",\n  \"schema\": 2,\n  \"columns\": " + ColumnsJsonDescription(t);
  out += fmt::format(",\n  \"rows\": {}", t.rows());
  out += with_data ? ",\n  \"data\": " : "\n}\n";
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!with_data) return;
  WriteJsonColumns(t, os, 2);
  os << "\n}\n";
}

void WriteSweepNpy(const SweepResult& r, std::ostream& os) {
  WriteNpy(SweepTable(r, SweepColumns::kAll), os);
}

std::string RenderSweepCsv(const SweepResult& r) {
  std::ostringstream os;
  WriteSweepCsv(r, os);
  return std::move(os).str();
}

std::string RenderDeviceSweepTable(const DeviceSweep& d, const std::string& title) {
  std::string out = title + "\n\n";
  if (d.fixed) {
    // Columns per phase; an expected column when any device has expected times ("-" where one
    // has none: devices without a host-launched GPU model get bounds only).
    bool any_expected = false;
    const SweepPoint* first = nullptr;
    for (const SweepResult& r : d.sweeps) {
      if (r.points.empty()) continue;
      if (first == nullptr) first = &r.points.front();
      for (const PhasePoint& p : r.points.front().phases) any_expected |= p.has_expected;
    }
    std::vector<std::string> header = {"device"};
    std::vector<bool> right = {false};
    if (first != nullptr) {
      for (const PhasePoint& p : first->phases) {
        const std::string ph(NameOf(p.phase));
        for (const char* col : {" time", " bound", " tokens/s"}) {
          header.push_back(ph + col);
          right.push_back(std::string(col) != " bound");
        }
        if (any_expected) {
          header.push_back(ph + " expected");
          right.push_back(true);
        }
        header.push_back(ph + " largest share");
        right.push_back(false);
      }
    }
    header.insert(header.end(), {"footprint", "capacity", "fits"});
    right.insert(right.end(), {true, true, false});
    TextTable t(header, right);
    for (size_t i = 0; i < d.devices.size(); ++i) {
      const SweepResult& r = d.sweeps[i];
      if (r.points.empty()) continue;
      const SweepPoint& p = r.points.front();
      std::vector<std::string> row = {d.devices[i]};
      for (const PhasePoint& ph : p.phases) {
        row.push_back(Seconds(ph.time_s));
        row.push_back(r.names.Name(ph.bound));
        row.push_back(Num(std::round(ph.tokens_per_s)));
        if (any_expected) row.push_back(ph.has_expected ? Seconds(ph.expected_time_s) : "-");
        row.push_back(LargestShareCell(ph));
      }
      row.push_back(Si(p.footprint_bytes, "B"));
      row.push_back(Si(p.capacity_bytes, "B"));
      row.push_back(p.fits ? "yes" : "NO");
      t.AddRow(std::move(row));
    }
    out += t.Render();
    // The fastest device per phase, at the bound and (among devices with them) expected.
    if (first != nullptr) {
      for (size_t ph = 0; ph < first->phases.size(); ++ph) {
        const PhasePoint* best = nullptr;
        const PhasePoint* best_expected = nullptr;
        size_t bi = 0, ei = 0;
        for (size_t i = 0; i < d.devices.size(); ++i) {
          if (d.sweeps[i].points.empty() || d.sweeps[i].points.front().phases.size() <= ph) {
            continue;
          }
          const PhasePoint& a = d.sweeps[i].points.front().phases[ph];
          if (best == nullptr || a.time_s < best->time_s) {
            best = &a;
            bi = i;
          }
          if (a.has_expected &&
              (best_expected == nullptr || a.expected_time_s < best_expected->expected_time_s)) {
            best_expected = &a;
            ei = i;
          }
        }
        if (best == nullptr) continue;
        out += fmt::format("{}: fastest at the bound on {} ({})", NameOf(best->phase),
                           d.devices[bi], Seconds(best->time_s));
        if (best_expected != nullptr) {
          // Devices within 0.5% of the fastest expected time tie: no winner is named.
          std::vector<std::string> tied;
          bool host_bound = true;
          for (size_t i = 0; i < d.devices.size(); ++i) {
            if (d.sweeps[i].points.empty() || d.sweeps[i].points.front().phases.size() <= ph) {
              continue;
            }
            const PhasePoint& a = d.sweeps[i].points.front().phases[ph];
            if (a.has_expected &&
                a.expected_time_s <= best_expected->expected_time_s * 1.005) {
              tied.push_back(d.devices[i]);
              host_bound = host_bound && a.host_bound;
            }
          }
          if (tied.size() > 1) {
            std::string names;
            for (size_t i = 0; i < tied.size(); ++i) {
              names += (i == 0 ? "" : i + 1 == tied.size() ? " and " : ", ") + tied[i];
            }
            out += fmt::format("; expected, a tie between {} ({}){}", names,
                               Seconds(best_expected->expected_time_s),
                               host_bound ? ": the step is host-bound (the host takes longer to "
                                            "launch its kernels than the GPU to run them), so a "
                                            "faster device does not shorten it; --runtime "
                                            "cuda-graph launches the step at once"
                                          : "");
          } else {
            out += fmt::format(", expected on {} ({})", d.devices[ei],
                               Seconds(best_expected->expected_time_s));
          }
        }
        out += "\n";
      }
    }
    return out;
  }
  for (size_t i = 0; i < d.devices.size(); ++i) {
    out += "== " + d.devices[i] + " ==\n";
    out += RenderSweepTable(d.sweeps[i], d.devices[i]).substr(d.devices[i].size() + 2);
    out += "\n";
  }
  // Each crossover of any device, with where it lies on every device.
  out += "Crossovers by device:\n";
  std::vector<std::string> seen;
  for (size_t i = 0; i < d.devices.size(); ++i) {
    for (const Crossover& x : d.sweeps[i].crossovers) {
      const SweepLine l = Describe(x, d.sweeps[i]);
      // Matched on the kind of resource, so "compute:tensor.bf16" on one device and
      // "compute:tensor.fp16" on another are one line.
      auto kind = [](const std::string& to) { return to.substr(0, to.find(':')); };
      const std::string key =
          l.what + " -> " + kind(l.to) + (l.at.empty() ? "" : " (" + l.at + ")");
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      std::string where;
      for (size_t j = 0; j < d.devices.size(); ++j) {
        std::string value = "not in the range";
        for (const Crossover& y : d.sweeps[j].crossovers) {
          const SweepLine m = Describe(y, d.sweeps[j]);
          if (m.what == l.what && kind(m.to) == kind(l.to) && m.at == l.at) {
            value = m.variable + " " +
                    (IsInteger(d.sweeps[j].axes[y.axis].variable) ? ">= " : "= ") + m.value;
            break;
          }
        }
        where += fmt::format("{}{} {}", where.empty() ? "" : "; ", d.devices[j], value);
      }
      std::string change;
      switch (x.signal.kind) {
        case SignalKind::kCapacity:
          change = x.to.yes ? "weights + KV cache + workspace fit"
                            : "weights + KV cache + workspace no longer fit";
          break;
        case SignalKind::kLargestShare:
          change = fmt::format("{}: {} {} the largest share of the step's time",
                               NameOf(x.signal.phase), l.to, Verb(l.to, "takes"));
          break;
        case SignalKind::kCommWall:
          change = fmt::format("{}: communication time {} compute time", NameOf(x.signal.phase),
                               x.to.yes ? "exceeds" : "drops below");
          break;
        case SignalKind::kChips:
          change = fmt::format("the chips that hold the model become {}", x.to.count);
          break;
        default:
          change = l.what + " " + Verb(l.what, "becomes") + " " + BoundPhrase(l.to);
          break;
      }
      out += fmt::format("  - {}{}: {}\n", change, l.at.empty() ? "" : " (" + l.at + ")", where);
    }
  }
  if (seen.empty()) out += "  none on any device in the swept range\n";
  return out;
}

std::string RenderDeviceSweepJson(const DeviceSweep& d, const std::string& model,
                                  JsonLayout layout) {
  json j;
  j["model"] = model;
  j["devices"] = json::array();
  for (size_t i = 0; i < d.devices.size(); ++i) {
    std::ostringstream sweep;
    WriteSweepJson(d.sweeps[i], model, d.devices[i], layout, sweep);
    j["devices"].push_back({{"device", d.devices[i]}, {"sweep", json::parse(sweep.str())}});
  }
  return j.dump(2) + "\n";
}

std::string RenderDeviceSweepCsv(const DeviceSweep& d) {
  // One header, the union of the devices' columns in first-seen order; a cell a device has no
  // column for is empty (bounds-only devices have no expected times; SRAM machines add chips).
  std::vector<Table> tables;
  std::vector<std::string> ids;
  for (const SweepResult& r : d.sweeps) {
    tables.push_back(SweepTable(r, SweepColumns::kCsv));
    for (const Column& c : tables.back().columns()) {
      if (std::find(ids.begin(), ids.end(), c.spec.id) == ids.end()) ids.push_back(c.spec.id);
    }
  }
  std::string out = "device";
  for (const std::string& id : ids) out += "," + id;
  out += "\n";
  for (size_t i = 0; i < d.devices.size(); ++i) {
    std::vector<const Column*> cols;
    for (const std::string& id : ids) cols.push_back(tables[i].Find(id));
    for (size_t row = 0; row < tables[i].rows(); ++row) {
      out += d.devices[i];
      for (const Column* c : cols) out += "," + (c != nullptr ? c->Text(row) : std::string());
      out += "\n";
    }
  }
  return out;
}

}  // namespace roofline
