#!/usr/bin/env python3
"""Runs the tests of the installed Python package `roofline` (unittest) and closes with one
plain line: "package-tests: N passed, N failed, N skipped". Exit status 0 only when nothing
failed. Unlike python/tests/run.py it leaves sys.path alone: `import roofline` must find the
installed package with its compiled core, not the source folder.

    .venv-roofline/bin/python python/tests_package/run.py [-v] [test name patterns]

Environment: ROOFLINE_BIN=build/roofline for the CLI-parity tests; ROOFLINE_PACKAGE_REQUIRE_ALL=1
turns every skip (no CLI, no torch, no pandas) into a failure, as CI runs it.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != HERE]
    sys.path.append(HERE)  # the test modules themselves, after the installed packages
    verbosity = 2 if "-v" in argv else 1
    patterns = [a for a in argv if a != "-v"]
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = [p if "*" in p else f"*{p}*" for p in patterns]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=verbosity).run(suite)
    for test, reason in result.skipped:
        print(f"skipped: {test.id()}: {reason}")
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"package-tests: {passed} passed, {failed} failed, {skipped} skipped")
    if result.testsRun == 0:
        print("package-tests: no test ran")
        return 1
    if skipped and os.environ.get("ROOFLINE_PACKAGE_REQUIRE_ALL") == "1":
        print("package-tests: ROOFLINE_PACKAGE_REQUIRE_ALL=1 and tests were skipped")
        return 1
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
