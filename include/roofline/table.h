// Results as a table: struct-of-arrays columns (numbers, counts, yes/no and typed codes with
// their labels), each described once (id, unit, scope), and the writers every command shares:
// CSV (formatted on every core), JSON columns, and NumPy's .npy. Nothing here knows what a
// sweep or a kernel is: the column registries of the analyses fill tables (sweep_table.h).
#ifndef ROOFLINE_TABLE_H_
#define ROOFLINE_TABLE_H_

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// What one row of a column describes.
enum class Scope : uint8_t {
  kPoint,   ///< a point of a sweep (its values, its memory footprint)
  kStep,    ///< a phase's step at a point
  kKernel,  ///< one kernel of a step
};
std::string_view NameOf(Scope s);

/// How a column's values are held and written.
enum class ColumnKind : uint8_t {
  kReal,  ///< a double, written as the shortest text that reads back to the same bits (%.17g)
  kInt,   ///< an integer
  kBool,  ///< true or false
  kCode,  ///< an index into the column's labels (a verdict, a phase, a dtype): typed, not text
  kText,  ///< free text (a kernel's name): quoted in CSV
};

/// A column's description: the one place its name and unit are written.
struct ColumnSpec {
  std::string id;    ///< CSV header, JSON key, npy field ("time_s")
  std::string unit;  ///< "s", "B", "FLOP", "1/s", "" for labels and counts
  Scope scope = Scope::kStep;
  ColumnKind kind = ColumnKind::kReal;
  /// kReal: significant digits CSV writes (17: the same double reads back; fewer for a ratio
  /// shown to a reader, e.g. a share).
  int digits = 17;
};

/// One column: its description and its values (one vector used, by kind).
struct Column {
  ColumnSpec spec;
  std::vector<double> reals;
  std::vector<int64_t> ints;    ///< kInt, kBool (0 or 1), kCode (index into labels)
  std::vector<std::string> labels;  ///< kCode: the name of each code
  std::vector<std::string> texts;   ///< kText

  size_t size() const {
    return spec.kind == ColumnKind::kReal   ? reals.size()
           : spec.kind == ColumnKind::kText ? texts.size()
                                            : ints.size();
  }
  /// The text of row `r` as CSV and JSON write it (labels unquoted).
  std::string Text(size_t r) const;
};

/// Columns of equal length.
class Table {
 public:
  /// Appends a column; returns it for filling (the reference stays valid as more columns are
  /// added). Characters of the id other than letters, digits, '_', '-' and '.' become '_'. Ids are unique (a second one is an error of the registry that made the table:
  /// checked by Validate).
  Column& Add(ColumnSpec spec, std::vector<std::string> labels = {});
  const std::deque<Column>& columns() const { return columns_; }
  std::deque<Column>& columns() { return columns_; }
  /// The column with this id, or null.
  const Column* Find(std::string_view id) const;
  /// Rows: the length of the columns (0 without columns).
  size_t rows() const { return columns_.empty() ? 0 : columns_.front().size(); }
  /// Empty when every column has `rows()` values, unique ids and codes within their labels;
  /// else what is wrong (for tests and debug builds).
  std::string Validate() const;

 private:
  std::deque<Column> columns_;
};

/// CSV: a header of ids, one line per row; text columns are quoted ("" for a quote inside),
/// nothing else is (ids, numbers and labels hold no comma). Rows are formatted in blocks on up to `threads` threads (0: every core this process
/// may use) and written in order as they are done.
void WriteCsv(const Table& t, std::ostream& out, int threads = 0);

/// The JSON of a table's data as one object of columns: {"<id>": [values...], ...} (codes as
/// their labels), and the description of the columns: [{"id", "unit", "scope", "kind"}, ...].
/// Written to `out` a block at a time, indented as a value `indent` spaces deep.
void WriteJsonColumns(const Table& t, std::ostream& out, int indent);
std::string ColumnsJsonDescription(const Table& t);

/// NumPy's .npy format (version 1.0): one structured array with a field per column (doubles,
/// int64, booleans, and labels and texts as fixed-width byte strings), `numpy.load` reads it and
/// `pandas.DataFrame(numpy.load(f))` makes a frame of it.
void WriteNpy(const Table& t, std::ostream& out);

}  // namespace roofline

#endif  // ROOFLINE_TABLE_H_
