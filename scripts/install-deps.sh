#!/usr/bin/env bash
# Installs every build and test dependency that is missing, with apt-get. Idempotent: packages
# already present are not touched, and apt-get is not called at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential   # g++ (C++20)
  cmake
  nlohmann-json3-dev  # JSON
  libcli11-dev        # command-line parsing
  libfmt-dev          # formatting
  libgtest-dev        # tests
  libbenchmark-dev    # bench/
  libopenblas-dev     # BLAS for `roofline measure` and `roofline validate`
  zlib1g-dev          # gzip-compressed PyTorch profiler traces
  libonnx-dev         # ONNX frontend (`roofline model x.onnx`): onnx_pb.h, shape inference
  libprotobuf-dev     # protobuf headers and library the ONNX frontend needs
  python3             # scripts/check-layers.py (a ctest test)
  python3-dev         # Python.h: the Python package's extension module (pip install .)
  python3-venv        # the virtual environments of the Python tests
  chromium            # scripts/check-html.py: the HTML reports opened headless (a ctest test)
  fonts-dejavu-core   # a font for chromium's screenshots
  clang               # scripts/fuzz.sh: the libFuzzer targets
  libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for clang 14 (Debian 12)
  ccache              # .ci/run: the Python package's build reuses the objects of build/
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all dependencies present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
