// The docs say what the tool does: the command-line reference is the tool's own --help, and the
// README stays short enough to read in five minutes, with the two quick-start commands.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.h"

namespace roofline {
namespace docs_test {

std::string ReadDoc(const std::string& relative) {
  std::ifstream in(std::filesystem::path(ROOFLINE_SOURCE_DIR) / relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Docs, CliReferenceIsEveryCommandsHelp) {
  const testing::CliOutput o = testing::RunCli({"help", "--markdown"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, ReadDoc("docs/cli.md"))
      << "docs/cli.md differs from `roofline help --markdown`: run scripts/update-golden.sh";
  // Every command of the table has its page.
  for (const char* heading : {"## roofline model\n", "## roofline sweep\n", "## roofline plan\n",
                              "## roofline op matmul\n", "## roofline profile torch\n",
                              "## roofline validate published\n", "## roofline hw show\n"}) {
    EXPECT_NE(o.out.find(heading), std::string::npos) << heading;
  }
  // A page is help, not an error.
  EXPECT_EQ(o.out.find("error:"), std::string::npos);
}

TEST(Docs, ReadmeIsShortAndStartsWithTheTwoCommands) {
  const std::string readme = ReadDoc("README.md");
  EXPECT_LE(std::count(readme.begin(), readme.end(), '\n'), 200);
  EXPECT_NE(readme.find("scripts/run.sh "), std::string::npos);
  EXPECT_NE(readme.find("scripts/test.sh "), std::string::npos);
  EXPECT_NE(readme.find("## Concepts"), std::string::npos);
  // Every docs/ page it links to exists.
  size_t at = 0;
  while ((at = readme.find("](docs/", at)) != std::string::npos) {
    const size_t end = readme.find(')', at);
    std::string target = readme.substr(at + 2, end - at - 2);
    target = target.substr(0, target.find('#'));
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(ROOFLINE_SOURCE_DIR) / target))
        << target;
    at = end;
  }
}

// Every example block of the README and the reference pages (a block starting `$ roofline ...`,
// without a pipe) prints what the page shows: each line of the block as a whole line of the
// output, in order ("..." skips lines; an excerpt may leave lines out). Synopses (`roofline sweep
// MODEL --vary SPEC`) carry no `$` and are not run; pages without such blocks (validation.md's
// table is the golden validate_published.txt) are checked elsewhere.
TEST(Docs, EveryExampleBlockPrintsWhatItShows) {
  std::vector<std::string> pages = {"README.md"};
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back("docs/" + entry.path().filename().string());
  }
  std::sort(pages.begin(), pages.end());
  int checked = 0;
  for (const std::string& page : pages) {
    std::istringstream lines(ReadDoc(page));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("$ roofline ", 0) != 0 || line.find('|') != std::string::npos) continue;
      std::vector<std::string> args;
      std::istringstream words(line.substr(std::string("$ roofline ").size()));
      for (std::string w; words >> w;) args.push_back(w);
      const std::string command = line;
      const testing::CliOutput o = testing::RunCli(args);
      ASSERT_EQ(o.status, 0) << page << ": " << command << ": " << o.err;
      size_t at = 0;
      while (std::getline(lines, line) && line.rfind("```", 0) != 0) {
        if (line == "...") continue;
        // A whole line of the output: one that starts where a line starts.
        size_t found = o.out.find(line + "\n", at);
        while (found != std::string::npos && found > 0 && o.out[found - 1] != '\n') {
          found = o.out.find(line + "\n", found + 1);
        }
        ASSERT_NE(found, std::string::npos)
            << page << " shows a line `" << command << "` does not print (in this order): "
            << line;
        at = found + line.size();
      }
      ++checked;
    }
  }
  // The guide's tour, the README's quick start and the worked examples of the reference pages.
  EXPECT_GE(checked, 10);
}

}  // namespace docs_test
}  // namespace roofline
