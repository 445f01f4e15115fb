// Short display names for C++ kernel names.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "roofline/profile.h"

namespace roofline {
namespace {

/// Wrapper kernels whose own name says little: the interesting part is a template argument.
bool IsGenericName(std::string_view s) {
  static const std::array<std::string_view, 12> kGeneric = {"kernel",
                                                            "Kernel",
                                                            "Kernel2",
                                                            "device_kernel",
                                                            "elementwise_kernel",
                                                            "vectorized_elementwise_kernel",
                                                            "unrolled_elementwise_kernel",
                                                            "reduce_kernel",
                                                            "kernel_entry",
                                                            "launch_kernel",
                                                            "GenericKernel",
                                                            "gpu_kernel"};
  for (std::string_view g : kGeneric) {
    if (s == g) return true;
  }
  return false;
}

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// The identifiers inside the template arguments that name an operation (a functor, a kernel, a
/// cutlass configuration), in order.
std::string FirstTelling(std::string_view args) {
  std::string best;
  size_t i = 0;
  while (i < args.size()) {
    if (!IsIdent(args[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < args.size() && IsIdent(args[j])) ++j;
    const std::string_view id = args.substr(i, j - i);
    const bool telling = id.find("Functor") != std::string_view::npos ||
                         id.find("_kernel") != std::string_view::npos ||
                         id.find("cutlass_") != std::string_view::npos ||
                         id.find("gemm") != std::string_view::npos ||
                         id.find("Ops") != std::string_view::npos;
    if (telling && !IsGenericName(id)) return std::string(id);
    i = j;
  }
  return best;
}

}  // namespace

std::string ShortKernelName(std::string_view name, size_t width) {
  // Tool-made names ("[CUDA memcpy Host-to-Device]", "[CUDA memset]"; torch's CUPTI records
  // "Memcpy HtoD (Pageable -> Device)", "Memset (Device)") are not C++ names.
  if (name.starts_with("[") || name.starts_with("Memcpy ") || name.starts_with("Memset ")) {
    std::string plain(name.substr(0, width));
    if (name.size() > width && width > 3) plain.replace(width - 3, 3, "...");
    return plain;
  }
  // Anonymous namespaces carry brackets and spaces that would confuse the scan below.
  std::string cleaned(name.substr(0, 8192));
  for (std::string_view anon : {"<unnamed>::", "(anonymous namespace)::"}) {
    for (size_t at = cleaned.find(anon); at != std::string::npos; at = cleaned.find(anon, at)) {
      cleaned.erase(at, anon.size());
    }
  }
  std::string_view s = cleaned;
  // The parameter list: the first '(' at template depth 0 that follows an identifier or '>'.
  int depth = 0;
  size_t params = s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0 && i > 0 && (IsIdent(s[i - 1]) || s[i - 1] == '>')) {
      params = i;
      break;
    }
  }
  s = s.substr(0, params);
  // The return type: everything up to the last space at depth 0.
  depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>' && depth > 0) --depth;
    if (s[i] == ' ' && depth == 0) start = i + 1;
  }
  s = s.substr(start);
  const size_t open = s.find('<');
  std::string_view head = s.substr(0, open);
  size_t colons = head.rfind("::");
  if (colons != std::string_view::npos) {
    // A generic name keeps its namespace ("gemvx::kernel").
    const std::string_view last = head.substr(colons + 2);
    if ((last == "kernel" || last == "Kernel" || last == "Kernel2" || last == "device_kernel") &&
        colons > 0) {
      const size_t outer = head.rfind("::", colons - 1);
      colons = outer == std::string_view::npos ? std::string_view::npos : outer;
    }
    if (colons != std::string_view::npos) head = head.substr(colons + 2);
  }
  std::string out(head);
  if (open != std::string_view::npos) {
    const std::string telling = FirstTelling(s.substr(open));
    out += telling.empty() ? "<...>" : "<" + telling + ">";
  }
  if (out.empty()) out = std::string(name.substr(0, width));
  if (out.size() > width) out = out.substr(0, width - 3) + "...";
  return out;
}

std::vector<std::string> DistinctShortKernelNames(const std::vector<std::string>& names,
                                                  size_t width, std::vector<std::string>& legend) {
  std::vector<std::string> shorts;
  shorts.reserve(names.size());
  for (const std::string& n : names) shorts.push_back(ShortKernelName(n, width));
  // The full names behind each short one: two or more of them are told apart. One kernel on
  // several rows (ncu lists each grid and block apart) keeps one mark.
  std::map<std::string, std::vector<std::string>> behind;
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<std::string>& full = behind[shorts[i]];
    if (std::find(full.begin(), full.end(), names[i]) == full.end()) full.push_back(names[i]);
  }
  std::map<std::string, int> mark_of;  // full name -> its mark
  for (size_t i = 0; i < names.size(); ++i) {
    if (behind[shorts[i]].size() < 2) continue;
    auto [it, fresh] = mark_of.emplace(names[i], static_cast<int>(mark_of.size()) + 1);
    const std::string tag = " [" + std::to_string(it->second) + "]";
    if (fresh) {
      legend.push_back(tag.substr(1) + " " +
                       (names[i].size() > 240 ? names[i].substr(0, 237) + "..." : names[i]));
    }
    // The mark stays whole; the name gives way to it (at least four characters of it kept).
    shorts[i] = ShortKernelName(names[i], std::max(width, tag.size() + 4) - tag.size()) + tag;
  }
  return shorts;
}

}  // namespace roofline
