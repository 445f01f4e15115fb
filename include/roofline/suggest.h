// "Did you mean" suggestions for unknown ids.
#ifndef ROOFLINE_SUGGEST_H_
#define ROOFLINE_SUGGEST_H_

#include <string>
#include <vector>

namespace roofline {

/// Edit distance, case-insensitive: insertions, deletions, substitutions and swaps of two
/// neighbouring letters count one each (optimal string alignment).
int EditDistance(const std::string& a, const std::string& b);
/// "; did you mean 'x'?" naming the closest candidate (or the candidate that contains `word`),
/// or "" when nothing is close enough.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace roofline

#endif  // ROOFLINE_SUGGEST_H_
