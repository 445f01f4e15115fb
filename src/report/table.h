// A plain-text table with aligned columns.
#ifndef ROOFLINE_SRC_REPORT_TABLE_H_
#define ROOFLINE_SRC_REPORT_TABLE_H_

#include <string>
#include <vector>

namespace roofline {

/// Columns are left-aligned unless marked numeric (right-aligned).
class TextTable {
 public:
  /// `right[i]` right-aligns column i.
  TextTable(std::vector<std::string> header, std::vector<bool> right);
  void AddRow(std::vector<std::string> row);
  /// Rendered with two spaces between columns, `indent` spaces before each line, and a rule
  /// under the header.
  std::string Render(int indent = 0) const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace roofline

#endif  // ROOFLINE_SRC_REPORT_TABLE_H_
