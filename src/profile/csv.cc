#include "src/profile/csv.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace roofline {

bool CsvReader::Next(CsvRecord* record, std::string* error) {
  record->fields.clear();
  record->quoted_first = false;
  if (pos_ >= text_.size()) return false;
  record->line = line_;
  std::string field;
  bool in_quotes = false;
  bool field_quoted = false;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (in_quotes) {
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          field += '"';
          pos_ += 2;
          continue;
        }
        in_quotes = false;
        ++pos_;
        continue;
      }
      if (c == '\n') ++line_;
      field += c;
      ++pos_;
      continue;
    }
    if (c == '"') {
      if (field.empty() && !field_quoted) {
        in_quotes = true;
        field_quoted = true;
        if (record->fields.empty()) record->quoted_first = true;
      } else {
        field += c;  // a stray quote inside an unquoted field is kept as text
      }
      ++pos_;
      continue;
    }
    if (c == ',') {
      record->fields.push_back(std::move(field));
      field.clear();
      field_quoted = false;
      ++pos_;
      continue;
    }
    if (c == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n')) {
      ++pos_;  // CRLF, or a lone CR ending the text
      continue;
    }
    if (c == '\n') {
      ++pos_;
      ++line_;
      record->fields.push_back(std::move(field));
      return true;
    }
    field += c;
    ++pos_;
  }
  if (in_quotes) {
    *error = "unterminated quoted field (the file ends inside quotes: truncated?)";
    return false;
  }
  record->fields.push_back(std::move(field));
  return true;
}

std::string_view CsvReader::PeekLine() const {
  if (pos_ >= text_.size()) return {};
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void CsvReader::SkipLine() {
  if (pos_ >= text_.size()) return;
  const size_t end = text_.find('\n', pos_);
  pos_ = end == std::string_view::npos ? text_.size() : end + 1;
  ++line_;
}

std::optional<double> ParseCsvNumber(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty() || text.size() > 64) return std::nullopt;
  auto digit = [&](size_t j) {
    return j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) != 0;
  };
  std::string digits;
  digits.reserve(text.size());
  bool in_integer_part = true;  // separators only group the digits before '.' or an exponent
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      // A thousands separator: in the integer part, a digit before it, exactly three digits
      // after it.
      const bool ok = in_integer_part && i > 0 && digit(i - 1) && digit(i + 1) && digit(i + 2) &&
                      digit(i + 3) && !digit(i + 4);
      if (!ok) return std::nullopt;
      continue;
    }
    if (c == '.' || c == 'e' || c == 'E') in_integer_part = false;
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == 'E')) {
      return std::nullopt;
    }
    digits += c;
  }
  // from_chars: locale-independent (strtod would read "1.5" as 1 under a "," decimal locale);
  // it takes no leading '+'.
  std::string_view s = digits;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Underflow (1e-400) reads as 0; overflow (1e400) is not a finite number.
    const size_t e = s.find_first_of("eE");
    if (e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-') return 0.0;
    return std::nullopt;
  }
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool IsProfilerNoiseLine(std::string_view line) {
  return line.size() >= 2 && line[0] == '=' && line[1] == '=';
}

}  // namespace roofline
