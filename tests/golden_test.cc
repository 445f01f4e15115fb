// Golden outputs: what users see, byte for byte. Each line of tests/golden/commands.txt is run
// in-process from the repository root and its stdout compared with the committed file. After a
// change meant to move a number, scripts/update-golden.sh rewrites them; the diff is the review.
#include <gtest/gtest.h>

#include <filesystem>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.h"

namespace roofline {
namespace golden_test {

struct GoldenCase {
  std::string file;
  std::vector<std::string> args;
};

/// The case's file name in test output (instead of its bytes).
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.file; }

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<GoldenCase> LoadCases() {
  std::vector<GoldenCase> cases;
  std::istringstream lines(ReadAll(std::filesystem::path(ROOFLINE_SOURCE_DIR) /
                                   "tests/golden/commands.txt"));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    GoldenCase c;
    if (!(words >> c.file) || c.file[0] == '#') continue;
    for (std::string w; words >> w;) c.args.push_back(w);
    cases.push_back(std::move(c));
  }
  return cases;
}

/// The first line where two texts differ, for a readable failure.
std::string FirstDifference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "texts differ only in their final newline";
    if (la != lb || ha != hb) {
      return "line " + std::to_string(n) + ":\n  golden: " + (ha ? la : "<end>") +
             "\n  now:    " + (hb ? lb : "<end>");
    }
  }
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, OutputIsUnchanged) {
  const GoldenCase& c = GetParam();
  const std::filesystem::path root(ROOFLINE_SOURCE_DIR);
  const std::filesystem::path golden = root / "tests/golden" / c.file;
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << ": run scripts/update-golden.sh";
  const std::filesystem::path here = std::filesystem::current_path();
  std::filesystem::current_path(root);  // fixture paths in the commands are relative to it
  const testing::CliOutput r = testing::RunCli(c.args);
  std::filesystem::current_path(here);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string want = ReadAll(golden);
  EXPECT_TRUE(want == r.out) << c.file << " differs from the golden output at "
                             << FirstDifference(want, r.out)
                             << "\n(intended? scripts/update-golden.sh, then review the diff)";
}

TEST(GoldenManifest, ListsADozenCommandsAndEveryFileIsUsed) {
  const std::vector<GoldenCase> cases = LoadCases();
  EXPECT_GE(cases.size(), 12u);
  std::set<std::string> listed;
  for (const GoldenCase& c : cases) listed.insert(c.file);
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(
           ROOFLINE_SOURCE_DIR) / "tests/golden")) {
    const std::string name = e.path().filename().string();
    if (name == "commands.txt") continue;
    EXPECT_TRUE(listed.count(name)) << name << " is not in tests/golden/commands.txt";
  }
}

INSTANTIATE_TEST_SUITE_P(Commands, Golden, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string name;
                           for (char ch : info.param.file) name += std::isalnum(ch) ? ch : '_';
                           return name;
                         });

}  // namespace golden_test
}  // namespace roofline
