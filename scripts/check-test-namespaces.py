#!/usr/bin/env python3
"""Every test file keeps its helpers in a namespace named after the file (tests/foo_test.cc:
`namespace foo_test {`), never an anonymous one: the sanitizer build compiles the test files in
batches as one source each (ROOFLINE_UNITY), where two files' anonymous namespaces would be one
and their helpers of the same name would clash."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
bad = []
for path in sorted((root / "tests").glob("*_test.cc")):
    text = path.read_text()
    stem = path.stem
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\s*namespace\s*\{", line):
            bad.append(f"{path.relative_to(root)}:{n}: an anonymous namespace; "
                       f"use 'namespace {stem} {{'")
    if f"namespace {stem} {{" not in text:
        bad.append(f"{path.relative_to(root)}: no 'namespace {stem} {{' for its helpers and tests")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
