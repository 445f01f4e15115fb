#!/usr/bin/env bash
# Builds the Python package's wheel into dist/ (pyproject.toml: scikit-build-core compiles the C++
# core with nanobind; build requirements from PyPI in an isolated environment), then checks that
# it installs into a fresh virtual environment and runs the README's example there.
#
#   scripts/build-wheel.sh            # dist/roofline-<version>-<python>-<platform>.whl
#
# The wheel links the Debian libraries of scripts/install-deps.sh (fmt, OpenBLAS, zlib, ONNX,
# protobuf): it is for machines that have them, not a manylinux wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
scripts/install-deps.sh
rm -rf dist
"$PYTHON" -m pip wheel --disable-pip-version-check --quiet --no-deps -w dist .
wheel=$(ls dist/roofline-*.whl)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --disable-pip-version-check --quiet "$wheel"
(cd "$tmp" && "$tmp/venv/bin/python" -c \
  "import roofline; print(roofline.model('llama-3-8b').phases[0].time_s)")
echo "build-wheel: $wheel ($(du -h "$wheel" | cut -f1))"
