#!/usr/bin/env python3
"""Runs the capture tests (unittest) and closes with one plain line:
"capture-tests: N passed, N failed, N skipped". Exit status 0 only when nothing failed.

    .venv-capture/bin/python python/tests/run.py [-v] [test name patterns (unittest -k)]
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def main(argv):
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
    print(f"capture-tests: {passed} passed, {failed} failed, {skipped} skipped")
    if result.testsRun == 0:
        print("capture-tests: no test ran")
        return 1
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
