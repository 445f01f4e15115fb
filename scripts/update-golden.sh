#!/usr/bin/env bash
# Rewrites tests/golden/* from the commands in tests/golden/commands.txt, run with build/roofline
# (or $ROOFLINE_BIN) from the repository root. Run it after a change that is meant to move a
# printed number, then review `git diff tests/golden` and say why each number moved.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROOFLINE_BIN:-build/roofline}
[[ -x $bin ]] || { echo "update-golden: $bin not built (scripts/build.sh)" >&2; exit 2; }
while IFS= read -r line; do
  [[ -z ${line// } || $line == \#* ]] && continue
  read -r file args <<<"$line"
  # shellcheck disable=SC2086  # the arguments are split on spaces, as the test does
  if ! "$bin" $args >"tests/golden/$file.tmp"; then
    echo "update-golden: roofline $args failed" >&2
    rm -f "tests/golden/$file.tmp"
    exit 1
  fi
  mv "tests/golden/$file.tmp" "tests/golden/$file"
  echo "tests/golden/$file"
done <tests/golden/commands.txt
# The command-line reference is every command's --help (tests/docs_test.cc compares them).
"$bin" help --markdown >docs/cli.md
echo docs/cli.md
