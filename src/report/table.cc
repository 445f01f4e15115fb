#include "src/report/table.h"

#include <algorithm>

namespace roofline {
namespace {

// Display width: counts UTF-8 code points, not bytes.
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> right)
    : header_(std::move(header)), right_(std::move(right)) {
  right_.resize(header_.size(), false);
}

void TextTable::AddRow(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string TextTable::Render(int indent) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = Width(header_[c]);
  for (const auto& r : rows_) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], Width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string out(indent, ' ');
    for (size_t c = 0; c < r.size(); ++c) {
      const size_t pad = width[c] - Width(r[c]);
      if (c > 0) out += "  ";
      if (right_[c])
        out += std::string(pad, ' ') + r[c];
      else if (c + 1 < r.size())
        out += r[c] + std::string(pad, ' ');
      else
        out += r[c];
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  size_t total = 0;
  for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c > 0 ? 2 : 0);
  out += std::string(indent, ' ') + std::string(total, '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

}  // namespace roofline
