#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs `roofline` on its embedded defaults.
# Extra arguments go to roofline (e.g. scripts/run.sh hw show h100-sxm).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only the tool (and its CUDA plugin where nvcc is found): the test suite is scripts/test.sh's.
BUILD_TARGET=roofline_cli scripts/build.sh
exec build/roofline "$@"
