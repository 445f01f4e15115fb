#!/usr/bin/env bash
# The Python package as a user gets it (README, "Python"): a fresh virtual environment,
# `pip install .` (scikit-build-core compiles the C++ core with nanobind; build requirements from
# PyPI), the README's one-line example, then the package tests (python/tests_package).
#
#   scripts/test-python-package.sh                       # recreates .venv-roofline
#   ROOFLINE_BIN=build/roofline scripts/test-python-package.sh   # + the CLI-parity tests
#   TORCH_VENV=.venv-capture ...                         # + the tests again from that venv
#
# With TORCH_VENV (a venv of the same Python with torch and pandas: scripts/install-python-deps.sh)
# the package just installed is imported from that venv too, and every test must run (no skips):
# the live-profiler, capture and DataFrame tests need torch and pandas. Needs network access to
# PyPI; the C++ libraries come from scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${ROOFLINE_PACKAGE_VENV:-.venv-roofline}
[[ $VENV = /* ]] || VENV=$PWD/$VENV
PYTHON=${PYTHON:-python3}

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
start=$(date +%s)
if ! "$VENV/bin/pip" install --disable-pip-version-check --quiet .; then
  echo "test-python-package: pip install . failed" >&2
  exit 1
fi
echo "test-python-package: pip install . in a fresh venv took $(($(date +%s) - start)) s"

echo "test-python-package: the README's example, run outside the source tree"
(cd / && "$VENV/bin/python" -c \
  "import roofline; print(roofline.model('llama-3-8b').phases[0].time_s)")

"$VENV/bin/python" python/tests_package/run.py

if [[ -n ${TORCH_VENV:-} ]]; then
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  want=$("$VENV/bin/python" -c 'import sys; print(sys.version_info[:2])')
  have=$("$TORCH_VENV/bin/python" -c 'import sys; print(sys.version_info[:2])')
  if [[ $want != "$have" ]]; then
    echo "test-python-package: $TORCH_VENV has Python $have, the package was built for $want" >&2
    exit 1
  fi
  echo "test-python-package: the same tests from $TORCH_VENV (torch, pandas), nothing skipped"
  PYTHONPATH=$site ROOFLINE_PACKAGE_REQUIRE_ALL=1 "$TORCH_VENV/bin/python" \
    python/tests_package/run.py
fi
