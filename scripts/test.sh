#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# In parallel: the tests that time this machine are marked to run alone (tests/CMakeLists.txt).
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
