#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# Serial: the measurement tests time the machine and must not compete with other tests.
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure
