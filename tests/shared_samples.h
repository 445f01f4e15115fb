// The real profiler files of ../shared/samples/profiles (their origins in SOURCES.md there):
// conformance inputs written by other people's runs, read in place rather than copied in.
#ifndef ROOFLINE_TESTS_SHARED_SAMPLES_H_
#define ROOFLINE_TESTS_SHARED_SAMPLES_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace roofline::testing {

/// Path of a shared sample file.
inline std::string SharedSample(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/../shared/samples/profiles/" + name;
}

/// True under CI (CI=true), whose fresh clone always has shared/ beside it.
inline bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace roofline::testing

/// Skips the test when the sample is absent on a developer's machine; under CI a missing sample
/// fails the test, so the conformance tests cannot pass by not running.
#define ROOFLINE_REQUIRE_SHARED_SAMPLE(path)                                              \
  do {                                                                                    \
    if (!std::filesystem::exists(path)) {                                                 \
      if (::roofline::testing::InCi()) FAIL() << (path) << " is missing under CI";       \
      GTEST_SKIP() << "no shared sample at " << (path);                                   \
    }                                                                                     \
  } while (0)

#endif  // ROOFLINE_TESTS_SHARED_SAMPLES_H_
