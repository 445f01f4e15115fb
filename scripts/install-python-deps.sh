#!/usr/bin/env bash
# Installs what the PyTorch capture (python/roofline_capture) and its tests need into a virtual
# environment: torch, torchvision, diffusers, transformers, pandas (and their dependencies), all
# from PyPI.
#
#   scripts/install-python-deps.sh          # creates/updates $ROOFLINE_VENV (default .venv-capture)
#   .venv-capture/bin/python -m unittest discover -s python/tests -v
#
# Idempotent: when the venv already holds the pinned versions it does nothing (a second run takes
# about a second). Fails loudly (non-zero exit) when anything cannot be installed, e.g. without
# network access to PyPI.
#
# About the CUDA libraries: PyPI's Linux x86_64 torch wheel is a CUDA build; libtorch_cuda.so is
# a load-time dependency of libtorch.so and needs libcudart, cuBLAS, cuDNN, cuFFT, cuSPARSE, NCCL
# from the nvidia-*-cu12 wheels, so `import torch` fails without them even on a machine without a
# GPU (`pip install --no-deps torch` does not work). The CPU-only wheels live on another index
# that this project's machines cannot reach, so the full dependency set is installed: about 2.6 GB
# downloaded (pip keeps it in its cache, so later installs read it from disk) and 5-6 GB on disk.
# Everything runs on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${ROOFLINE_VENV:-.venv-capture}
PYTHON=${PYTHON:-python3}

# Pinned together: torch 2.5.1 + torchvision 0.20.1 are a matching pair; diffusers 0.31.0 and
# huggingface_hub 0.26.x are from the same period (newer hubs drop APIs that diffusers imports).
PINS=(
  "torch==2.5.1"
  "torchvision==0.20.1"
  "diffusers==0.31.0"
  "huggingface_hub==0.26.2"
  "numpy==2.1.3"
  "onnx==1.17.0"        # torch.onnx.export (TorchScript exporter) needs it to write the file
  "pandas==2.2.3"       # the Python package's to_pandas() tests (python/tests_package)
  "transformers==4.46.3"  # scripts/capture-presets.py: CLIP ViT-L/14
)

have_pins() {
  [[ -x $VENV/bin/python ]] || return 1
  "$VENV/bin/python" - "${PINS[@]}" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
import torch, torchvision, diffusers, pandas, transformers  # noqa: F401  (the imports must work too)
EOF
}

if have_pins; then
  echo "install-python-deps: $VENV already has ${PINS[*]}"
  exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "install-python-deps: $PYTHON not found" >&2
  exit 1
fi
if [[ ! -x $VENV/bin/python ]]; then
  if ! "$PYTHON" -m venv "$VENV"; then
    echo "install-python-deps: '$PYTHON -m venv' failed (Debian: apt-get install python3-venv)" >&2
    exit 1
  fi
fi

start=$(date +%s)
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --quiet "${PINS[@]}"; then
  echo "install-python-deps: pip install ${PINS[*]} failed (is PyPI reachable?)" >&2
  exit 1
fi
if ! have_pins; then
  echo "install-python-deps: installed, but the pinned versions do not import" >&2
  "$VENV/bin/python" -c "import torch, torchvision, diffusers" >&2 || true
  exit 1
fi
end=$(date +%s)
echo "install-python-deps: installed ${PINS[*]} into $VENV in $((end - start)) s" \
  "($(du -sh "$VENV" | cut -f1))"
