// Tables of columns and their writers: CSV, JSON columns, NumPy .npy.
#include "roofline/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <future>
#include <ostream>
#include <set>
#include <thread>

#include "src/util/number_text.h"

#ifdef __linux__
#include <sched.h>
#endif

namespace roofline {
namespace {

/// The cores this process may run on (its affinity mask; `taskset -c 0` gives one).
int UsableCores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// A double as JSON: the shortest text that reads back to the same bits; null when not finite.
void AppendJsonNumber(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += c;
    }
  }
  out += '"';
}

/// Appends row `r` of `c` as CSV writes it.
void AppendCell(std::string& out, const Column& c, size_t r) {
  switch (c.spec.kind) {
    case ColumnKind::kReal:
      if (c.spec.digits == 17) {
        AppendG17(out, c.reals[r]);
      } else {
        char buf[32];
        const std::to_chars_result res = std::to_chars(
            buf, buf + sizeof buf, c.reals[r], std::chars_format::general, c.spec.digits);
        out.append(buf, res.ptr);
      }
      break;
    case ColumnKind::kText:
      out += '"';
      for (char ch : c.texts[r]) {
        if (ch == '"') out += '"';
        out += ch;
      }
      out += '"';
      break;
    case ColumnKind::kInt: {
      char buf[24];
      const std::to_chars_result res = std::to_chars(buf, buf + sizeof buf, c.ints[r]);
      out.append(buf, res.ptr);
      break;
    }
    case ColumnKind::kBool:
      out += c.ints[r] != 0 ? "true" : "false";
      break;
    case ColumnKind::kCode:
      out += c.labels[static_cast<size_t>(c.ints[r])];
      break;
  }
}

void AppendRows(std::string& out, const Table& t, size_t begin, size_t end) {
  const std::deque<Column>& cols = t.columns();
  for (size_t r = begin; r < end; ++r) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) out += ',';
      AppendCell(out, cols[i], r);
    }
    out += '\n';
  }
}

/// The npy field of a column: its dtype and width in bytes.
struct NpyField {
  std::string descr;
  size_t bytes = 0;
};

NpyField FieldOf(const Column& c) {
  switch (c.spec.kind) {
    case ColumnKind::kReal:
      return {"<f8", 8};
    case ColumnKind::kInt:
      return {"<i8", 8};
    case ColumnKind::kBool:
      return {"|b1", 1};
    case ColumnKind::kCode: {
      size_t width = 1;
      for (const std::string& l : c.labels) width = std::max(width, l.size());
      return {fmt::format("|S{}", width), width};
    }
    case ColumnKind::kText: {
      size_t width = 1;
      for (const std::string& l : c.texts) width = std::max(width, l.size());
      return {fmt::format("|S{}", width), width};
    }
  }
  return {"<f8", 8};
}

}  // namespace

std::string_view NameOf(Scope s) {
  switch (s) {
    case Scope::kPoint:
      return "point";
    case Scope::kStep:
      return "step";
    case Scope::kKernel:
      return "kernel";
  }
  return "step";
}

std::string Column::Text(size_t r) const {
  std::string out;
  AppendCell(out, *this, r);
  return out;
}

Column& Table::Add(ColumnSpec spec, std::vector<std::string> labels) {
  // Ids name CSV columns, JSON keys and npy fields: letters, digits, '_', '-' and '.' only (a
  // dimension name from an ONNX file may hold anything).
  for (char& ch : spec.id) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
    if (!ok) ch = '_';
  }
  if (spec.id.empty()) spec.id = "_";
  Column c;
  c.spec = std::move(spec);
  c.labels = std::move(labels);
  columns_.push_back(std::move(c));
  return columns_.back();
}

const Column* Table::Find(std::string_view id) const {
  for (const Column& c : columns_) {
    if (c.spec.id == id) return &c;
  }
  return nullptr;
}

std::string Table::Validate() const {
  std::set<std::string> ids;
  for (const Column& c : columns_) {
    if (!ids.insert(c.spec.id).second) return "column '" + c.spec.id + "' twice";
    if (c.size() != rows()) {
      return fmt::format("column '{}' has {} rows, the table {}", c.spec.id, c.size(), rows());
    }
    if (c.spec.kind == ColumnKind::kCode) {
      for (int64_t code : c.ints) {
        if (code < 0 || static_cast<size_t>(code) >= c.labels.size()) {
          return fmt::format("column '{}' has code {} of {} labels", c.spec.id, code,
                             c.labels.size());
        }
      }
    }
  }
  return "";
}

void WriteCsv(const Table& t, std::ostream& out, int threads) {
  std::string header;
  for (const Column& c : t.columns()) header += (header.empty() ? "" : ",") + c.spec.id;
  header += '\n';
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  const size_t rows = t.rows();
  if (threads <= 0) threads = UsableCores();
  // Blocks of rows formatted by workers, written in order; a few blocks in flight per worker.
  constexpr size_t kBlockRows = 8192;
  const size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  auto format = [&t, rows](size_t b) {
    std::string text;
    const size_t begin = b * kBlockRows;
    text.reserve(kBlockRows * 64 * t.columns().size() / 4);
    AppendRows(text, t, begin, std::min(rows, begin + kBlockRows));
    return text;
  };
  if (threads <= 1 || blocks <= 1) {
    for (size_t b = 0; b < blocks; ++b) {
      const std::string text = format(b);
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    return;
  }
  std::vector<std::future<std::string>> pending;
  size_t next = 0;
  const size_t in_flight = static_cast<size_t>(threads) * 2;
  while (next < blocks || !pending.empty()) {
    while (next < blocks && pending.size() < in_flight) {
      pending.push_back(std::async(std::launch::async, format, next++));
    }
    const std::string text = pending.front().get();
    pending.erase(pending.begin());
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
}

void WriteJsonColumns(const Table& t, std::ostream& os, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  std::string out = "{";
  bool first = true;
  // Written a block at a time: a 100k-point sweep is tens of MB of numbers.
  constexpr size_t kBlock = size_t{1} << 20;
  auto flush = [&] {
    os.write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  };
  for (const Column& c : t.columns()) {
    out += first ? "\n" : ",\n";
    first = false;
    out += pad + "  ";
    AppendJsonString(out, c.spec.id);
    out += ": [";
    const size_t n = c.size();
    for (size_t r = 0; r < n; ++r) {
      if (r > 0) out += ", ";
      switch (c.spec.kind) {
        case ColumnKind::kReal:
          AppendJsonNumber(out, c.reals[r]);
          break;
        case ColumnKind::kCode:
          AppendJsonString(out, c.labels[static_cast<size_t>(c.ints[r])]);
          break;
        case ColumnKind::kText:
          AppendJsonString(out, c.texts[r]);
          break;
        default:
          AppendCell(out, c, r);
          break;
      }
      if (out.size() >= kBlock) flush();
    }
    out += "]";
  }
  out += first ? "}" : "\n" + pad + "}";
  flush();
}

std::string ColumnsJsonDescription(const Table& t) {
  std::string out = "[";
  bool first = true;
  for (const Column& c : t.columns()) {
    out += first ? "" : ", ";
    first = false;
    static constexpr const char* kKinds[] = {"real", "int", "bool", "label", "text"};
    out += fmt::format(R"({{"id": "{}", "unit": "{}", "scope": "{}", "kind": "{}"}})", c.spec.id,
                       c.spec.unit, NameOf(c.spec.scope),
                       kKinds[static_cast<int>(c.spec.kind)]);
  }
  return out + "]";
}

void WriteNpy(const Table& t, std::ostream& out) {
  std::vector<NpyField> fields;
  std::string descr = "[";
  size_t record = 0;
  for (const Column& c : t.columns()) {
    fields.push_back(FieldOf(c));
    descr += fmt::format("('{}', '{}'), ", c.spec.id, fields.back().descr);
    record += fields.back().bytes;
  }
  descr += "]";
  std::string header = fmt::format("{{'descr': {}, 'fortran_order': False, 'shape': ({},), }}",
                                   descr, t.rows());
  // Magic, version, header length; the header padded with spaces to a multiple of 64 bytes
  // (with its magic and length) and ended by a newline. Version 1.0 holds a 2-byte length,
  // 2.0 a 4-byte one (a table of many columns).
  const bool v2 = header.size() + 12 > 65535;
  const size_t preamble = v2 ? 12 : 10;
  const size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  std::string pre("\x93NUMPY", 6);
  pre += static_cast<char>(v2 ? 2 : 1);
  pre += '\0';
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) pre += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out.write(pre.data(), static_cast<std::streamsize>(pre.size()));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  // Records in blocks: each row's fields packed in column order, little-endian (x86, ARM).
  const size_t rows = t.rows();
  constexpr size_t kBlockRows = 16384;
  std::vector<char> block(kBlockRows * record);
  const std::deque<Column>& cols = t.columns();
  for (size_t begin = 0; begin < rows; begin += kBlockRows) {
    const size_t n = std::min(kBlockRows, rows - begin);
    size_t offset = 0;
    for (size_t i = 0; i < cols.size(); ++i) {
      const Column& c = cols[i];
      const size_t w = fields[i].bytes;
      char* dst = block.data() + offset;
      for (size_t r = 0; r < n; ++r, dst += record) {
        switch (c.spec.kind) {
          case ColumnKind::kReal:
            std::memcpy(dst, &c.reals[begin + r], 8);
            break;
          case ColumnKind::kInt:
            std::memcpy(dst, &c.ints[begin + r], 8);
            break;
          case ColumnKind::kBool:
            *dst = c.ints[begin + r] != 0 ? 1 : 0;
            break;
          case ColumnKind::kCode:
          case ColumnKind::kText: {
            const std::string& l = c.spec.kind == ColumnKind::kText
                                        ? c.texts[begin + r]
                                        : c.labels[static_cast<size_t>(c.ints[begin + r])];
            std::memset(dst, 0, w);
            std::memcpy(dst, l.data(), std::min(w, l.size()));
            break;
          }
        }
      }
      offset += w;
    }
    out.write(block.data(), static_cast<std::streamsize>(n * record));
  }
}

}  // namespace roofline
