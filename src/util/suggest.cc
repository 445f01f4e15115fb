#include "roofline/suggest.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace roofline {
namespace {

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int EditDistance(const std::string& a_in, const std::string& b_in) {
  const std::string a = Lower(a_in);
  const std::string b = Lower(b_in);
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      // A swap of neighbouring letters is one typo ("bf61" for "bf16").
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty() || candidates.empty()) return "";
  const std::string lw = Lower(word);
  std::string best;
  int best_distance = 1 << 30;
  for (const auto& c : candidates) {
    int d = 2 * EditDistance(word, c);
    // A candidate that contains the word (or is contained by it) is a strong hint: "h100" ->
    // "h100-sxm".
    const std::string lc = Lower(c);
    if (lw.size() >= 2 && (lc.find(lw) != std::string::npos || lw.find(lc) != std::string::npos)) {
      d = std::min(d, lc.rfind(lw, 0) == 0 ? 1 : 2);  // a prefix beats a mere substring
    }
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // Up to one edit per three letters (leading dashes of an option not counted), at least one:
  // "--why" is two edits from "--hw" but not a typo of it.
  const size_t letters = word.size() - std::min(word.find_first_not_of('-'), word.size());
  const int limit = 2 * std::max<int>(1, static_cast<int>(letters) / 3);
  if (best_distance > limit) return "";
  return "; did you mean '" + best + "'?";
}

}  // namespace roofline
